import Foundation
import XCTest
import KilnTestSupport
import KilnKit

/// `kiln report` and `kiln build --html`, opened in a real headless browser (Debian's chromium, installed by
/// scripts/oracles/install): the page renders without console errors, a screenshot is taken, and the DOM holds the
/// counts the JSON report holds.
final class HTMLReportCommandTests: CLITestCase {
    struct Browser {
        var dom: String
        var console: [String]
    }

    /// Loads `path` (under the working folder) in headless chromium: the DOM after rendering, and every console
    /// message chromium logged.
    private func open(_ path: String, screenshot: String? = nil, width: Int = 412) throws -> Browser {
        try TestTier.requireFull("headless Chromium")
        let chromium = ["/usr/bin/chromium", "/usr/local/bin/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let chromium else {
            throw PythonOracle.Failure(description: "chromium is not installed: run scripts/oracles/install (scripts/test does)")
        }
        func run(_ extra: [String]) throws -> (out: String, err: String, status: Int32) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: chromium)
            process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                 "--user-data-dir=" + file("chromium-profile").path] + extra + [file(path).absoluteString]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let output = out.fileHandleForReading.readDataToEndOfFile(), errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self), process.terminationStatus)
        }
        let dump = try run(["--dump-dom"])
        XCTAssertEqual(dump.status, 0, dump.err)
        if let screenshot {
            let shot = try run(["--screenshot=" + file(screenshot).path, "--window-size=\(width),1400"])
            XCTAssertEqual(shot.status, 0, shot.err)
        }
        let console = dump.err.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Browser(dom: dump.out, console: console)
    }

    /// Every `data-NAME="…"` value in `dom` on elements that also carry `data-KEY`, by the `data-KEY` value.
    private func attributes(_ dom: String, key: String, value name: String) -> [String: String] {
        var found: [String: String] = [:]
        let pattern = try! NSRegularExpression(pattern: "<[a-z]+ [^>]*data-\(key)=\"([^\"]*)\"[^>]*>")
        for match in pattern.matches(in: dom, range: NSRange(dom.startIndex..., in: dom)) {
            let tag = String(dom[Range(match.range, in: dom)!])
            let keyValue = String(dom[Range(match.range(at: 1), in: dom)!])
            if let range = tag.range(of: "data-\(name)=\""), let end = tag[range.upperBound...].firstIndex(of: "\"") {
                found[keyValue] = String(tag[range.upperBound..<end])
            }
        }
        return found
    }

    private func json(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file(path))) as? [String: Any])
    }

    /// The counts of the JSON report must be those the rendered page shows.
    private func assertPageMatchesReport(_ page: String, _ report: String, screenshot: String) throws {
        let browser = try open(page, screenshot: screenshot)
        XCTAssertEqual(browser.console, [], "console messages")
        let json = try json(report)
        let summary = try XCTUnwrap(json["summary"] as? [String: Int])
        XCTAssertEqual(attributes(browser.dom, key: "severity", value: "count"), summary.mapValues(String.init))
        let tables = try XCTUnwrap(json["tables"] as? [[String: Any]])
        let rows = attributes(browser.dom, key: "table", value: "rows")
        for table in tables { XCTAssertEqual(rows[table["name"] as! String], String(table["rows"] as! Int)) }
        let diagnostics = try XCTUnwrap(json["diagnostics"] as? [[String: Any]])
        let byCode = Dictionary(grouping: diagnostics, by: { $0["code"] as! String }).mapValues { String($0.count) }
        XCTAssertEqual(attributes(browser.dom, key: "code", value: "count"), byCode)
        let png = try Data(contentsOf: file(screenshot))
        XCTAssertTrue(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
        XCTAssertGreaterThan(png.count, 5_000)
    }

    func testBuildHTMLOfThePatrasBundle() throws {
        try copy("raw/patras", to: "raw/patras")
        let run = try kiln("build", "raw/patras", "--html")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("html report: build/patras.report.html\n"), run.stderr)
        let html = try String(contentsOf: file("build/patras.report.html"), encoding: .utf8)
        // Self-contained: nothing is fetched, no script.
        for forbidden in ["<script", "<link", "src=", "@import", "url("] { XCTAssertFalse(html.contains(forbidden), forbidden) }
        try assertPageMatchesReport("build/patras.report.html", "build/patras.report.json", screenshot: "patras.png")
        // The map of the stops: every stop, no outlier in the sample.
        let dom = try open("build/patras.report.html").dom
        XCTAssertEqual(attributes(dom, key: "points", value: "table"), ["168": "stop"])
        XCTAssertEqual(attributes(dom, key: "table", value: "outliers")["stop"], "0")
        // The finding links to the route file it names, from the page's folder.
        XCTAssertTrue(dom.contains("href=\"../raw/patras/Routes_UTF8.txt\""), dom)
    }

    func testReportOfAFailedBuildShowsEveryCode() throws {
        let folder = try brokenPipeline()
        XCTAssertEqual(try kiln("build", folder.lastPathComponent, "--quiet").status, 1)
        let run = try kiln("report", "build/patras.report.json", "--manifest", "broken", "--out", "pages/broken.html")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "wrote pages/broken.html\n")
        try assertPageMatchesReport("pages/broken.html", "build/patras.report.json", screenshot: "broken.png")
        let dom = try open("pages/broken.html").dom
        XCTAssertTrue(dom.contains("data-built=\"false\""))
        XCTAssertTrue(dom.contains("href=\"../broken/StopsUTF8.txt\""), dom)
        XCTAssertFalse(dom.contains("id=\"maps\""), "a failed build has no bundle to map")
    }

    func testTravelGuideMapsPerPageAndExtraction() throws {
        try copy("raw/itravel", to: "raw/itravel")
        XCTAssertEqual(try kiln("build", "raw/itravel", "--html", "--quiet").status, 0)
        try assertPageMatchesReport("build/itravel.report.html", "build/itravel.report.json", screenshot: "itravel.png")
        let dom = try open("build/itravel.report.html").dom
        // One map per page for the listings, with the outliers the bundle flags.
        let database = try Database(path: file("build/itravel.sqlite").path, mode: .readOnly)
        let flagged = try database.rows("SELECT page_id, SUM(outlier) FROM listing WHERE lat IS NOT NULL AND lon IS NOT NULL GROUP BY page_id ORDER BY COUNT(*) DESC, page_id LIMIT 6")
        let outliers = attributes(dom, key: "page", value: "outliers")
        for row in flagged {
            let page = try XCTUnwrap(outliers.first { $0.key.hasSuffix("(page \(row.values[0].textValue ?? ""))") }, "\(row.values[0])")
            XCTAssertEqual(page.value, row.values[1].textValue)
        }
    }

    func testTheWebPipelineShowsExtractionPerPage() throws {
        try copy("raw/patras-web", to: "raw/patras-web")
        XCTAssertEqual(try kiln("build", "raw/patras-web", "--html", "--quiet").status, 0)
        let json = try json("build/patras-web.report.json")
        let unmatched = (json["diagnostics"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "extract.unmatched" }
        XCTAssertFalse(unmatched.isEmpty)
        let dom = try open("build/patras-web.report.html").dom
        let missed = attributes(dom, key: "page", value: "missed")
        let expected = Dictionary(grouping: unmatched, by: { $0["file"] as? String ?? "" }).mapValues { String($0.count) }
        XCTAssertEqual(missed.filter { expected[$0.key] != nil }, expected)
    }

    func testBaselineComparisonPerTable() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        try FileManager.default.copyItem(at: file("build/patras.sqlite"), to: file("previous.sqlite"))
        let database = try Database(path: file("previous.sqlite").path, mode: .readWrite)
        let removed = try database.rows("SELECT COUNT(*) FROM line_timetable WHERE line_id = '1.1'").first?.values.first?.textValue
        try database.execute("PRAGMA foreign_keys = OFF; DELETE FROM line_timetable WHERE line_id = '1.1'; UPDATE stop SET name = 'Παλιό' WHERE code = '0102'")
        try database.close()
        let run = try kiln("build", "raw/patras", "--baseline", "previous.sqlite", "--html", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let baseline = try XCTUnwrap(try json("build/patras.report.json")["baseline"] as? [[String: Any]])
        let dom = try open("build/patras.report.html").dom
        for key in ["added", "removed", "changed"] {
            let shown = attributes(dom, key: "table", value: key)
            for table in baseline { XCTAssertEqual(shown[table["name"] as! String], String(table[key] as! Int), "\(table["name"]!) \(key)") }
        }
        XCTAssertEqual((baseline.first { $0["name"] as? String == "line_timetable" }?["added"] as? Int).map(String.init), removed)
        XCTAssertEqual(baseline.first { $0["name"] as? String == "stop" }?["changed"] as? Int, 1)
    }

    func testTheConsoleCheckCatchesErrors() throws {
        // The check above would see a page's errors: a page that logs one is caught.
        try "<!DOCTYPE html><html><body><script>console.error('boom')</script></body></html>".write(to: file("bad.html"), atomically: true, encoding: .utf8)
        let page = try open("bad.html")
        XCTAssertEqual(page.console.count, 1)
    }

    func testHelpListsTheCommand() throws {
        let run = try kiln("--help")
        XCTAssertTrue(run.stdout.contains("report    Writes a build's JSON report as one self-contained HTML page"), run.stdout)
        XCTAssertTrue(try kiln("report", "--help").stdout.contains("Usage: kiln report REPORT.json [--out FILE] [--manifest M] [--bundle FILE]"))
    }

    func testNotAReportAndMissingFile() throws {
        try "{\"a\": 1}".write(to: file("other.json"), atomically: true, encoding: .utf8)
        let other = try kiln("report", "other.json")
        XCTAssertEqual(other.status, 1)
        XCTAssertTrue(other.stderr.contains("other.json is not a Kiln build report"), other.stderr)
        let missing = try kiln("report", "missing.json")
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.stderr.contains("cannot read missing.json"), missing.stderr)
    }
}
