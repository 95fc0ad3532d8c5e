import Foundation
import XCTest
import KilnC
import KilnKit

/// Quoted CSV (`quote`, `header: "names"`) and `_file` through the `kiln` binary: the finding and exit code for each bad
/// input, the records that were not lost, and Kiln's own `csv` export read back by the `delimited` reader.
final class DelimitedQuotingCommandTests: CLITestCase {
    /// A pipeline `name` whose one quoted-CSV source reads `path` (fields `id`, `name` by header name) into `t`.
    private func pipeline(_ name: String, path: String = "stops.csv", files: [String: String]) throws {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (file, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(file)) }
        try """
            { bundle: "quoted", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "text" }, { name: "name", type: "text" }, { name: "file", type: "text" }] }],
              sources: [{ name: "s", format: "delimited", path: "\(path)",
                         options: { separator: ",", quote: "\\"", header: "names", fields: ["id", "name"] },
                         into: "t", columns: { id: "id", name: { field: "name", normalize: [] }, file: "_file" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
    }

    private func rows(_ bundle: String, _ sql: String) throws -> [[String]] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" } }
    }

    /// The findings of a build's report, as `file:line[:column]: severity: message`.
    private func findings(_ report: String) throws -> [String] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return (object["diagnostics"] as? [[String: Any]] ?? []).map { finding in
            let place = [finding["file"] as? String, (finding["line"] as? Int).map(String.init), (finding["column"] as? Int).map(String.init)]
            return place.compactMap { $0 }.joined(separator: ":") + ": \(finding["severity"] as? String ?? ""): \(finding["message"] as? String ?? "")"
        }
    }

    func testQuotedCommasAndLineBreaksBuildWithTheFirstLineOfEachRecord() throws {
        try pipeline("p", files: ["stops.csv": "id,name\n1,\"Hospital\"\n2,\"Main St, North\"\n3,\"two\nlines\"\n4,after\n"])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, name, file FROM t ORDER BY id"), [
            ["1", "Hospital", "stops.csv"], ["2", "Main St, North", "stops.csv"], ["3", "two\nlines", "stops.csv"], ["4", "after", "stops.csv"]])
        let extract = try kiln("extract", "s", "p/stops.csv", "--manifest", "p", "--format", "json")
        XCTAssertEqual(extract.status, 0, extract.stderr)
        let records = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(extract.stdout.utf8)) as? [String: Any])?["records"] as? [[String: Any]])
        XCTAssertEqual(records.compactMap { $0["_line"] as? Int }, [2, 3, 4, 6])
    }

    /// csv-spectrum's files with records ended by CR alone (old Mac OS exports), which Python's csv reads.
    func testRecordsEndedByCRAloneBuild() throws {
        try pipeline("p", files: ["stops.csv": "id,name\r1,\"Hospital\"\r2,\"two\rlines\"\r3,after\r"])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, name FROM t ORDER BY id"), [["1", "Hospital"], ["2", "two\rlines"], ["3", "after"]])
        let extract = try kiln("extract", "s", "p/stops.csv", "--manifest", "p", "--format", "json")
        let records = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(extract.stdout.utf8)) as? [String: Any])?["records"] as? [[String: Any]])
        XCTAssertEqual(records.compactMap { $0["_line"] as? Int }, [2, 3, 5])
    }

    func testAnUnclosedQuoteFailsTheBuildNamingTheLineWhereItOpened() throws {
        try pipeline("p", files: ["stops.csv": "id,name\n1,fine\n2,\"never closed\n3,lost\n"])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try findings("p.report.json"), ["stops.csv:3:3: error: the quoted field opened here is never closed: the record of line 3 is left out"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("p.sqlite").path), "no bundle from a build with an error")
    }

    func testTextAfterAClosingQuoteIsAWarningAndTheValueIsKept() throws {
        try pipeline("p", files: ["stops.csv": "id,name\n1,\"Hospital\" North\n2,Plain\n"])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try findings("p.report.json"), ["stops.csv:2:13: warning: text after the closing quote of a quoted field (kept as written)"])
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, name FROM t ORDER BY id"), [["1", "Hospital North"], ["2", "Plain"]])
    }

    func testAHeaderWithoutAFieldsColumnFailsTheBuild() throws {
        try pipeline("p", files: ["stops.csv": "id,title\n1,x\n"])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try findings("p.report.json").sorted(), [
            "stops.csv:1: error: the header has no column for the field \"name\"; its columns: \"id\", \"title\"",
            "stops.csv:1: info: no field reads the column \"title\": its values are not read"])
    }

    func testFileMapsEachInputOfAGlobIntoAColumn() throws {
        try pipeline("p", path: "feeds/*.csv", files: [:])
        let feeds = file("p/feeds")
        try FileManager.default.createDirectory(at: feeds, withIntermediateDirectories: true)
        try Data("id,name\n1,Patras\n".utf8).write(to: feeds.appendingPathComponent("a.csv"))
        try Data("id,name\n2,\"Rio, Achaea\"\n".utf8).write(to: feeds.appendingPathComponent("b.csv"))
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, name, file FROM t ORDER BY id"),
                       [["1", "Patras", "feeds/a.csv"], ["2", "Rio, Achaea", "feeds/b.csv"]])
    }

    func testTheCSVExportReadsBackToTheSameValues() throws {
        let values = ["plain", "comma, inside", "quote \" inside", "\"starts quoted\"", "line\nbreak", "crlf\r\nbreak",
                      "lone\rcr", "  leading spaces", "trailing  ", ";semicolon;", "Ερμού ; Πλατεία", ",", "\n", "\"\""]
        let source = file("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let records = values.enumerated().map { ["id": "\($0.offset)", "v": $0.element] }
        try JSONSerialization.data(withJSONObject: ["rows": records]).write(to: source.appendingPathComponent("values.json"))
        try """
            { bundle: "values", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "text" }, { name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "json", path: "values.json", options: { records: "rows/*", fields: { id: "id", v: "v" } },
                         into: "t", columns: { id: "id", v: { field: "v", normalize: [] } } }],
              exports: [{ name: "csv", files: [{ path: "values.csv", format: "csv", query: "SELECT id, v AS name FROM t ORDER BY CAST(id AS INTEGER)" }] }] }
            """.write(to: source.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "source", "--out", "source.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try rows("source.sqlite", "SELECT v FROM t ORDER BY CAST(id AS INTEGER)").map { $0[0] }, values)
        let export = try kiln("export", "csv", "source.sqlite", "--out", "exported", "--manifest", "source")
        XCTAssertEqual(export.status, 0, export.stderr)

        try pipeline("back", path: "values.csv", files: [:])
        try FileManager.default.copyItem(at: file("exported/values.csv"), to: file("back/values.csv"))
        let run = try kiln("build", "back", "--out", "back.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("diagnostics: 0 errors, 0 warnings, 0 info"), run.stderr)
        XCTAssertEqual(try rows("back.sqlite", "SELECT name FROM t ORDER BY CAST(id AS INTEGER)").map { $0[0] }, values)
    }
}
