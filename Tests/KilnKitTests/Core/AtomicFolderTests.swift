import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnBuild

/// `AtomicFolder`: a set of files written into a folder as a whole — swapped in as a sibling folder when the folder
/// holds only the set, each file beside its old one otherwise — and never over what is not Kiln's to replace.
final class AtomicFolderTests: KilnTestCase {
    private func listing(_ folder: URL) throws -> [String: String] {
        var found: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            found[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        return found
    }

    private func files(_ pairs: [String: String]) -> [(name: String, data: Data)] {
        pairs.sorted { $0.key < $1.key }.map { ($0.key, Data($0.value.utf8)) }
    }

    func testTheFolderIsReplacedAsAWholeAndWhatItHoldsBesidesIsKept() throws {
        let folder = temporaryDirectory.appendingPathComponent("out/update")
        try AtomicFolder.write(files(["a.sql": "1", "b.bin": "1", "c.json": "1"]), into: folder)
        XCTAssertEqual(try listing(folder), ["a.sql": "1", "b.bin": "1", "c.json": "1"])
        let before = try XCTUnwrap(FileStatus(path: folder.path)).inode

        // Only the set: a new folder takes its place (another inode), and a member not written this time goes.
        try AtomicFolder.write(files(["a.sql": "2", "c.json": "2"]), dropping: ["b.bin"], into: folder)
        XCTAssertEqual(try listing(folder), ["a.sql": "2", "c.json": "2"])
        XCTAssertNotEqual(try XCTUnwrap(FileStatus(path: folder.path)).inode, before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.deletingLastPathComponent().path), ["update"])

        // A file of someone else's in the folder stays: each file is replaced beside it.
        try Data("mine".utf8).write(to: folder.appendingPathComponent("notes"))
        let kept = try XCTUnwrap(FileStatus(path: folder.path)).inode
        try AtomicFolder.write(files(["a.sql": "3", "b.bin": "3", "c.json": "3"]), into: folder)
        XCTAssertEqual(try listing(folder), ["a.sql": "3", "b.bin": "3", "c.json": "3", "notes": "mine"])
        XCTAssertEqual(try XCTUnwrap(FileStatus(path: folder.path)).inode, kept)
    }

    func testALinkToTheFolderStaysALink() throws {
        let real = temporaryDirectory.appendingPathComponent("real")
        try AtomicFolder.write(files(["a.sql": "1"]), into: real)
        let link = temporaryDirectory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        try AtomicFolder.write(files(["a.sql": "2"]), into: link)
        XCTAssertEqual(OutputPath.entryKind(link), .symbolicLink)
        XCTAssertEqual(try listing(real), ["a.sql": "2"])
    }

    func testAMemberThatIsNotARegularFileOrIsProtectedIsRefusedAndNothingChanges() throws {
        let folder = temporaryDirectory.appendingPathComponent("update")
        try AtomicFolder.write(files(["a.sql": "1"]), into: folder)
        let input = folder.appendingPathComponent("a.sql")
        ProtectedFiles.shared.protect(input, as: "the input a.sql")
        XCTAssertThrowsError(try AtomicFolder.write(files(["a.sql": "2"]), into: folder)) { error in
            XCTAssertEqual("\(error)", "\(input.path) is the input a.sql; it would be overwritten")
        }
        XCTAssertEqual(try listing(folder), ["a.sql": "1"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path).sorted(), ["update"])
    }
}
