import Foundation
import FoundationXML
import XCTest
import KilnC
import KilnKit

/// `--format github` and `--format junit` of `kiln build`, `kiln diff` and `kiln test`, as CI reads them.
final class CIFormatCommandTests: CLITestCase {
    /// The planted defects of Tests/Fixtures/patras-broken/README.md that name one file and one line: (file, line).
    private func plantedDefects() throws -> [(file: String, line: Int)] {
        let readme = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/patras-broken/README.md"), encoding: .utf8)
        return readme.components(separatedBy: "\n").compactMap { row in
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4, Int(cells[1]) != nil, let line = Int(cells[3]), !cells[2].contains(" ") else { return nil }
            return (cells[2], line)
        }
    }

    /// One workflow command as GitHub's runner parses it: `::COMMAND key=value,…::message`.
    private func parse(_ annotation: String) -> (command: String, properties: [String: String], message: String)? {
        guard annotation.hasPrefix("::"), let end = annotation.range(of: "::", range: annotation.index(annotation.startIndex, offsetBy: 2)..<annotation.endIndex) else { return nil }
        let head = annotation[annotation.index(annotation.startIndex, offsetBy: 2)..<end.lowerBound]
        let parts = head.split(separator: " ", maxSplits: 1)
        var properties: [String: String] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: ",") {
            let keyValue = pair.split(separator: "=", maxSplits: 1).map(String.init)
            properties[keyValue[0]] = keyValue.count > 1 ? keyValue[1].removingPercentEncoding : ""
        }
        return (String(parts[0]), properties, String(annotation[end.upperBound...]))
    }

    func testBuildAnnotatesEachPlantedDefectAtItsInputFileAndLine() throws {
        try brokenPipeline()
        let run = try kiln("build", "broken", "--out", "app.sqlite", "--format", "github")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stderr, "")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let annotations = lines.dropLast().compactMap(parse)
        XCTAssertEqual(annotations.count, lines.count - 1, run.stdout)
        XCTAssertTrue(annotations.allSatisfy { ["error", "warning", "notice"].contains($0.command) && $0.properties["title"] != nil }, run.stdout)
        let places = Set(annotations.map { "\($0.properties["file"] ?? ""):\($0.properties["line"] ?? "")" })
        let defects = try plantedDefects()
        XCTAssertGreaterThan(defects.count, 15)
        for defect in defects {
            XCTAssertTrue(places.contains("broken/\(defect.file):\(defect.line)"), "no annotation at broken/\(defect.file):\(defect.line)\n\(run.stdout)")
        }
        // The same findings as the report, the errors as ::error.
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("app.report.json"))) as? [String: Any])
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(annotations.filter { $0.command == "error" }.count, diagnostics.filter { $0["severity"] as? String == "error" }.count)
        XCTAssertTrue(lines.contains("::error file=broken/Routes_UTF8.txt,line=24,title=foreign-key::route_stop.stop_code \"0999\" refers to no stop (no stop.code \"0999\")"), run.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("::error file=broken/linesutf8.txt,line=11,col=23,title=encoding::line is not valid UTF-8 (byte 0xFF at column 23)") }, run.stdout)
        XCTAssertTrue(try XCTUnwrap(lines.last).hasPrefix("kiln build patras: not built ("), run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("app.sqlite").path))
    }

    /// Every spelling of the pipeline argument, from inside the pipeline folder, from a folder in it and from outside:
    /// each path the four outputs print (annotations, JUnit, --quiet and the text summary, and a manifest error) is a
    /// relative path from the current folder to the input, the same for every spelling run from one folder.
    func testEveryPathIsFromTheCurrentFolderForEverySpellingOfThePipeline() throws {
        let folder = try brokenPipeline("pb")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let places: [(cwd: URL, spellings: [String], prefix: String)] = [
            (folder, [".", "./", "./kiln.json5", "kiln.json5", folder.path], ""),
            (folder.appendingPathComponent("sub"), ["..", "../", "../kiln.json5", folder.path + "/sub/..", folder.path], "../"),
            (workingDirectory!, ["pb", "./pb", "pb/kiln.json5", folder.path], "pb/"),
        ]
        // The places findings are at: `file=` of an annotation, `path:line:` at the start of a line (after the
        // indent or a JUnit tag). Paths inside messages are the pipeline's own names.
        func paths(_ text: String) -> Set<String> {
            Set(text.matches(of: /(?:^|>|file=)\s*([^\s>:,=]+)(?::\d+:|,line=)/.anchorsMatchLineEndings()).map { String($0.1) })
        }
        for place in places {
            for format in [["--format", "github"], ["--format", "junit"], ["--quiet"], []] {
                var seen: Set<String>?
                for spelling in place.spellings {
                    let run = try kiln(in: place.cwd, ["build", spelling, "--out", folder.path + "/../app.sqlite"] + format)
                    XCTAssertEqual(run.status, 1, run.stderr)
                    let found = paths(run.stdout + run.stderr)
                    XCTAssertTrue(found.isSuperset(of: [place.prefix + "Routes_UTF8.txt", place.prefix + "StopsUTF8.txt"]), "\(spelling) \(format) from \(place.cwd.path): \(found)")
                    for path in found {
                        XCTAssertTrue(path.hasPrefix(place.prefix) && !path.dropFirst(place.prefix.count).contains("/"), "\(spelling) \(format): \(path)")
                        XCTAssertTrue(FileManager.default.fileExists(atPath: place.cwd.appendingPathComponent(path).path), path)
                    }
                    if let seen { XCTAssertEqual(found, seen, spelling) }
                    seen = found
                }
            }
        }
        // A manifest error names the manifest from the current folder too.
        try "{ bundle: \"b\", kind: 1 }".write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        for (cwd, spelling, shown) in [(folder, ".", "kiln.json5"), (folder.appendingPathComponent("sub"), "..", "../kiln.json5"), (workingDirectory!, folder.path, "pb/kiln.json5")] {
            let run = try kiln(in: cwd, ["build", spelling])
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("Error: \(shown):1: manifest error"), run.stderr)
        }
    }

    func testBuildJUnitHasACasePerSourceAndRule() throws {
        try brokenPipeline()
        let run = try kiln("build", "broken", "--out", "app.sqlite", "--format", "junit")
        XCTAssertEqual(run.status, 1, run.stderr)
        let document = try XMLDocument(data: Data(run.stdout.utf8))
        func names(_ xpath: String) throws -> [String] {
            try document.nodes(forXPath: xpath).compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        }
        let manifest = try String(contentsOf: file("broken/kiln.json5"), encoding: .utf8)
        // Every source and rule of the manifest, by the names it writes.
        for source in try names("//testsuite[@name='sources']/testcase") {
            XCTAssertTrue(manifest.contains("name: \"\(source)\""), source)
        }
        let sourceNames = try NSRegularExpression(pattern: #"name: "([^"]+)",\s*format:"#)
            .matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest))
            .map { String(manifest[Range($0.range(at: 1), in: manifest)!]) }
        XCTAssertEqual(try names("//testsuite[@name='sources']/testcase"), sourceNames)
        for rule in try names("//testsuite[@name='rules']/testcase") { XCTAssertTrue(manifest.contains("code: \"\(rule)\""), rule) }
        let failed = try Set(names("//testcase[failure]"))
        XCTAssertTrue(failed.isSuperset(of: ["stops", "lines", "routes", "timetables", "starting-points", "route.order", "coordinates", "line.no-route"]), "\(failed)")
        XCTAssertFalse(failed.contains("route.transfers"), "a warning is no failure")
        let stops = try XCTUnwrap(document.nodes(forXPath: "//testcase[@name='stops']/failure").first?.stringValue)
        XCTAssertTrue(stops.contains("broken/StopsUTF8.txt:30: error: stop 0307: latitude 21.741253 and longitude 38.245887 are swapped"), stops)
        let root = try XCTUnwrap(document.rootElement())
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, String(failed.count))

        try copy("raw/patras", to: "patras")
        let passing = try kiln("build", "patras", "--format", "junit")
        XCTAssertEqual(passing.status, 0, passing.stderr)
        XCTAssertEqual(try XMLDocument(data: Data(passing.stdout.utf8)).rootElement()?.attribute(forName: "failures")?.stringValue, "0")
    }

    func testDiffReportsTheThresholdPerTable() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        try FileManager.default.copyItem(at: file("build/patras.sqlite"), to: file("less.sqlite"))
        // SQLite counts the rows it deletes; the diff must find the same number removed.
        let database = try Database(path: file("less.sqlite").path, mode: .readWrite)
        let removed = try XCTUnwrap(database.rows("SELECT count(*) FROM route_stop WHERE line_id = '1.1'").first?.values.first?.textValue)
        try database.execute("PRAGMA foreign_keys = OFF; DELETE FROM route_stop WHERE line_id = '1.1'")
        try database.close()
        XCTAssertGreaterThan(Int(removed) ?? 0, 1)

        let github = try kiln("diff", "build/patras.sqlite", "less.sqlite", "--max-removed", "route_stop=1", "--format", "github")
        XCTAssertEqual(github.status, 1, github.stderr)
        let lines = github.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("::") }.count, 1, github.stdout)
        XCTAssertTrue(lines[0].hasPrefix("::error file=less.sqlite,title=diff.threshold::route_stop: \(removed) of "), github.stdout)
        XCTAssertEqual(lines.last, "kiln diff: failed; compared with build/patras.sqlite: route_stop \(removed) removed")

        let junit = try kiln("diff", "build/patras.sqlite", "less.sqlite", "--max-removed", "route_stop=1", "--format", "junit")
        XCTAssertEqual(junit.status, 1)
        let document = try XMLDocument(data: Data(junit.stdout.utf8))
        let failed = try document.nodes(forXPath: "//testcase[failure]").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        XCTAssertEqual(failed, ["route_stop"])
        XCTAssertEqual(try document.nodes(forXPath: "//testsuite[@name='tables']/testcase").count, 6)

        let within = try kiln("diff", "build/patras.sqlite", "less.sqlite", "--format", "github")
        XCTAssertEqual(within.status, 0)
        XCTAssertFalse(within.stdout.contains("::error"), within.stdout)
    }

    func testTestAnnotatesTheFixtureThatDiffers() throws {
        let folder = try copy("raw/patras-web", to: "web")
        let page = folder.appendingPathComponent("timetables/line-1.1.html")
        let html = try String(contentsOf: page, encoding: .utf8)
        try html.replacingOccurrences(of: "<tr><td>07:00<td>21:00<td>10", with: "<tr><td>07:00<td>21:00<td>12").write(to: page, atomically: true, encoding: .utf8)

        let github = try kiln("test", "web", "--format", "github")
        XCTAssertEqual(github.status, 1)
        let lines = github.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, github.stdout)
        XCTAssertTrue(lines[0].hasPrefix("::error file=web/fixtures/line-1.1.json,title=fixture.differs::timetables/line-1.1.html (source timetables) differs from fixtures/line-1.1.json (2 lines):%0A+ record at line 15:"), lines[0])
        XCTAssertEqual(lines[1], "kiln test: 2 passed, 1 failed")

        let junit = try kiln("test", "web", "--format", "junit")
        XCTAssertEqual(junit.status, 1)
        let document = try XMLDocument(data: Data(junit.stdout.utf8))
        XCTAssertEqual(try document.nodes(forXPath: "//testcase").count, 3)
        let failure = try XCTUnwrap(document.nodes(forXPath: "//testcase[@name='timetables/line-1.1.html (source timetables)']/failure").first as? XMLElement)
        XCTAssertEqual(failure.attribute(forName: "type")?.stringValue, "fixture.differs")
        XCTAssertTrue(failure.stringValue?.contains("+ record at line 15: line=\"1.1\" name=\"Τερψιθέα - Εγλυκάδα\" days=\"Καθημερινές\" from=\"07:00\" until=\"21:00\" every=\"12\"") == true, failure.stringValue ?? "")

        let update = try kiln("test", "web", "--update", "--format", "junit")
        XCTAssertEqual(update.status, 64)
        XCTAssertTrue(update.stderr.hasPrefix("Error: --update writes the expected files; it takes no --format"), update.stderr)
    }

    /// A pipeline with a known info (an element of its records no field of one source reads) and a `unique` rule
    /// whose rows repeat with identical values.
    private func acknowledgingPipeline(_ acknowledged: String = "") throws {
        try writePipeline("ack", manifest: """
            { bundle: "ack", schemaVersion: 1, \(acknowledged)
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text" }] }],
              rules: [{ code: "stop.unique", kind: "unique", table: "stop", columns: ["code"] }],
              sources: [{ name: "stops", format: "xml", path: "stops.xml", options: { record: "stop", fields: { code: "@code", name: "name" } },
                          into: "stop", columns: { code: "code", name: "name" } },
                        { name: "again", format: "xml", path: "stops.xml", options: { record: "stop", fields: { code: "@code", name: "name", note: "note" } },
                          into: "stop", columns: { code: "code", name: "name" } }] }
            """)
        try #"<stops><stop code="1"><name>A</name><note>x</note></stop><stop code="2"><name>B</name></stop></stops>"#
            .write(to: file("ack/stops.xml"), atomically: true, encoding: .utf8)
    }

    /// An info acknowledged once in the manifest is no longer a ::notice on every run: the report still lists it,
    /// the verdict counts it; an error cannot be acknowledged, nor a code no finding has.
    func testAcknowledgedFindingsAreNotAnnotatedButStillReported() throws {
        try acknowledgingPipeline()
        let noisy = try kiln("build", "ack", "--format", "github")
        XCTAssertEqual(noisy.status, 0, noisy.stderr)
        XCTAssertTrue(noisy.stdout.contains("::notice file=ack/stops.xml,line=1,title=xml.unread::"), noisy.stdout)
        try FileManager.default.removeItem(at: file("ack/kiln.json5"))
        try acknowledgingPipeline(#"acknowledged: ["xml.unread", "stop.unique.identical", "table.identical-rows"],"#)
        let quiet = try kiln("build", "ack", "--format", "github")
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertFalse(quiet.stdout.contains("::notice"), quiet.stdout)
        XCTAssertFalse(quiet.stdout.contains("::warning"), quiet.stdout)
        XCTAssertTrue(quiet.stdout.hasSuffix("kiln build ack: built build/ack.sqlite (0 errors, 3 warnings, 1 info; 4 acknowledged in the manifest, not annotated)\n"), quiet.stdout)
        let report = try String(contentsOf: file("build/ack.report.json"), encoding: .utf8)
        XCTAssertTrue(report.contains("\"code\" : \"xml.unread\"") || report.contains("\"code\":\"xml.unread\""), report)
        XCTAssertTrue(try kiln("build", "ack").stderr.contains("xml.unread (info) ×1"), "text output lists it still")

        try FileManager.default.removeItem(at: file("ack/kiln.json5"))
        try acknowledgingPipeline(#"acknowledged: ["stop.unique"],"#)
        var refused = try kiln("build", "ack")
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("acknowledged[0]: \"stop.unique\" is an error, and an error fails the build: acknowledging it would hide why"), refused.stderr)
        try FileManager.default.removeItem(at: file("ack/kiln.json5"))
        try acknowledgingPipeline(#"acknowledged: ["xml.unred"],"#)
        refused = try kiln("build", "ack")
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("acknowledged[0]: no finding has the code \"xml.unred\""), refused.stderr)
    }

    /// A `unique` rule's identical repeats (`CODE.identical`) are the rule's findings: its JUnit case holds them,
    /// not the case of the source the rows came from.
    func testJUnitFilesARulesFindingsUnderTheRulesCase() throws {
        try acknowledgingPipeline()
        let run = try kiln("build", "ack", "--format", "junit")
        XCTAssertEqual(run.status, 0, run.stderr)
        let xml = run.stdout
        let ruleCase = try XCTUnwrap(xml.range(of: "<testcase classname=\"kiln.build.rule\" name=\"stop.unique\">"), xml)
        let caseEnd = try XCTUnwrap(xml[ruleCase.upperBound...].range(of: "</testcase>"))
        XCTAssertEqual(xml[ruleCase.upperBound..<caseEnd.lowerBound].components(separatedBy: "[stop.unique.identical]").count - 1, 2, xml)
        XCTAssertTrue(xml.contains("<testcase classname=\"kiln.build.source\" name=\"again\"/>"), xml)
    }
}
