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
