import Foundation
import KilnC
import KilnKit
import KilnTestSupport
import XCTest

/// `kiln init DIR [INPUT…]`: the manifest it writes builds at once, and the bundle passes `kiln check`, for the
/// samples' semicolon files, tab- and comma-separated text, a Windows-1252 file, a GTFS feed (the one kiln export
/// gtfs writes from the Patras bundle), AC Transit's real GTFS routes, and real XML (NextBus), JSON (a Deutsche Bahn
/// departure board), KML (a campus map), iCalendar (Google Calendar and other exports) and wikitext (Wikivoyage)
/// inputs, whose rows are compared with what lxml, Python's json, icalendar and mwparserfromhell read
/// (`scripts/oracles/init_rows.py`); nothing is lost on the way.
final class InitCommandTests: CLITestCase {
    /// Inits, builds and checks `folder`; returns the manifest's text and the build's summary.
    private func initBuildAndCheck(_ folder: String, _ inputs: String...) throws -> (manifest: String, summary: String) {
        let initRun = try kiln(["init", folder] + inputs)
        XCTAssertEqual(initRun.status, 0, initRun.stderr)
        XCTAssertTrue(initRun.stderr.hasPrefix("wrote \(folder)/kiln.json5"), initRun.stderr)
        let build = try kiln("build", folder)
        XCTAssertEqual(build.status, 0, build.stderr)
        XCTAssertTrue(build.stderr.contains("diagnostics: 0 errors"), build.stderr)
        let check = try kiln("check", "build/\(folder).sqlite", "--manifest", folder)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        return (try String(contentsOf: file("\(folder)/kiln.json5"), encoding: .utf8), build.stderr)
    }

    /// The records of a file: its non-blank lines, less a header.
    private func records(_ path: String, header: Bool) throws -> Int {
        let lines = try String(contentsOf: file(path), encoding: .utf8).split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        return lines.count - (header ? 1 : 0)
    }

