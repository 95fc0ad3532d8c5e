import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The pieces of the GTFS export: CSV, clock times past midnight, Orthodox Easter and the holidays it moves, the ZIP
/// archive, and export parameters. Expected values come from python-dateutil, Python's csv and zipfile modules.
final class GTFSExportTests: KilnTestCase {
    private func patras() throws -> (pipeline: CompiledPipeline, bundle: URL) {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let pipeline = try ManifestLoader.load(folder.path)
        let bundle = temporaryDirectory.appendingPathComponent("patras.sqlite")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: bundle))
        XCTAssertTrue(outcome.built, outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        return (pipeline, bundle)
    }

    private func isoDate(_ text: String, plus days: Int) throws -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = text.split(separator: "-").compactMap { Int($0) }
        let date = try XCTUnwrap(calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])))
        let moved = try XCTUnwrap(calendar.date(byAdding: .day, value: days, to: date))
        let c = calendar.dateComponents([.year, .month, .day], from: moved)
        return String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
    }

    // MARK: Orthodox Easter

    func testOrthodoxEasterMatchesDateutil() throws {
        let years = Array(1900...2100)
        let expected = String(decoding: try PythonOracle.run("easter.py", years.map(String.init)), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        XCTAssertEqual(years.map { OrthodoxEaster.isoDate(year: $0) ?? "nil" }, expected)
        XCTAssertNil(OrthodoxEaster.date(year: 1200))
    }

    func testOrthodoxEasterInSQL() throws {
        let database = try Database(path: ":memory:", mode: .readWrite, functions: KilnSQLFunctions.all)
        let expected = String(decoding: try PythonOracle.run("easter.py", ["2026", "2027"]), as: UTF8.self).split(separator: "\n").map(String.init)
        let rows = try database.rows("SELECT kiln_orthodox_easter(2026), kiln_orthodox_easter(2027), kiln_orthodox_easter('x')")
        XCTAssertEqual(rows.first?.values.prefix(2).map { $0.textValue ?? "" }, expected)
        XCTAssertEqual(rows.first?.values.last, .null)
    }

    /// The holidays of 2026 and 2027 in calendar_dates.txt: the fixed ones, and the moving ones at their distance from
    /// Orthodox Easter as python-dateutil computes it.
    func testHolidaysOf2026And2027() throws {
        let (pipeline, bundle) = try patras()
        for year in [2026, 2027] {
            var manifest = pipeline.manifest
            let index = try XCTUnwrap(manifest.exports.firstIndex { $0.name == "gtfs" })
            manifest.exports[index].servicePeriod = ServicePeriodSpec(start: "\(year)-01-01", end: "\(year)-12-31")
            manifest.exports[index].archive = nil
            let folder = temporaryDirectory.appendingPathComponent("gtfs-\(year)")
            _ = try Exporter(manifest: manifest).export("gtfs", from: bundle, to: folder)
            let rows = try String(contentsOf: folder.appendingPathComponent("calendar_dates.txt"), encoding: .utf8)
                .split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
            let added = rows.filter { $0[0] == "holidays" && $0[2] == "1" }.map { $0[1] }
            let easter = String(decoding: try PythonOracle.run("easter.py", [String(year)]), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let moving = try [-48, -2, 0, 1, 50].map { try isoDate(easter, plus: $0) }
            let fixed = ["0101", "0106", "0325", "0501", "0815", "1028", "1130", "1225", "1226"].map { "\(year)\($0)" }
            XCTAssertEqual(added, Set(moving + fixed).sorted(), "\(year)")
            // Each holiday also removes the service the day would otherwise run.
            for date in added {
                let weekday = try XCTUnwrap(Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!,
                    from: try XCTUnwrap(DateFormatter.gtfs.date(from: date))).weekday)
                let usual = weekday == 1 ? "sunday" : weekday == 7 ? "saturday" : "weekdays"
                XCTAssertTrue(rows.contains([usual, date, "2"]), "\(date) removes \(usual)")
            }
            XCTAssertEqual(rows.count, added.count * 2)
        }
    }

    // MARK: CSV

    func testCSVFieldsReadBackWithPythonsCSVModule() throws {
        let values = ["plain", "a,b", "say \"hi\"", "two\nlines", "Κορίνθου", "", "cr\r\nlf", "trailing space "]
        let line = values.map(CSVWriter.field).joined(separator: ",")
        let file = try write("a,b,c,d,e,f,g,h\n" + line + "\n", to: "fields.csv")
        let script = "import csv, json, sys; rows = list(csv.reader(open(sys.argv[1], encoding='utf-8', newline=''))); print(json.dumps(rows[1]))"
        let scriptFile = try write(script, to: "read_csv.py")
        let python = try PythonOracle.interpreter()
        let process = Process()
        process.executableURL = python
        process.arguments = [scriptFile.path, file.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(try JSONSerialization.jsonObject(with: data) as? [String], values)
        XCTAssertEqual(CSVWriter.field("plain"), "plain", "only fields that need it are quoted")
    }

    func testClockTimesPastMidnightAreNotWrapped() {
        XCTAssertEqual(CSVWriter.clockTime(6 * 3600 + 20 * 60), "06:20:00")
        XCTAssertEqual(CSVWriter.clockTime(24 * 3600 + 30 * 60), "24:30:00")
        XCTAssertEqual(CSVWriter.clockTime(25 * 3600 + 59), "25:00:59")
    }

    // MARK: ZIP

    func testZipArchiveReadsBackAndIsDeterministic() throws {
        let first = try write("stop_id,stop_name\n0101,Κορίνθου\n", to: "files/stops.txt")
        let second = try write(String(repeating: "1.1,weekdays\n", count: 500), to: "files/trips.txt")
        let one = temporaryDirectory.appendingPathComponent("one.zip"), two = temporaryDirectory.appendingPathComponent("two.zip")
        try ZipArchiveWriter.write([("stops.txt", first), ("trips.txt", second)], to: one)
        // A later modification time on the inputs changes nothing: every entry carries the same fixed time.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_800_000_000)], ofItemAtPath: first.path)
        try ZipArchiveWriter.write([("stops.txt", first), ("trips.txt", second)], to: two)
        XCTAssertEqual(try Data(contentsOf: one), try Data(contentsOf: two))
        let script = """
            import json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            print(json.dumps([[i.filename, i.compress_type, list(i.date_time), z.read(i).decode('utf-8')] for i in z.infolist()]))
            """
        let scriptFile = try write(script, to: "read_zip.py")
        let data = try standardOutput(of: try PythonOracle.interpreter(),
                                      [scriptFile.path, one.path])
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [[Any]])
        XCTAssertEqual(entries.map { $0[0] as? String }, ["stops.txt", "trips.txt"])
        XCTAssertEqual(entries.map { $0[1] as? Int }, [8, 8], "deflated")
        XCTAssertEqual(entries.first?[2] as? [Int], [2000, 1, 1, 0, 0, 0])
        XCTAssertEqual(entries.map { $0[3] as? String }, [try String(contentsOf: first, encoding: .utf8), try String(contentsOf: second, encoding: .utf8)])
    }

    func testZipIntoAMissingFolderIsAnIOError() throws {
        let file = try write("x\n", to: "x.txt")
        XCTAssertThrowsError(try ZipArchiveWriter.write([("x.txt", file)], to: temporaryDirectory.appendingPathComponent("no/such/a.zip"))) { error in
            // The wrapper throws its own error; `Exporter` reports it as an I/O failure.
            guard let failure = error as? LibraryFailure else { return XCTFail("\(error)") }
            XCTAssertTrue(failure.description.contains("a.zip"), failure.description)
        }
    }

    // MARK: Parameters

    func testAQueryParameterTheExportDoesNotDeclareIsAManifestError() throws {
        let (pipeline, bundle) = try patras()
        var manifest = pipeline.manifest
        let index = try XCTUnwrap(manifest.exports.firstIndex { $0.name == "gtfs" })
        manifest.exports[index].parameters.removeValue(forKey: "speed_kmh")
        XCTAssertThrowsError(try Exporter(manifest: manifest).export("gtfs", from: bundle, to: temporaryDirectory.appendingPathComponent("g"))) { error in
            guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(issue.keyPath, "exports[1].files[4].query")
            XCTAssertTrue(issue.message.contains(":speed_kmh"), issue.message)
        }
    }
}

