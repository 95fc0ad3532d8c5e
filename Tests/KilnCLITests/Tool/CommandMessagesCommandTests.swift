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

    /// A file that is not there is one sentence everywhere: `cannot read PATH: there is no such file` (exit 74),
    /// never Foundation's "The operation could not be completed".
    func testAMissingFileIsOneSentenceWithItsReasonInEveryCommand() throws {
        try copy("raw/patras", to: "patras")
        let runs: [(arguments: [String], path: String)] = [
            (["check", "missing.sqlite"], "missing.sqlite"),
            (["check", "missing.sqlite", "--manifest", "patras"], "missing.sqlite"),
            (["report", "missing.json"], "missing.json"),
            (["diff", "missing.sqlite", "other.sqlite"], "missing.sqlite"),
            (["extract", "stops", "missing.txt", "--manifest", "patras"], "missing.txt"),
        ]
        for (arguments, path) in runs {
            let run = try kiln(arguments)
            XCTAssertEqual(run.status, 74, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr, "Error: cannot read \(path): there is no such file\n", "\(arguments)")
            XCTAssertFalse(run.stderr.contains("could not be completed"), run.stderr)
        }
    }

    /// `-` reads standard input where a command reads one file: a bundle to check, a report to render (with --out),
    /// an input to extract from (named `-` in the output).
    func testADashReadsStandardInput() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--quiet").status, 0)
        let check = try kilnInShell("< build/patras.sqlite", ["check", "-", "--manifest", "patras"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("schema     passed"), check.stdout)
        XCTAssertEqual(try kilnInShell("< patras/kiln.json5", ["check", "-", "--manifest", "patras"]).status, 1, "not a bundle")
        let report = try kilnInShell("< build/patras.report.json", ["report", "-", "--out", "page.html"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(try String(contentsOf: file("page.html"), encoding: .utf8).contains("patras"))
        let noOut = try kilnInShell("< build/patras.report.json", ["report", "-"])
        XCTAssertEqual(noOut.status, 64)
        XCTAssertTrue(noOut.stderr.hasPrefix("Error: a report read from standard input (-) has no folder to write its page beside: give --out PAGE"), noOut.stderr)
        let extract = try kilnInShell("< patras/StopsUTF8.txt", ["extract", "stops", "-", "--manifest", "patras", "--format", "json"])
        XCTAssertEqual(extract.status, 0, extract.stderr)
        let direct = try kiln("extract", "stops", "patras/StopsUTF8.txt", "--manifest", "patras", "--format", "json")
        XCTAssertEqual(extract.stdout, direct.stdout.replacingOccurrences(of: "\"patras/StopsUTF8.txt\"", with: "\"-\""))
        XCTAssertEqual(try kilnInShell("< patras/StopsUTF8.txt", ["extract", "stops", "-", "-", "--manifest", "patras"]).status, 64)
        // One side of a diff.
        let diff = try kilnInShell("< build/patras.sqlite", ["diff", "build/patras.sqlite", "-", "--manifest", "patras"])
        XCTAssertEqual(diff.status, 0, diff.stderr)
        XCTAssertEqual(try kilnInShell("< build/patras.sqlite", ["diff", "-", "-"]).status, 64)
        let left = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter { $0.hasPrefix("kiln-stdin-") }
        XCTAssertEqual(left, [], "the copies of standard input are removed")
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
