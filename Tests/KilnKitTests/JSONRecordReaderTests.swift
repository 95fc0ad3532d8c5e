import Foundation
import XCTest
@testable import KilnKit

/// `JSONRecordReader` over yajl: records at a path, fields by key path, context, exact numbers, lines in findings.
/// Expected records come from Python's own `json` module reading the same file.
final class JSONRecordReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> JSONRecordReader {
        try JSONRecordReader(options: JSONValue.object(options).decode(JSONRecordReader.Options.self, codingPath: []))
    }

    private func fields(_ record: Record) -> [String: String] {
        Dictionary(uniqueKeysWithValues: zip(record.kind.fieldNames, record.values).compactMap { name, value in value.map { (name, $0) } })
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    private var tour: URL { KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/tour/tour.json") }

    /// Runs `script` (Python, reading the file `argv[1]`) and returns its output lines.
    private func python(_ script: String, _ url: URL) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, url.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testHotspotsWithTheirSpaceMatchPythonsJSON() throws {
        let (records, log) = try read(reader([
            "records": .string("spaces/*/hotspots/*"),
            "fields": .object(["id": .string("id"), "ath": .string("position/ath"), "atv": .string("position/atv"), "kind": .string("kind"),
                               "exhibit": .string("exhibit"), "target": .string("target"), "width": .string("width")]),
            "context": .object(["spaces/*": .object(["space": .string("id")])]),
        ]), url: tour)
        let actual = records.map { r in
            let f = fields(r)
            return ["space", "id", "ath", "atv", "kind", "exhibit", "target", "width"].map { f[$0] ?? "-" }.joined(separator: "|")
        }
        let expected = try python("""
            import json, sys
            t = json.load(open(sys.argv[1]), parse_float=str, parse_int=str)
            for s in t["spaces"]:
                for h in s["hotspots"]:
                    print("|".join([s["id"], h["id"], h["position"]["ath"], h["position"]["atv"], h["kind"], h.get("exhibit", "-"), h.get("target", "-"), h["width"]]))
            """, tour)
        XCTAssertEqual(actual, expected)
        XCTAssertEqual(records.map { fields($0)["_ordinal"] }, (1...records.count).map { String($0) })
        XCTAssertEqual(records.first.map { fields($0)["_position"] }, "1")
        // Members no field reads are reported, with the line of their first appearance.
        let unread = try XCTUnwrap(log.diagnostics.first { $0.code == "json.unread" && $0.message.contains("\"note\"") }, describe(log))
        XCTAssertEqual(unread.severity, .info)
        let noteLine = try python("""
            import sys
            for number, text in enumerate(open(sys.argv[1]), 1):
                if '"note"' in text:
                    print(number); break
            """, tour)
        XCTAssertEqual(unread.provenance?.line.map(String.init), noteLine.first)
    }

    func testNumbersBeyondTwoToThe53KeepTheirText() throws {
        let (records, _) = try read(reader(["records": .string("exhibits/*"),
                                            "fields": .object(["id": .string("id"), "inventory": .string("inventory")])]), url: tour)
        let expected = try python("""
            import json, sys
            for e in json.load(open(sys.argv[1]))["exhibits"]:
                print(e["id"], e["inventory"])
            """, tour)
        XCTAssertEqual(records.map { "\(fields($0)["id"]!) \(fields($0)["inventory"]!)" }, expected)
        XCTAssertTrue(expected.contains("foucault 9007199254740993"))
    }

    func testObjectFieldsAreCompactJSONAndBooleansAreNumbers() throws {
        let (records, _) = try read(reader(["records": .string("items/*"),
                                            "fields": .object(["where": .string("where"), "open": .string("open"), "tags": .string("tags")])]),
                                    #"{"items": [{"where": {"ath": -1.5e2, "name": "Α\"β"}, "open": true, "tags": ["a", [1, {}], null]}]}"#, name: "x.json")
        XCTAssertEqual(fields(records[0])["where"], #"{"ath":-1.5e2,"name":"Α\"β"}"#)
        XCTAssertEqual(fields(records[0])["open"], "1")
        XCTAssertEqual(fields(records[0])["tags"], #"["a",[1,{}],null]"#)
    }

    func testMalformedJSONIsAnErrorAtItsLine() throws {
        let (records, log) = try read(reader(["records": .string("items/*"), "fields": .object(["id": .string("id")])]),
                                      "{\"items\": [\n  {\"id\": 1},\n  {\"id\": 2},\n  {\"id\": 3,,}\n]}\n", name: "bad.json")
        XCTAssertEqual(records.map { fields($0)["id"] }, ["1", "2"])
        let finding = try XCTUnwrap(log.diagnostics.first { $0.code == "json.malformed" }, describe(log))
        XCTAssertEqual(finding.provenance?.line, 4)
        XCTAssertEqual(finding.severity, .error)
    }

    func testRecordsThatAreNotObjectsAreReported() throws {
        let (records, log) = try read(reader(["records": .string("items/*"), "fields": .object(["id": .string("id")])]),
                                      "{\"items\": [\n {\"id\": 1},\n 42\n]}", name: "mixed.json")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(log.diagnostics.first { $0.code == "json.not-object" }?.provenance?.line, 3)
    }

    func testChunkBoundariesDoNotChangeEventsOrLines() throws {
        var whole: [String] = [], small: [String] = []
        XCTAssertNil(try JSONStream.parse(tour) { event, line in whole.append("\(line) \(event)"); return true })
        XCTAssertNil(try JSONStream.parse(tour, chunkSize: 7) { event, line in small.append("\(line) \(event)"); return true })
        XCTAssertEqual(whole, small)
        XCTAssertGreaterThan(whole.count, 300)
    }

    func testOptionsAreChecked() {
        XCTAssertThrowsError(try reader(["records": .string("a/*"), "fields": .object(["_ordinal": .string("x")])]))
        XCTAssertThrowsError(try reader(["records": .string("a/*"), "fields": .object(["x": .string("x")]),
                                         "context": .object(["b": .object(["y": .string("y")])])]))
        XCTAssertThrowsError(try reader(["records": .string("a/*/b/*"), "fields": .object(["x": .string("x")]),
                                         "context": .object(["a/*": .object(["x": .string("id")])])]))
    }

    func testDeepNestingAndAByteOrderMarkAreRead() throws {
        let depth = 100_000
        let text = "\u{FEFF}{\"items\": [{\"id\": 1, \"deep\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}]}"
        let (records, log) = try read(reader(["records": .string("items/*"), "fields": .object(["id": .string("id")])]), text, name: "deep.json")
        XCTAssertEqual(records.map { fields($0)["id"] }, ["1"], describe(log))
        XCTAssertTrue(log.diagnostics.contains { $0.code == "json.unread" && $0.message.contains("deep") })
    }

    func testInvalidUTF8IsMalformedAtItsLine() throws {
        var bytes = Array("{\"items\": [\n{\"id\": \"Caf\u{E9}\"}\n]}".utf8)
        let index = try XCTUnwrap(bytes.firstIndex(of: 0xC3))
        bytes.replaceSubrange(index...index + 1, with: [0xE9])
        let (_, log) = try read(reader(["records": .string("items/*"), "fields": .object(["id": .string("id")])]), url: try write(Data(bytes), to: "latin1.json"))
        XCTAssertEqual(log.diagnostics.first { $0.code == "json.malformed" }?.provenance?.line, 2, describe(log))
    }
}
