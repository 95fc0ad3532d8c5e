import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The HTML report's pieces: escaping, relative links, the maps' outliers and median, and reading a report back.
final class HTMLReportTests: KilnTestCase {
    func testEscapingLeavesNoMarkup() {
        XCTAssertEqual(HTML.escape("<b a=\"1\">Tom & Jerry's</b>"), "&lt;b a=&quot;1&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;")
        XCTAssertEqual(HTML.escape("Κορίνθου"), "Κορίνθου")
    }

    func testRelativeLinks() {
        let page = URL(fileURLWithPath: "/work/build")
        XCTAssertEqual(HTML.relativePath(from: page, to: URL(fileURLWithPath: "/work/raw/patras/Routes_UTF8.txt")), "../raw/patras/Routes_UTF8.txt")
        XCTAssertEqual(HTML.relativePath(from: page, to: URL(fileURLWithPath: "/work/build/a b.txt")), "a%20b.txt")
    }

    /// The circles' centres in `svg` of `kind` (`point`, `outlier`).
    private func centres(_ svg: String, _ kind: String) -> [(x: Double, y: Double)] {
        let pattern = try! NSRegularExpression(pattern: "<circle class=\"\(kind)\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"")
        return pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map { match in
            (Double(svg[Range(match.range(at: 1), in: svg)!])!, Double(svg[Range(match.range(at: 2), in: svg)!])!)
        }
    }

    func testAFarPointNeitherSquashesTheMapNorIsFlagged() throws {
        // Twenty points within two kilometres of Patras's centre, one in Athens and one 15,000 km away.
        var points: [CoordinateMap.Point] = (0..<20).map { index in
            CoordinateMap.Point(label: "p\(index)", latitude: 38.245 + Double(index) * 0.001, longitude: 21.735 + Double(index % 3) * 0.001)
        }
        points.append(CoordinateMap.Point(label: "Athens", latitude: 37.9838, longitude: 23.7275))
        points.append(CoordinateMap.Point(label: "far", latitude: -35, longitude: 150))
        let map = try XCTUnwrap(CoordinateMap(table: "stop", latitude: "latitude", longitude: "longitude", points: points))
        // Nothing flags a row of this table: no point is red, the two far ones are drawn at the edge and listed.
        XCTAssertEqual(map.outliers.map(\.label), [])
        XCTAssertEqual(map.offMap.map(\.label), ["Athens", "far"])
        let median = try PythonOracle.lines(ofProgram: "import statistics, sys; print(repr(statistics.median(float(v) for v in sys.argv[1:])))",
                                            points.map { String($0.latitude) })
        XCTAssertEqual(map.median.latitude, Double(median.first ?? "") ?? 0, accuracy: 1e-12)
        let svg = map.svg()
        XCTAssertEqual(svg.components(separatedBy: "class=\"offmap\"").count - 1, 2)
        XCTAssertTrue(svg.contains("data-points=\"22\" data-outliers=\"0\" data-offmap=\"2\""), svg)
        // The twenty span most of the plot's height (the longer side of their extent).
        let plot = map.view.plot, ys = centres(svg, "point").map(\.y)
        XCTAssertEqual(ys.count, 20)
        XCTAssertGreaterThan((ys.max()! - ys.min()!) / plot.height, 0.8)
        // With the table's own flags, those are the outliers.
        var flagged = points
        flagged[0].outlier = true
        let own = try XCTUnwrap(CoordinateMap(table: "t", latitude: "lat", longitude: "lon", points: flagged, flaggedBy: ["the table's outlier column"]))
        XCTAssertEqual(own.outliers.map(\.label), ["p0"])
        XCTAssertEqual(centres(own.svg(), "outlier").count, 1)
        XCTAssertNil(CoordinateMap(table: "empty", latitude: "lat", longitude: "lon", points: []))
    }

    /// Staging's rows keep their `_file` and `_line`: a row an error names is flagged, and the map survives the JSON
    /// report's round trip (`StagedMap`).
    func testStagedRowsAnErrorNamesAreFlaggedAndKeptThroughTheReport() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE stop(name TEXT, lat REAL, lon REAL, _file TEXT, _line INTEGER)")
        try database.execute("INSERT INTO stop VALUES ('a', 38.24, 21.73, 'stops.txt', 1), ('b', 38.25, 21.74, 'stops.txt', 2), ('c', -33.87, 151.21, 'stops.txt', 3)")
        let maps = try CoordinateMap.maps(in: database, tables: ["stop"], failedRows: ["stops.txt:3"], limit: 2)
        XCTAssertEqual(maps.first?.points.map(\.label), ["a", "b"], "the limit holds")
        let all = try CoordinateMap.maps(in: database, tables: ["stop"], failedRows: ["stops.txt:3"])
        XCTAssertEqual(all.first?.outliers.map(\.label), ["c"])
        XCTAssertEqual(all.first?.flaggedBy, ["an error of this build"])
        XCTAssertEqual(try CoordinateMap.maps(in: database, tables: ["stop"]).first?.outliers.count, 0, "a bundle's map flags no error")
        let staged = StagedMap(try XCTUnwrap(all.first))
        let decoded = try JSONDecoder().decode(StagedMap.self, from: try JSONEncoder().encode(staged))
        XCTAssertEqual(decoded, staged)
        XCTAssertEqual(decoded.map?.outliers.map(\.label), ["c"])
    }

