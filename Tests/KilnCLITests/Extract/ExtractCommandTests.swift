import Foundation
import XCTest

/// `kiln extract` and `kiln test` end to end: what a timetable pattern captured and what it missed.
final class ExtractCommandTests: CLITestCase {
    func testExtractShowsRecordsThenTheMissedLine() throws {
        try copy("raw/patras-web", to: "web")
        let run = try kiln("extract", "timetables", "web/timetables/line-1.1.html", "--manifest", "web")
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.components(separatedBy: "\n")
        XCTAssertTrue(lines[0].hasPrefix("file:line"), run.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("web/timetables/line-1.1.html:14") && $0.contains("Καθημερινές") && $0.hasSuffix("06:20  07:00  20") },
                      run.stdout)
        XCTAssertTrue(run.stdout.contains("\n9 records\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("1 unmatched candidate line:\n  web/timetables/line-1.1.html:28: no row pattern captured this line that looks like data: \"Τελευταίο δρομολόγιο από Πλατεία Γεωργίου στις 23:15\""),
                      run.stdout)
    }

    func testExtractJSON() throws {
        try copy("raw/patras-web", to: "web")
        let run = try kiln("extract", "timetables", "web/timetables/line-2.1.html", "web/timetables/line-6.10.html",
                           "--manifest", "web/kiln.json5", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["fields"] as? [String], ["line", "name", "days", "from", "until", "every"])
        let records = try XCTUnwrap(object["records"] as? [[String: Any]])
        XCTAssertEqual(Set(records.compactMap { $0["line"] as? String }), ["2.1", "6.10"])
        XCTAssertTrue(records.allSatisfy { ($0["_file"] as? String)?.hasPrefix("web/timetables/line-") == true })
        XCTAssertEqual((object["unmatched"] as? [Any])?.count, 0)
        // line 2.1's page is in windows-1253: its Greek must come through intact.
        XCTAssertTrue(records.contains { $0["line"] as? String == "2.1" && ($0["days"] as? String)?.hasPrefix("Καθημερινές") == true })
    }

    func testExtractUnknownSourceIsAUsageError() throws {
        try copy("raw/patras-web", to: "web")
        let run = try kiln("extract", "nope", "web/lines.xml", "--manifest", "web")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: the manifest has no source \"nope\"; sources: stops, stop-lines, lines"), run.stderr)
    }

    func testExtractMissingFileIsAnIOError() throws {
        try copy("raw/patras-web", to: "web")
        let run = try kiln("extract", "timetables", "web/nothing.html", "--manifest", "web")
        XCTAssertEqual(run.status, 74)
        XCTAssertEqual(run.stderr, "Error: cannot read web/nothing.html: there is no such file\n")
    }

    func testFixturesPassOnTheSample() throws {
        try copy("raw/patras-web", to: "web")
        let run = try kiln("test", "web")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertEqual(run.stdout, """
            ok   timetables/line-1.1.html (source timetables)
            ok   timetables/line-2.1.html (source timetables)
            ok   timetables/line-5.1.html (source timetables)
            3 passed, 0 failed

            """)
    }

    func testChangedExtractionFailsWithADiff() throws {
        let folder = try copy("raw/patras-web", to: "web")
        let page = folder.appendingPathComponent("timetables/line-1.1.html")
        var html = try String(contentsOf: page, encoding: .utf8)
        html = html.replacingOccurrences(of: "<tr><td>07:00<td>21:00<td>10", with: "<tr><td>07:00<td>21:00<td>12")
        try html.write(to: page, atomically: true, encoding: .utf8)

        let run = try kiln("test", "web")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("FAIL timetables/line-1.1.html (source timetables) differs from fixtures/line-1.1.json:\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  - record at line 15: line=\"1.1\" name=\"Τερψιθέα - Εγλυκάδα\" days=\"Καθημερινές\" from=\"07:00\" until=\"21:00\" every=\"10\"\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  + record at line 15: line=\"1.1\" name=\"Τερψιθέα - Εγλυκάδα\" days=\"Καθημερινές\" from=\"07:00\" until=\"21:00\" every=\"12\"\n"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("2 passed, 1 failed\n"), run.stdout)

        XCTAssertEqual(try kiln("test", "web", "--update").status, 0)
        XCTAssertEqual(try kiln("test", "web").status, 0)
    }

    func testMissingExpectedFileFails() throws {
        let folder = try copy("raw/patras-web", to: "web")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("fixtures/line-5.1.json"))
        let run = try kiln("test", "web")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("FAIL timetables/line-5.1.html (source timetables): fixtures/line-5.1.json does not exist; run kiln test --update to write it"), run.stdout)
    }
}
