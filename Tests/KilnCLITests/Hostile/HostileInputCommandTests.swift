import Foundation
import XCTest
import KilnTestSupport

/// A representative part of the hostile-input corpus through the `kiln` binary (the rest is tested on the library in
/// `Hostile*Tests`): each case has its exact message and exit code, and no bundle is written when it must not be.
final class HostileInputCommandTests: CLITestCase {
    /// A pipeline `name` whose one source of `format` reads `path` into table `t(v text)`.
    @discardableResult
    private func pipeline(_ name: String, format: String, options: String, path: String, field: String = "v", table: String = "t") throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "hostile", schemaVersion: 1,
              tables: [{ name: "\(table)", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "\(format)", path: "\(path)", options: \(options), into: "\(table)", columns: { v: "\(field)" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        return folder
    }

    private func manifestLine(_ folder: URL, containing marker: String) throws -> Int {
        let lines = try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8).components(separatedBy: "\n")
        return (lines.firstIndex { $0.contains(marker) } ?? -1) + 1
    }

    // MARK: Confinement

    func testPathsOutsideThePipelineAreManifestErrors() throws {
        let folder = try pipeline("p", format: "delimited", options: #"{ fields: ["v"] }"#, path: "../../etc/passwd")
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "sources:")): manifest error at sources[0].path: \"../../etc/passwd\" leaves the pipeline folder\n"),
                      run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build").path), "nothing is written")

        try pipeline("abs", format: "delimited", options: #"{ fields: ["v"] }"#, path: "/etc/passwd")
        let absolute = try kiln("build", "abs")
        XCTAssertEqual(absolute.status, 64)
        XCTAssertTrue(absolute.stderr.contains("manifest error at sources[0].path: \"/etc/passwd\" is an absolute path; source paths are relative to the pipeline folder"),
                      absolute.stderr)
    }

    func testAllowPathLetsABuildReadAnOutsideFolder() throws {
        let shared = file("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        try "Πάτρα\nΑθήνα\n".write(to: shared.appendingPathComponent("names.txt"), atomically: true, encoding: .utf8)
        try pipeline("p", format: "delimited", options: #"{ fields: ["v"] }"#, path: shared.appendingPathComponent("names.txt").path)

        let refused = try kiln("build", "p", "--quiet")
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderr.contains("is an absolute path; source paths are relative to the pipeline folder"), refused.stderr)

        let allowed = try kiln("build", "p", "--allow-path", "shared", "--allow-path", "/usr/share", "--out", "out/h.sqlite")
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        XCTAssertTrue(allowed.stderr.contains("  t  2 rows\n"), allowed.stderr)

        let missing = try kiln("build", "p", "--allow-path", "/no/such/folder")
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderr.hasPrefix("Error: --allow-path /no/such/folder: there is no such file or folder\nUsage: kiln build "), missing.stderr)
    }