    func testRobustRangeKeepsEveryClusterAndNearPoints() {
        // Two towns, 70 and 30 points: both stay on the map.
        let first: [Double] = (0..<70).map { 38.2 + Double($0) * 0.0001 }, second: [Double] = (0..<30).map { 38.9 + Double($0) * 0.0001 }
        let towns = first + second
        XCTAssertEqual(CoordinateMap.robustRange(towns), towns.min()!...towns.max()!)
        // A point a few kilometres out of a town of 26 stays.
        let town: [Double] = (0..<25).map { 46.97 + Double($0) * 0.0005 } + [47.013]
        XCTAssertEqual(CoordinateMap.robustRange(town).upperBound, 47.013)
        // One value 100 degrees away does not.
        XCTAssertEqual(CoordinateMap.robustRange(town + [-53]), town.min()!...47.013)
        XCTAssertEqual(CoordinateMap.robustRange([1, 80]), 1...80)
    }

    func testAxesAndScaleBar() throws {
        XCTAssertEqual(MapView.niceStep(0.037), 0.05)
        XCTAssertEqual(MapView.niceStep(0.037, roundingDown: true), 0.02)
        XCTAssertEqual(MapView.niceStep(7), 10)
        XCTAssertEqual(MapView.ticks(38.213...38.281, step: 0.02).map { ($0 * 100).rounded() }, [3822, 3824, 3826, 3828])
        XCTAssertEqual(MapView.degrees(38.24, step: 0.02, positive: "N", negative: "S"), "38.24°N")
        XCTAssertEqual(MapView.degrees(-0.5, step: 0.1, positive: "E", negative: "W"), "0.5°W")
        XCTAssertEqual(MapView.degrees(0, step: 10, positive: "E", negative: "W"), "0°")
        // The bar's length in pixels, back in degrees of latitude, is the distance its label says.
        let points: [CoordinateMap.Point] = (0..<20).map { index in
            CoordinateMap.Point(label: "\(index)", latitude: 38.2 + Double(index) * 0.005, longitude: 21.7 + Double(index) * 0.004)
        }
        let map = try XCTUnwrap(CoordinateMap(table: "stop", latitude: "latitude", longitude: "longitude", points: points))
        let svg = map.svg()
        let scale = try XCTUnwrap(svg.range(of: "<g class=\"scale\" data-kilometres=\"")).upperBound
        let fields = svg[scale...].split(separator: "\"")
        let kilometres = try XCTUnwrap(Double(fields[0])), length = try XCTUnwrap(Double(fields[2]))
        let degrees = length / map.view.factor
        XCTAssertEqual(KilnSQLFunctions.distance(38.2, 21.7, 38.2 + degrees, 21.7), kilometres, accuracy: kilometres * 0.002)
        XCTAssertTrue(svg.contains(">\(MapView.plain(kilometres)) km</text>") || svg.contains(">\(MapView.plain(kilometres * 1000)) m</text>"), svg)
        // Latitude labels on the left, longitude labels below, each a multiple of its step.
        XCTAssertGreaterThanOrEqual(svg.components(separatedBy: "class=\"latitude\"").count - 1, 3)
        XCTAssertGreaterThanOrEqual(svg.components(separatedBy: "class=\"longitude\"").count - 1, 2)
        XCTAssertTrue(svg.contains("°N</text>") && svg.contains("°E</text>"), svg)
    }