    func testSemicolonTabCommaAndWindows1252FilesBuildAtOnce() throws {
        try FileManager.default.createDirectory(at: file("mixed"), withIntermediateDirectories: true)
        for name in ["StopsUTF8.txt", "linesutf8.txt"] {
            try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/" + name), to: file("mixed/" + name))
        }
        // The stops again, tab-separated with a header, and a comma-separated file in Windows-1252.
        let stops = try String(contentsOf: file("mixed/StopsUTF8.txt"), encoding: .utf8).split(whereSeparator: \.isNewline)
        let tabbed = ["name\tcode\tlongitude\tlatitude"] + stops.map { $0.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\t") }
        try (tabbed.joined(separator: "\n") + "\n").write(to: file("mixed/stops.tsv"), atomically: true, encoding: .utf8)
        try XCTUnwrap("name,city\nCafé Müller,Zürich\nBäckerei Köln,Köln\n".data(using: .windowsCP1252)).write(to: file("mixed/cafes.csv"))
        let (manifest, summary) = try initBuildAndCheck("mixed")
        XCTAssertTrue(manifest.contains(#"separator: ";""#) && manifest.contains(#"separator: "\t""#) && manifest.contains(#"encoding: "windows-1252""#), manifest)
        // Stop codes keep their leading zero (text) and are the key; line ids 6.1 and 6.10 stay apart (text).
        XCTAssertTrue(manifest.contains(#"{ name: "field2", type: "text", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["field2"],"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "code", type: "text", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "latitude", type: "real", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["code"],"#), manifest)
        // Every record is a row.
        XCTAssertTrue(summary.contains("stopsutf8  \(try records("mixed/StopsUTF8.txt", header: false)) rows"), summary)
        XCTAssertTrue(summary.contains("linesutf8  \(try records("mixed/linesutf8.txt", header: false)) rows"), summary)
        XCTAssertTrue(summary.contains("stops      \(try records("mixed/stops.tsv", header: true)) rows"), summary)
        XCTAssertTrue(summary.contains("cafes      2 rows"), summary)
    }

    func testAGTFSFeedGetsItsKeysAndTheReferencesItsRowsKeep() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--quiet").status, 0)
        XCTAssertEqual(try kiln("export", "gtfs", "build/patras.sqlite", "--manifest", "patras", "--out", "feed").status, 0)
        let (manifest, summary) = try initBuildAndCheck("feed")
        XCTAssertTrue(manifest.contains("(a GTFS feed)"), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["trip_id", "stop_sequence"],"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "stop_id", type: "text", notNull: true, references: "stops.stop_id" },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "trip_id", type: "text", notNull: true, references: "trips.trip_id" },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "route_id", type: "text", notNull: true, references: "routes.route_id" },"#), manifest)
        XCTAssertTrue(summary.contains("stop_times      \(try records("feed/stop_times.txt", header: true)) rows"), summary)
        // Its exports give the feed back (the same header and rows, as Python's csv reads both) and its stops as a map.
        let exported = try kiln("export", "gtfs", "build/feed.sqlite", "--manifest", "feed", "--out", "again")
        XCTAssertEqual(exported.status, 0, exported.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: file("feed").path).filter { $0.hasSuffix(".txt") }.sorted()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("again").path).sorted(), names)
        let compared = try PythonOracle.lines(ofProgram: """
            import csv, sys
            for name in sys.argv[3:]:
                read = lambda folder: list(csv.reader(open(folder + "/" + name, newline="", encoding="utf-8")))
                first, again = read(sys.argv[1]), read(sys.argv[2])
                print(name, first[0] == again[0] and sorted(first[1:]) == sorted(again[1:]), len(first) - 1)
            """, [file("feed").path, file("again").path] + names)
        XCTAssertEqual(compared.count, names.count)
        for line in compared { XCTAssertTrue(line.contains(" True "), line) }
        XCTAssertEqual(try kiln("export", "geojson", "build/feed.sqlite", "--manifest", "feed", "--out", "map").status, 0)
        let features = try PythonOracle.lines(ofProgram: """
            import csv, json, sys
            stops = {row["stop_id"]: row for row in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8"))}
            features = json.load(open(sys.argv[2], encoding="utf-8"))["features"]
            print(len(stops), len(features), all(f["geometry"]["coordinates"] == [float(stops[f["id"]]["stop_lon"]), float(stops[f["id"]]["stop_lat"])] for f in features))
            """, [file("feed/stops.txt").path, file("map/stops.geojson").path])
        let stopCount = try records("feed/stops.txt", header: true)
        XCTAssertEqual(features, ["\(stopCount) \(stopCount) True"])
        // AC Transit's real routes and agency (quoted CSV with a header), without the fixture's own manifest.
        try copy("Tests/Fixtures/real/actransit-gtfs", to: "actransit")
        try FileManager.default.removeItem(at: file("actransit/kiln.json5"))
        let (actransit, routes) = try initBuildAndCheck("actransit")
        XCTAssertTrue(actransit.contains(#"quote: "\"""#), actransit)
        XCTAssertTrue(routes.contains("routes  \(try records("actransit/routes.txt", header: true)) rows"), routes)
    }

    func testWhatInitRefuses() throws {
        try FileManager.default.createDirectory(at: file("empty"), withIntermediateDirectories: true)
        var run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: no data file (.csv, .tsv, .txt, .json, .geojson, .xml, .gpx, .kml, .ics, .ical, .wikicode, .wiki) in empty; name the inputs after DIR"), run.stderr)
        try "a,b\n1,2\n".write(to: file("outside.csv"), atomically: true, encoding: .utf8)
        run = try kiln("init", "empty", "outside.csv")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: outside.csv is outside empty: copy it into the folder"), run.stderr)
        try "a,b\n1,2\n3\n".write(to: file("empty/ragged.csv"), atomically: true, encoding: .utf8)
        run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("ragged.csv is not delimited text kiln init can sketch: ragged.csv:3: error: expected 2 fields"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("empty/kiln.json5").path), "nothing was written")
        try "a,b\n1,2\n".write(to: file("empty/ragged.csv"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("init", "empty").status, 0)
        let written = try Data(contentsOf: file("empty/kiln.json5"))
        run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: empty/kiln.json5 is already there: kiln init writes a first manifest only"), run.stderr)
        XCTAssertEqual(try Data(contentsOf: file("empty/kiln.json5")), written)
    }

    /// A real input's folder of `Tests/Fixtures/real`, copied without its own manifest and notes.
    private func realInput(_ name: String, to folder: String) throws {
        try copy("Tests/Fixtures/real/" + name, to: folder)
        for extra in ["kiln.json5", "README.md"] where FileManager.default.fileExists(atPath: file("\(folder)/\(extra)").path) {
            try FileManager.default.removeItem(at: file("\(folder)/\(extra)"))
        }
    }

    /// What `scripts/oracles/init_rows.py` reads from a file: its records, each a member → text (absent for null).
    private func oracle(_ arguments: String...) throws -> [[String: String]] {
        let records = try XCTUnwrap(PythonOracle.json("init_rows.py", arguments) as? [[String: Any]])
        return records.map { $0.compactMapValues { $0 as? String } }
    }

    /// The rows of `sql` in the bundle built from `folder`.
    private func rows(_ folder: String, _ sql: String) throws -> [[String?]] {
        let database = try Database(path: file("build/\(folder).sqlite").path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map(\.textValue) }
    }

    func testAnXMLFileGivesATablePerRepeatingRecord() throws {
        try realInput("nextbus-actransit-22", to: "nextbus")
        let xml = file("nextbus/routeConfig.xml").path
        let (manifest, _) = try initBuildAndCheck("nextbus")
        XCTAssertTrue(manifest.contains(#"record: "/body/route/stop""#), manifest)
        XCTAssertTrue(manifest.contains(#""stop_id": "@stopId""#), manifest)
        XCTAssertTrue(manifest.contains(#"context: { "direction": { "direction_tag": "@tag""#), manifest)
        // Every stop of the route, with its attributes as lxml reads them, in document order.
        let stops = try oracle("xml", xml, "/body/route/stop")
        let built = try rows("nextbus", "SELECT tag, title, lat, lon, stop_id FROM route_stop ORDER BY ordinal")
        XCTAssertEqual(built.count, stops.count)
        XCTAssertEqual(built.map { $0[0] }, stops.map { $0["tag"] })
        XCTAssertEqual(built.map { $0[1] }, stops.map { $0["title"] })
        XCTAssertEqual(built.map { $0[4] }, stops.map { $0["stopId"] })
        XCTAssertEqual(built.map { Double($0[2] ?? "") }, stops.map { Double($0["lat"] ?? "x") })
        XCTAssertEqual(built.map { Double($0[3] ?? "") }, stops.map { Double($0["lon"] ?? "x") })
        // Each direction's stops, with the direction they belong to; the path's points.
        for direction in try oracle("xml", xml, "/body/route/direction") {
            let tag = try XCTUnwrap(direction["tag"])
            let expected = try oracle("xml", xml, "/body/route/direction[@tag='\(tag)']/stop").map { $0["tag"] }
            XCTAssertEqual(try rows("nextbus", "SELECT tag FROM direction_stop WHERE direction_tag = '\(tag)' ORDER BY position").map { $0[0] }, expected)
        }
        let points = try oracle("xml", xml, "/body/route/path/point")
        XCTAssertEqual(try rows("nextbus", "SELECT lat FROM point ORDER BY ordinal").map { Double($0[0] ?? "") }, points.map { Double($0["lat"] ?? "x") })
    }

    func testAJSONFileGivesATablePerArrayOfObjects() throws {
        try realInput("json-db-departures-via", to: "departures")
        let (manifest, _) = try initBuildAndCheck("departures")
        XCTAssertTrue(manifest.contains(#"records: "departures/*""#), manifest)
        let departures = try oracle("json", file("departures/departures.json").path, "departures")
        let columns = ["trainNumber": "train_number", "destination": "destination", "scheduledDeparture": "scheduled_departure",
                       "isCancelled": "is_cancelled", "via": "via", "delayDeparture": "delay_departure"]
        for (member, column) in columns.sorted(by: { $0.key < $1.key }) {
            let built = try rows("departures", "SELECT \(column) FROM departures ORDER BY ordinal").map { $0[0] }
            XCTAssertEqual(built, departures.map { $0[member] }, member)
        }
    }

    func testAKMLFileGivesItsPlacemarks() throws {
        try realInput("kml-fdu-campus", to: "campus")
        let (manifest, _) = try initBuildAndCheck("campus")
        XCTAssertTrue(manifest.contains(#"format: "kml""#) && manifest.contains(#"extendedData: ["gx_media_links"]"#), manifest)
        let placemarks = try oracle("kml", file("campus/campus.kml").path)
        let built = try rows("campus", "SELECT name, folder, geometry_type FROM campus ORDER BY ordinal")
        XCTAssertEqual(built.count, placemarks.count)
        XCTAssertEqual(built.map { $0[0] }, placemarks.map { $0["name"] })
        XCTAssertEqual(built.map { $0[1] }, placemarks.map { $0["folder"] })
        XCTAssertFalse(built.contains { $0[2] == nil }, "every placemark has its geometry")
    }

    func testAnICalendarFileGivesItsEventsAndOccurrences() throws {
        try FileManager.default.createDirectory(at: file("calendar"), withIntermediateDirectories: true)
        for name in ["daylight_saving_time.ics", "recur_instances.ics"] {
            _ = try copy("Tests/Fixtures/real/ics/" + name, to: "calendar/" + name)
        }
        let (manifest, _) = try initBuildAndCheck("calendar")
        // Google's export repeats without end: a window from the feed's own first and last starts.
        XCTAssertTrue(manifest.contains(#"options: { window: { from: "2017-06-29", until: "2020-06-22" } },"#), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["uid"],"#), manifest)
        for (path, table) in [("daylight_saving_time.ics", "event"), ("recur_instances.ics", "recur_instances_event")] {
            let events = try oracle("ics", file("calendar/" + path).path)
            // Kiln trims every text value (docs/FIDELITY.md): "SUMMARY:EXTERN: Eltern Medien Tag " is read without its space.
            let expected = Dictionary(events.map { ($0["uid"] ?? "", $0["summary"]?.trimmingCharacters(in: .whitespaces)) }, uniquingKeysWith: { first, _ in first })
            let built = try rows("calendar", "SELECT uid, summary FROM \(table) ORDER BY uid")
            XCTAssertEqual(built.map { $0[0] ?? "" }, expected.keys.sorted(), path)
            XCTAssertEqual(built.map { $0[1] }, expected.keys.sorted().map { expected[$0]! }, path)
        }
        XCTAssertGreaterThan(try rows("calendar", "SELECT count(*) FROM occurrence")[0][0].flatMap { Int($0) } ?? 0, 0)
    }

    func testAWikitextPageGivesItsPagesSectionsAndListings() throws {
        try realInput("wikivoyage-en-roppongi", to: "roppongi")
        let (manifest, _) = try initBuildAndCheck("roppongi")
        XCTAssertTrue(manifest.contains(#""listing": { table: "listing""#), manifest)
        let listings = try oracle("wikitext", file("roppongi/Roppongi.wikicode").path)
        let built = try rows("roppongi", "SELECT name, category FROM listing ORDER BY position")
        XCTAssertEqual(built.count, listings.count)
        XCTAssertEqual(built.map { $0[0] }, listings.map { $0["name"] })
        XCTAssertEqual(built.map { $0[1] }, listings.map { $0["category"] })
        XCTAssertEqual(try rows("roppongi", "SELECT title FROM page"), [["Roppongi"]])
    }

    /// A MediaWiki export (the travel guide's, Wikivoyage and Wikitravel pages) by its document element: its pages
    /// and redirects as lxml reads the export's <page> elements (namespace 0).
    func testAMediaWikiExportGivesItsPagesAndRedirects() throws {
        try FileManager.default.createDirectory(at: file("wiki"), withIntermediateDirectories: true)
        _ = try copy("raw/itravel/itravel-export.xml", to: "wiki/itravel-export.xml")
        let (manifest, _) = try initBuildAndCheck("wiki")
        XCTAssertTrue(manifest.contains(#"format: "mediawiki""#) && manifest.contains(#""alias": { table: "alias""#), manifest)
        let pages = try oracle("mediawiki", file("wiki/itravel-export.xml").path).filter { $0["namespace"] == "0" }
        XCTAssertEqual(try rows("wiki", "SELECT title FROM page").map { $0[0] ?? "" }.sorted(),
                       pages.filter { $0["redirect"] == "0" }.compactMap { $0["title"] }.sorted())
        XCTAssertEqual(try rows("wiki", "SELECT title FROM alias").map { $0[0] ?? "" }.sorted(),
                       pages.filter { $0["redirect"] == "1" }.compactMap { $0["title"] }.sorted())
    }

    /// Five real inputs of five formats in one folder, found without naming them: one manifest builds them all.
    func testFiveFormatsInOneFolderBuildAtOnce() throws {
        try realInput("actransit-gtfs", to: "mixed/gtfs")
        try realInput("nextbus-actransit-22", to: "mixed/nextbus")
        try realInput("json-db-departures-via", to: "mixed/departures")
        try realInput("kml-fdu-campus", to: "mixed/campus")
        try realInput("wikivoyage-en-roppongi", to: "mixed/roppongi")
        _ = try copy("Tests/Fixtures/real/ics/recur_instances.ics", to: "mixed/calendar/recur_instances.ics")
        let (manifest, summary) = try initBuildAndCheck("mixed")
        for format in ["delimited", "xml", "json", "kml", "wikitext", "ics"] {
            XCTAssertTrue(manifest.contains(#"format: "\#(format)""#), format)
        }
        XCTAssertTrue(summary.contains("routes "), summary)
        XCTAssertTrue(summary.contains("listing "), summary)
    }

    /// More real inputs: a JSON map of scenes keyed by id with their hotspots (Pannellum), a GTFS
    /// file whose rows end in empty fields (read by name, so a trailing separator is no wrong count), GPX 1.0 with
    /// Groundspeak's namespaces, a GeoJSON collection, and Tate's artworks (the root object is the record).
    func testMoreRealInputsBuildAtOnce() throws {
        for name in ["json-pannellum-tour", "gtfs-sample-feed", "gpx-groundspeak-versions", "geojson-openlayers-points", "json-tate-artworks"] {
            try realInput(name, to: name)
            let (manifest, _) = try initBuildAndCheck(name)
            XCTAssertFalse(manifest.isEmpty)
        }
        let tour = try String(contentsOf: file("json-pannellum-tour/kiln.json5"), encoding: .utf8)
        // Scenes are keyed by their id: one table of scenes, one of every scene's hotspots, each with its scene.
        XCTAssertTrue(tour.contains(#"records: "scenes/*/hotSpots/*""#) && tour.contains(#"context: { "scenes/*": { "scenes_key": "@key" } }"#), tour)
        let hotspots = try PythonOracle.lines(ofProgram: """
            import json, sys
            tour = json.load(open(sys.argv[1], encoding="utf-8"))
            for scene, value in tour["scenes"].items():
                for spot in value.get("hotSpots", []): print(scene, spot["yaw"])
            """, [file("json-pannellum-tour/example-tour.json").path])
        XCTAssertEqual(try rows("json-pannellum-tour", "SELECT scenes_key || ' ' || yaw FROM hotspots ORDER BY ordinal").map { $0[0] ?? "" }, hotspots)
        let times = try String(contentsOf: file("gtfs-sample-feed/kiln.json5"), encoding: .utf8)
        XCTAssertTrue(times.contains(#"header: "names""#), times)
        XCTAssertEqual(try rows("gtfs-sample-feed", "SELECT count(*) FROM stop_times"), [["\(try records("gtfs-sample-feed/stop_times.txt", header: true))"]])
        // Tate's four files, one artwork each, are one source over *.json; each contributor says which artwork it is of.
        let tate = try String(contentsOf: file("json-tate-artworks/kiln.json5"), encoding: .utf8)
        XCTAssertTrue(tate.contains(#"name: "json_tate_artworks", format: "json", path: "*.json","#), tate)
        XCTAssertTrue(tate.contains(#"context: { "": { "file_id": "id" } }"#), tate)
        let artworks = try PythonOracle.lines(ofProgram: """
            import glob, json, sys
            for name in sorted(glob.glob(sys.argv[1] + "/*.json")):
                artwork = json.load(open(name, encoding="utf-8"))
                for contributor in artwork.get("contributors", []): print(artwork["id"], contributor["id"])
            """, [file("json-tate-artworks").path])
        XCTAssertEqual(try rows("json-tate-artworks", "SELECT id FROM json_tate_artworks ORDER BY id").map { $0[0] ?? "" },
                       Array(Set(artworks.map { String($0.split(separator: " ")[0]) })).sorted())
        XCTAssertEqual(try rows("json-tate-artworks", "SELECT file_id || ' ' || id FROM contributors ORDER BY file_id").map { $0[0] ?? "" }, artworks)
    }
}