    func testTableNamesThatAreNotIdentifiersAreManifestErrors() throws {
        let folder = try pipeline("p", format: "delimited", options: #"{ fields: ["v"] }"#, path: "in.txt", table: "t; DROP TABLE x")
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "tables:")): manifest error at tables[0].name: \"t; DROP TABLE x\" is not a plain identifier"),
                      run.stderr)
    }

    // MARK: Inputs

    func testAnExternalEntityFailsTheBuildWithoutReadingTheFile() throws {
        let folder = try pipeline("p", format: "xml", options: #"{ record: "rec", fields: { v: "." } }"#, path: "in.xml")
        try "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<r><rec>&x;</rec></r>\n"
            .write(to: folder.appendingPathComponent("in.xml"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "p/in.xml:1: error: the document declares entities; Kiln does not expand entities (they can read local files or explode in size); the rest of this file is not read [xml.entity]\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/hostile.sqlite").path))
        XCTAssertFalse(try String(contentsOf: file("build/hostile.report.json"), encoding: .utf8).contains("root:"))
    }

    /// A UTF-16 document whose last byte is half a character (libxml2's error tests: truncated-utf16.xml), which
    /// libxml2 drops without a word: an error at its line, and no bundle (before, a build with only `source.empty`).
    func testAUTF16DocumentCutInsideACharacterFailsTheBuild() throws {
        let folder = try pipeline("p", format: "xml", options: #"{ record: "rec", fields: { v: "." } }"#, path: "in.xml")
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<r><rec>v</rec></r>"
        try Data([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } + [0x61]).write(to: folder.appendingPathComponent("in.xml"))
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("p/in.xml:2:"), run.stderr)
        XCTAssertTrue(run.stderr.contains(": error: malformed XML: the file ends in the middle of a UTF-16 character (an odd number of bytes)"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/hostile.sqlite").path))
    }

    func testDeeplyNestedHTMLFailsTheBuild() throws {
        let folder = try pipeline("p", format: "html", options: #"{ records: "//p", fields: { v: "." } }"#, path: "in.html")
        let depth = 100_000
        try ("<html><body><p>before</p>\n" + String(repeating: "<div>", count: depth) + String(repeating: "</div>", count: depth) + "</body></html>")
            .write(to: folder.appendingPathComponent("in.html"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.hasPrefix("p/in.html:2:"), run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix(": error: malformed HTML: Excessive depth in document: 256 (libxml2's limit, which Kiln keeps); the rest of this page is not read [html.malformed]\n"), run.stderr)
    }

    func testAHundredMegabyteLineFailsTheBuildPromptly() throws {
        let folder = try pipeline("p", format: "delimited", options: #"{ fields: ["v"] }"#, path: "in.txt")
        let url = folder.appendingPathComponent("in.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: Data("first\n".utf8)))
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        let piece = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        // The fast tier's line is 17 MiB: still over the 16 MiB limit.
        let mebibytes = TestTier.size(100, fast: 17)
        for _ in 0..<mebibytes { try handle.write(contentsOf: piece) }
        try handle.write(contentsOf: Data("\nlast\n".utf8))
        try handle.close()
        let started = Date()
        let run = try kiln("build", "p", "--quiet")
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, "p/in.txt:2: error: line is \(mebibytes << 20) bytes long, over the limit of 16777216 bytes for one line; it is skipped [line.too-long]\n")
    }

    func testCatastrophicBacktrackingIsAFindingNotAHang() throws {
        try pipeline("p", format: "text", options: #"{ extract: { row: "^(?<v>(a|aa)+)b$", matchLimit: 100000 } }"#, path: "in.txt")
        let crafted = String(repeating: "a", count: 60) + "!b"
        try "ab\n\(crafted)\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        let extract = try kiln("extract", "s", "p/in.txt", "--manifest", "p")
        XCTAssertEqual(extract.status, 0)
        XCTAssertTrue(extract.stdout.contains("p/in.txt:2: error: regular expression /^(?<v>(a|aa)+)b$/ failed: match limit exceeded on the line \"\(crafted)\"; the line is passed over [extract.match-limit]"),
                      extract.stdout)
        let build = try kiln("build", "p", "--quiet")
        XCTAssertEqual(build.status, 1)
        XCTAssertTrue(build.stderr.contains("match limit exceeded"), build.stderr)
    }

    func testNumbersThatAreNotNumbersFailTheBuild() throws {
        let folder = file("n")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "numbers", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "real" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t",
                          columns: { v: { field: "v", normalize: ["decimal"] } } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try "38,25\n-0\n1e309\nNaN\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "n", "--quiet")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stderr, """
            n/in.txt:3: error: t.v: expected a decimal number, found "1e309" [value]
            n/in.txt:4: error: t.v: expected a decimal number, found "NaN" [value]

            """)
    }

    func testAnEmptyInputIsAWarning() throws {
        try pipeline("p", format: "delimited", options: #"{ fields: ["v"] }"#, path: "in.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: file("p/in.txt").path, contents: Data([0xEF, 0xBB, 0xBF])))
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("  input.empty (warning) ×1\n    p/in.txt: the file holds no data (it is empty, or only white space or a byte-order mark)\n"),
                      run.stderr)
    }

    func testABlankJSONOrICalendarFileIsReportedInItsOwnFormatsWords() throws {
        try writePipeline("p", manifest: """
            { bundle: "blank", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }, { name: "e", columns: [{ name: "uid", type: "text" }] }],
              sources: [{ name: "j", format: "json", path: "in.json", options: { records: "*", fields: { v: "v" } }, into: "t", columns: { v: "v" } },
                        { name: "c", format: "ics", path: "in.ics", into: { event: { table: "e", columns: { uid: "uid" } } } }] }
            """)
        try " \n\t\r\n".write(to: file("p/in.json"), atomically: true, encoding: .utf8)
        try Data().write(to: file("p/in.ics"))
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("  json.malformed (error) ×1\n    p/in.json:1: malformed JSON: the file holds no JSON (it is empty, or only white space or a byte-order mark)\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  ics.malformed (error) ×1\n    p/in.ics:1: the file holds no iCalendar data (it is empty, or only white space or a byte-order mark)\n"), run.stderr)
        XCTAssertFalse(run.stderr.contains("XML"), run.stderr)
    }

    func testANULByteInAnHTMLPageIsAnErrorAsInText() throws {
        try writePipeline("p", manifest: """
            { bundle: "nul", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "pages", format: "html", path: "*.html", options: { records: "//p", fields: { v: "." } }, into: "t", columns: { v: "v" } }] }
            """)
        try Data(Array("<p>one</p>\n<p>t".utf8) + [0] + Array("wo</p>\n".utf8)).write(to: file("p/a.html"))
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("  encoding (error) ×1\n    p/a.html:2:5: line holds a NUL byte (at column 5); is the file UTF-16, or not text at all?\n"), run.stderr)
    }
}
