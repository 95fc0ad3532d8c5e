import Foundation
import XCTest
import KilnC
import KilnKit

/// `kiln build raw/patras-web`: the same bundle from the bus company's XML and HTML, plus campus places.
final class WebBuildTests: CLITestCase {
    func testWebBuildShowsItsCoverageWarningAndMatchesTheTextBuild() throws {
        try copy("raw/patras", to: "raw/patras")
        try copy("raw/patras-web", to: "raw/patras-web")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        let run = try kiln("build", "raw/patras-web")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("  extract.unmatched (warning) ×1\n    raw/patras-web/timetables/line-1.1.html:28: no row pattern captured"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  place           20 rows\n"), run.stderr)

        let database = try Database(path: file("build/patras.sqlite").path, mode: .readOnly)
        try database.execute("ATTACH DATABASE \(quoteLiteral(file("build/patras-web.sqlite").path)) AS web")
        for table in ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"] {
            let missing = try database.rows("SELECT count(*) FROM (SELECT * FROM main.\(table) EXCEPT SELECT * FROM web.\(table))")
            let extra = try database.rows("SELECT count(*) FROM (SELECT * FROM web.\(table) EXCEPT SELECT * FROM main.\(table))")
            XCTAssertEqual(missing.first?.values.first, .integer(0), "\(table): rows of the text build missing from the web build")
            XCTAssertEqual(extra.first?.values.first, .integer(0), "\(table): rows of the web build not in the text build")
        }
        let stops = try database.rows("SELECT count(*) FROM web.stop")
        XCTAssertEqual(stops.first?.values.first, .integer(168))
    }

    func testFailedExpectationExitsOne() throws {
        let folder = try copy("raw/patras-web", to: "web")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "minRows: 2,", with: "minRows: 5,")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "web", "--out", "web.sqlite")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("web/timetables/line-1.2.html: the page gave 2 rows; expected at least 5"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("web.sqlite").path))
    }

    func testMalformedStopPageStopsThatFileAndReportsTheRest() throws {
        let folder = try copy("raw/patras-web", to: "web")
        let page = folder.appendingPathComponent("stops-2.xml")
        var xml = try String(contentsOf: page, encoding: .utf8)
        xml = xml.replacingOccurrences(of: "<name>", with: "<name", options: [], range: xml.range(of: "<stop code=\"0801\"").map { $0.lowerBound..<xml.endIndex })
        try xml.write(to: page, atomically: true, encoding: .utf8)
        let run = try kiln("build", "web", "--out", "web.sqlite")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("xml.malformed (error)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("web/stops-2.xml:"), run.stderr)
        XCTAssertTrue(run.stderr.contains("malformed XML: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("foreign-key (error)"), "the stops after the error are missing, so routes point at missing stops:\n\(run.stderr)")
    }
}
