import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `ICalendarReader`: events and their occurrences through libical, checked against `icalendar` +
/// `recurring-ical-events` (PyPI, installed by `scripts/oracles/install`) and against the offsets of Europe/Athens.
final class ICalendarReaderTests: KilnTestCase {
    private static let window: JSONValue = .object(["from": .string("2026-01-01"), "until": .string("2027-12-31")])

    private func reader(_ options: [String: JSONValue] = ["window": ICalendarReaderTests.window]) throws -> ICalendarReader {
        try ICalendarReader(options: JSONValue.object(options).decode(ICalendarReader.Options.self, codingPath: []))
    }

    private func fields(_ record: Record) -> [String: String] {
        Dictionary(uniqueKeysWithValues: zip(record.kind.fieldNames, record.values).compactMap { name, value in value.map { (name, $0) } })
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    /// Occurrences as the oracle prints them: uid, start_utc, end_utc, start_local, end_local, all_day.
    private func rows(_ records: [Record]) -> [String] {
        records.filter { $0.kind.name == "occurrence" }.map { record in
            let f = fields(record)
            return [f["event_uid"], f["start_utc"], f["end_utc"], f["start_local"], f["end_local"], f["all_day"]]
                .map { $0 ?? "" }.joined(separator: "\t")
        }.sorted()
    }

    /// What `icalendar` + `recurring-ical-events` expand from `url` in the window.
    private func oracle(_ url: URL, from: String = "2026-01-01", until: String = "2027-12-31") throws -> [String] {
        try PythonOracle.text("ics-occurrences.py", [url.path, from, until]).split(separator: "\n").map(String.init).sorted()
    }

    /// Fails with only the rows one side has and the other lacks.
    private func assertSameRows(_ actual: [String], _ expected: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        let missing = Set(expected).subtracting(actual).sorted(), extra = Set(actual).subtracting(expected).sorted()
        XCTAssertTrue(missing.isEmpty && extra.isEmpty && actual.count == expected.count,
                      "\(message): missing \(missing.prefix(8)) (\(missing.count)); extra \(extra.prefix(8)) (\(extra.count))", file: file, line: line)
    }

    private func sample(_ name: String) -> URL { KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/\(name)") }

    func testSampleFeedsMatchTheOracle() throws {
        for name in ["events.ics", "activities.ics"] {
            let expected = try oracle(sample(name))
            let (records, log) = try read(reader(), url: sample(name))
            XCTAssertGreaterThan(expected.count, 10)
            assertSameRows(rows(records), expected, name)
            XCTAssertFalse(log.hasErrors, describe(log))
        }
    }

    func testRealFeedsFromPublicTestSuitesMatchTheOracle() throws {
        let folder = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/ics")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".ics") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 3)
        for name in files {
            let url = folder.appendingPathComponent(name)
            let expected = try oracle(url, from: "2000-01-01", until: "2030-12-31")
            let (records, log) = try read(reader(["window": .object(["from": .string("2000-01-01"), "until": .string("2030-12-31")]),
                                                  "timezone": .string("UTC")]), url: url)
            XCTAssertFalse(expected.isEmpty, name)
            let floating = Set(records.filter { $0.kind.name == "event" && fields($0)["tzid"] == "UTC" && fields($0)["start"]?.hasSuffix("Z") == false }
                .compactMap { fields($0)["uid"] })
            assertSameRows(rows(records).filter { !floating.contains(String($0.prefix { $0 != "\t" })) }, expected, "\(name)\n\(describe(log))")
        }
    }

    /// The original app added two hours by hand: Athens is UTC+3 in summer and UTC+2 in winter.
    func testAthensOffsetsAcrossTheYear() throws {
        let (records, _) = try read(reader(), url: sample("events.ics"))
        let planetarium = records.filter { $0.kind.name == "occurrence" && fields($0)["event_uid"] == "planetario-savvato@mouseio-epistimon.gr" }
        let byLocal = Dictionary(planetarium.map { (fields($0)["start_local"]!, fields($0)["start_utc"]!) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byLocal["2026-07-11T19:00:00"], "2026-07-11T16:00:00Z")
        XCTAssertEqual(byLocal["2026-01-17T19:00:00"], "2026-01-17T17:00:00Z")
        XCTAssertEqual(byLocal["2027-01-16T19:00:00"], "2027-01-16T17:00:00Z")
        // Around the last Sunday of March (29 March 2026) and of October (25 October 2026).
        XCTAssertEqual(byLocal["2026-03-21T19:00:00"], "2026-03-21T17:00:00Z")
        XCTAssertEqual(byLocal["2026-04-04T19:00:00"], "2026-04-04T16:00:00Z")
        XCTAssertEqual(byLocal["2026-10-24T19:00:00"], "2026-10-24T16:00:00Z")
        XCTAssertEqual(byLocal["2026-10-31T19:00:00"], "2026-10-31T17:00:00Z")
        // The override of 28 March moved the show to 20:00; the excluded Easter Saturday is gone.
        XCTAssertEqual(byLocal["2026-03-28T20:00:00"], "2026-03-28T18:00:00Z")
        XCTAssertNil(byLocal["2026-03-28T19:00:00"])
        XCTAssertNil(byLocal["2026-04-11T19:00:00"])
        // The workshop on the Sunday the clocks go back, after the change.
        let workshop = records.filter { fields($0)["event_uid"] == "ergastirio-rompotikis@mouseio-epistimon.gr" }.map { fields($0)["start_utc"] }
        XCTAssertEqual(workshop, ["2026-10-24T08:00:00Z", "2026-10-25T09:00:00Z", "2026-10-31T09:00:00Z"])
    }

    func testNewYearsEveAndAllDayEvents() throws {
        let (records, _) = try read(reader(), url: sample("events.ics"))
        let eve = try XCTUnwrap(records.first { $0.kind.name == "occurrence" && fields($0)["event_uid"] == "protochronia-2027@mouseio-epistimon.gr" })
        XCTAssertEqual(fields(eve)["start_utc"], "2026-12-31T20:00:00Z")
        XCTAssertEqual(fields(eve)["end_local"], "2027-01-01T01:00:00")
        XCTAssertEqual(fields(eve)["end_utc"], "2026-12-31T23:00:00Z")
        let day = try XCTUnwrap(records.first { $0.kind.name == "occurrence" && fields($0)["event_uid"] == "nychta-mouseion-2026@mouseio-epistimon.gr" })
        XCTAssertEqual(fields(day)["start_local"], "2026-05-16")
        XCTAssertEqual(fields(day)["all_day"], "1")
        XCTAssertNil(fields(day)["start_utc"])
    }

    func testTextIsUnfoldedAndUnescaped() throws {
        let (records, _) = try read(reader(), url: sample("events.ics"))
        let event = try XCTUnwrap(records.first { $0.kind.name == "event" && fields($0)["uid"] == "planetario-savvato@mouseio-epistimon.gr" })
        XCTAssertEqual(fields(event)["location"], "Πλανητάριο, Μουσείο Επιστημών και Τεχνολογίας, Πανεπιστημιούπολη Πατρών")
        XCTAssertTrue(fields(event)["description"]!.contains("7+.\nΕίσοδος με το εισιτήριο του μουσείου; κρατήσεις"), fields(event)["description"]!)
        XCTAssertEqual(fields(event)["category"], "Εκδηλώσεις")
        let workshop = try XCTUnwrap(records.first { $0.kind.name == "event" && fields($0)["uid"] == "ergastirio-rompotikis@mouseio-epistimon.gr" })
        XCTAssertTrue(fields(workshop)["description"]!.contains("info@mouseio-epistimon.gr \\ 2610"))
    }

    func testCategoryFromTheSourceWhenTheFeedHasNone() throws {
        var options: [String: JSONValue] = ["window": ICalendarReaderTests.window, "category": .string("Δραστηριότητες")]
        let (records, _) = try read(reader(options), url: sample("activities.ics"))
        let categories = Set(records.filter { $0.kind.name == "event" }.compactMap { fields($0)["category"] })
        XCTAssertEqual(categories, ["Δραστηριότητες"])
        options["category"] = nil
        let (bare, _) = try read(reader(options), url: sample("activities.ics"))
        XCTAssertEqual(bare.filter { $0.kind.name == "event" && fields($0)["category"] == nil }.count, 2)
    }

    private func feed(_ body: String) -> String {
        ("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n" + body + "END:VCALENDAR\n").replacingOccurrences(of: "\n", with: "\r\n")
    }

    private func findings(_ log: DiagnosticLog, _ code: String) -> [Diagnostic] { log.diagnostics.filter { $0.code == code } }

    /// A VEVENT without the VCALENDAR around it (single-event exporters, Python's icalendar writing an Event) and a
    /// VEVENT inside an `X-` component are read, as the oracle (icalendar's `walk`) reads them.
    func testALoneVEVENTAndOneInsideAnXComponentAreReadAsTheOracleReadsThem() throws {
        let event = { (uid: String) in
            "BEGIN:VEVENT\nUID:\(uid)\nDTSTAMP:20260101T000000Z\nDTSTART;TZID=Europe/Athens:20260710T190000\nDURATION:PT1H\nRRULE:FREQ=WEEKLY;COUNT=3\nSUMMARY:\(uid)\nEND:VEVENT\n"
        }
        let files = [
            "lone.ics": event("lone@x"),
            "wrapped.ics": "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:X-GROUP\nX-NAME:a\n" + event("wrapped@x")
                + "BEGIN:X-INNER\n" + event("inner@x") + "END:X-INNER\nEND:X-GROUP\n" + event("plain@x") + "END:VCALENDAR\n",
            "lonewrapper.ics": "BEGIN:X-GROUP\n" + event("root-wrapped@x") + "END:X-GROUP\n",
            // A component whose name is neither standard nor X- (icalendar's issue_178 test calendar).
            "custom.ics": "BEGIN:MYCOMP\nDTSTAMP:20150121T080000\n" + event("custom@x") + "END:MYCOMP\n",
        ]
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            let url = try write(Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8), to: name)
            let expected = try oracle(url)
            XCTAssertGreaterThanOrEqual(expected.count, 3, name)
            let (records, log) = try read(reader(), url: url)
            assertSameRows(rows(records), expected, name)
            XCTAssertEqual(log.diagnostics.map(\.formatted), [], name)
        }
        // An X- component without an event is skipped as a whole (info), as before.
        let (_, log) = try read(reader(), feed("BEGIN:X-NOTE\nX-TEXT:hello\nBEGIN:VTODO\nUID:t@x\nEND:VTODO\nEND:X-NOTE\n" + event("e@x")), name: "note.ics")
        XCTAssertEqual(findings(log, "ics.skipped").map(\.message), ["X-NOTE is not an event; not read"])
    }

    /// A rule with RSCALE (RFC 7529) is expanded after the parsed document is freed: its RSCALE text must outlive
    /// it (libical's struct points into the document; read after the free, it crashed a build of icalendar's test
    /// calendars with a corrupted heap). RSCALE=GREGORIAN is the calendar a rule without RSCALE uses, so both rules
    /// give the same starts.
    func testAnRSCALERuleOutlivesTheParsedDocument() throws {
        let rule = { (uid: String, rscale: String) in
            "BEGIN:VEVENT\nUID:\(uid)\nDTSTAMP:20260101T000000Z\nDTSTART;TZID=Europe/Athens:20260131T190000\nDURATION:PT1H\nRRULE:\(rscale)FREQ=MONTHLY;COUNT=4\nEND:VEVENT\n"
        }
        let (records, log) = try read(reader(), feed(rule("gregorian@x", "RSCALE=GREGORIAN;") + rule("plain@x", "")), name: "rscale.ics")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        let starts = { (uid: String) in records.filter { $0.kind.name == "occurrence" && self.fields($0)["event_uid"] == uid }.compactMap { self.fields($0)["start_local"] } }
        XCTAssertEqual(starts("plain@x").count, 4)
        XCTAssertEqual(starts("gregorian@x"), starts("plain@x"))
    }

    /// A globally unique TZID (RFC 5545: it starts with `/`) ending in a zone's name, without a VTIMEZONE, as
    /// Mozilla wrote them (icalendar's issue_313 test calendar), is that zone, as the oracle reads it.
    func testAGloballyUniqueTZIDIsTheZoneItEndsWith() throws {
        let url = try write(Data(feed("BEGIN:VEVENT\nUID:g@x\nDTSTAMP:20260101T000000Z\nDTSTART;TZID=/mozilla.org/20070129_1/America/New_York:20260426T140000\nDURATION:PT1H\nEND:VEVENT\n").utf8), to: "global.ics")
        let expected = try oracle(url)
        XCTAssertEqual(expected.count, 1)
        let (records, log) = try read(reader(), url: url)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        assertSameRows(rows(records), expected, "global.ics")
    }

    /// The white space a text value starts with is part of it (`SUMMARY: Some event`, as four of icalendar's test
    /// calendars write it); libical's parser drops it, Python's icalendar (the oracle) keeps it. A `:` inside a quoted
    /// parameter value is not where the value starts.
    func testATextValuesLeadingSpaceIsKeptAsICalendarReadsIt() throws {
        let url = try write(Data(feed("""
            BEGIN:VEVENT\nUID:s@x\nDTSTAMP:20260101T000000Z\nDTSTART:20260301T100000Z\nSUMMARY: Some event ':'\nDESCRIPTION:\t  tabbed\nLOCATION;ALTREP="http://a.example/x": Hall\nEND:VEVENT
            BEGIN:VEVENT\nUID:t@x\nDTSTAMP:20260101T000000Z\nDTSTART:20260302T100000Z\nSUMMARY:Plain\nEND:VEVENT\n
            """).utf8), to: "spaces.ics")
        let program = """
            import sys, icalendar
            calendar = icalendar.Calendar.from_ical(open(sys.argv[1], "rb").read())
            for event in calendar.walk("VEVENT"):
                print("|".join(str(event.get(key, "")) for key in ("SUMMARY", "DESCRIPTION", "LOCATION")))
            """
        let interpreter = try PythonOracle.interpreter()
        let process = Process()
        process.executableURL = interpreter
        process.arguments = ["-c", program, url.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let expected = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        process.waitUntilExit()
        XCTAssertEqual(expected.count, 2)
        let (records, log) = try read(reader(), url: url)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        let events = records.filter { $0.kind.name == "event" }.map { record in
            ["summary", "description", "location"].map { fields(record)[$0] ?? "" }.joined(separator: "|")
        }
        XCTAssertEqual(events, expected)
        XCTAssertEqual(expected.first, " Some event ':'|\t  tabbed| Hall")
    }

    func testUnknownTimeZoneIsAnErrorAtItsLine() throws {
        let (records, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:mars@x
            SUMMARY:Ηλιοβασίλεμα στον Άρη
            DTSTART;TZID=Mars/Olympus_Mons:20260710T190000
            END:VEVENT

            """), name: "mars.ics")
        let finding = try XCTUnwrap(findings(log, "ics.unknown-tzid").first, describe(log))
        XCTAssertEqual(finding.severity, .error)
        XCTAssertEqual(finding.provenance?.line, 7)
        XCTAssertTrue(finding.message.contains("Mars/Olympus_Mons"))
        XCTAssertEqual(records.filter { $0.kind.name == "occurrence" }.count, 0)
        XCTAssertEqual(records.filter { $0.kind.name == "event" }.count, 1)
    }

    func testEndBeforeStartIsAnError() throws {
        let (_, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:backwards@x
            DTSTART;TZID=Europe/Athens:20260710T190000
            DTEND;TZID=Europe/Athens:20260710T180000
            END:VEVENT

            """), name: "backwards.ics")
        let finding = try XCTUnwrap(findings(log, "ics.end-before-start").first, describe(log))
        XCTAssertEqual(finding.provenance?.line, 7)
    }

    func testBrokenRuleIsAnErrorAtItsLine() throws {
        let (records, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:broken@x
            DTSTART;TZID=Europe/Athens:20260710T190000
            RRULE:FREQ=SOMETIMES;BYDAY=XX
            END:VEVENT

            """), name: "broken.ics")
        let finding = try XCTUnwrap(findings(log, "ics.malformed").first, describe(log))
        XCTAssertEqual(finding.provenance?.line, 7)
        XCTAssertTrue(finding.message.contains("RRULE"), finding.message)
        XCTAssertEqual(records.filter { $0.kind.name == "occurrence" }.count, 1)
    }

    func testTruncatedFeedIsAnError() throws {
        let text = feed("""
            BEGIN:VEVENT
            UID:cut@x
            DTSTART;TZID=Europe/Athens:20260710T190000
            SUMMARY:Κομμένο

            """).replacingOccurrences(of: "END:VCALENDAR\r\n", with: "")
        let (records, log) = try read(reader(), text, name: "cut.ics")
        let finding = try XCTUnwrap(findings(log, "ics.malformed").first, describe(log))
        XCTAssertTrue(finding.message.contains("END"), finding.message)
        XCTAssertEqual(finding.provenance?.line, 7)
        XCTAssertEqual(records.filter { $0.kind.name == "event" }.count, 1)
    }

    func testUnboundedRuleWithoutWindowNamesTheEvent() throws {
        let (records, log) = try read(reader([:]), url: sample("events.ics"))
        let finding = try XCTUnwrap(findings(log, "ics.unbounded").first, describe(log))
        XCTAssertTrue(finding.message.contains("Βραδιά πλανηταρίου"), finding.message)
        XCTAssertTrue(finding.message.contains("planetario-savvato@mouseio-epistimon.gr"), finding.message)
        XCTAssertNotNil(finding.provenance?.line)
        XCTAssertFalse(records.contains { fields($0)["event_uid"] == "planetario-savvato@mouseio-epistimon.gr" })
        // Bounded rules expand without a window.
        XCTAssertEqual(records.filter { fields($0)["event_uid"] == "dialekseis-pempti@mouseio-epistimon.gr" }.count, 8)
    }

    func testOlderSequenceIsReplacedAndReported() throws {
        let (records, log) = try read(reader(), url: sample("events.ics"))
        XCTAssertEqual(records.filter { $0.kind.name == "event" && fields($0)["uid"] == "dialekseis-pempti@mouseio-epistimon.gr" }.count, 1)
        XCTAssertEqual(findings(log, "ics.superseded").count, 1, describe(log))
    }

    func testWindowAndTimezoneOptionsAreChecked() {
        XCTAssertThrowsError(try reader(["window": .object(["from": .string("2026-13-01"), "until": .string("2027-01-01")])]))
        XCTAssertThrowsError(try reader(["window": .object(["from": .string("2027-01-01"), "until": .string("2026-01-01")])]))
        XCTAssertThrowsError(try reader(["timezone": .string("Europe/Atlantis")]))
    }

    func testLongRunningRulesJumpToTheWindowAndMatchTheOracle() throws {
        let url = try write(feed("""
            BEGIN:VEVENT
            UID:daily@x
            SUMMARY:Καθημερινή ξενάγηση
            DTSTART;TZID=Europe/Athens:19950301T120000
            DTEND;TZID=Europe/Athens:19950301T130000
            RRULE:FREQ=DAILY
            EXDATE;TZID=Europe/Athens:20260329T120000
            END:VEVENT
            BEGIN:VEVENT
            UID:weekly@x
            DTSTART;TZID=Europe/Athens:19950305T100000
            DTEND;TZID=Europe/Athens:19950305T103000
            RRULE:FREQ=WEEKLY;BYDAY=SU;UNTIL=20261231T235959Z
            END:VEVENT

            """), to: "long.ics")
        let (records, log) = try read(reader(), url: url)
        XCTAssertFalse(log.hasErrors, describe(log))
        let expected = try oracle(url)
        XCTAssertGreaterThan(expected.count, 700)
        assertSameRows(rows(records), expected, "long.ics")
    }

    /// The issue's case (ical.js's Zimbra sample, `Tests/Fixtures/real/ics/recur_instances.ics`): the period
    /// 09:00Z/12:30Z ends at 12:30Z, as libical and icalendar read it, not after the event's own 30 minutes.
    func testRDatePeriodOfTheZimbraExportEndsWhereThePeriodSays() throws {
        let url = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/ics/recur_instances.ics")
        let (records, log) = try read(reader(["window": .object(["from": .string("2023-11-01"), "until": .string("2023-11-30")])]), url: url)
        XCTAssertFalse(log.hasErrors, describe(log))
        let period = try XCTUnwrap(records.first { fields($0)["start_utc"] == "2023-11-25T09:00:00Z" }, "\(records.map(fields))")
        XCTAssertEqual(fields(period)["end_utc"], "2023-11-25T12:30:00Z")
        XCTAssertEqual(fields(period)["end_local"], "2023-11-25T04:30:00", "shown in the series' zone, America/Los_Angeles")
        assertSameRows(rows(records), try oracle(url, from: "2023-11-01", until: "2023-11-30"), "recur_instances.ics")
    }

    /// Periods with an explicit end and with a duration, under a TZID, several on one line, against the oracle.
    func testRDatePeriodsInEveryFormMatchTheOracle() throws {
        let url = try write(feed("""
            BEGIN:VEVENT
            UID:periods@x
            SUMMARY:Εργαστήριο
            DTSTART;TZID=Europe/Athens:20260105T100000
            DTEND;TZID=Europe/Athens:20260105T110000
            RRULE:FREQ=WEEKLY;COUNT=3
            RDATE;TZID=Europe/Athens;VALUE=PERIOD:20260210T090000/20260210T173000,20260211T090000/PT3H30M
            RDATE;VALUE=PERIOD:20260328T220000Z/PT4H
            RDATE;VALUE=PERIOD:20260401T070000Z/20260401T081500Z
            RDATE;TZID=Europe/Athens:20260402T100000
            END:VEVENT

            """), to: "periods.ics")
        let (records, log) = try read(reader(), url: url)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        let expected = try oracle(url)
        XCTAssertEqual(expected.count, 8)
        assertSameRows(rows(records), expected, "periods.ics")
    }

    func testRDateValuesThatCannotBeUsedAreReportedAtTheirLine() throws {
        let (records, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:bad-periods@x
            DTSTART:20260105T100000Z
            DTEND:20260105T110000Z
            RDATE;VALUE=PERIOD:20260210T090000Z/20260210T080000Z
            RDATE;VALUE=PERIOD:20260211T090000Z/-PT1H
            RDATE;VALUE=DATE:20260212
            RDATE;VALUE=PERIOD:20260213T090000Z/PT1H
            END:VEVENT

            """), name: "bad-periods.ics")
        XCTAssertEqual(findings(log, "ics.bad-rdate").map { $0.provenance?.line }, [8, 9, 10], describe(log))
        XCTAssertTrue(findings(log, "ics.bad-rdate")[0].message.contains("ends before it starts"), describe(log))
        XCTAssertEqual(rows(records).map { $0.split(separator: "\t")[1] }, ["2026-01-05T10:00:00Z", "2026-02-13T09:00:00Z"], "the usable period is kept")
        XCTAssertEqual(records.compactMap { fields($0)["end_utc"] }.last, "2026-02-13T10:00:00Z")
    }

