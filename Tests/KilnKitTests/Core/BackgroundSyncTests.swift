import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// A finished bundle's fsync starts on a thread of its own as soon as the bundle is complete (`BackgroundSync`), and
/// the commit waits for it before the rename: a file that cannot be synced still fails the commit, with its path.
final class BackgroundSyncTests: KilnTestCase {
    func testASyncedFileIsMovedInPlace() throws {
        let temporary = try write("rows", to: ".bundle.tmp")
        let destination = temporaryDirectory.appendingPathComponent("bundle.sqlite")
        let sync = BackgroundSync(temporary)
        try sync.wait()
        try sync.wait()
        try FileSync.move(temporary, to: destination)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "rows")
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporary.path))
    }

    /// A large file replaced keeps a second name through the rename, which `LaterRemovals` takes away afterwards: a
    /// reader that had it open still reads the old bytes, the new file is in place, and nothing is left beside it.
    func testALargeFileReplacedIsRemovedAfterTheRenameAndLeavesNothingBehind() throws {
        let destination = temporaryDirectory.appendingPathComponent("bundle.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: destination.path, contents: Data("old".utf8)))
        let old = try FileHandle(forUpdating: destination)
        try old.truncate(atOffset: UInt64(FileSync.largeFileBytes))  // sparse: large without writing 64 MiB
        let temporary = try write("new", to: ".bundle.sqlite.tmp")
        try FileSync.move(temporary, to: destination)
        LaterRemovals.shared.wait()
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "new")
        try old.seek(toOffset: 0)
        XCTAssertEqual(try old.read(upToCount: 3), Data("old".utf8), "the old file lives on while it is open")
        try old.close()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path).sorted(), ["bundle.sqlite"])
    }

    func testAFileThatCannotBeSyncedFailsTheWaitEachTime() throws {
        let missing = temporaryDirectory.appendingPathComponent("gone.sqlite")
        let sync = BackgroundSync(missing)
        for _ in 0..<2 {
            XCTAssertThrowsError(try sync.wait()) { error in
                XCTAssertTrue("\(error)".contains(missing.path), "\(error)")
            }
        }
    }
}
