import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// `kiln export gtfs` through the binary: the feed is valid for gtfs-guru, reads back with gtfs-kit as the bundle's
/// stops, routes and service hours, and is the same bytes every time. Also the routing rules through `kiln build`.
final class GTFSExportCommandTests: CLITestCase {
    private static let gtfsFiles = ["agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt", "frequencies.txt",
                                    "calendar.txt", "calendar_dates.txt", "feed_info.txt"]

    /// Builds raw/patras and exports the feed into `out` (the archive lands beside it).
    private func exportFeed(_ out: String = "build/gtfs") throws -> Run {
        if !FileManager.default.fileExists(atPath: file("build/patras.sqlite").path) {
            try copy("raw/patras", to: "raw/patras")
            let build = try kiln("build", "raw/patras", "--quiet")
            XCTAssertEqual(build.status, 0, build.stderr)
        }
        // As of the middle of the service period: near its end (or after it) the export warns, whatever the date today.
        let run = try kiln("export", "gtfs", "build/patras.sqlite", "--out", out, "--date", "2026-07-01")
        XCTAssertEqual(run.status, 0, run.stderr)
        return run
    }

    private func real(_ value: SQLValue) -> Double? {
        switch value {
        case .integer(let number): return Double(number)
        case .real(let number): return number
        default: return nil
        }
    }

    private func rows(_ sql: String) throws -> [[SQLValue]] {
        let database = try Database(path: file("build/patras.sqlite").path, mode: .readOnly)
        return try database.rows(sql).map(\.values)
    }

    func testWritesTheFeedFolderAndArchive() throws {
        let run = try exportFeed()
        let expected = GTFSExportCommandTests.gtfsFiles.map { "wrote build/gtfs/\($0)\n" }.joined() + "wrote build/patras-gtfs.zip\n"
        XCTAssertEqual(run.stderr, expected)
        for name in GTFSExportCommandTests.gtfsFiles {
            let data = try Data(contentsOf: file("build/gtfs/" + name))
            XCTAssertFalse(data.starts(with: [0xEF, 0xBB, 0xBF]), "\(name) has a BOM")
            XCTAssertNotNil(String(data: data, encoding: .utf8), "\(name) is not UTF-8")
            XCTAssertFalse(data.contains(0x0D), "\(name) has a CR")
            XCTAssertEqual(data.last, 0x0A)
        }
        XCTAssertTrue(try String(contentsOf: file("build/gtfs/stop_times.txt"), encoding: .utf8)
            .hasPrefix("trip_id,arrival_time,departure_time,stop_id,stop_sequence,timepoint\n"))
        // Line 6.2's overnight period (22:00 until 01:00) ends at 25:00:00, not 01:00:00.
        XCTAssertTrue(try String(contentsOf: file("build/gtfs/frequencies.txt"), encoding: .utf8).contains(",22:00:00,25:00:00,1800,0\n"))
    }

    func testTheFeedIsValidForGtfsGuru() throws {
        try TestTier.requireFull("the Python oracles")
        _ = try exportFeed()
        // Validated as of the middle of the feed's period, not the clock's date: near either end of the period
        // gtfs-guru warns that the feed is about to expire, or that trips do not run in the next 7 days (1 January is
        // a holiday), whatever the export does.
        let feedInfo = try String(contentsOf: file("build/gtfs/feed_info.txt"), encoding: .utf8).split(separator: "\n")
        XCTAssertTrue(feedInfo.first?.contains(",feed_start_date,feed_end_date,") == true, "\(feedInfo)")
        let period = try XCTUnwrap(feedInfo.last?.firstMatch(of: /,([0-9]{8}),([0-9]{8}),/), "\(feedInfo)")
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "yyyyMMdd"
        let start = try XCTUnwrap(format.date(from: String(period.1))), end = try XCTUnwrap(format.date(from: String(period.2)))
        format.dateFormat = "yyyy-MM-dd"
        let asOf = format.string(from: start.addingTimeInterval(end.timeIntervalSince(start) / 2))
        for feed in ["build/gtfs", "build/patras-gtfs.zip"] {
            let notices = try XCTUnwrap(try PythonOracle.json("gtfs_validate.py", [file(feed).path, asOf]) as? [String: [[String: Any]]])
            XCTAssertEqual(notices["errors"]?.count, 0, "\(feed): \(notices["errors"] ?? [])")
            // No warning and no notice: the holidays service is only in calendar_dates.txt, so it is neither a service
            // without weekdays nor one with weeks between its days.
            XCTAssertEqual(notices["warnings"]?.compactMap { $0["code"] as? String }, [], "\(feed): \(notices["warnings"] ?? [])")
            XCTAssertEqual(notices["infos"]?.compactMap { $0["code"] as? String }, [], "\(feed): \(notices["infos"] ?? [])")
        }
    }

