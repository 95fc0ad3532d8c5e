import Foundation
import XCTest
import KilnKit

/// Messages a new user meets (issue 30, item 10), through the `kiln` binary: each is one sentence that says what is
/// true, with the exit code the help promises.
final class CommandMessagesCommandTests: CLITestCase {
    private func pipeline(path: String = "in.txt", pattern: Bool = false) throws {
        let folder = file("p")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let constraint = pattern ? #", pattern: "^[0-9]+$""# : ""
        try """
            { bundle: "msg", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text"\(constraint) }] }],
              sources: [{ name: "s", format: "delimited", path: "\(path)", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try "a\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
    }

    func testAFirstBuildThatFailsSaysNoBundleWasWritten() throws {
        try pipeline(pattern: true)
        let first = try kiln("build", "p", "--out", "m.sqlite")
        XCTAssertEqual(first.status, 1)
        XCTAssertTrue(first.stderr.hasPrefix("not built: msg has errors; no bundle was written (there was none at m.sqlite)\n"), first.stderr)
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--out", "m.sqlite", "--quiet").status, 0)
        try pipeline(pattern: true)
        let again = try kiln("build", "p", "--out", "m.sqlite")
        XCTAssertTrue(again.stderr.hasPrefix("not built: msg has errors; m.sqlite was left as it was\n"), again.stderr)
    }

    func testAURLAsASourcePathSaysKilnReadsFiles() throws {
        try pipeline(path: "https://en.wikivoyage.org/wiki/Patras")
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasSuffix("manifest error at sources[0].path: \"https://en.wikivoyage.org/wiki/Patras\" is a URL; Kiln reads only files in the pipeline folder and never the network: save the page (the scraper's job) and name the saved file\n"), run.stderr)
    }

    func testKilnReportOnJSONThatIsNotAReportAndAMissingBundle() throws {
        try #"{"a": 1}"#.write(to: file("other.json"), atomically: true, encoding: .utf8)
        let other = try kiln("report", "other.json")
        XCTAssertEqual(other.status, 1)
        XCTAssertEqual(other.stderr, "Error: other.json is not a Kiln build report (the JSON kiln build writes): bundle is missing\n")
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--out", "m.sqlite", "--quiet").status, 0)
        let missing = try kiln("report", "m.report.json", "--bundle", "gone.sqlite", "--out", "page.html")
        XCTAssertEqual(missing.status, 1, "the help promises 1 for an unreadable bundle")
        XCTAssertEqual(missing.stderr, "Error: the bundle gone.sqlite given with --bundle does not exist; the maps are drawn from it\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("page.html").path))
    }

    func testKilnReportOnADeviceOrAFolderSaysWhatItIs() throws {
        let device = try kiln("report", "/dev/zero")
        XCTAssertEqual(device.status, 74)
        XCTAssertEqual(device.stderr, "Error: /dev/zero is a character device, not a report file\n")
        try FileManager.default.createDirectory(at: file("folder"), withIntermediateDirectories: true)
        XCTAssertEqual(try kiln("report", "folder").stderr, "Error: folder is a folder, not a report file\n")
    }

    func testInvisibleCharactersInScrapedTextAreShownEscaped() throws {
        let folder = try writePipeline("p", manifest: """
            { bundle: "msg", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text", pattern: "^[a-z]+$" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
            """)
        try "line\u{2028}break\u{200B}\u{FEFF}x\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains(#"line\u{2028}break\u{200B}\u{FEFF}x"#), run.stderr)
        XCTAssertFalse(run.stderr.unicodeScalars.contains { [0x2028, 0x200B, 0xFEFF].contains($0.value) }, "nothing invisible reaches the terminal")
    }
}
