import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `JSONRecordReader` over yajl: records at a path, fields by key path, context, exact numbers, lines in findings.
/// Expected records come from Python's own `json` module reading the same file.
final class JSONRecordReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue], pendingLimit: Int = JSONRecordReader.defaultPendingLimit) throws -> JSONRecordReader {
        try JSONRecordReader(options: JSONValue.object(options).decode(JSONRecordReader.Options.self, codingPath: []), pendingLimit: pendingLimit)
    }

    private func real(_ path: String) -> URL { KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/" + path) }

    /// The records' fields `names`, joined by `|` ("-" for NULL), one line per record.
    private func rows(_ records: [Record], _ names: [String]) -> [String] {
        records.map { record in
            let values = fields(record)
            return names.map { values[$0] ?? "-" }.joined(separator: "|")
        }
    }

    private func fields(_ record: Record) -> [String: String] {
        Dictionary(uniqueKeysWithValues: zip(record.kind.fieldNames, record.values).compactMap { name, value in value.map { (name, $0) } })
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    private var tour: URL { KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/tour/tour.json") }

    /// Runs `script` (Python, reading the file `argv[1]`) and returns its output lines.
    private func python(_ script: String, _ url: URL) throws -> [String] {
        try PythonOracle.lines(ofProgram: script, [url.path])
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

    /// A field inside the object or array another field takes whole is read too, at any depth, scalar or container,
    /// and the whole value keeps it: the fields nest as their paths do.
    func testFieldsInsideAFieldTakenWholeAreReadToo() throws {
        let (records, log) = try read(reader(["records": .string("items/*"),
                                              "fields": .object(["p": .string("p"), "name": .string("p/name"), "tags": .string("p/tags"),
                                                                 "first": .string("p/tags/0"), "deep": .string("p/tags/1/x"), "any": .string("p/*")])]),
                                      #"{"items": [{"p": {"name": "Α", "tags": ["a", {"x": 2}]}}, {"p": {"tags": []}}, {"p": null}]}"#, name: "x.json")
        XCTAssertEqual(describe(log), "")
        XCTAssertEqual(rows(records, ["p", "name", "tags", "first", "deep"]), [
            #"{"name":"Α","tags":["a",{"x":2}]}|Α|["a",{"x":2}]|a|2"#,
            #"{"tags":[]}|-|[]|-|-"#,
            "-|-|-|-|-",
        ])
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

    /// A field "." takes the record's own value: every string, number, boolean or null at the records path is a
    /// record (an array of station names, one per element with its position), and an object or array there gives
    /// its compact JSON, its members still read by the other fields. Python's json reads the same values.
    func testValuesAtTheRecordsPathAreRecordsOfTheirOwnValue() throws {
        let text = "{\"trips\": [\n {\"id\": \"a\", \"via\": [\"Osterburken\", \"Heilbronn\"]},\n {\"id\": \"b\", \"via\": []},\n"
            + " {\"id\": \"c\", \"via\": [12.50, true, null, \"x\\\"y\", {\"n\": 1}, [2, 3]]}\n]}\n"
        let url = try write(text, to: "via.json")
        let (records, log) = try read(reader([
            "records": .string("trips/*/via/*"),
            "fields": .object(["station": .string("."), "n": .string("n"), "second": .string("1")]),
            "context": .object(["trips/*": .object(["trip": .string("id")])]),
        ]), url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        let oracle = try python("""
            import json, sys
            for trip in json.load(open(sys.argv[1]), parse_float=str)["trips"]:
                for position, value in enumerate(trip["via"], 1):
                    own = "1" if value is True else "-" if value is None else value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                    n = str(value["n"]) if isinstance(value, dict) else "-"
                    second = str(value[1]) if isinstance(value, list) else "-"
                    print(trip["id"], position, own, n, second, sep="|")
            """, url)
        XCTAssertEqual(rows(records, ["trip", "_position", "station", "n", "second"]), oracle)
        XCTAssertEqual(oracle.count, 8)
        // An object of scalars: each member a record, with its name.
        let (members, memberLog) = try read(reader(["records": .string("names/*"), "fields": .object(["lang": .string("@key"), "label": .string(".")])]),
                                            #"{"names": {"de": "Heilbronn", "fr": "Heilbronn (DE)"}}"#, name: "names.json")
        XCTAssertEqual(memberLog.diagnostics.count, 0, describe(memberLog))
        XCTAssertEqual(rows(members, ["lang", "label", "_ordinal"]), ["de|Heilbronn|1", "fr|Heilbronn (DE)|2"])
        // Without a "." field a scalar there is still not a record, and the finding says how to read it.
        let (none, noneLog) = try read(reader(["records": .string("via/*"), "fields": .object(["id": .string("id")])]),
                                       #"{"via": ["Osterburken"]}"#, name: "plain.json")
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(noneLog.diagnostics.map(\.formatted), [
            #"plain.json: warning: no value at "via/*" in this file [json.no-records]"#,
            #"plain.json:1: error: the value at "via/*" is not an object; it is not read as a record (a field "." reads each value there as a record of its own) [json.not-object]"#,
        ])
    }

    func testChunkBoundariesDoNotChangeEventsOrLines() throws {
        var whole: [String] = [], small: [String] = []
        XCTAssertNil(try JSONStream.parse(tour) { event, line in whole.append("\(line) \(event)"); return true })
        XCTAssertNil(try JSONStream.parse(tour, chunkSize: 7) { event, line in small.append("\(line) \(event)"); return true })
        XCTAssertEqual(whole, small)
        XCTAssertGreaterThan(whole.count, 300)
    }

    /// JSON's white space is space, tab, line feed and carriage return (RFC 8259); yajl also takes a form feed and a
    /// vertical tab. JSONTestSuite (github.com/nst/JSONTestSuite, test_parsing/n_structure_whitespace_formfeed.json:
    /// `[\f]`) expects a refusal; Python's json module (the oracle) refuses both. Inside a string, escaped, they are text.
    func testAFormFeedOrVerticalTabBetweenValuesIsRefusedAtItsLine() throws {
        let cases: [(String, String?)] = [
            ("[\u{0C}]", "a form feed (U+000C)"), ("[1,\n\u{0B}2]", "a vertical tab (U+000B)"), ("{\"a\":\u{0C}1}", "a form feed (U+000C)"),
            ("[\"\\f\", \"\\u000b\"]", nil), ("[ \t\r\n1]", nil),
        ]
        for (index, (text, refused)) in cases.enumerated() {
            let url = temporaryDirectory.appendingPathComponent("ws\(index).json")
            try Data(text.utf8).write(to: url)
            let python = try PythonOracle.lines(ofProgram: "import json, sys\ntry:\n    json.load(open(sys.argv[1]))\n    print('ok')\nexcept ValueError:\n    print('refused')", [url.path])
            XCTAssertEqual(python, [refused == nil ? "ok" : "refused"], text)
            var events: [String] = []
            let error = try JSONStream.parse(url) { event, _ in events.append("\(event)"); return true }
            if let refused {
                XCTAssertEqual(error?.message, "\(refused) outside a string, which JSON does not allow as white space (only space, tab, line feed and carriage return)", text)
                XCTAssertEqual(error?.line, text.contains("\n") ? 2 : 1, text)
            } else {
                XCTAssertNil(error, text)
            }
        }
        // What comes before it is read, as before any malformed JSON.
        let url = temporaryDirectory.appendingPathComponent("before.json")
        try Data("[1, 2,\n\u{0C}3]".utf8).write(to: url)
        var events: [JSONEvent] = []
        _ = try JSONStream.parse(url, chunkSize: 3) { event, _ in events.append(event); return true }
        XCTAssertEqual(events, [.startArray, .number("1"), .number("2")])
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

    // MARK: - Context written after the records, member names, once per source (issue 28)

    func testContextMembersWrittenAfterTheRecordsAreRead() throws {
        // Tate's files write keys in sorted order: "children" before "id" and "name", "subjects" before "title".
        let url = real("json-tate-artworks/a00001-1035.json")
        let (records, log) = try read(reader([
            "records": .string("subjects/children/*/children/*/children/*"),
            "fields": .object(["id": .string("id"), "name": .string("name")]),
            "context": .object(["": .object(["artwork": .string("acno"), "title": .string("title")]),
                                "subjects/children/*": .object(["category": .string("name")]),
                                "subjects/children/*/children/*": .object(["parentId": .string("id"), "parent": .string("name")])]),
        ]), url: url)
        let expected = try python("""
            import json, sys
            a = json.load(open(sys.argv[1]))
            for c in a["subjects"]["children"]:
                for p in c["children"]:
                    for s in p["children"]:
                        print("|".join(str(v) for v in [a["acno"], a["title"], c["name"], p["id"], p["name"], s["id"], s["name"]]))
            """, url)
        XCTAssertEqual(rows(records, ["artwork", "title", "category", "parentId", "parent", "id", "name"]), expected)
        XCTAssertEqual(records.map { fields($0)["_ordinal"] }, (1...records.count).map { String($0) })
        XCTAssertFalse(log.diagnostics.contains { $0.code == "json.late-context" }, describe(log))
    }

    func testAContextMemberThatNeverComesIsNullAndRecordsKeepTheirOrder() throws {
        let text = """
            {"groups": [
             {"items": [{"id": 1}, {"id": 2}], "name": "late"},
             {"name": "early", "items": [{"id": 3}]},
             {"items": [{"id": 4}]}
            ]}
            """
        let (records, log) = try read(reader(["records": .string("groups/*/items/*"), "fields": .object(["id": .string("id")]),
                                              "context": .object(["groups/*": .object(["group": .string("name")])])]), text, name: "g.json")
        XCTAssertEqual(rows(records, ["id", "group", "_position"]), ["1|late|1", "2|late|2", "3|early|1", "4|-|1"])
        XCTAssertEqual(records.map(\.line), [2, 2, 3, 4])
        XCTAssertTrue(log.diagnostics.isEmpty, describe(log))
    }

    func testBeyondThePendingBoundTheRecordsAreReadInASecondPass() throws {
        // 40 groups of 3 records, one record a line; each group's "name" and the root's "source" come after the
        // records, and the bound holds only some of them: the records let go are read again with both.
        let groups = (1...40).map { group in
            "{\"items\": [\n" + (1...3).map { "{\"id\": \(group * 10 + $0), \"text\": \"\(String(repeating: "x", count: 30))\"}" }.joined(separator: ",\n")
                + "\n], \"name\": \"g\(group)\"}"
        }
        let url = try write("{\"groups\": [\n" + groups.joined(separator: ",\n") + "\n],\n\"source\": \"feed\"}\n", to: "late.json")
        let options: [String: JSONValue] = ["records": .string("groups/*/items/*"), "fields": .object(["id": .string("id"), "text": .string("text")]),
                                            "context": .object(["": .object(["source": .string("source")]),
                                                                "groups/*": .object(["group": .string("name")])])]
        let expected = try python("""
            import json, sys
            feed = json.load(open(sys.argv[1]))
            for group in feed["groups"]:
                for item in group["items"]:
                    print(f"{item['id']}|{group['name']}|{feed['source']}")
            """, url)
        let lines = try python("""
            import sys
            for number, text in enumerate(open(sys.argv[1]), 1):
                if text.startswith('{"id"'):
                    print(number)
            """, url)
        let (records, log) = try read(reader(options, pendingLimit: 2000), url: url)
        XCTAssertEqual(rows(records, ["id", "group", "source"]), expected)
        XCTAssertEqual(records.map { String($0.line) }, lines)
        XCTAssertEqual(records.map { fields($0)["_ordinal"] }, (1...120).map { String($0) })
        let second = try XCTUnwrap(log.diagnostics.first { $0.code == "json.late-context" }, describe(log))
        XCTAssertEqual(second.severity, .info)
        XCTAssertEqual(second.provenance?.line.map(String.init), lines.first, "every record waits for the root's member")
        XCTAssertTrue(second.message.contains("2000 bytes") && second.message.contains("(120 of 120)"), second.message)
        // With the default bound the records wait in memory: one pass, the same records, no finding.
        let (all, quiet) = try read(reader(options), url: url)
        XCTAssertEqual(rows(all, ["id", "group", "source"]), expected)
        XCTAssertTrue(quiet.diagnostics.isEmpty, describe(quiet))
    }

    func testRecordsThatLeftBeforeTheBoundAreNotReadTwice() throws {
        // The first group's records leave when it closes; the second's outgrow the bound and are read again.
        let big = (1...30).map { "{\"id\": \($0), \"text\": \"\(String(repeating: "y", count: 40))\"}" }.joined(separator: ",\n")
        let text = "{\"groups\": [\n{\"items\": [{\"id\": 0}], \"name\": \"small\"},\n{\"items\": [\n" + big + "\n], \"name\": \"big\"}\n]}\n"
        let url = try write(text, to: "two.json")
        let (records, log) = try read(reader(["records": .string("groups/*/items/*"), "fields": .object(["id": .string("id")]),
                                              "context": .object(["groups/*": .object(["group": .string("name")])])], pendingLimit: 1500), url: url)
        XCTAssertEqual(rows(records, ["id", "group"]), try python("""
            import json, sys
            for group in json.load(open(sys.argv[1]))["groups"]:
                for item in group["items"]:
                    print(f"{item['id']}|{group['name']}")
            """, url))
        XCTAssertTrue(log.diagnostics.first { $0.code == "json.late-context" }?.message.contains("(30 of 31)") == true, describe(log))
    }

    func testAContextMemberThatIsAnObjectIsItsCompactJSON() throws {
        let url = try write(#"{"groups": [{"items": [{"id": 1}], "tags": {"a": [1, 2.50]}, "name": "g"}], "meta": {"v": true}}"#, to: "tags.json")
        let (records, log) = try read(reader(["records": .string("groups/*/items/*"), "fields": .object(["id": .string("id")]),
                                              "context": .object(["": .object(["meta": .string("meta")]),
                                                                  "groups/*": .object(["tags": .string("tags"), "name": .string("name")])])]),
                                      url: url)
        XCTAssertEqual(rows(records, ["id", "tags", "name", "meta"]), try python("""
            import json, sys
            doc = json.load(open(sys.argv[1]), parse_float=str)
            for group in doc["groups"]:
                for item in group["items"]:
                    print("|".join([str(item["id"]), '{"a":[1,' + group["tags"]["a"][1] + ']}', group["name"], '{"v":true}']))
            """, url))
        XCTAssertFalse(log.diagnostics.contains { $0.severity >= .warning }, describe(log))
    }

    func testMemberNamesOfRecordsAndEnclosingObjects() throws {
        let url = real("json-pannellum-tour/example-tour.json")
        let (scenes, _) = try read(reader(["records": .string("scenes/*"), "fields": .object(["id": .string("@key"), "title": .string("title")])]), url: url)
        let (spots, log) = try read(reader(["records": .string("scenes/*/hotSpots/*"),
                                            "fields": .object(["target": .string("sceneId"), "text": .string("text")]),
                                            "context": .object(["scenes/*": .object(["scene": .string("@key")])])]), url: url)
        XCTAssertEqual(rows(scenes, ["id", "title"]), try python("""
            import json, sys
            for key, scene in json.load(open(sys.argv[1]))["scenes"].items():
                print(key + "|" + scene["title"])
            """, url))
        XCTAssertEqual(rows(spots, ["scene", "text", "target"]), try python("""
            import json, sys
            for key, scene in json.load(open(sys.argv[1]))["scenes"].items():
                for spot in scene["hotSpots"]:
                    print("|".join([key, spot["text"], spot.get("sceneId", "-")]))
            """, url))
        // Every target names a scene's key.
        XCTAssertTrue(Set(spots.compactMap { fields($0)["target"] }).isSubset(of: Set(scenes.compactMap { fields($0)["id"] })))
        XCTAssertFalse(log.diagnostics.contains { $0.severity == .error }, describe(log))
    }

    func testNestedMemberNames() throws {
        let text = #"{"regions": {"north": {"towns": {"a": {"n": 1}, "b": {"n": 2}}}, "south": {"towns": {"c": {"n": 3}}}}}"#
        let url = try write(text, to: "nested.json")
        let (records, log) = try read(reader(["records": .string("regions/*/towns/*"), "fields": .object(["town": .string("@key"), "n": .string("n")]),
                                              "context": .object(["regions/*": .object(["region": .string("@key")])])]), url: url)
        XCTAssertEqual(rows(records, ["region", "town", "n"]), try python("""
            import json, sys
            for region, r in json.load(open(sys.argv[1]))["regions"].items():
                for town, t in r["towns"].items():
                    print(f"{region}|{town}|{t['n']}")
            """, url))
        XCTAssertTrue(log.diagnostics.isEmpty, describe(log))
    }

    func testTheMemberNameOfAnArrayElementIsAnErrorWithItsLine() throws {
        let (records, log) = try read(reader(["records": .string("items/*"), "fields": .object(["key": .string("@key"), "id": .string("id")])]),
                                      "{\"items\": [\n{\"id\": 1},\n{\"id\": 2}\n]}", name: "array.json")
        XCTAssertEqual(rows(records, ["key", "id"]), ["-|1", "-|2"])
        let finding = try XCTUnwrap(log.diagnostics.first { $0.code == "json.no-member-name" }, describe(log))
        XCTAssertEqual(finding.severity, .error)
        XCTAssertEqual(finding.provenance?.line, 2)
        XCTAssertTrue(finding.message.contains("2 records at \"items/*\""), finding.message)
        let (_, contextLog) = try read(reader(["records": .string("groups/*/items/*"), "fields": .object(["id": .string("id")]),
                                              "context": .object(["groups/*": .object(["group": .string("@key")])])]),
                                       "{\"groups\": [{\"items\": [{\"id\": 1}]}]}", name: "groups.json")
        XCTAssertEqual(contextLog.diagnostics.first { $0.code == "json.no-member-name" }?.message.contains("context field \"group\""), true, describe(contextLog))
    }

    func testTheWholeFileIsOneRecordAtTheRoot() throws {
        let url = real("json-tate-artworks/a00003-1037.json")
        let (records, log) = try read(reader(["records": .string(""), "fields": .object(["acno": .string("acno"), "title": .string("title"), "dateRange": .string("dateRange")])]), url: url)
        XCTAssertEqual(rows(records, ["acno", "title", "dateRange", "_ordinal"]), try python("""
            import json, sys
            a = json.load(open(sys.argv[1]))
            print("|".join([a["acno"], a["title"], json.dumps(a["dateRange"], separators=(",", ":")), "1"]))
            """, url))
        XCTAssertEqual(records.first?.line, 1)
        XCTAssertTrue(log.diagnostics.contains { $0.code == "json.unread" && $0.message.contains("\"subjects\"") }, describe(log))
    }

    func testUnreadIsReportedOncePerMemberAndSourceAtItsFirstFile() throws {
        let jsonReader = try reader(["records": .string("items/*"), "fields": .object(["id": .string("id")])])
        let first = try write("{\"items\": [\n{\"id\": 1,\n \"note\": \"a\"}]}", to: "one.json")
        let second = try write("{\"items\": [{\"id\": 2, \"note\": \"b\", \"extra\": 1}]}", to: "two.json")
        let build = DiagnosticLog()
        for (source, url) in [("s", first), ("s", second), ("t", first)] {
            // Each file has its own log, replayed in file order into the build's, as the staging area does ("note" is on line 3).
            let fileLog = DiagnosticLog()
            fileLog.readingSource = source
            try jsonReader.read(InputFile(url: url, relativePath: url.lastPathComponent), log: fileLog) { _ in }
            fileLog.replay(into: build)
        }
        let unread = build.diagnostics.filter { $0.code == "json.unread" }
        XCTAssertEqual(unread.map { "\($0.provenance!.location) \($0.message.contains("source \"s\"") ? "s" : "t")" },
                       ["one.json:3 s", "two.json:1 s", "one.json:3 t"], describe(build))
        XCTAssertTrue(unread[0].message.contains("no field of source \"s\" reads the member \"note\""), unread[0].message)
        XCTAssertFalse(unread[0].message.contains("not shipped"))
    }

    func testKeySyntaxIsCheckedWhenTheManifestIsLoaded() {
        func message(_ options: [String: JSONValue]) -> String {
            do {
                _ = try reader(options)
                return "accepted"
            } catch DecodingError.dataCorrupted(let context) {
                return context.codingPath.map(\.stringValue).joined(separator: ".") + ": " + context.debugDescription
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(message(["records": .string("a/*"), "fields": .object(["x": .string("position/@key")])]).hasPrefix("fields.x: \"@key\" stands alone"))
        XCTAssertTrue(message(["records": .string(""), "fields": .object(["x": .string("@key")])]).contains("the whole file, which has none"))
        XCTAssertTrue(message(["records": .string("a/*/b/*"), "fields": .object(["x": .string("x")]),
                               "context": .object(["a/*": .object(["y": .string("p/q")])])]).hasPrefix("context.a/*.y: a context field names one member"))
        XCTAssertTrue(message(["records": .string("a/*/b/*"), "fields": .object(["x": .string("x")]),
                               "context": .object(["a/*": .object(["y": .string("b")])])]).hasPrefix("context.a/*.y: the member \"b\" holds the records"))
        XCTAssertEqual(message(["records": .string("a/*"), "fields": .object(["x": .string("/@key")])]), "accepted")
    }
}