    func testGtfsKitReadsBackTheBundlesStopsRoutesAndServiceHours() throws {
        try TestTier.requireFull("the Python oracles")
        _ = try exportFeed()
        let feed = try XCTUnwrap(try PythonOracle.json("gtfs_summary.py", [file("build/patras-gtfs.zip").path]) as? [String: Any])
        let stops = try XCTUnwrap(feed["stops"] as? [[String: Any]])
        let bundleStops = try rows("SELECT code, name, latitude, longitude FROM stop ORDER BY code")
        XCTAssertEqual(stops.count, bundleStops.count)
        for (stop, row) in zip(stops, bundleStops) {
            XCTAssertEqual(stop["id"] as? String, row[0].textValue)
            XCTAssertEqual(stop["name"] as? String, row[1].textValue)
            XCTAssertEqual(stop["lat"] as? Double, real(row[2]))
            XCTAssertEqual(stop["lon"] as? Double, real(row[3]))
        }
        let routes = try XCTUnwrap(feed["routes"] as? [[String: Any]])
        let lines = try rows("SELECT id, name FROM line ORDER BY sort_key")
        XCTAssertEqual(routes.map { $0["id"] as? String }, lines.map { $0[0].textValue })
        XCTAssertEqual(routes.map { $0["short"] as? String }, lines.map { $0[0].textValue })
        XCTAssertEqual(routes.map { $0["long"] as? String }, lines.map { $0[1].textValue })
        XCTAssertEqual(Set(routes.compactMap { $0["type"] as? Int }), [3])
        // Service per line on one date of each day category, as gtfs-kit reads calendar.txt and calendar_dates.txt:
        // a Wednesday, a Saturday, a Sunday, and Epiphany (a Tuesday, a public holiday).
        let dates: [String: (bit: Int, service: String)] = ["20260107": (1, "weekdays"), "20260110": (2, "saturday"), "20260111": (4, "sunday"), "20260106": (8, "holidays")]
        let summary = try XCTUnwrap(try PythonOracle.json("gtfs_summary.py", [file("build/patras-gtfs.zip").path] + dates.keys.sorted())
            as? [String: Any])
        let days = try XCTUnwrap(summary["days"] as? [String: [String: Any]])
        for (date, category) in dates {
            let day = try XCTUnwrap(days[date])
            XCTAssertEqual(day["services"] as? [String], [category.service], date)
            // The bundle: minutes between from and until of every period, and the departures they make
            // (from, from + every, … strictly before until).
            let expected = try rows("""
                SELECT lt.line_id, SUM(t.until_min - t.from_min), SUM((t.until_min - t.from_min + t.frequency - 1) / t.frequency)
                FROM line_timetable AS lt JOIN timetable AS t ON t.id = lt.timetable_id WHERE t.day_mask & \(category.bit) GROUP BY lt.line_id
                """)
            let minutes = try XCTUnwrap(day["minutes"] as? [String: Double]), departures = try XCTUnwrap(day["departures"] as? [String: Int])
            XCTAssertEqual(Set(minutes.keys), Set(expected.compactMap { $0[0].textValue }), date)
            XCTAssertEqual(Set(departures.keys), Set(expected.compactMap { $0[0].textValue }), date)
            for row in expected {
                let line = row[0].textValue ?? ""
                XCTAssertEqual(minutes[line], real(row[1]), "\(date) \(line)")
                XCTAssertEqual(departures[line].map(Double.init), real(row[2]), "\(date) \(line)")
            }
        }
    }

    func testTheSameBundleGivesTheSameBytes() throws {
        _ = try exportFeed("build/gtfs")
        try FileManager.default.moveItem(at: file("build/patras-gtfs.zip"), to: file("build/first.zip"))
        Thread.sleep(forTimeInterval: 1.1)
        _ = try exportFeed("build/gtfs")
        XCTAssertEqual(try sha256("build/first.zip"), try sha256("build/patras-gtfs.zip"))
        _ = try exportFeed("again/gtfs")
        for name in GTFSExportCommandTests.gtfsFiles {
            XCTAssertEqual(try sha256("build/gtfs/" + name), try sha256("again/gtfs/" + name), name)
        }
        XCTAssertEqual(try sha256("again/patras-gtfs.zip"), try sha256("build/patras-gtfs.zip"))
    }