    func testBoundsRulesFlagTheirPoints() {
        let rule = BoundsRule(code: "coordinates", table: "stop", latitude: "latitude", longitude: "longitude",
                              box: BoxSpec(minLatitude: 38.19, maxLatitude: 38.32, minLongitude: 21.70, maxLongitude: 21.82))
        XCTAssertFalse(rule.flags(latitude: 38.25, longitude: 21.73))
        XCTAssertTrue(rule.flags(latitude: 21.73, longitude: 38.25))
        XCTAssertTrue(rule.flags(latitude: 38.25, longitude: 21.9))
    }

    func testAnOlderReportStillReads() throws {
        // A report as Kiln wrote it before the version, digests, sizes and meanings were recorded.
        let old = try write("""
            {"built": true, "bundle": "b", "diagnostics": [{"code": "input.empty", "file": "a.txt", "line": 1, "message": "empty", "severity": "warning"}],
             "inputs": {"a.txt": "e3b0"}, "output": "build/b.sqlite", "summary": {"error": 0, "info": 0, "warning": 1}, "tables": [{"name": "t", "rows": 0}]}
            """, to: "old.json")
        let report = try ReportDocument.read(old)
        XCTAssertNil(report.kilnVersion)
        XCTAssertNil(report.inputSizes)
        XCTAssertEqual(report.meaning(of: "input.empty"), DiagnosticCode.inputEmpty.meaning)
        let html = try HTMLReport(report: report, pipelineFolder: nil, bundle: nil).html(location: temporaryDirectory)
        XCTAssertTrue(html.contains("Kiln version not recorded"), html)
        XCTAssertTrue(html.contains("<p class=\"meaning\">\(HTML.escape(TextFolding.collapseSpaces(DiagnosticCode.inputEmpty.meaning)))</p>"), html)
        XCTAssertTrue(html.contains("data-input=\"a.txt\" data-size=\"\""), html)
    }

