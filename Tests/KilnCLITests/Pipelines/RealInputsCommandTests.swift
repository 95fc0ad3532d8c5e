import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// Real public inputs of the shapes that lost, shifted or refused values without a word (Tests/Fixtures/real/, each
/// with its provenance and licence), built through the `kiln` binary and compared with an independent reader.
final class RealInputsCommandTests: CLITestCase {
    private func rows(_ bundle: String, _ sql: String) throws -> [[String]] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" } }
    }

    /// The lines `program` prints, run by the Python of the oracles' virtual environment (gtfs-kit, icalendar…).
    private func venvLines(ofProgram program: String, _ arguments: [String]) throws -> [String] {
        let run = try CLITestCase.run(try PythonOracle.interpreter(), ["-c", program] + arguments, in: workingDirectory)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// The findings of a build's report, as `file:line: severity: code: message`.
    private func findings(_ report: String) throws -> [String] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return (object["diagnostics"] as? [[String: Any]] ?? []).map { finding in
            let place = [finding["file"] as? String, (finding["line"] as? Int).map(String.init)]
            return place.compactMap { $0 }.joined(separator: ":")
                + ": \(finding["severity"] as? String ?? ""): \(finding["code"] as? String ?? ""): \(finding["message"] as? String ?? "")"
        }
    }

    /// An `sqlite3 .dump` and a migration whose `CREATE INDEX` follows a comment: the indexes are created (SQLite asks
    /// for a REINDEX while filling them, which is theirs), the rows are Python's sqlite3's, and the two statements
    /// the sandbox refuses (the PRAGMA, the view) are named at their lines — never the comment before a statement.
    func testSQLScriptsWithIndexesLoadAndRefusalsQuoteTheStatement() throws {
        let folder = try copy("Tests/Fixtures/real/sql-dump-index", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let oracle = try PythonOracle.lines(ofProgram: """
            import sqlite3, sys
            for path in sys.argv[1:]:
                db = sqlite3.connect(":memory:")
                db.executescript(open(path).read())
                for name, table in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"):
                    print("index", name, table, path.rsplit("/", 1)[-1], sep="|")
                if "dump" in path:
                    for row in db.execute("SELECT id, value FROM test ORDER BY id"): print("row", *row, sep="|")
            """, [folder.appendingPathComponent("000002_route_stops.up.sql").path, folder.appendingPathComponent("file_dump.sql").path])
        XCTAssertEqual(oracle.filter { $0.hasPrefix("index|") }.count, 2)
        XCTAssertEqual(try rows("p.sqlite", "SELECT name, tbl, file FROM index_name ORDER BY file, name").map { "index|" + $0.joined(separator: "|") },
                       oracle.filter { $0.hasPrefix("index|") })
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, value FROM message ORDER BY id").map { "row|" + $0.joined(separator: "|") },
                       oracle.filter { $0.hasPrefix("row|") })
        let found = try findings("p.report.json")
        XCTAssertEqual(found.sorted(), [
            "file_dump.sql:1: warning: sql.denied: PRAGMA is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: PRAGMA foreign_keys=OFF;",
            "file_dump.sql:1: warning: sql.denied: PRAGMA is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: PRAGMA foreign_keys=OFF;",
            "file_dump.sql:8: warning: sql.denied: CREATE VIEW is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: CREATE VIEW schema as select * from sqlite_master;",
            "file_dump.sql:8: warning: sql.denied: CREATE VIEW is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: CREATE VIEW schema as select * from sqlite_master;",
        ], found.joined(separator: "\n"))
    }

    /// A refused statement after a comment is quoted and placed at its own line, not the comment's; a script's own
    /// REINDEX is still refused, also right after the `CREATE INDEX` of the index it names.
    func testARefusedStatementAfterACommentIsQuotedAtItsLine() throws {
        let folder = try copy("Tests/Fixtures/real/sql-dump-index", to: "p")
        try """
            /* a header
               over two lines */
            CREATE TABLE test (id integer primary key, value text);
            INSERT INTO test VALUES (1, 'one');
            -- rebuild the index
            CREATE INDEX test_idx ON test (value); REINDEX test_idx;
            -- drop it
            DROP INDEX test_idx;

            """.write(to: folder.appendingPathComponent("file_dump.sql"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let found = try findings("p.report.json").filter { $0.hasPrefix("file_dump.sql") }
        XCTAssertEqual(Set(found), [
            "file_dump.sql:6: warning: sql.denied: REINDEX is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: REINDEX test_idx;",
            "file_dump.sql:8: warning: sql.denied: DROP INDEX is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: DROP INDEX test_idx;",
        ], found.joined(separator: "\n"))
        XCTAssertEqual(try rows("p.sqlite", "SELECT name FROM index_name WHERE file = 'file_dump.sql'"), [["test_idx"]])
    }

    /// A Confluence Team Calendars export: its empty `X-WR-CALDESC:` and vendor properties without `X-` (which no
    /// field reads) are one info each, naming the property; the build ships every occurrence `icalendar` and
    /// `recurring-ical-events` find in the window. A property a field reads that libical cannot read stays an error.
    func testCalendarPropertiesNoFieldReadsDoNotFailTheBuild() throws {
        let folder = try copy("Tests/Fixtures/real/ics-confluence", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let expected = try String(decoding: PythonOracle.run("ics-occurrences.py", [folder.appendingPathComponent("hausmeister.ics").path, "2024-01-01", "2024-06-30"]),
                                  as: UTF8.self).split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            return [fields[0], fields[3], fields[4], fields[5]].joined(separator: "|")
        }
        XCTAssertEqual(expected.count, 8, "every six weeks from 15 and 22 January to June")
        XCTAssertEqual(try rows("p.sqlite", "SELECT event_uid, start_local, end_local, all_day FROM occurrence ORDER BY event_uid, start_local")
                        .map { $0.joined(separator: "|") }, expected.sorted())
        XCTAssertEqual(try rows("p.sqlite", "SELECT summary, category, start, all_day, status FROM event ORDER BY uid"),
                       [["ITG Hausmeister", "Hausmeister", "2024-01-15", "1", "CONFIRMED"], ["ITG Hausmeister", "Hausmeister", "2024-01-22", "1", "CONFIRMED"]])
        let found = try findings("p.report.json")
        XCTAssertFalse(found.contains { $0.contains(": error: ") }, found.joined(separator: "\n"))
        let unread = found.filter { $0.contains(": ics.unread: ") }
        XCTAssertEqual(unread.count, 10, unread.joined(separator: "\n"))
        XCTAssertTrue(unread.contains("hausmeister.ics:6: info: ics.unread: the calendar's X-WR-CALDESC is not read (no field takes it), and libical could not read it either: "
                                      + "No value for X property. Removing entire property:"), unread.joined(separator: "\n"))
        XCTAssertTrue(unread.contains("hausmeister.ics:130: info: ics.unread: an event's SUBCALENDAR-ID is not read (no field takes it), and libical could not read it either: "
                                      + "Parse error in property name: SUBCALENDAR-ID (and 1 more line of it in the file)"), unread.joined(separator: "\n"))
        XCTAssertTrue(unread.contains { $0.contains(" EVENT-ALLDAY is not read") }, unread.joined(separator: "\n"))

        // A property a field reads is still an error when libical cannot read it.
        let text = try String(contentsOf: folder.appendingPathComponent("hausmeister.ics"), encoding: .utf8)
        try text.replacingOccurrences(of: "RRULE:FREQ=WEEKLY;INTERVAL=6;BYDAY=MO\r\nCREATED:20240115T133145Z", with: "RRULE:FREQ=FORTNIGHTLY\r\nCREATED:20240115T133145Z")
            .write(to: folder.appendingPathComponent("hausmeister.ics"), atomically: true, encoding: .utf8)
        let broken = try kiln("build", "p", "--out", "broken.sqlite")
        XCTAssertEqual(broken.status, 1, broken.stderr)
        XCTAssertTrue(try findings("broken.report.json").contains { $0.hasPrefix("hausmeister.ics:141: error: ics.malformed: ") }, broken.stderr)
    }

    /// A severity override the bundle's schema cannot honour (a repeated key, a NULL, a value outside a range or a
    /// list, a dangling reference: the schema refuses such a row) is a manifest error in one sentence naming the
    /// constraint, before anything is read — before, the build read everything and ended in "the bundle cannot be
    /// written: UNIQUE constraint failed". An override the bundle can honour still builds.
    func testSeverityOverridesTheBundleCannotHonourAreRefusedWhenTheManifestLoads() throws {
        func pipeline(_ severity: String) throws {
            let folder = try writePipeline("p", manifest: """
                { bundle: "gtfs", schemaVersion: 1, severity: { \(severity) },
                  tables: [{ name: "stop", columns: [{ name: "id", type: "text", notNull: true }], primaryKey: ["id"] },
                           { name: "stop_time", columns: [{ name: "trip", type: "text" }, { name: "sequence", type: "integer", range: { min: 0 } },
                                                          { name: "stop", type: "text", references: "stop.id" }, { name: "pickup", type: "integer", enum: ["0", "1"] }],
                             primaryKey: ["trip", "sequence"] }],
                  sources: [{ name: "stop_times", format: "delimited", path: "stop_times.txt",
                              options: { separator: ",", quote: "\\"", header: "names", fields: ["trip_id", "stop_sequence", "stop_id", "pickup_type"] },
                              into: "stop_time", columns: { trip: "trip_id", sequence: "stop_sequence", stop: "stop_id", pickup: "pickup_type" } },
                            { name: "stops", format: "delimited", path: "stops.txt",
                              options: { separator: ",", quote: "\\"", header: "names", fields: ["stop_id"] }, into: "stop", columns: { id: "stop_id" } }] }
                """)
            try "trip_id,stop_sequence,stop_id,pickup_type\nT1,0,A,0\nT1,0,B,0\nT1,1,C,1\n".write(to: folder.appendingPathComponent("stop_times.txt"), atomically: true, encoding: .utf8)
            try "stop_id\nA\nB\nC\n".write(to: folder.appendingPathComponent("stops.txt"), atomically: true, encoding: .utf8)
        }
        let refused = [
            ("duplicate-key", "warning", "the primary key (id) of stop"),
            ("not-null", "off", "stop.id NOT NULL"),
            ("range", "info", "the range of stop_time.sequence (a CHECK)"),
            ("enum", "warning", "the values of stop_time.pickup (a CHECK)"),
            ("foreign-key", "warning", "stop_time (stop) REFERENCES stop, which the bundle's foreign-key check holds"),
        ]
        for (code, severity, constraint) in refused {
            try pipeline("\"\(code)\": \"\(severity)\"")
            let run = try kiln("build", "p", "--out", "p.sqlite")
            XCTAssertEqual(run.status, 64, "\(code): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("manifest error at severity.\(code): \"\(code)\" cannot be \"\(severity)\": the bundle's schema declares \(constraint), "
                                              + "which refuses every row such a finding names, so no bundle could be written; correct the rows or the declaration instead"),
                          run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("p.sqlite").path))
        }
        // The duplicate stays an error naming both lines; turned up or left alone, nothing is refused at load.
        try pipeline("\"duplicate-key\": \"error\", \"duplicate-row\": \"off\"")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("p/stop_times.txt:3: stop_time trip,sequence \"T1, 0\" is listed twice with different values (first at stop_times.txt:2): stop \"B\" here, \"A\" there"),
                      run.stderr)
        XCTAssertFalse(run.stderr.contains("the bundle cannot be written"), run.stderr)
    }

    /// AC Transit's routes with a column `route_color` that no source maps, and a query table that does not select
    /// one of its columns: each is a `column.unfilled` warning at its line of the manifest, the build still ships,
    /// and the columns are NULL as the warning says.
    func testAColumnNothingFillsIsAWarningNamingIt() throws {
        let folder = try copy("Tests/Fixtures/real/actransit-gtfs", to: "p")
        let manifest = folder.appendingPathComponent("kiln.json5")
        var text = try String(contentsOf: manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: #"{ name: "route_url", type: "text" }, { name: "file", type: "text" } ],"#,
                                         with: #"{ name: "route_url", type: "text" }, { name: "file", type: "text" },"# + "\n"
                                             + #"        { name: "route_color", type: "text" } ],"#)
        text = text.replacingOccurrences(of: "  sources: [", with: """
              { name: "route_count", columns: [{ name: "agency", type: "text" }, { name: "routes", type: "integer" }],
                query: "SELECT count(*) AS routes FROM route" },
              ],
              sources: [
            """)
        text = text.replacingOccurrences(of: "      primaryKey: [\"agency_id\"] },\n  ],\n", with: "      primaryKey: [\"agency_id\"] },\n")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = text.components(separatedBy: "\n")
        let colorLine = try XCTUnwrap(lines.firstIndex { $0.contains("route_color") }) + 1
        let countLine = try XCTUnwrap(lines.firstIndex { $0.contains("name: \"agency\", type: \"text\"") }) + 1
        XCTAssertEqual(try findings("p.report.json").filter { $0.contains("column.unfilled") }, [
            "kiln.json5:\(colorLine): warning: column.unfilled: route.route_color is filled by nothing (no source maps it): it is NULL in every row; map it, select it, or remove it",
            "kiln.json5:\(countLine): warning: column.unfilled: route_count.agency is filled by nothing (the table's query does not select it): it is NULL in every row; map it, select it, or remove it",
        ])
        XCTAssertEqual(try rows("p.sqlite", "SELECT count(*), count(route_color) FROM route"), [["155", "0"]])
        XCTAssertEqual(try rows("p.sqlite", "SELECT agency, routes FROM route_count"), [["NULL", "155"]])
    }

    /// A table without a primary key is written as a set: AC Transit's route types, one row per route, hold each type
    /// once in the bundle — said as a warning with the counts Python's csv module gives, never silently.
    func testIdenticalRowsOfATableWithoutAPrimaryKeyAreCountedInAWarning() throws {
        let folder = try copy("Tests/Fixtures/real/actransit-gtfs", to: "p")
        let manifest = folder.appendingPathComponent("kiln.json5")
        var text = try String(contentsOf: manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "  ],\n  sources: [", with: """
                { name: "route_kind", columns: [{ name: "route_type", type: "integer" }] },
              ],
              sources: [
                { name: "kinds", format: "delimited", path: "routes.txt",
                  options: { separator: ",", quote: "\\"", header: "names", fields: ["route_id", "route_short_name", "route_long_name", "route_desc", "route_type", "route_url"] },
                  into: "route_kind", columns: { route_type: "route_type" } },
            """)
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let counted = try PythonOracle.lines(ofProgram: """
            import csv, sys
            rows = [row["route_type"] for row in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8"))]
            print(len(rows)); print(len(set(rows)))
            """, [folder.appendingPathComponent("routes.txt").path])
        let (all, distinct) = (try XCTUnwrap(Int(counted[0])), try XCTUnwrap(Int(counted[1])))
        XCTAssertGreaterThan(all, distinct)
        XCTAssertEqual(try findings("p.report.json").filter { $0.contains("table.identical-rows") }, [
            ": warning: table.identical-rows: table route_kind has no primary key and was given \(all) rows, \(all - distinct) of them identical to another: the bundle holds \(distinct), each once",
        ])
        XCTAssertEqual(try rows("p.sqlite", "SELECT count(*) FROM route_kind"), [["\(distinct)"]])
    }

    /// The GTFS reference's sample feed (`6:00:00`, one digit of hours), then with a trip past midnight (`25:10:00`):
    /// seconds and minutes since the start of the service day, as gtfs-kit's `timestr_to_seconds` reads them. A time
    /// that is not one, or one with seconds made minutes, is a `value` error at its line, never rounded.
    func testGTFSTimesPastMidnightAreSecondsAndMinutesOfTheServiceDay() throws {
        let folder = try copy("Tests/Fixtures/real/gtfs-sample-feed", to: "p")
        let stopTimes = folder.appendingPathComponent("stop_times.txt")
        func compare(_ bundle: String) throws {
            let oracle = try venvLines(ofProgram: """
                import csv, sys
                from gtfs_kit.helpers import timestr_to_seconds
                for row in csv.DictReader(open(sys.argv[1], newline="")):
                    departure = timestr_to_seconds(row["departure_time"])
                    print(row["trip_id"], row["stop_sequence"], timestr_to_seconds(row["arrival_time"]), departure, departure // 60, sep="|")
                """, [stopTimes.path]).sorted()
            XCTAssertEqual(try rows(bundle, "SELECT trip_id, stop_sequence, arrival, departure, departure_minutes FROM stop_time")
                            .map { $0.joined(separator: "|") }.sorted(), oracle)
        }
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        try compare("p.sqlite")

        let night = "NIGHT1,23:58:00,23:59:00,STAGECOACH,1,,,,\nNIGHT1,25:10:00,25:10:00,BEATTY_AIRPORT,2,,,,\nNIGHT1,47:05:00,47:05:00,AMV,3,,,,\n"
        let original = try String(contentsOf: stopTimes, encoding: .utf8)
        try (original + night).write(to: stopTimes, atomically: true, encoding: .utf8)
        let late = try kiln("build", "p", "--out", "late.sqlite")
        XCTAssertEqual(late.status, 0, late.stderr)
        try compare("late.sqlite")
        XCTAssertEqual(try rows("late.sqlite", "SELECT arrival, departure_minutes FROM stop_time WHERE trip_id = 'NIGHT1' ORDER BY stop_sequence"),
                       [["86280", "1439"], ["90600", "1510"], ["169500", "2825"]])

        try (original + "NIGHT2,23:58:30,23:58:30,STAGECOACH,1,,,,\nNIGHT2,7:5:00,25:61:00,AMV,2,,,,\n").write(to: stopTimes, atomically: true, encoding: .utf8)
        let bad = try kiln("build", "p", "--out", "bad.sqlite")
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertEqual(try findings("bad.report.json").filter { $0.contains(": value: ") }, [
            "stop_times.txt:30: error: value: stop_time.departure_minutes: \"23:58:30\" has 30 seconds, which minutes cannot hold; use gtfsSeconds",
            "stop_times.txt:31: error: value: stop_time.arrival: \"7:5:00\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)",
            "stop_times.txt:31: error: value: stop_time.departure: \"25:61:00\" is not a GTFS time (minutes and seconds 00–59)",
            "stop_times.txt:31: error: value: stop_time.departure_minutes: \"25:61:00\" is not a GTFS time (minutes and seconds 00–59)",
        ])
    }

    /// AC Transit's quoted `agency.txt` read as a user who left out `quote` would: the quotes stay in the values (as
    /// Python's csv with QUOTE_NONE reads them), and one `delimited.looks-quoted` warning per file names the first
    /// line and the fix. Its header passed over, with fields the header names in another order, is a
    /// `delimited.header-fields` warning.
    func testQuotedLookingValuesAndAHeaderThatDiffersFromTheFieldsAreReported() throws {
        let folder = try copy("Tests/Fixtures/real/actransit-gtfs", to: "p")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let quoted = #"""
                  options: { separator: ",", quote: "\"", header: "names",
                             fields: ["agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone"] },
            """#
        XCTAssertTrue(text.contains(quoted))
        try text.replacingOccurrences(of: quoted, with: #"""
                  options: { separator: ",", header: true,
                             fields: ["agency_id", "agency_url", "agency_name", "agency_timezone", "agency_lang", "agency_phone"] },
            """#).write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let found = try findings("p.report.json").filter { $0.contains("delimited.") }
        XCTAssertEqual(found, [
            #"agency.txt:1: warning: delimited.header-fields: the header row names the columns "agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone", "#
                + #"but the fields (agency_id, agency_url, agency_name, agency_timezone, agency_lang, agency_phone) are read by position: "agency_url", "agency_name" are not in the column the fields give; "#
                + #"read each field from the column of its name with header: "names", or declare the fields in the file's order"#,
            #"agency.txt:2: warning: delimited.looks-quoted: the values look quoted (agency_url is "AC Transit"): "#
                + #"without the quote option the quotes are kept as text, here and on every such line of the file; add quote: "\"" to the source's options to read RFC 4180 CSV"#,
        ], found.joined(separator: "\n"))
        let oracle = try PythonOracle.lines(ofProgram: """
            import csv, sys
            for row in list(csv.reader(open(sys.argv[1], newline=""), quoting=csv.QUOTE_NONE))[1:]: print(*row, sep="|")
            """, [folder.appendingPathComponent("agency.txt").path])
        XCTAssertEqual(oracle, [#"1|"AC Transit"|http://www.actransit.org|America/Los_Angeles|EN|(510)891-4777"#])
        XCTAssertEqual(try rows("p.sqlite", "SELECT agency_id, agency_url, agency_name, agency_timezone, agency_lang, agency_phone FROM agency")
                        .map { $0.joined(separator: "|") }, oracle, "read by position, as the fields say, quotes and all")
    }

    /// Two Geocaching.com listings (GPX 1.0) whose Groundspeak extension is in two versions of its namespace
    /// (`…/cache/1/0`, `…/cache/1/0/1`), read with the first declared: every value is what lxml's XPath gives with the
    /// same namespaces, the file in the other version is a warning naming both URIs (the one found is lxml's), and
    /// every element no field reads is one info for the source with its namespace URI.
    func testElementsInAnotherVersionOfTheirNamespaceAreNamedWithBothURIs() throws {
        let folder = try copy("Tests/Fixtures/real/gpx-groundspeak-versions", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let oracle = try venvLines(ofProgram: """
            import sys
            from lxml import etree
            ns = {"gpx": "http://www.topografix.com/GPX/1/0", "gs": "http://www.groundspeak.com/cache/1/0"}
            for path in sorted(sys.argv[1:]):
                for wpt in etree.parse(path).xpath("//gpx:wpt", namespaces=ns):
                    first = lambda xpath: (wpt.xpath(xpath, namespaces=ns) or ["NULL"])[0]
                    cache = wpt.xpath("*[local-name()='cache']")[0]
                    print(first("gpx:name/text()"), first("@lat"), first("gs:cache/gs:name/text()"), first("gs:cache/gs:placed_by/text()"),
                          first("gs:cache/gs:difficulty/text()"), etree.QName(cache).namespace, sep="|")
            """, ["GC7FA4.gpx", "GCGCA8.gpx"].map { folder.appendingPathComponent($0).path })
        XCTAssertEqual(oracle.count, 2)
        XCTAssertEqual(try rows("p.sqlite", "SELECT code, lat, name, placed_by, difficulty FROM cache ORDER BY code").map { $0.joined(separator: "|") },
                       oracle.map { $0.split(separator: "|").prefix(5).joined(separator: "|") })
        let found = oracle[1].split(separator: "|").last.map(String.init) ?? ""
        XCTAssertEqual(found, "http://www.groundspeak.com/cache/1/0/1")
        let findings = try findings("p.report.json")
        XCTAssertEqual(findings.filter { $0.contains("xml.namespace-mismatch") }, [
            #"GCGCA8.gpx:20: warning: xml.namespace-mismatch: fields "difficulty", "name", "placedBy" read "cache" in the namespace "http://www.groundspeak.com/cache/1/0", "#
                + #"but this file's records have it in "\#(found)" (the same vocabulary, another version), which no field reads: they are NULL here; "#
                + "declare that URI (a source of its own for these files) to read them",
        ])
        XCTAssertFalse(findings.contains { $0.contains("source.field-unmatched") }, "the near miss says it: \(findings)")
        let unread = findings.filter { $0.contains("xml.unread") }
        XCTAssertTrue(unread.contains(#"GCGCA8.gpx:20: info: xml.unread: no field of source "caches" reads the element "cache" (namespace "\#(found)") of its records ("gpx:wpt"); "#
                                        + "reported once for the source, at its first file and line"), unread.joined(separator: "\n"))
        XCTAssertTrue(unread.contains(#"GC7FA4.gpx:23: info: xml.unread: no field of source "caches" reads the element "cache/owner" (namespace "http://www.groundspeak.com/cache/1/0") of its records ("gpx:wpt"); "#
                                        + "reported once for the source, at its first file and line"), unread.joined(separator: "\n"))
        XCTAssertEqual(unread.filter { $0.contains(#""desc""#) }.count, 1, "once for the source, though both files have it")
    }

    /// A Deutsche Bahn departure board whose departures list their stops in `"via": ["Paderborn", "Hamm(Westf)", …]`
    /// (some empty): with a field "." each station is a record with its position and its departure's train number,
    /// as Python's json lists them; no `json.not-object`.
    func testArraysOfScalarsAreRecordsOfTheirOwnValue() throws {
        let folder = try copy("Tests/Fixtures/real/json-db-departures-via", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(try findings("p.report.json").contains { $0.contains("json.not-object") })
        let oracle = try PythonOracle.lines(ofProgram: """
            import json, sys
            for departure in json.load(open(sys.argv[1], encoding="utf-8"))["departures"]:
                for position, station in enumerate(departure["via"], 1): print(departure["trainNumber"], position, station, sep="|")
            """, [folder.appendingPathComponent("departures.json").path])
        XCTAssertEqual(oracle.count, 34)
        XCTAssertEqual(try rows("p.sqlite", "SELECT train_number, position, station FROM departure_via").map { $0.joined(separator: "|") }.sorted(),
                       oracle.sorted())
    }

    /// OpenLayers' GeoJSON points with overlapping fields: `properties` and `geometry` whole, `properties/name`,
    /// `geometry/coordinates` (an array inside a captured object) and its elements. Every field of every record is
    /// what Python's json gives (the JSON values compared as structures, numbers by their text).
    func testOverlappingJSONFieldPathsAreAllRead() throws {
        let folder = try copy("Tests/Fixtures/real/geojson-openlayers-points", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let oracle = try PythonOracle.lines(ofProgram: """
            import json, sys
            from decimal import Decimal
            data = json.load(open(sys.argv[1], encoding="utf-8"), parse_float=str)
            for position, feature in enumerate(data["features"], 1):
                p, g = feature["properties"], feature["geometry"]
                print(position, p["name"], json.dumps(p, ensure_ascii=False, separators=(",", ":")),
                      json.dumps(g["coordinates"]).replace('"', "").replace(" ", ""), *g["coordinates"], sep="|")
            """, [folder.appendingPathComponent("point-samples.geojson").path])
        XCTAssertEqual(oracle.count, 9)
        XCTAssertEqual(try rows("p.sqlite", "SELECT position, name, properties, coordinates, lon, lat FROM place ORDER BY position")
                        .map { $0.joined(separator: "|") }, oracle)
        for row in try rows("p.sqlite", "SELECT geometry, coordinates FROM place") {
            XCTAssertTrue(row[0].hasSuffix(#","coordinates":"# + row[1] + "}"), "the whole geometry holds the coordinates read apart: \(row)")
        }
    }

    /// iCalcreator's sample calendar, whose VTIMEZONE covers only October 2018 to October 2020: as written, and with
    /// its meeting moved to January 2018 (before the span) with an extra date in July 2022 (after it), every
    /// occurrence is what icalendar + recurring-ical-events give (the tz database's Europe/Stockholm outside the
    /// span). Under a TZID no zone database knows, the event outside the span is one `ics.zone-span` warning.
    func testTimesOutsideAPartialVTimezoneFollowTheZoneDatabase() throws {
        let folder = try copy("Tests/Fixtures/real/ics-icalcreator-partial-zone", to: "p")
        let calendar = folder.appendingPathComponent("calendar-sample.ics")
        func compare(_ bundle: String) throws {
            let expected = try String(decoding: PythonOracle.run("ics-occurrences.py", [calendar.path, "2016-01-01", "2024-12-31"]), as: UTF8.self)
                .split(separator: "\n").map { line in
                    let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                    return [fields[0], fields[3], fields[4], fields[1], fields[2], fields[5]].joined(separator: "|")
                }
            XCTAssertEqual(expected.count, 5)
            XCTAssertEqual(try rows(bundle, "SELECT event_uid, start_local, end_local, start_utc, end_utc, all_day FROM occurrence ORDER BY start_local")
                            .map { $0.joined(separator: "|") }, expected.sorted())
        }
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        try compare("p.sqlite")

        let original = try String(contentsOf: calendar, encoding: .utf8)
        var moved = original
        for (old, new) in [("20190421T09", "20180114T09"), ("20190421T10", "20180114T10"), ("20190512T090000", "20180128T090000"),
                           ("20190609T090000/20190609T110000", "20220703T090000/20220703T110000"),
                           ("RECURRENCE-ID;TZID=Europe/Stockholm:20190505T090000", "RECURRENCE-ID;TZID=Europe/Stockholm:20180204T090000"),
                           ("DTSTART;TZID=Europe/Stockholm:20190504T100000", "DTSTART;TZID=Europe/Stockholm:20180203T100000")] {
            XCTAssertTrue(moved.contains(old), old)
            moved = moved.replacingOccurrences(of: old, with: new)
        }
        try moved.write(to: calendar, atomically: true, encoding: .utf8)
        let outside = try kiln("build", "p", "--out", "moved.sqlite")
        XCTAssertEqual(outside.status, 0, outside.stderr)
        try compare("moved.sqlite")
        XCTAssertEqual(try rows("moved.sqlite", "SELECT start_utc FROM occurrence WHERE start_local IN ('2018-01-14T09:00:00', '2022-07-03T09:00:00') ORDER BY 1"),
                       [["2018-01-14T08:00:00Z"], ["2022-07-03T07:00:00Z"]], "CET in January, CEST in July")
        XCTAssertFalse(try findings("moved.report.json").contains { $0.contains("ics.zone-span") })

        try moved.replacingOccurrences(of: "TZID:Europe/Stockholm", with: "TZID:Stockholm Office")
            .replacingOccurrences(of: "TZID=Europe/Stockholm", with: "TZID=Stockholm Office")
            .write(to: calendar, atomically: true, encoding: .utf8)
        let unknown = try kiln("build", "p", "--out", "unknown.sqlite")
        XCTAssertEqual(unknown.status, 0, unknown.stderr)
        XCTAssertEqual(try findings("unknown.report.json").filter { $0.contains("ics.zone-span") }, [
            "calendar-sample.ics:40: warning: ics.zone-span: event \"Scheduled meeting with six occurrences\" (20190312T194303CET-3879fa226b@kigkonsult.se): "
                + "2018-01-14T09:00:00 is outside the part of time the VTIMEZONE \"Stockholm Office\" covers (2018-10-28T03:00:00 to 2020-10-25T03:00:00), "
                + "and no zone of the system zone database has that name: its offset there is a guess",
        ])
    }
}