    // MARK: The routing rules through kiln build

    func testBrokenFixtureReportsTheRouteRules() throws {
        let folder = try brokenPipeline()
        let run = try kiln("build", folder.lastPathComponent)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("broken/linesutf8.txt:15: line 6.4 starts at stop 0111 (StartingPoints.txt), which its route does not visit"), run.stderr)
        XCTAssertTrue(run.stderr.contains("broken/Routes_UTF8.txt:32: route of line 6.5 visits stop 0405 twice in a row (positions 2 and 3)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("broken/linesutf8.txt:21: line 8.3 has no timetable in Timetables_UTF8.txt"), run.stderr)
    }

    func testTransferFixtureFailsWhenTheGuaranteeIsAnError() throws {
        let folder = try copy("Tests/Fixtures/patras-transfers", to: "transfers")
        let manifest = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"), encoding: .utf8)
        try manifest.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let lenient = try kiln("build", "transfers")
        XCTAssertEqual(lenient.status, 0, lenient.stderr)
        XCTAssertTrue(lenient.stderr.contains("transfers/Routes_UTF8.txt:2: stop pairs needing more than two changes: 1 (the app promises at most two); the worst, stop 0101 «Πλατεία Γεωργίου» and stop 0105 «Λιμάνι», needs 3 changes"), lenient.stderr)
        try manifest.replacingOccurrences(of: "  severity: {\n", with: "  severity: {\n    \"route.transfers\": \"error\",\n")
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let strict = try kiln("build", "transfers")
        XCTAssertEqual(strict.status, 1)
        XCTAssertTrue(strict.stderr.contains("diagnostics: 1 error, 0 warnings, 0 info"), strict.stderr)
        XCTAssertTrue(strict.stderr.contains("stop 0101 «Πλατεία Γεωργίου» and stop 0105 «Λιμάνι», needs 3 changes"), strict.stderr)
    }

    func testFeedVersionIsTheBundlesContentDigest() throws {
        _ = try exportFeed()
        let database = try Database(path: file("build/patras.sqlite").path, mode: .readOnly)
        let virtual = Set(try database.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'").compactMap { $0.values.first?.textValue })
        let tables = try database.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.values.first?.textValue }
            .filter { name in !virtual.contains(name) && !virtual.contains { name.hasPrefix($0 + "_") } }
        try database.close()
        // The digest as docs/guide/updates.md defines it (the real tables; full-text tables are rebuilt from them),
        // computed by the Python oracle kiln patch is checked with.
        let digest = try PythonOracle.text("bundle_patch.py", ["digest", file("build/patras.sqlite").path] + tables)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let feedInfo = try String(contentsOf: file("build/gtfs/feed_info.txt"), encoding: .utf8)
        XCTAssertTrue(feedInfo.hasSuffix(",20260101,20261231,\(digest)\n"), feedInfo + digest)
    }

    /// A pipeline without a servicePeriod that ships a GTFS calendar as it was given (kiln init of the Patras feed,
    /// an export of its calendar tables): a service whose last day is before the export date is
    /// export.expired-calendar, for the same services gtfs-validator's rules (gtfs-guru) report as expired_calendar.
    func testAnExpiredCalendarIsWarnedWithoutAServicePeriod() throws {
        _ = try exportFeed()
        try FileManager.default.copyItem(at: file("build/gtfs"), to: file("feed"))
        XCTAssertEqual(try kiln("init", "feed").status, 0)
        var manifest = try String(contentsOf: file("feed/kiln.json5"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(manifest.contains("servicePeriod"))
        // In place of the exports kiln init gives a feed, one of the calendar tables as they were given.
        if let exports = manifest.range(of: "\n  exports: [") { manifest = String(manifest[..<exports.lowerBound]) + "\n}" }
        manifest = String(manifest.dropLast()) + """
              exports: [{ name: "timetable", files: [
                { path: "calendar.txt", format: "csv", query: "SELECT * FROM calendar ORDER BY service_id" },
                { path: "calendar_dates.txt", format: "csv", query: "SELECT * FROM calendar_dates ORDER BY date, service_id" },
                { path: "feed_info.txt", format: "csv", query: "SELECT * FROM feed_info" } ] }],
            }

            """
        try manifest.write(to: file("feed/kiln.json5"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "feed", "--quiet").status, 0)
        for date in ["2026-07-01", "2026-12-01", "2026-12-25", "2027-02-01"] {
            let run = try kiln("export", "timetable", "build/feed.sqlite", "--manifest", "feed", "--out", "out", "--date", date)
            XCTAssertEqual(run.status, 0, run.stderr)
            let warned = run.stderr.split(separator: "\n").filter { $0.hasSuffix("[export.expired-calendar]") }
            let report = try XCTUnwrap(PythonOracle.json("gtfs_validate.py", [file("feed").path, date]) as? [String: [[String: Any]]])
            let codes = (report["warnings"] ?? []).compactMap { $0["code"] as? String }
            let expired = report["warnings"]?.first { $0["code"] as? String == "expired_calendar" }?["count"] as? Int ?? 0
            XCTAssertEqual(warned.count, expired, "\(date): \(run.stderr)")
            // The feed's own end date (feed_info.txt, no servicePeriod): warned when gtfs-validator says it expires.
            XCTAssertEqual(run.stderr.contains("out/feed_info.txt:2: warning: the feed's own feed_end_date "),
                           codes.contains("feed_expiration_date30_days") || codes.contains("feed_expiration_date7_days"), "\(date): \(run.stderr) \(codes)")
        }
        let late = try kiln("export", "timetable", "build/feed.sqlite", "--manifest", "feed", "--out", "out", "--date", "2026-12-25")
        XCTAssertTrue(late.stderr.contains("out/calendar.txt:2: warning: service \"saturday\" runs last on 20261219, before the export date 20261225 (calendar.txt with calendar_dates.txt): gtfs-validator reports it as expired_calendar"), late.stderr)
    }

    func testTheServicePeriodWarningAndTheExportDate() throws {
        _ = try exportFeed()
        let before = try Data(contentsOf: file("build/patras-gtfs.zip"))
        let late = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "build/gtfs", "--date", "2026-12-20")
        XCTAssertEqual(late.status, 0, late.stderr)
        XCTAssertTrue(late.stderr.contains("raw/patras/kiln.json5: warning: the service period of export \"gtfs\" ends on 20261231, 11 days after 20261220 (warned 30 days ahead, servicePeriod.warnDays): apps and validators will treat the feed as expiring; move the period on [export.service-ending]\n"), late.stderr)
        // The Saturday service has run its last day already: 26 December is a holiday (calendar_dates.txt removes it).
        XCTAssertTrue(late.stderr.hasSuffix("build/gtfs/calendar.txt:3: warning: service \"saturday\" runs last on 20261219, before the export date 20261220 (calendar.txt with calendar_dates.txt): gtfs-validator reports it as expired_calendar; drop it from the feed, or move its dates on (a servicePeriod binds them as :kiln_service_start and :kiln_service_end) [export.expired-calendar]\n"), late.stderr)
        XCTAssertEqual(try Data(contentsOf: file("build/patras-gtfs.zip")), before, "the date changed the files")
        let early = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "build/gtfs", "--date", "2026-06-01")
        XCTAssertFalse(early.stderr.contains("warning"), early.stderr)
        let bad = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "build/gtfs", "--date", "1.6.2026")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.hasPrefix("Error: --date takes a day as YYYY-MM-DD, not \"1.6.2026\""), bad.stderr)