    func testAnRDateLibicalCannotParseIsAnErrorAtItsLine() throws {
        let (records, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:garbled@x
            DTSTART:20260105T100000Z
            RDATE;VALUE=PERIOD:20260210T090000Z/soon
            END:VEVENT

            """), name: "garbled.ics")
        let finding = try XCTUnwrap(log.diagnostics.first { $0.provenance?.line == 7 }, describe(log))
        XCTAssertEqual(finding.severity, .error, describe(log))
        XCTAssertEqual(records.filter { $0.kind.name == "occurrence" }.count, 1, describe(log))
    }

    func testSkippedComponentsAreNamedInFull() throws {
        let (_, log) = try read(reader(), feed("""
            BEGIN:VEVENT
            UID:kept@x
            DTSTART:20260105T100000Z
            END:VEVENT
            BEGIN:X-UNKNOWN
            END:X-UNKNOWN
            BEGIN:X-WR-SOMETHING-ELSE
            END:X-WR-SOMETHING-ELSE
            BEGIN:VTODO
            UID:todo@x
            END:VTODO

            """), name: "skipped.ics")
        XCTAssertEqual(findings(log, "ics.skipped").map(\.message), [
            "X-UNKNOWN is not an event; not read", "X-WR-SOMETHING-ELSE is not an event; not read", "VTODO is not an event; not read",
        ])
        XCTAssertEqual(findings(log, "ics.skipped").map { $0.provenance?.line }, [8, 10, 12])
    }

    func testRunawayRulesAreCappedWithAFinding() throws {
        let (records, log) = try read(reader(["window": ICalendarReaderTests.window, "maximumOccurrences": .number(100)]), feed("""
            BEGIN:VEVENT
            UID:secondly@x
            DTSTART:20260101T000000Z
            RRULE:FREQ=SECONDLY
            END:VEVENT

            """), name: "secondly.ics")
        XCTAssertEqual(records.filter { $0.kind.name == "occurrence" }.count, 100)
        XCTAssertEqual(log.diagnostics.first { $0.code == "ics.too-many" }?.provenance?.line, 7, describe(log))
    }

    func testLinesThatAreNotUTF8AreReported() throws {
        var bytes = Array(feed("BEGIN:VEVENT\nUID:latin@x\nDTSTART:20260101T100000Z\nSUMMARY:Caf\u{E9}\nEND:VEVENT\n").utf8)
        let index = try XCTUnwrap(bytes.firstIndex(of: 0xC3))
        bytes.replaceSubrange(index...index + 1, with: [0xE9])
        let (_, log) = try read(reader(), url: try write(Data(bytes), to: "latin1.ics"))
        let finding = try XCTUnwrap(log.diagnostics.first { $0.code == "encoding" }, describe(log))
        XCTAssertEqual(finding.provenance?.line, 7)
        XCTAssertEqual(finding.severity, .error)
    }

    /// A VTIMEZONE's span: from its first observance to its last transition (no end when a rule repeats forever).
    /// Inside, its own offsets hold — even one that differs from the zone database's — and outside, the zone its
    /// TZID (or X-LIC-LOCATION) names in the zone database; a TZID the database does not know has no fallback.
    func testAPartialVTimezoneGivesWayToTheZoneDatabaseOutsideItsSpan() throws {
        func feed(tzid: String, location: String?, rule: String) -> String {
            """
            BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VTIMEZONE\r\nTZID:\(tzid)\r\n\(location.map { "X-LIC-LOCATION:\($0)\r\n" } ?? "")\
            BEGIN:STANDARD\r\nDTSTART:20181028T030000\r\nTZOFFSETFROM:+0300\r\nTZOFFSETTO:+0300\r\n\(rule)END:STANDARD\r\nEND:VTIMEZONE\r\n\
            BEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20190101T000000Z\r\nDTSTART;TZID=\(tzid):20190115T120000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n
            """
        }
        let bounded = Libical.parse(Array(feed(tzid: "Office", location: "Europe/Berlin", rule: "RDATE:20201025T030000\r\n").utf8))
        let zone = try XCTUnwrap(bounded.events.first?.start?.zone)
        let span = try XCTUnwrap(zone.span)
        XCTAssertEqual(span.start.iso, "2018-10-28T03:00:00")
        XCTAssertEqual(span.end?.iso, "2020-10-25T03:00:00")
        XCTAssertEqual(span.fallbackName, "Europe/Berlin", "X-LIC-LOCATION names the zone when the TZID does not")
        XCTAssertEqual(zone.utc(fromLocal: ICalTime(year: 2019, month: 1, day: 15, hour: 12)).iso, "2019-01-15T09:00:00", "inside: the VTIMEZONE's +0300")
        XCTAssertEqual(zone.utc(fromLocal: ICalTime(year: 2018, month: 1, day: 15, hour: 12)).iso, "2018-01-15T11:00:00", "before: Berlin's CET")
        XCTAssertEqual(zone.utc(fromLocal: ICalTime(year: 2022, month: 7, day: 15, hour: 12)).iso, "2022-07-15T10:00:00", "after: Berlin's CEST")
        XCTAssertEqual(zone.local(fromUTC: ICalTime(year: 2022, month: 7, day: 15, hour: 10)).iso, "2022-07-15T12:00:00")
        XCTAssertEqual(zone.local(fromUTC: ICalTime(year: 2019, month: 1, day: 15, hour: 9)).iso, "2019-01-15T12:00:00")

        let endless = Libical.parse(Array(feed(tzid: "Europe/Berlin", location: nil, rule: "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\n").utf8))
        let open = try XCTUnwrap(endless.events.first?.start?.zone?.span)
        XCTAssertNil(open.end, "a rule without end covers all later times")
        XCTAssertEqual(open.fallbackName, "Europe/Berlin")

        let unknown = Libical.parse(Array(feed(tzid: "Office", location: nil, rule: "").utf8))
        let alone = try XCTUnwrap(unknown.events.first?.start?.zone)
        XCTAssertNil(alone.span?.fallbackName)
        XCTAssertEqual(alone.utc(fromLocal: ICalTime(year: 2018, month: 1, day: 15, hour: 12)).iso, "2018-01-15T09:00:00", "no fallback: the VTIMEZONE's offset")
    }

    /// Only a property the reader reads fails: an empty X- property, a vendor property without X- and an empty
    /// property no field takes are one `ics.unread` info per name and file; a read property libical cannot parse,
    /// and a line that is no property at all, stay `ics.malformed`.
    func testOnlyAPropertyTheReaderReadsCanFail() throws {
        let feed = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:test", "X-WR-CALDESC:", "BEGIN:VEVENT", "UID:a", "DTSTAMP:20260101T000000Z",
            "DTSTART:20260110T100000Z", "SUBCALENDAR-ID:1", "EVENT-ALLDAY:true", "LOCATION:", "END:VEVENT",
            "BEGIN:VEVENT", "UID:b", "DTSTAMP:20260101T000000Z", "DTSTART:20260111T100000Z", "SUBCALENDAR-ID:2", "RRULE:FREQ=FORTNIGHTLY",
            "Open daily", "END:VEVENT", "END:VCALENDAR", "",
        ].joined(separator: "\r\n")
        let (records, log) = try read(reader(), feed, name: "c.ics")
        XCTAssertEqual(records.filter { $0.kind.name == "event" }.count, 2)
        XCTAssertEqual(log.diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code) \($0.severity.rawValue)" }.sorted(), [
            "11 ics.empty info", "18 ics.malformed error", "19 ics.malformed error",
            "4 ics.unread info", "9 ics.unread info", "10 ics.unread info",
        ].sorted(), describe(log))
        XCTAssertTrue(log.diagnostics.contains { $0.message.hasSuffix("Parse error in property name: SUBCALENDAR-ID (and 1 more line of it in the file)") }, describe(log))
    }
}
