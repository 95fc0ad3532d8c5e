import Foundation
import XCTest
import KilnTestSupport
import KilnC
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
    private func open(_ path: String, fragment: String? = nil, screenshot: String? = nil, width: Int = 412, height: Int = 1400) throws -> Browser {
        try TestTier.requireFull("headless Chromium")
        let chromium = ["/usr/bin/chromium", "/usr/local/bin/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let chromium else {
            throw PythonOracle.Failure(description: "chromium is not installed: run scripts/oracles/install (scripts/test does)")
        }
        func run(_ extra: [String]) throws -> (out: String, err: String, status: Int32) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: chromium)
            process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                 "--user-data-dir=" + file("chromium-profile").path] + extra + [file(path).absoluteString + (fragment.map { "#" + $0 } ?? "")]
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
            let shot = try run(["--screenshot=" + file(screenshot).path, "--window-size=\(width),\(height)"])
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
        // Self-contained: nothing is fetched, one inline script (the policy allows only it).
        for forbidden in ["<link", "src=", "@import", "url(", "innerHTML"] { XCTAssertFalse(html.contains(forbidden), forbidden) }
        XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 1)
        XCTAssertTrue(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"), html)
        try assertPageMatchesReport("build/patras.report.html", "build/patras.report.json", screenshot: "patras.png")
        // The map of the stops: every stop, no outlier in the sample.
        let dom = try open("build/patras.report.html").dom
        XCTAssertEqual(attributes(dom, key: "points", value: "table"), ["168": "stop"])
        XCTAssertEqual(attributes(dom, key: "table", value: "outliers")["stop"], "0")
        // The finding links to the route file it names, from the page's folder.
        XCTAssertTrue(dom.contains("href=\"../raw/patras/Routes_UTF8.txt\""), dom)
    }

    /// The elements of `dom` (as chromium serialises them) whose start tag matches `pattern`.
    private func tags(_ dom: String, _ pattern: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: dom, range: NSRange(dom.startIndex..., in: dom)).map { String(dom[Range($0.range, in: dom)!]) }
    }

    /// `text` as chromium serialises a text node: `&`, `<`, `>` escaped, quotes as they are.
    private func serialised(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// The value of `name="…"` in the start tag `tag`.
    private func value(_ tag: String, _ name: String) -> String? {
        guard let range = tag.range(of: " \(name)=\""), let end = tag[range.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(tag[range.upperBound..<end])
    }

    func testHeaderShowsVersionDigestInputsAndMeanings() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--html", "--quiet").status, 0)
        let browser = try open("build/patras.report.html")
        XCTAssertEqual(browser.console, [])
        let dom = browser.dom, json = try json("build/patras.report.json")
        XCTAssertEqual(attributes(dom, key: "kiln-version", value: "kiln-version").keys.first, try kiln("--version").stdout.trimmingCharacters(in: .newlines))
        let inputs = try XCTUnwrap(json["inputs"] as? [String: String])
        // Python's hashlib and os.path, independently of Kiln.
        let oracle = try PythonOracle.lines(ofProgram: """
            import hashlib, os, sys
            print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())
            for path in sys.argv[2:]: print(hashlib.sha256(open(path, 'rb').read()).hexdigest(), os.path.getsize(path))
            """, [file("raw/patras/kiln.json5").path] + inputs.keys.sorted().map { file("raw/patras/" + $0).path })
        XCTAssertEqual(attributes(dom, key: "manifest-sha256", value: "manifest-sha256").keys.first, oracle.first)
        let sizes = attributes(dom, key: "input", value: "size")
        XCTAssertEqual(sizes.count, 7)
        for (path, line) in zip(inputs.keys.sorted(), oracle.dropFirst()) {
            let fields = line.split(separator: " ")
            XCTAssertEqual(inputs[path], String(fields[0]), path)
            XCTAssertEqual(sizes[path], String(fields[1]), path)
            XCTAssertTrue(dom.contains("<code class=\"digest\">\(fields[0])</code>"), path)
        }
        // What each code means, and what each table holds, as the manifest and the catalogue say.
        let codes = try XCTUnwrap(json["codes"] as? [String: String])
        let listed = Set((json["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String })
        XCTAssertEqual(Set(codes.keys), listed)
        for (code, meaning) in codes {
            XCTAssertTrue(dom.contains("<p class=\"meaning\">\(serialised(TextFolding.collapseSpaces(meaning)))</p>"), code)
        }
        XCTAssertTrue(codes["route.transfers"]?.hasPrefix("The app's routing guarantee") == true, "\(codes)")
        for table in try XCTUnwrap(json["tables"] as? [[String: Any]]) {
            guard let description = table["description"] as? String else { continue }
            XCTAssertTrue(dom.contains(serialised(TextFolding.collapseSpaces(description))), description)
        }
        // The counts per severity are in the header.
        let header = try XCTUnwrap(dom.range(of: "</header>")).lowerBound
        XCTAssertEqual(attributes(String(dom[..<header]), key: "severity", value: "count"), (json["summary"] as? [String: Int])?.mapValues(String.init))
    }

    func testEveryExampleIsListedPagedAndFiltered() throws {
        try copy("raw/patras", to: "raw/patras")
        // A rule that names every stop: 168 findings, of which the report keeps the first 100.
        let manifest = file("raw/patras/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "  rules: [\n", with: """
              rules: [
                { code: "stop.listed", kind: "sql", severity: "info", description: "Every stop, <b>named</b>.",
                  sql: "SELECT _file, _line, code, name FROM stop ORDER BY rowid", message: "stop {code} «{name}»" },

            """).write(to: manifest, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "raw/patras", "--html", "--quiet").status, 0)
        let json = try json("build/patras.report.json")
        let findings = (json["diagnostics"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "stop.listed" }
        XCTAssertEqual(findings.count, 100)
        XCTAssertEqual((json["notStored"] as? [[String: Any]])?.first { $0["code"] as? String == "stop.listed" }?["count"] as? Int, 68)
        let browser = try open("build/patras.report.html")
        XCTAssertEqual(browser.console, [])
        let section = try XCTUnwrap(browser.dom.range(of: "data-code=\"stop.listed\""))
        let end = try XCTUnwrap(browser.dom[section.upperBound...].range(of: "</details>")).upperBound
        let details = String(browser.dom[section.lowerBound..<end])
        // Every kept example is in the page; the script shows the first twenty and a pager.
        let items = tags(details, "<li class=\"finding\"[^>]*>")
        XCTAssertEqual(items.count, 100)
        XCTAssertEqual(items.filter { !$0.contains("hidden") }.count, 20)
        XCTAssertTrue(details.contains("data-total=\"168\""), details)
        XCTAssertTrue(details.contains("<span class=\"range\">1–20 of 100</span>"), details)
        XCTAssertTrue(details.contains("data-not-stored=\"68\""), details)
        XCTAssertTrue(details.contains("Every stop, &lt;b&gt;named&lt;/b&gt;."), details)
        // Filtered from the address: the findings whose text holds the word, among every code.
        let word = "Κορίνθου"
        let filtered = try open("build/patras.report.html", fragment: "filter=" + word.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!).dom
        let all = json["diagnostics"] as? [[String: Any]] ?? []
        let matching = Dictionary(grouping: all.filter { finding in
            let place = (finding["file"] as? String ?? "") + ((finding["line"] as? Int).map { ":\($0)" } ?? "")
            return "\(finding["code"]!) \(place) \(finding["message"]!)".lowercased().contains(word.lowercased())
        }, by: { $0["code"] as! String }).mapValues { String($0.count) }
        XCTAssertFalse(matching.isEmpty)
        let shown = attributes(filtered, key: "code", value: "shown").filter { $0.value != "0" }
        XCTAssertEqual(shown, matching)
        XCTAssertTrue(filtered.contains("<span id=\"filtered\">\(matching.values.compactMap(Int.init).reduce(0, +)) of \(all.count) findings</span>"), filtered)
    }

    /// A failed build writes no bundle, yet its report draws the rows it staged, the stop an error names (moved to
    /// Sydney, outside the manifest's box) in red and listed, and says why the map is of staged rows; a failed build
    /// with no coordinates says why there is no map.
    func testAFailedBuildsReportDrawsItsStagedRowsWithTheFailedOnesInRed() throws {
        try copy("raw/patras", to: "raw/patras")
        let stops = file("raw/patras/StopsUTF8.txt")
        var lines = try String(contentsOf: stops, encoding: .utf8).components(separatedBy: "\n")
        lines[0] = "Ακτή Δυμαίων; 0102; 151.2093; -33.8688"
        try lines.joined(separator: "\n").write(to: stops, atomically: true, encoding: .utf8)
        let run = try kiln("build", "raw/patras", "--html", "--quiet")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/patras.sqlite").path))
        let page = try String(contentsOf: file("build/patras.report.html"), encoding: .utf8)
        let map = try XCTUnwrap(tags(page, "<svg class=\"map\"[^>]*data-table=\"stop\"[^>]*>").first, page)
        XCTAssertEqual(value(map, "data-points"), "\(lines.filter { !$0.isEmpty }.count)")
        XCTAssertEqual(value(map, "data-outliers"), "1")
        XCTAssertTrue(page.contains("<p class=\"staged\">The build failed and wrote no bundle: these maps draw the rows it staged"), page)
        XCTAssertTrue(page.contains("flagged by the rule coordinates or an error of this build"), page)
        XCTAssertTrue(page.contains("<li data-label=\"Ακτή Δυμαίων\" data-offmap=\"true\" data-flagged=\"true\">Ακτή Δυμαίων at -33.86880, 151.20930,"), page)
        // kiln report draws the same from the JSON report alone.
        XCTAssertEqual(try kiln("report", "build/patras.report.json", "--out", "build/again.html").status, 0)
        XCTAssertEqual(try String(contentsOf: file("build/again.html"), encoding: .utf8), page)

        try writePipeline("codes", manifest: """
            { bundle: "codes", schemaVersion: 1,
              tables: [{ name: "code", columns: [{ name: "code", type: "text", pattern: "^[0-9]+$" }] }],
              sources: [{ name: "codes", format: "delimited", path: "codes.txt", options: { fields: ["code"] }, into: "code", columns: { code: "code" } }] }
            """)
        try "a\n1\n".write(to: file("codes/codes.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "codes", "--html", "--quiet").status, 1)
        let plain = try String(contentsOf: file("build/codes.report.html"), encoding: .utf8)
        XCTAssertTrue(plain.contains("<p class=\"no-map\">No map: the build failed and wrote no bundle, and its report keeps no staged row with coordinates"), plain)
    }

    func testAFarStopKeepsTheMapsExtentAndIsListed() throws {
        try copy("raw/patras", to: "raw/patras")
        // The first stop, Ακτή Δυμαίων, moved to Sydney (over 15,000 km away); the bounds rule flags it, as a warning here.
        let stops = file("raw/patras/StopsUTF8.txt"), manifest = file("raw/patras/kiln.json5")
        var lines = try String(contentsOf: stops, encoding: .utf8).components(separatedBy: "\n")
        XCTAssertEqual(lines[0], "Ακτή Δυμαίων; 0102; 21.72433; 38.2336")
        lines[0] = "Ακτή Δυμαίων; 0102; 151.2093; -33.8688"
        try lines.joined(separator: "\n").write(to: stops, atomically: true, encoding: .utf8)
        try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "\"duplicate-row\": \"warning\",", with: "\"duplicate-row\": \"warning\", coordinates: \"warning\",")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "raw/patras", "--html", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let browser = try open("build/patras.report.html", screenshot: "map.png", width: 412, height: 5200)
        XCTAssertEqual(browser.console, [])
        let dom = browser.dom
        let map = try XCTUnwrap(tags(dom, "<svg class=\"map\"[^>]*data-table=\"stop\"[^>]*>").first)
        XCTAssertEqual(value(map, "data-points"), "168")
        XCTAssertEqual(value(map, "data-offmap"), "1")
        // Flagged only by what flags it: the bounds rule, nothing else.
        XCTAssertEqual(value(map, "data-outliers"), "1")
        let plot = try XCTUnwrap(value(map, "data-plot")).split(separator: " ").compactMap { Double($0) }
        let svgStart = try XCTUnwrap(dom.range(of: map)).upperBound
        let svg = String(dom[svgStart..<(try XCTUnwrap(dom[svgStart...].range(of: "</svg>")).lowerBound)])
        let circles = tags(svg, "<circle class=\"point\"[^>]*>")
        XCTAssertEqual(circles.count, 167)
        let xs = circles.compactMap { value($0, "cx").flatMap(Double.init) }, ys = circles.compactMap { value($0, "cy").flatMap(Double.init) }
        // The 167 stops in Patras fill most of the map in one direction at least.
        XCTAssertGreaterThan(max((xs.max()! - xs.min()!) / plot[2], (ys.max()! - ys.min()!) / plot[3]), 0.8)
        XCTAssertEqual(tags(svg, "<path class=\"offmap flagged\"[^>]*>").count, 1)
        XCTAssertTrue(dom.contains("<li data-label=\"Ακτή Δυμαίων\" data-offmap=\"true\" data-flagged=\"true\">Ακτή Δυμαίων at -33.86880, 151.20930,"), dom)
        // Axes in degrees and a scale bar.
        XCTAssertGreaterThanOrEqual(tags(svg, "<text class=\"latitude\"").count, 3)
        XCTAssertTrue(svg.contains("°N</text>") && svg.contains("°E</text>"))
        XCTAssertTrue(svg.contains("<g class=\"scale\" data-kilometres=\""), svg)
        XCTAssertTrue(dom.contains("flagged by the rule coordinates"), dom)
    }

    func testAnOlderReportStillRenders() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        // The report as Kiln wrote it before it recorded these facts.
        var json = try json("build/patras.report.json")
        for key in ["kilnVersion", "manifest", "inputSizes", "codes", "boundsRules"] { XCTAssertNotNil(json.removeValue(forKey: key), key) }
        json["tables"] = (json["tables"] as? [[String: Any]])?.map { $0.filter { $0.key != "description" } }
        try JSONSerialization.data(withJSONObject: json).write(to: file("old.report.json"))
        let run = try kiln("report", "old.report.json", "--bundle", "build/patras.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let browser = try open("old.report.html")
        XCTAssertEqual(browser.console, [])
        XCTAssertTrue(browser.dom.contains("Kiln version not recorded"))
        XCTAssertTrue(browser.dom.contains("(this report does not record their sizes)"))
        XCTAssertEqual(attributes(browser.dom, key: "points", value: "table"), ["168": "stop"])
        // A manifest rule's code has no meaning without the report's; a catalogue code still has the catalogue's.
        XCTAssertTrue(browser.dom.contains("(no description of this code)"))
    }

    func testHostileDescriptionsStayText() throws {
        try copy("raw/patras", to: "raw/patras")
        let manifest = file("raw/patras/kiln.json5")
        let hostile = "</td></table><script>console.error('ran')</script><img src=x onerror=\\\"console.error(1)\\\">"
        try String(contentsOf: manifest, encoding: .utf8)
            .replacingOccurrences(of: "description: \"Bus stops.", with: "description: \"\(hostile) Bus stops.")
            .replacingOccurrences(of: "description: \"The app's routing guarantee", with: "description: \"\(hostile) The app's routing guarantee")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "raw/patras", "--html", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let browser = try open("build/patras.report.html")
        // Nothing of it ran (the console would show it) and it made no element.
        XCTAssertEqual(browser.console, [])
        XCTAssertEqual(tags(browser.dom, "<script").count, 1)
        XCTAssertEqual(tags(browser.dom, "<img").count, 0)
        XCTAssertEqual(browser.dom.components(separatedBy: "&lt;script&gt;console.error('ran')&lt;/script&gt;").count - 1, 2, browser.dom)
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
        // No bundle: the map is of the rows staged, and says so.
        XCTAssertTrue(dom.contains("<p class=\"staged\">The build failed and wrote no bundle"), dom)
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
        XCTAssertTrue(try kiln("report", "--help").stdout.contains("Usage: kiln report REPORT.json [--out FILE] [--manifest M] [--bundle FILE] [--sql-seconds S]"))
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