        // Twelve months from the export date: SOURCE_DATE_EPOCH gives it, nothing else (not the clock).
        let manifest = try String(contentsOf: file("raw/patras/kiln.json5"), encoding: .utf8)
        try manifest.replacingOccurrences(of: #"servicePeriod: { start: "2026-01-01", end: "2026-12-31" }"#, with: "servicePeriod: { months: 12 }")
            .write(to: file("raw/patras/kiln.json5"), atomically: true, encoding: .utf8)
        let undated = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "rolling")
        XCTAssertEqual(undated.status, 64)
        XCTAssertTrue(undated.stderr.hasPrefix("Error: export \"gtfs\": the service period counts 12 months from the export date: give it with kiln export --date YYYY-MM-DD or SOURCE_DATE_EPOCH"), undated.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("rolling").path))
        // 1 March 2027 00:00 UTC, as `date -d 2027-03-01 +%s` gives it.
        let epoch = try kilnInShell("", prefix: "SOURCE_DATE_EPOCH=1803859200", ["export", "gtfs", "build/patras.sqlite", "--out", "rolling"])
        XCTAssertEqual(epoch.status, 0, epoch.stderr)
        XCTAssertTrue(try String(contentsOf: file("rolling/calendar.txt"), encoding: .utf8).contains(",20270301,20280229\n"))
    }
}
