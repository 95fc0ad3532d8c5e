import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// The `json` reader through the `kiln` binary (issue 28): context written after the records, member names with
/// `@key`, a misuse of `@key` (a manifest error, or an error finding for array elements), `json.unread` once per member
/// and source. Expected values come from Python's json module over the same files.
final class JSONCommandTests: CLITestCase {
    /// Writes `text` to `path` under the working folder.
    @discardableResult
    private func write(_ text: String, to path: String) throws -> URL {
        let url = file(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Python's output for `script` over the files `arguments`, one string per line.
    private func python(_ script: String, _ arguments: [String]) throws -> [String] {
        try PythonOracle.lines(ofProgram: script, arguments)
    }

    /// The `--format json` records of `kiln extract`, each as `field|field…` ("-" for NULL).
    private func extracted(_ run: Run, _ names: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stdout, file: file, line: line)
        let records = try XCTUnwrap(object["records"] as? [[String: Any]], run.stdout, file: file, line: line)
        return records.map { record in names.map { (record[$0] as? String) ?? "-" }.joined(separator: "|") }
    }

    private func report(_ name: String) throws -> [[String: Any]] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(name))) as? [String: Any])
        return object["diagnostics"] as? [[String: Any]] ?? []
    }

    func testContextWrittenAfterTheRecordsIsShipped() throws {
        // Sorted keys, as json.dumps(sort_keys=True) writes them: "children" before "name", "items" before "source".
        try write("""
            {
              "items": [
                {"children": [{"id": 1}, {"id": 2}], "name": "first"},
                {"children": [{"id": 3}], "name": "second"}
              ],
              "source": "export 7"
            }
            """, to: "late/feed.json")
        try write("""
            { bundle: "late", schemaVersion: 1,
              tables: [{ name: "child", columns: [{ name: "id", type: "integer" }, { name: "parent", type: "text" }, { name: "source", type: "text" }] }],
              sources: [{ name: "children", format: "json", path: "feed.json",
                          options: { records: "items/*/children/*", fields: { id: "id" },
                                     context: { "": { source: "source" }, "items/*": { parent: "name" } } },
                          into: "child", columns: { id: "id", parent: "parent", source: "source" } }] }
            """, to: "late/kiln.json5")
        let build = try kiln("build", "late", "--out", "late.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr)
        let database = try Database(path: file("late.sqlite").path, mode: .readOnly)
        let shipped = try database.rows("SELECT id, parent, source FROM child ORDER BY id").map { row in
            row.values.map { $0.textValue ?? "-" }.joined(separator: "|")
        }
        XCTAssertEqual(shipped, try python("""
            import json, sys
            feed = json.load(open(sys.argv[1]))
            for item in feed["items"]:
                for child in item["children"]:
                    print(f"{child['id']}|{item['name']}|{feed['source']}")
            """, [file("late/feed.json").path]))
        XCTAssertFalse(try report("late.report.json").contains { ($0["code"] as? String) == "json.late-context" })
    }

    func testScenesKeyedByIdGiveTheirKeyAsAField() throws {
        try copy("Tests/Fixtures/real/json-pannellum-tour", to: "tour")
        let tour = file("tour/example-tour.json").path
        let scenes = try extracted(kiln("extract", "scenes", "tour/example-tour.json", "--manifest", "tour", "--format", "json"), ["id", "title"])
        XCTAssertEqual(scenes, try python("""
            import json, sys
            for key, scene in json.load(open(sys.argv[1]))["scenes"].items():
                print(key + "|" + scene["title"])
            """, [tour]))
        let spots = try extracted(kiln("extract", "hotspots", "tour/example-tour.json", "--manifest", "tour", "--format", "json"), ["scene", "target"])
        XCTAssertEqual(spots, try python("""
            import json, sys
            for key, scene in json.load(open(sys.argv[1]))["scenes"].items():
                for spot in scene["hotSpots"]:
                    print(key + "|" + spot.get("sceneId", "-"))
            """, [tour]))
    }

    func testKeySyntaxMisusedIsAManifestErrorAtItsLine() throws {
        try write(#"{"items": {"a": {"position": {"x": 1}}}}"#, to: "bad/feed.json")
        try write("""
            { bundle: "bad", schemaVersion: 1,
              tables: [{ name: "item", columns: [{ name: "x", type: "text" }] }],
              sources: [{ name: "items", format: "json", path: "feed.json",
                          options: { records: "items/*",
                                     fields: { x: "position/@key" } },
                          into: "item", columns: { x: "x" } }] }
            """, to: "bad/kiln.json5")
        let run = try kiln("build", "bad", "--out", "bad.sqlite")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("kiln.json5:5: manifest error at sources[0].options.fields.x: \"@key\" stands alone"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("bad.sqlite").path))
    }

    func testAContextFieldNamingTheRecordsMemberIsAManifestErrorAndAnObjectMemberIsItsJSON() throws {
        try write(#"{"groups": [{"items": [{"id": 1}], "tags": {"a": [1, 2.50]}}]}"#, to: "ctx/feed.json")
        func manifest(_ context: String) -> String {
            """
            { bundle: "ctx", schemaVersion: 1,
              tables: [{ name: "item", columns: [{ name: "id", type: "integer" }, { name: "tags", type: "text" }] }],
              sources: [{ name: "items", format: "json", path: "feed.json",
                          options: { records: "groups/*/items/*", fields: { id: "id" },
                                     context: { "groups/*": { tags: "\(context)" } } },
                          into: "item", columns: { id: "id", tags: "tags" } }] }
            """
        }
        try write(manifest("items"), to: "ctx/kiln.json5")
        let bad = try kiln("build", "ctx", "--out", "ctx.sqlite")
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("kiln.json5:5: manifest error at sources[0].options.context.groups/*.tags: the member \"items\" holds the records"), bad.stderr)
        try write(manifest("tags"), to: "ctx/kiln.json5")
        let tags = try extracted(kiln("extract", "items", "ctx/feed.json", "--manifest", "ctx", "--format", "json"), ["id", "tags"])
        XCTAssertEqual(tags, try python("""
            import json, sys
            doc = json.load(open(sys.argv[1]), parse_float=str)
            for group in doc["groups"]:
                for item in group["items"]:
                    print(f'{item["id"]}|{{"a":[1,{group["tags"]["a"][1]}]}}')
            """, [file("ctx/feed.json").path]))
    }

    func testTheKeyOfArrayElementsIsAnErrorAndTheOtherFieldsAreKept() throws {
        try write("{\"items\": [\n  {\"id\": \"a\"},\n  {\"id\": \"b\"}\n]}\n", to: "array/feed.json")
        try write("""
            { bundle: "array", schemaVersion: 1,
              tables: [{ name: "item", columns: [{ name: "key", type: "text" }, { name: "id", type: "text" }] }],
              sources: [{ name: "items", format: "json", path: "feed.json",
                          options: { records: "items/*", fields: { key: "@key", id: "id" } },
                          into: "item", columns: { key: "key", id: "id" } }] }
            """, to: "array/kiln.json5")
        let build = try kiln("build", "array", "--out", "array.sqlite")
        XCTAssertNotEqual(build.status, 0)
        XCTAssertTrue(build.stdout.contains("feed.json:2: 2 records at \"items/*\" (field \"key\") are elements of an array") ||
                      build.stderr.contains("feed.json:2: 2 records at \"items/*\" (field \"key\") are elements of an array"),
                      build.stdout + build.stderr)
        let ids = try extracted(kiln("extract", "items", "array/feed.json", "--manifest", "array", "--format", "json"), ["key", "id"])
        XCTAssertEqual(ids, ["-|a", "-|b"])
    }

    func testUnreadIsOneFindingPerMemberAndSourceOverManyFiles() throws {
        for number in 1...20 {
            try write("{\"items\": [\n{\"id\": \(number),\n \"note\": \"n\(number)\"}\n]}\n", to: "many/file\(String(format: "%02d", number)).json")
        }
        try write("""
            { bundle: "many", schemaVersion: 1,
              tables: [{ name: "item", columns: [{ name: "id", type: "integer" }, { name: "note", type: "text" }] },
                       { name: "bare", columns: [{ name: "id", type: "integer" }] }],
              sources: [{ name: "with-notes", format: "json", path: "*.json",
                          options: { records: "items/*", fields: { id: "id", note: "note" } }, into: "item", columns: { id: "id", note: "note" } },
                        { name: "ids", format: "json", path: "*.json",
                          options: { records: "items/*", fields: { id: "id" } }, into: "bare", columns: { id: "id" } }] }
            """, to: "many/kiln.json5")
        let build = try kiln("build", "many", "--out", "many.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr)
        let unread = try report("many.report.json").filter { ($0["code"] as? String) == "json.unread" }
        XCTAssertEqual(unread.count, 1, "\(unread)")
        XCTAssertEqual(unread.first?["file"] as? String, "file01.json")
        XCTAssertEqual(unread.first?["line"] as? Int, 3)
        let message = unread.first?["message"] as? String ?? ""
        XCTAssertTrue(message.contains("no field of source \"ids\" reads the member \"note\""), message)
        XCTAssertFalse(message.contains("not shipped"), message)
        let database = try Database(path: file("many.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try database.rows("SELECT count(note) FROM item").first?.values.first?.textValue, "20")
    }
}
