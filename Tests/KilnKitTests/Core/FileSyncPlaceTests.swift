import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore

/// `FileSync.place`: a fetched body written to a file without a name gets its name in one step when the name is
/// free, replaces a taken name only through the guarded rename, and leaves nothing behind when it is not kept.
final class FileSyncPlaceTests: KilnTestCase {
    private func body(_ text: String) throws -> (HTTPBodyFile, URL) {
        let temporary = temporaryDirectory.appendingPathComponent(".page.html.1.tmp")
        let body = try HTTPBodyFile(unnamedIn: temporaryDirectory, orAt: temporary)
        XCTAssertTrue(body.append(Data(text.utf8)))
        return (body, temporary)
    }

    private func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path).sorted()
    }

    func testAnUnnamedBodyHasNoEntryUntilItIsPlaced() throws {
        let (body, temporary) = try body("<p>new</p>")
        XCTAssertTrue(body.isUnnamed, "this file system makes files without a name (O_TMPFILE)")
        XCTAssertEqual(try entries(), [])
        let destination = temporaryDirectory.appendingPathComponent("page.html")
        try FileSync.place(body, at: destination, through: temporary)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "<p>new</p>")
        XCTAssertEqual(try entries(), ["page.html"])
    }

    func testABodyNotPlacedLeavesNothing() throws {
        do {
            let (body, _) = try body("<p>refused</p>")
            body.close()
        }
        XCTAssertEqual(try entries(), [])
    }

    func testATakenNameIsReplacedWholeAndNoTemporaryStays() throws {
        let destination = try write("<p>old</p>", to: "page.html")
        let (body, temporary) = try body("<p>new</p>")
        try FileSync.place(body, at: destination, through: temporary)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "<p>new</p>")
        XCTAssertEqual(try entries(), ["page.html"])
    }

    func testASymbolicLinkIsNotReplacedNorFollowed() throws {
        let target = try write("keep", to: "target.txt")
        let link = temporaryDirectory.appendingPathComponent("page.html")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let (body, temporary) = try body("<p>new</p>")
        XCTAssertThrowsError(try FileSync.place(body, at: link, through: temporary)) { error in
            XCTAssertEqual("\(error)", "\(link.path) is a symbolic link; Kiln replaces only regular files")
        }
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "keep")
        XCTAssertEqual(try entries(), ["page.html", "target.txt"])
    }

    func testANamedBodyIsRenamedIntoPlace() throws {
        let temporary = temporaryDirectory.appendingPathComponent(".page.html.1.tmp")
        let body = try HTTPBodyFile(temporary)
        XCTAssertFalse(body.isUnnamed)
        XCTAssertTrue(body.append(Data("named".utf8)))
        let destination = temporaryDirectory.appendingPathComponent("page.html")
        try FileSync.place(body, at: destination, through: temporary)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "named")
        XCTAssertEqual(try entries(), ["page.html"])
    }
}