    func testEveryExampleAndTheScriptIsTheOnlyScript() throws {
        let hostile = "</script><script>alert(1)</script><b onmouseover=\"x\">"
        let findings = (0..<57).map { ReportDocument.Finding(code: "rule.x", severity: "warning", message: "\(hostile) \($0)", file: "f.txt", line: $0 + 1) }
        var report = try ReportDocument.read(try write("""
            {"built": false, "bundle": "b", "diagnostics": [], "inputs": {}, "output": "b.sqlite", "summary": {"error": 0, "info": 0, "warning": 57},
             "tables": [{"name": "t", "rows": 0, "description": "</td><script>alert(2)</script>"}], "codes": {"rule.x": "<i>what</i>"},
             "notStored": [{"code": "rule.x", "severity": "warning", "count": 3}]}
            """, to: "r.json"))
        report.diagnostics = findings
        let html = try HTMLReport(report: report, pipelineFolder: nil, bundle: nil).html(location: temporaryDirectory)
        XCTAssertEqual(html.components(separatedBy: "<li class=\"finding\">").count - 1, 57)
        XCTAssertTrue(html.contains("data-count=\"57\" data-total=\"60\""), html)
        XCTAssertTrue(html.contains("data-not-stored=\"3\""), html)
        XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 1)
        XCTAssertTrue(html.contains("<script>\(HTMLReport.script)</script>"))
        XCTAssertFalse(html.contains("<b onmouseover"))
        XCTAssertFalse(html.contains("<i>what"))
        XCTAssertFalse(HTMLReport.script.contains("innerHTML"))
        // The policy names the script by its SHA-256 (Python's hashlib and base64, independently).
        let expected = try PythonOracle.lines(ofProgram: "import base64, hashlib, sys; print(base64.b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode())",
                                              [HTMLReport.script])
        XCTAssertTrue(HTMLReport.contentSecurityPolicy.contains("script-src 'sha256-\(expected.first ?? "?")'"), HTMLReport.contentSecurityPolicy)
        XCTAssertTrue(HTMLReport.contentSecurityPolicy.hasPrefix("default-src 'none'"))
    }

    func testSizes() {
        XCTAssertEqual(HTMLReport.bytes(999), "999")
        XCTAssertEqual(HTMLReport.bytes(125_236), "125.2 KB (125\u{202F}236)")
        XCTAssertEqual(HTMLReport.bytes(12_345_678), "12.3 MB (12\u{202F}345\u{202F}678)")
    }

    func testAPageFromABuildReport() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let output = temporaryDirectory.appendingPathComponent("build/patras.sqlite")
        let outcome = try Builder.build(try ManifestLoader.load(folder.path), options: BuildOptions(output: output))
        let report = try ReportDocument.read(outcome.reportURL)
        XCTAssertEqual(report.diagnostics.count, outcome.diagnostics.count)
        let html = try HTMLReport(report: report, pipelineFolder: folder, bundle: output).html(location: output.deletingLastPathComponent())
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"))
        XCTAssertTrue(html.contains("data-code=\"route.transfers\" data-count=\"1\""))
        XCTAssertTrue(html.contains("href=\"../patras/Routes_UTF8.txt\""))
        XCTAssertTrue(html.contains("data-table=\"stop\" data-page=\"\" data-points=\"168\""))
        XCTAssertFalse(html.contains("id=\"baseline\""))
        // What the report now records, against Python's hashlib and os.path, and the manifest's own text.
        let manifest = folder.appendingPathComponent("kiln.json5").path
        let oracle = try PythonOracle.lines(ofProgram: """
            import hashlib, os, sys
            print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())
            for path in sorted(sys.argv[2:]): print(path, os.path.getsize(path))
            """, [manifest] + report.inputs.keys.map { folder.appendingPathComponent($0).path })
        XCTAssertEqual(report.manifest?.sha256, oracle.first)
        XCTAssertEqual(report.manifest?.file, "kiln.json5")
        XCTAssertEqual(report.kilnVersion, KilnVersion.current)
        XCTAssertEqual(report.inputSizes?.count, 7)
        let sizes = report.inputSizes!.sorted { $0.key < $1.key }.map { "\(folder.appendingPathComponent($0.key).path) \($0.value)" }
        XCTAssertEqual(sizes, Array(oracle.dropFirst()))
        let rules = try ManifestLoader.load(folder.path).manifest.rules
        for code in Set(report.diagnostics.map(\.code)) {
            let meaning = try XCTUnwrap(report.codes?[code], code)
            XCTAssertEqual(meaning, rules.first { $0.code == code }?.description ?? DiagnosticCode.named(code)?.meaning)
            XCTAssertTrue(html.contains("<p class=\"meaning\">\(HTML.escape(TextFolding.collapseSpaces(meaning)))</p>"), meaning)
        }
        XCTAssertEqual(report.tables.first { $0.name == "stop" }?.description, "Bus stops. Codes are unique; names are not (several stops are called Κορίνθου).")
        XCTAssertEqual(report.boundsRules?.map(\.code), ["coordinates"])
        XCTAssertThrowsError(try ReportDocument.read(try write("[]", to: "list.json"))) { error in
            guard case KilnError.validation(let failure) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(failure.message.contains("is not a Kiln build report"), failure.message)
        }
    }
}
