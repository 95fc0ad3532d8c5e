import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `ManifestSketch`, the rules of `kiln init`: the separator of a first line, the type every value fits and gives
/// back, names as plain identifiers, keys and references only where the rows keep them.
final class ManifestSketchTests: KilnTestCase {
    func testTheSeparatorIsTheOneTheFirstLineHoldsMostOfOutsideQuotes() {
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "a;b;c").separator, ";")
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "a\tb,c\td").separator, "\t")
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: #""x;y;z",b"#).separator, ",")
        XCTAssertTrue(ManifestSketch.separator(ofFirstLine: #""x;y;z",b"#).quoted)
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "single").separator, ",")
    }

    func testATypeMustGiveEveryValueBackAsWritten() {
        XCTAssertEqual(ManifestSketch.columnType(["1", "-20", ""], name: "n"), "integer")
        XCTAssertEqual(ManifestSketch.columnType(["0102", "1104"], name: "n"), "text", "a leading zero")
        XCTAssertEqual(ManifestSketch.columnType(["21.7259", "38"], name: "n"), "real")
        XCTAssertEqual(ManifestSketch.columnType(["6.1", "6.10"], name: "n"), "text", "6.10 reads back as 6.1")
        XCTAssertEqual(ManifestSketch.columnType(["1e5"], name: "n"), "text")
        XCTAssertEqual(ManifestSketch.columnType(["1", "2"], name: "stop_id"), "text", "identifiers are text")
        XCTAssertEqual(ManifestSketch.columnType(["", ""], name: "n"), "text")
    }

    func testNamesArePlainIdentifiers() {
        XCTAssertEqual(ManifestSketch.identifier("Stops Export"), "stops_export")
        XCTAssertEqual(ManifestSketch.identifier("2024-lines"), "t_2024_lines")
        XCTAssertEqual(ManifestSketch.identifier("kiln_x"), "t_kiln_x")
        XCTAssertEqual(ManifestSketch.identifier("Ονομα"), "t_")
    }

    /// A GTFS reference is declared only where every value of the child is a key of the parent.
    func testAReferenceIsDeclaredOnlyWhereEveryRowKeepsIt() throws {
        let stops = try write("stop_id,stop_name\nA,One\nB,Two\n", to: "stops.txt")
        let kept = try write("trip_id,stop_id,stop_sequence\nt1,A,1\nt1,B,2\n", to: "stop_times.txt")
        let sketch = try ManifestSketch(bundle: "f", inputs: [(stops, "stops.txt"), (kept, "stop_times.txt")])
        XCTAssertTrue(sketch.gtfs)
        let times = try XCTUnwrap(sketch.tables.first { $0.name == "stop_times" })
        XCTAssertEqual(times.key, ["trip_id", "stop_sequence"])
        XCTAssertEqual(times.columns.first { $0.name == "stop_id" }?.references, "stops.stop_id")
        let broken = try write("trip_id,stop_id,stop_sequence\nt1,A,1\nt1,C,2\n", to: "broken/stop_times.txt")
        let other = try ManifestSketch(bundle: "f", inputs: [(stops, "stops.txt"), (broken, "stop_times.txt")])
        XCTAssertNil(other.tables.first { $0.name == "stop_times" }?.columns.first { $0.name == "stop_id" }?.references, "C is no stop")
    }

    func testColumnNamesSplitCamelCaseAndFieldNamesDropPrefixes() {
        XCTAssertEqual(ManifestSketch.columnName("stopId"), "stop_id")
        XCTAssertEqual(ManifestSketch.columnName("useForUI"), "use_for_ui")
        XCTAssertEqual(ManifestSketch.columnName("GTFSFeed"), "gtfs_feed")
        XCTAssertEqual(ManifestSketch.fieldName("location/@n1:lat"), "location_lat")
        XCTAssertEqual(ManifestSketch.fieldName("route/name"), "route_name")
    }

    /// The repeating records of an XML document: elements repeated under one parent, with attributes or simple
    /// children; a child repeated inside its record is no simple field (xml.unread names it).
    func testXMLRecordsAreTheElementsThatRepeatWithSimpleFields() throws {
        let file = try write("""
            <feed xmlns:g="urn:geo"><title>t</title>
              <stop code="1"><name>A</name><g:pos lat="1" lon="2"/><line>1</line><line>2</line></stop>
              <stop code="2"><name>B</name></stop>
              <note>x</note><note>y</note>
              <group><item>1</item></group><group><item>2</item></group>
            </feed>
            """, to: "feed.xml")
        let shape = XMLShape()
        XCTAssertTrue(try shape.read(try InputBytes(url: file, name: "feed.xml", log: nil), path: file.path, shownAs: "feed.xml"))
        XCTAssertEqual(shape.records, ["/feed/stop", "/feed/group"], "a repeated text element is no record")
        XCTAssertTrue(shape.isSimpleField("/feed/stop/name"))
        XCTAssertFalse(shape.isSimpleField("/feed/stop/line"), "repeated in its record")
        XCTAssertEqual(shape.elements["/feed/stop/pos"]?.namespace, "urn:geo")
        XCTAssertEqual(shape.elements["/feed/stop"]?.attributes.map(\.localName), ["code"])
    }

    /// The records of a JSON document: its arrays of objects and maps keyed by id, and the root object; an object of
    /// scalars is read member by member, anything else whole.
    func testJSONRecordsAreTheArraysOfObjectsMapsAndRoot() throws {
        let file = try write(#"{"meta": {"n": 2}, "items": [{"id": 1, "at": {"lat": 1.5, "lon": 2}, "tags": ["a"], "parts": [{"x": 1}]}, {"id": 2, "a/b": 3}]}"#, to: "items.json")
        let shape = JSONShape()
        try shape.read(try InputBytes(url: file, name: "items.json", log: nil), shownAs: "items.json")
        XCTAssertEqual(shape.records, ["items/*", "items/*/parts/*"])
        XCTAssertEqual(shape.fields(of: "items/*"), ["id", "at/lat", "at/lon", "tags"], "parts are records of their own; a name with / is left to json.unread")
        XCTAssertEqual(shape.enclosing("items/*/parts/*"), "items/*")
        XCTAssertEqual(shape.identifier(of: "items/*"), "id")
        let root = try write(#"{"acno": "A1", "title": "T"}"#, to: "one.json")
        let one = JSONShape()
        try one.read(try InputBytes(url: root, name: "one.json", log: nil), shownAs: "one.json")
        XCTAssertEqual(one.records, [""])
        XCTAssertEqual(one.fields(of: ""), ["acno", "title"])
        let artwork = try write(#"{"acno": "A1", "contributors": [{"id": 1}, {"id": 2}]}"#, to: "artwork.json")
        let both = JSONShape()
        try both.read(try InputBytes(url: artwork, name: "artwork.json", log: nil), shownAs: "artwork.json")
        XCTAssertEqual(both.records, ["", "contributors/*"], "a root with a scalar member is a record beside its arrays")
    }

    /// A calendar whose rule repeats without end gets a window from its own dates, never the day of the build.
    func testAnEndlessRuleGetsAWindowFromTheFeedsOwnDates() throws {
        let file = try write("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20240301T100000Z\r\nDTEND:20240301T110000Z\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:Weekly\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20240229T100000Z\r\nSUMMARY:Once\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", to: "c.ics")
        let sketch = try ManifestSketch(bundle: "c", inputs: [(file, "c.ics")])
        XCTAssertEqual(sketch.tables.map(\.name), ["event", "occurrence"])
        XCTAssertEqual(sketch.tables[0].options, #"{ window: { from: "2024-02-29", until: "2025-03-01" } }"#)
        XCTAssertEqual(sketch.tables[0].key, ["uid"])
    }

    /// An object whose members are objects alike is a map keyed by id: its members are records (`scenes/*`) whose
    /// id is their member name, and the records inside them fold the ids too (`scenes/*/hotSpots/*`).
    func testAMapKeyedByIdFoldsIntoRecords() throws {
        let file = try write(#"{"scenes": {"pond": {"title": "P", "hotSpots": [{"yaw": 1}]}, "cube": {"title": "C", "type": "cubemap", "hotSpots": [{"yaw": 2}]}}}"#, to: "tour.json")
        let shape = JSONShape()
        try shape.read(try InputBytes(url: file, name: "tour.json", log: nil), shownAs: "tour.json")
        XCTAssertEqual(shape.records, ["scenes/*", "scenes/*/hotSpots/*"])
        XCTAssertEqual(shape.fields(of: "scenes/*"), ["@key", "title", "type"])
        XCTAssertEqual(shape.identifier(of: "scenes/*"), "@key")
        let pair = try write(#"{"start": {"lat": 1}, "name": "n"}"#, to: "pair.json")
        let plain = JSONShape()
        try plain.read(try InputBytes(url: pair, name: "pair.json", log: nil), shownAs: "pair.json")
        XCTAssertEqual(plain.records, [""], "one object member is no map")
    }
}
