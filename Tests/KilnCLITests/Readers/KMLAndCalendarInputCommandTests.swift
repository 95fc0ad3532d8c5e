import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// Issue 28 through the `kiln` binary: what the `kml` and `ics` readers could not map was dropped without a word.
/// Each bad input now gives a finding at its file and line, and everything else of the file is still shipped.
final class KMLAndCalendarInputCommandTests: CLITestCase {
    private func write(_ text: String, to path: String) throws {
        let url = file(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// The line of the first line of `path` (under the working folder) that contains `text`.
    private func line(of text: String, in path: String) throws -> Int {
        // Split on scalars: "\r\n" is one Character, which a split on "\n" would not see.
        let lines = try String(contentsOf: file(path), encoding: .utf8).unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        return try XCTUnwrap(lines.firstIndex { String($0).contains(text) }, "\(text) in \(path)") + 1
    }

    private func rows(_ bundle: String, _ sql: String) throws -> [[String?]] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map(\.textValue) }
    }

    private func kmlPipeline(_ placemarks: String) throws {
        try write("""
            { bundle: "map", schemaVersion: 1,
              tables: [ { name: "place", columns: [ { name: "position", type: "integer" }, { name: "name", type: "text" },
                  { name: "folder", type: "text" }, { name: "kind", type: "text" }, { name: "lat", type: "real" }, { name: "lon", type: "real" },
                  { name: "geometry", type: "text" } ], primaryKey: ["position"] } ],
              sources: [ { name: "places", format: "kml", path: "map.kml", into: "place",
                  columns: { position: "_ordinal", name: "name", folder: "folder", kind: "geometryType", lat: "latitude", lon: "longitude",
                             geometry: "geometry" } } ],
            }
            """, to: "map/kiln.json5")
        try write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document><name>States</name>
            \(placemarks)
            </Document></kml>

            """, to: "map/map.kml")
    }

    private let square = { (x: Int, y: Int) in
        "<Polygon><outerBoundaryIs><LinearRing><coordinates>\(x),\(y) \(x + 2),\(y) \(x + 2),\(y + 2) \(x),\(y + 2) \(x),\(y)</coordinates></LinearRing></outerBoundaryIs></Polygon>"
    }

    /// A `description` whose HTML is written as child elements (the opening hours of a place) ships one line per
    /// block, as the same HTML in CDATA does, never its text nodes glued ("Open dailyClosed Mondays…"); the lines are
    /// lxml.html's text of each block of the same markup.
    func testDescriptionHTMLWrittenAsElementsIsOneLinePerBlock() throws {
        let html = "<p>Open daily</p><p>Closed <b>Mondays</b></p><p>Entry free</p>"
        try kmlPipeline("""
            <Placemark><name>elements</name><description>\(html)</description><Point><coordinates>1,2</coordinates></Point></Placemark>
            <Placemark><name>cdata</name><description><![CDATA[\(html)]]></description><Point><coordinates>1,2</coordinates></Point></Placemark>
            """)
        let manifest = file("map/kiln.json5")
        try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: #"{ name: "geometry", type: "text" } ]"#, with: #"{ name: "geometry", type: "text" }, { name: "description", type: "text" } ]"#)
            .replacingOccurrences(of: #"geometry: "geometry" }"#, with: #"geometry: "geometry", description: "description" }"#)
            .write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "map", "--out", "map.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let oracle = try CLITestCase.run(try PythonOracle.interpreter(), ["-c", """
            import sys
            from lxml import etree, html
            description = etree.parse(sys.argv[1]).xpath("//*[local-name()='description']")[0]
            markup = "".join(etree.tostring(child, encoding="unicode") for child in description)
            print("\\n".join(block.text_content() for block in html.fragments_fromstring(markup)), end="")
            """, file("map/map.kml").path], in: workingDirectory)
        XCTAssertEqual(oracle.status, 0, oracle.stderr)
        XCTAssertEqual(oracle.stdout, "Open daily\nClosed Mondays\nEntry free")
        XCTAssertEqual(try rows("map.sqlite", "SELECT name, description FROM place ORDER BY position"),
                       [["elements", oracle.stdout], ["cdata", oracle.stdout]])
    }

    /// The shape of 19 states of OpenLayers' states.kml: a label point, then a MultiGeometry of the state's polygons.
    func testNestedMultiGeometryKeepsEveryPolygonAndTheFolderOutsideFoldersIsNull() throws {
        try kmlPipeline("""
            <Placemark><name>Alaska</name><MultiGeometry><Point><coordinates>-150,64,0</coordinates></Point>
            <MultiGeometry>\(square(10, 20))\(square(30, 40))</MultiGeometry></MultiGeometry></Placemark>
            <Folder><name>Lower 48</name><Placemark><name>Colorado</name>\(square(-108, 37))</Placemark></Folder>
            """)
        let run = try kiln("build", "map", "--out", "map.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("diagnostics: 0 errors, 0 warnings, 0 info"), run.stderr)
        let alaska = try rows("map.sqlite", "SELECT kind, lat, lon, json_array_length(geometry, '$.geometries'), "
                                  + "json_extract(geometry, '$.geometries[1].type'), json_extract(geometry, '$.geometries[2].type'), folder IS NULL "
                                  + "FROM place WHERE name = 'Alaska'")
        XCTAssertEqual(alaska, [["MultiGeometry", "21.0", "11.0", "3", "Polygon", "Polygon", "1"]],
                       "both polygons kept, the point is the first polygon's centroid, no folder is NULL")
        XCTAssertEqual(try rows("map.sqlite", "SELECT folder FROM place WHERE name = 'Colorado'"), [["Lower 48"]])
    }

    func testGeometryTheReaderDoesNotMapIsAFindingAtItsLine() throws {
        try kmlPipeline("""
            <Placemark><name>E170</name>
              <gx:Track><when>2010-05-01T13:00:00-05</when><gx:coord>-93.38 44.88 2743</gx:coord></gx:Track></Placemark>
            <Placemark><name>Terminal</name><MultiGeometry><Point><coordinates>-93.2,44.88</coordinates></Point>
              <Model><Location><longitude>-93.2</longitude><latitude>44.88</latitude></Location></Model></MultiGeometry></Placemark>
            """)
        let run = try kiln("build", "map", "--out", "map.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let model = "map/map.kml:\(try line(of: "<Model>", in: "map/map.kml"))"
        XCTAssertFalse(run.stderr.contains("gx:Track is not read"), run.stderr)
        XCTAssertTrue(run.stderr.contains("\(model): placemark \"Terminal\": its Model is not read"), run.stderr)
        XCTAssertTrue(run.stderr.contains("kml.unsupported-geometry (warning) ×1"), run.stderr)
        XCTAssertEqual(try rows("map.sqlite", "SELECT name, kind, lon FROM place ORDER BY position"),
                       [["E170", "Track", "-93.38"], ["Terminal", "MultiGeometry", "-93.2"]], "both placemarks are shipped, the track as a point")
    }

    private func calendarPipeline(_ feed: String, window: (String, String), severity: String = "") throws {
        try write("""
            { bundle: "cal", schemaVersion: 1, \(severity)
              tables: [
                { name: "event", columns: [ { name: "uid", type: "text" }, { name: "summary", type: "text" } ], primaryKey: ["uid"] },
                { name: "occurrence", columns: [ { name: "uid", type: "text" }, { name: "start_utc", type: "text" }, { name: "end_utc", type: "text" },
                    { name: "end_local", type: "text" } ], primaryKey: ["uid", "start_utc"] } ],
              sources: [ { name: "events", format: "ics", path: "feed.ics",
                  options: { window: { from: "\(window.0)", until: "\(window.1)" } },
                  into: { event: { table: "event", columns: { uid: "uid", summary: "summary" } },
                          occurrence: { table: "occurrence", columns: { uid: "event_uid", start_utc: "start_utc", end_utc: "end_utc",
                                                                        end_local: "end_local" } } } } ],
            }
            """, to: "cal/kiln.json5")
        try write(feed, to: "cal/feed.ics")
    }

    /// ical.js's Zimbra sample: `RDATE;VALUE=PERIOD:20231125T090000Z/20231125T123000Z` ends at 12:30Z (libical and
    /// icalendar agree), not after the event's own 30 minutes.
    func testAnRDatePeriodEndsWhereThePeriodSays() throws {
        let feed = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/ics/recur_instances.ics"), encoding: .utf8)
        try calendarPipeline(feed, window: ("2023-11-01", "2023-11-30"))
        let run = try kiln("build", "cal", "--out", "cal.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("cal.sqlite", "SELECT start_utc, end_utc, end_local FROM occurrence ORDER BY start_utc"), [
            ["2023-11-07T18:00:00Z", "2023-11-07T18:30:00Z", "2023-11-07T10:30:00"],
            ["2023-11-23T09:00:00Z", "2023-11-23T09:30:00Z", "2023-11-23T01:30:00"],
            ["2023-11-25T09:00:00Z", "2023-11-25T12:30:00Z", "2023-11-25T04:30:00"],
        ])
        let skipped = "cal/feed.ics:\(try line(of: "BEGIN:X-UNKNOWN", in: "cal/feed.ics")): X-UNKNOWN is not an event; not read"
        XCTAssertTrue(run.stderr.contains(skipped), run.stderr)
    }

    /// A feed that is one VEVENT without the VCALENDAR around it (as single-event exporters and Python's icalendar
    /// write it) built with exit 0 and no event, with findings that contradicted each other: it is read.
    func testALoneVEVENTShipsItsEvent() throws {
        try calendarPipeline("BEGIN:VEVENT\r\nUID:lone@x\r\nDTSTAMP:20240101T000000Z\r\nDTSTART:20240105T100000Z\r\nDURATION:PT1H\r\nSUMMARY:Lone\r\nEND:VEVENT\r\n",
                             window: ("2024-01-01", "2024-01-31"))
        let run = try kiln("build", "cal", "--out", "cal.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("diagnostics: 0 errors, 0 warnings, 0 info"), run.stderr)
        XCTAssertEqual(try rows("cal.sqlite", "SELECT uid, summary FROM event"), [["lone@x", "Lone"]])
        XCTAssertEqual(try rows("cal.sqlite", "SELECT start_utc, end_utc FROM occurrence"), [["2024-01-05T10:00:00Z", "2024-01-05T11:00:00Z"]])
    }

    func testAnRDateKilnCannotUseIsAFindingAtItsLineAndTheRestIsShipped() throws {
        let feed = """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//test//EN\r
            BEGIN:VEVENT\r
            UID:tour@museum\r
            SUMMARY:Guided tour\r
            DTSTART:20260105T100000Z\r
            DTEND:20260105T110000Z\r
            RDATE;VALUE=PERIOD:20260210T090000Z/20260210T080000Z\r
            RDATE;VALUE=PERIOD:20260213T090000Z/PT2H\r
            END:VEVENT\r
            END:VCALENDAR\r

            """
        try calendarPipeline(feed, window: ("2026-01-01", "2026-12-31"))
        let refused = try kiln("build", "cal", "--out", "cal.sqlite")
        XCTAssertEqual(refused.status, 1, refused.stderr)
        let place = "cal/feed.ics:\(try line(of: "20260210T080000Z", in: "cal/feed.ics"))"
        XCTAssertTrue(refused.stderr.contains("\(place): event \"Guided tour\" (tour@museum): RDATE period 2026-02-10T09:00:00/2026-02-10T08:00:00 ends before it starts; ignored"),
                      refused.stderr)
        XCTAssertTrue(refused.stderr.contains("ics.bad-rdate (error)"), refused.stderr)
        try calendarPipeline(feed, window: ("2026-01-01", "2026-12-31"), severity: "severity: { \"ics.bad-rdate\": \"warning\" },")
        let run = try kiln("build", "cal", "--out", "cal.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("cal.sqlite", "SELECT start_utc, end_utc FROM occurrence ORDER BY start_utc"),
                       [["2026-01-05T10:00:00Z", "2026-01-05T11:00:00Z"], ["2026-02-13T09:00:00Z", "2026-02-13T11:00:00Z"]])
    }

    /// icalendar's 116 test calendars (Tests/Fixtures/conformance/icalendar) in one glob source: the build ends with
    /// its findings (exit 1: many calendars are broken on purpose), not with a crash (an RSCALE rule read freed
    /// memory: "malloc(): smallbin double linked list corrupted", SIGABRT). Through `kiln extract`: a summary keeps the
    /// space it starts with, a VEVENT inside an unknown component is read, a globally unique TZID is its zone.
    func testIcalendarsTestCalendarsBuildInOneGlobAndReadAsWritten() throws {
        try write("""
            { bundle: "cal", schemaVersion: 1,
              tables: [{ name: "event", columns: [{ name: "uid", type: "text" }, { name: "summary", type: "text" }, { name: "tzid", type: "text" }] }],
              sources: [{ name: "events", format: "ics", path: "cals/*.ics", options: { window: { from: "2000-01-01", until: "2030-12-31" }, timezone: "UTC" },
                          into: { event: { table: "event", columns: { uid: "uid", summary: "summary", tzid: "tzid" } } } }] }
            """, to: "p/kiln.json5")
        let suite = CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/conformance/icalendar")
        let names = try FileManager.default.contentsOfDirectory(atPath: suite.path).filter { $0.hasSuffix(".ics") }
        XCTAssertGreaterThanOrEqual(names.count, 116)
        try FileManager.default.createDirectory(at: file("p/cals"), withIntermediateDirectories: true)
        for name in names { try FileManager.default.copyItem(at: suite.appendingPathComponent(name), to: file("p/cals/" + name)) }
        let build = try kiln("build", "p", "--out", "cal.sqlite", "--quiet")
        XCTAssertEqual(build.status, 1, build.stderr)
        XCTAssertTrue(build.stderr.contains("p/cals/big_bad_calendar.ics:"), "the findings of the broken calendars: \(build.stderr)")
        XCTAssertFalse(build.stderr.contains("crashed") || build.stderr.contains("malloc"), build.stderr)
        func extract(_ name: String) throws -> (records: [[String: Any]], codes: [String]) {
            let run = try kiln("extract", "events", "p/cals/" + name, "--manifest", "p", "--format", "json")
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stderr)
            let codes = (object["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            return (try XCTUnwrap(object["records"] as? [[String: Any]]), codes)
        }
        XCTAssertEqual(try extract("issue_526_calendar_with_events.ics").records.compactMap { $0["summary"] as? String }, [" Some event ':'", " Some other event"])
        XCTAssertEqual(try extract("issue_178_custom_component_contains_other.ics").records.compactMap { $0["uid"] as? String }, ["12345"])
        let global = try extract("issue_313_globally_unique_tzid.ics")
        XCTAssertTrue(global.records.contains { $0["tzid"] as? String == "/mozilla.org/20070129_1/America/New_York" }, "\(global.records)")
        XCTAssertFalse(global.codes.contains("ics.unknown-tzid"), "\(global.codes)")
    }
}
