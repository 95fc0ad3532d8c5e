import Foundation
import XCTest
import KilnKit

/// The museum pipeline through the `kiln` binary: build, check and fixtures pass on the sample; a broken link, bad
/// calendar input, an unbounded rule without a window and malformed JSON each fail the build with a finding that
/// names the file and line.
final class MuseumCommandTests: CLITestCase {
    @discardableResult
    private func sample() throws -> URL { try copy("raw/museum", to: "raw/museum") }

    private func edit(_ path: String, _ old: String, _ new: String) throws {
        let url = file(path)
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(text.contains(old), "\(path) holds no \(old)")
        try text.replacingOccurrences(of: old, with: new).write(to: url, atomically: true, encoding: .utf8)
    }

    /// The 1-based line of the first line of `path` holding `needle`.
    private func line(of needle: String, in path: String) throws -> Int {
        let lines = try String(contentsOf: file(path), encoding: .utf8).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        return try XCTUnwrap(lines.firstIndex { $0.contains(needle) }) + 1
    }

    func testBuildCheckAndFixturesPass() throws {
        try sample()
        let build = try kiln("build", "raw/museum")
        XCTAssertEqual(build.status, 0, build.stderr)
        XCTAssertTrue(build.stderr.hasPrefix("built build/museum.sqlite (bundle museum)\n"), build.stderr)
        XCTAssertTrue(build.stderr.contains("diagnostics: 0 errors, 0 warnings,"), build.stderr)
        XCTAssertTrue(build.stderr.contains("html.sanitized (info)"), build.stderr)
        let check = try kiln("check", "build/museum.sqlite")
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertTrue(check.stdout.hasSuffix("passed: 0 errors, 0 warnings, 0 info\n"), check.stdout)
        let test = try kiln("test", "raw/museum")
        XCTAssertEqual(test.status, 0, test.stdout + test.stderr)
        XCTAssertTrue((test.stdout + test.stderr).contains("2 passed, 0 failed"), test.stdout + test.stderr)
    }

    func testALinkToAMissingPageFailsTheBuild() throws {
        try sample()
        try edit("raw/museum/pages/volunteering.html", "<a href=\"events.html\">Διεθνής", "<a href=\"museum-shop.html\">Διεθνής")
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1)
        let place = "raw/museum/pages/volunteering.html:\(try line(of: "museum-shop.html", in: "raw/museum/pages/volunteering.html"))"
        XCTAssertTrue(run.stderr.contains("\(place): volunteering: the link \"museum-shop.html\" leads to the page \"museum-shop\", which is not in the bundle"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/museum.sqlite").path))
    }

    func testBadCalendarInputIsReportedAtItsLine() throws {
        try sample()
        let feed = "raw/museum/activities.ics"
        try edit(feed, "DTSTART;TZID=Europe/Athens:20260104T110000", "DTSTART;TZID=Europe/Patras:20260104T110000")
        try edit(feed, "DTEND;TZID=Europe/Athens:20260706T130000", "DTEND;TZID=Europe/Athens:20260706T090000")
        try edit(feed, "RRULE:FREQ=WEEKLY;UNTIL=20260611T215959Z;BYDAY=TU,TH", "RRULE:FREQ=FORTNIGHTLY;BYDAY=TU,TH")
        try edit(feed, "END:VEVENT\r\nEND:VCALENDAR\r\n", "")
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("unknown TZID \"Europe/Patras\""), run.stderr)
        XCTAssertTrue(run.stderr.contains("ics.unknown-tzid (error)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("\(feed):\(try line(of: "Europe/Patras", in: feed)):"), run.stderr)
        XCTAssertTrue(run.stderr.contains("\(feed):\(try line(of: "20260706T090000", in: feed)):"), run.stderr)
        XCTAssertTrue(run.stderr.contains("is before DTSTART"), run.stderr)
        XCTAssertTrue(run.stderr.contains("\(feed):\(try line(of: "FORTNIGHTLY", in: feed)):"), run.stderr)
        XCTAssertTrue(run.stderr.contains("RRULE"), run.stderr)
        XCTAssertTrue(run.stderr.contains("Missing END tag"), run.stderr)
    }

    func testAnUnboundedRuleWithoutAWindowNamesTheEvent() throws {
        try sample()
        try edit("raw/museum/kiln.json5", "options: { window: { from: \"2026-01-01\", until: \"2027-12-31\" }, category: \"Εκδηλώσεις\",",
                 "options: { category: \"Εκδηλώσεις\",")
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1)
        let place = "raw/museum/events.ics:\(try line(of: "RRULE:FREQ=WEEKLY;BYDAY=SA", in: "raw/museum/events.ics"))"
        XCTAssertTrue(run.stderr.contains("\(place): event \"Βραδιά πλανηταρίου\" (planetario-savvato@mouseio-epistimon.gr) repeats forever"), run.stderr)
    }

    func testMalformedTourJSONIsReportedAtItsLine() throws {
        try sample()
        try edit("raw/museum/tour/tour.json", "\"width\": 96, \"height\": 96, \"texture\": \"hotspots/arrow.png\" },\n        { \"id\": 103",
                 "\"width\": 96 \"height\": 96, \"texture\": \"hotspots/arrow.png\" },\n        { \"id\": 103")
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1)
        let place = "raw/museum/tour/tour.json:\(try line(of: "\"width\": 96 \"height\"", in: "raw/museum/tour/tour.json"))"
        XCTAssertTrue(run.stderr.contains("\(place): malformed JSON"), run.stderr)
    }

    func testExtractShowsEventsOfAFeed() throws {
        try sample()
        let run = try kiln("extract", "tour-exhibits", "raw/museum/tour/tour.json", "--manifest", "raw/museum/kiln.json5", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("9007199254740993"), run.stdout)
    }
}