private extension DateFormatter {
    static let gtfs: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()
}

/// The export's service period (`servicePeriod`), its warning, and the content digest as `feed_version`.
final class ServicePeriodTests: KilnTestCase {
    private func day(_ text: String) throws -> Date { try XCTUnwrap(CalendarDay.day(text)) }

    func testMonthsCountFromTheStartOrTheExportDate() throws {
        let fixed = try ServicePeriod(ServicePeriodSpec(start: "2026-07-01", months: 12), exportDate: nil)
        XCTAssertEqual(ServicePeriod.gtfs(fixed.end), "20270630")
        let counted = try ServicePeriod(ServicePeriodSpec(months: 1), exportDate: try day("2028-01-31"))
        XCTAssertEqual([ServicePeriod.gtfs(counted.start), ServicePeriod.gtfs(counted.end)], ["20280131", "20280228"])
        XCTAssertThrowsError(try ServicePeriod(ServicePeriodSpec(months: 12), exportDate: nil)) { error in
            XCTAssertTrue("\(error)".contains("give it with kiln export --date YYYY-MM-DD or SOURCE_DATE_EPOCH"), "\(error)")
        }
        XCTAssertEqual(CalendarDay.day(epoch: "1767225600"), try day("2026-01-01"))
        XCTAssertNil(CalendarDay.day("2026-02-30"))
    }

