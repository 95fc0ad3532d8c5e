import Foundation
import XCTest
@testable import KilnKit

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

    func testMapFlagsPointsFarFromTheMedian() throws {
        // Nine points within a few hundred metres of Patras's centre, one in Athens.
        var points = (0..<9).map { CoordinateMap.Point(label: "p\($0)", latitude: 38.245 + Double($0) * 0.001, longitude: 21.735) }
        points.append(CoordinateMap.Point(label: "Athens", latitude: 37.9838, longitude: 23.7275))
        let map = try XCTUnwrap(CoordinateMap(table: "stop", latitude: "latitude", longitude: "longitude", points: points))
        XCTAssertEqual(map.outliers.map(\.label), ["Athens"])
        // Sorted, the two middle latitudes of the ten are 38.248 and 38.249.
        XCTAssertEqual(map.median.latitude, (38.248 + 38.249) / 2, accuracy: 1e-9)
        let svg = map.svg()
        XCTAssertEqual(svg.components(separatedBy: "class=\"outlier\"").count - 1, 1)
        XCTAssertEqual(svg.components(separatedBy: "class=\"point\"").count - 1, 9)
        XCTAssertTrue(svg.contains("data-points=\"10\" data-outliers=\"1\""), svg)
        // With the table's own flags, those are the outliers.
        var flagged = points
        flagged[0].outlier = true
        flagged[9].outlier = false
        XCTAssertEqual(CoordinateMap(table: "t", latitude: "lat", longitude: "lon", points: flagged, flagged: true)?.outliers.map(\.label), ["p0"])
        XCTAssertNil(CoordinateMap(table: "empty", latitude: "lat", longitude: "lon", points: []))
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
        XCTAssertThrowsError(try ReportDocument.read(try write("[]", to: "list.json"))) { error in
            guard case KilnError.validation(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("is not a Kiln build report"), message)
        }
    }
}