    func testBadPeriodsAreManifestErrors() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let file = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: file, encoding: .utf8)
        for (period, message) in [(#"{ start: "2026-12-31", end: "2026-01-01" }"#, "ends (2026-01-01) before it starts (2026-12-31)"),
                                  (#"{ start: "2026-01-01" }"#, "an end date or a number of months, one of the two"),
                                  (#"{ start: "1 May", months: 3 }"#, "expected a date YYYY-MM-DD, found \"1 May\"")] {
            try text.replacingOccurrences(of: #"servicePeriod: { start: "2026-01-01", end: "2026-12-31" }"#, with: "servicePeriod: \(period)")
                .write(to: file, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try ManifestLoader.load(folder.path, resolvingInputs: false), period) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }

    func testTheWarningComesInTheLastWarnDays() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let manifest = try ManifestLoader.load(folder.path, resolvingInputs: false).manifest
        func findings(_ date: String) throws -> [Diagnostic] { try Exporter(manifest: manifest, exportDate: try day(date)).serviceFindings("gtfs") }
        XCTAssertEqual(try findings("2026-07-01"), [])
        XCTAssertEqual(try findings("2026-11-30"), [], "31 days left")
        // 30 days left is warned: gtfs-validator's feed_expiration_date30_days compares the end with the day 30 days on
        // inclusively (compareTo <= 0), and gtfs-guru warns there too (GTFSExportCommandTests).
        let soon = try findings("2026-12-01")
        XCTAssertEqual(soon.map(\.code), ["export.service-ending"])
        XCTAssertEqual(soon.first?.severity, .warning)
        XCTAssertTrue(soon.first?.message.contains("ends on 20261231, 30 days after 20261201") == true, soon.first?.message ?? "")
        XCTAssertTrue(try findings("2027-01-02").first?.message.contains("ended on 20261231, 2 days before 20270102") == true)
        XCTAssertEqual(try findings("2026-12-31").first?.message.contains("0 days after") == true, true)
    }

    func testAPeriodOverTwoYearsHasTheHolidaysOfBoth() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let pipeline = try ManifestLoader.load(folder.path)
        let bundle = temporaryDirectory.appendingPathComponent("patras.sqlite")
        XCTAssertTrue(try Builder.build(pipeline, options: BuildOptions(output: bundle)).built)
        var manifest = pipeline.manifest
        let index = try XCTUnwrap(manifest.exports.firstIndex { $0.name == "gtfs" })
        manifest.exports[index].servicePeriod = ServicePeriodSpec(start: "2026-07-01", months: 12)
        manifest.exports[index].archive = nil
        let out = temporaryDirectory.appendingPathComponent("gtfs")
        _ = try Exporter(manifest: manifest).export("gtfs", from: bundle, to: out)
        let added = try String(contentsOf: out.appendingPathComponent("calendar_dates.txt"), encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: ",").map(String.init) }.filter { $0[0] == "holidays" && $0[2] == "1" }.map { $0[1] }
        var expected: [String] = []
        let calendar = CalendarDay.calendar
        for year in [2026, 2027] {
            let easter = try day(String(decoding: try PythonOracle.run("easter.py", [String(year)]), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            expected += [-48, -2, 0, 1, 50].map { ServicePeriod.gtfs(calendar.date(byAdding: .day, value: $0, to: easter)!) }
            expected += ["0101", "0106", "0325", "0501", "0815", "1028", "1130", "1225", "1226"].map { "\(year)\($0)" }
        }
        XCTAssertEqual(added, Set(expected.filter { $0 >= "20260701" && $0 <= "20270630" }).sorted())
        let calendarText = try String(contentsOf: out.appendingPathComponent("calendar.txt"), encoding: .utf8)
        XCTAssertTrue(calendarText.contains("weekdays,1,1,1,1,1,0,0,20260701,20270630\n"), calendarText)
    }

    /// gtfs-validator's service dates: a calendar row's weekdays from start to end, less the dates removed, with
    /// those added; a service of calendar_dates.txt alone is reported only when calendar.txt is empty and all expired.
    func testAServiceExpiresOnItsLastDayOfServiceAsGTFSValidatorCountsIt() throws {
        let calendar = try write("service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nweek,1,1,1,1,1,0,0,20260105,20260111\nsat,0,0,0,0,0,1,0,20260101,20260131\n", to: "calendar.txt")
        let dates = try write("service_id,date,exception_type\nweek,20260109,2\nsat,20260131,2\nsat,20260201,1\nextra,20250101,1\n", to: "calendar_dates.txt")
        let services = try ExpiredCalendar.services(calendar: calendar, calendarDates: dates)
        XCTAssertEqual(services.map(\.id), ["week", "sat", "extra"])
        XCTAssertEqual(services.map { $0.lastDay.map(ExpiredCalendar.gtfs) }, ["20260108", "20260201", "20250101"], "Friday 9 January removed; 1 February added")
        let asOf = try XCTUnwrap(CalendarDay.day("2026-01-10"))
        XCTAssertEqual(ExpiredCalendar.findings(services, asOf: asOf).map(\.provenance?.line), [2], "extra is in calendar_dates.txt alone")
        let only = try ExpiredCalendar.services(calendar: nil, calendarDates: dates)
        XCTAssertEqual(ExpiredCalendar.findings(only, asOf: asOf).count, 0, "sat runs on 1 February: not every service expired")
        XCTAssertEqual(ExpiredCalendar.findings(only, asOf: try XCTUnwrap(CalendarDay.day("2026-03-01"))).map(\.message.first), ["s", "s"], "week has no day left at all: no finding")
    }

    /// A feed's own end date is warned from 30 days ahead, the 30th day counted in, as gtfs-validator does.
    func testTheFeedsOwnEndDateIsWarnedAsGTFSValidatorCountsIt() throws {
        let feedInfo = try write("feed_publisher_name,feed_start_date,feed_end_date\nx,20260101,20261231\n", to: "feed_info.txt")
        let end = try XCTUnwrap(try ExpiredCalendar.feedEnd(feedInfo))
        XCTAssertEqual(end.line, 2)
        func warned(_ date: String) throws -> Bool {
            !ExpiredCalendar.feedEndFindings(end, file: feedInfo, asOf: try XCTUnwrap(CalendarDay.day(date)), warnDays: 30).isEmpty
        }
        XCTAssertFalse(try warned("2026-11-30"))
        XCTAssertTrue(try warned("2026-12-01"), "30 days ahead")
        XCTAssertTrue(try warned("2027-01-05"), "ended")
    }
}
