import Foundation
import KilnTestSupport
import XCTest
import KilnKit

/// `kiln build`'s bytes per table (summary, JSON and HTML reports) and the manifest's size limits, through the binary.
/// Expected bytes come from `scripts/oracles/bundle_bytes.py` (SQLite's dbstat and table_list read by Python).
final class BundleSizeCommandTests: CLITestCase {
    /// The oracle's bytes of `bundle`: total, other, and per table data/index/search/spatial.
    private func oracle(_ bundle: String, tables: [String], owners: [String: String]) throws -> [String: Any] {
        let arguments = [file(bundle).path] + tables + ["--"] + owners.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try XCTUnwrap(try PythonOracle.json("bundle_bytes.py", arguments) as? [String: Any])
    }

    /// A copy of pipeline `name` whose manifest has `limits` (JSON5 text) after its schemaVersion.
    private func pipeline(_ name: String, limits: String) throws -> URL {
        let folder = try copy("raw/\(name)", to: name)
        let manifestURL = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifestURL, encoding: .utf8)
        let range = try XCTUnwrap(text.range(of: "schemaVersion: 1,\n"))
        try text.replacingCharacters(in: range, with: "schemaVersion: 1,\n  limits: \(limits),\n").write(to: manifestURL, atomically: true, encoding: .utf8)
        return folder
    }

    func testTheSummaryAndBothReportsGiveEachTablesBytesAsDbstatCountsThem() throws {
        try copy("raw/itravel", to: "itravel")
        let run = try kiln("build", "itravel", "--out", "out/itravel.sqlite", "--html")
        XCTAssertEqual(run.status, 0, run.stderr)
        let tables = ["page", "page_alias", "section", "listing"]
        let expected = try oracle("out/itravel.sqlite", tables: tables,
                                  owners: ["page_rtree": "page", "listing_search": "listing", "listing_rtree": "listing"])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("out/itravel.report.json"))) as? [String: Any])
        XCTAssertEqual(report["bundleBytes"] as? Int, expected["total"] as? Int)
        XCTAssertEqual(report["otherBytes"] as? Int, expected["other"] as? Int)
        let oracleTables = try XCTUnwrap(expected["tables"] as? [String: [String: Int]])
        let reported = try XCTUnwrap(report["tables"] as? [[String: Any]])
        XCTAssertEqual(reported.map { $0["name"] as? String }, tables)
        let html = try String(contentsOf: file("out/itravel.report.html"), encoding: .utf8)
        for table in reported {
            let name = try XCTUnwrap(table["name"] as? String)
            let bytes = try XCTUnwrap(table["bytes"] as? [String: Int], name)
            XCTAssertEqual(bytes, oracleTables[name], name)
            let parts = ["data", "index", "search", "spatial"].map { "data-\($0)-bytes=\"\(oracleTables[name]![$0]!)\"" }.joined(separator: " ")
            XCTAssertTrue(html.contains("<tr data-table=\"\(name)\" data-rows=\"\(table["rows"] as! Int)\" \(parts)>"), name)
        }
        // The listing table has all four parts; the summary names each after the table's total.
        XCTAssertGreaterThan(oracleTables["listing"]!["search"]!, 0)
        XCTAssertGreaterThan(oracleTables["listing"]!["spatial"]!, 0)
        XCTAssertTrue(run.stderr.contains("\nsize: "), run.stderr)
        let listingLine = try XCTUnwrap(run.stderr.split(separator: "\n").first { $0.hasPrefix("  listing     ") && $0.contains("search") })
        XCTAssertTrue(listingLine.contains("data ") && listingLine.contains(", index ") && listingLine.contains(", spatial "), String(listingLine))
        XCTAssertTrue(html.contains("data-bundle-bytes=\"\(expected["total"] as! Int)\""))
        // The row lines other tests compare are unchanged.
        XCTAssertTrue(run.stderr.contains("\n  listing     "), run.stderr)
    }

    /// `bytes` as the summary writes sizes under a megabyte: kilobytes of 1000, one decimal.
    private func kilobytes(_ bytes: Int) -> String { String(format: "%.1f KB", Double(bytes) / 1000) }

    func testABundleOverItsLimitIsNotBuiltAndThePreviousOneStays() throws {
        try copy("raw/patras", to: "first")
        XCTAssertEqual(try kiln("build", "first", "--out", "app.sqlite", "--quiet").status, 0)
        let before = try sha256("app.sqlite")
        let expected = try oracle("app.sqlite", tables: ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"],
                                  owners: ["stop_search": "stop"])
        let total = try XCTUnwrap(expected["total"] as? Int)
        try pipeline("patras", limits: "{ bundleBytes: \"\(total - 1)\" }")
        let run = try kiln("build", "patras", "--out", "app.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try sha256("app.sqlite"), before, "a bundle over its limit replaced the previous one")
        XCTAssertTrue(run.stderr.hasPrefix("not built: patras has errors; app.sqlite was left as it was\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("bundle.too-large (error) ×1"), run.stderr)
        // The biggest table (by the oracle) is named first.
        let tables = try XCTUnwrap(expected["tables"] as? [String: [String: Int]])
        let biggest = tables.max { $0.value.values.reduce(0, +) < $1.value.values.reduce(0, +) }!.key
        XCTAssertTrue(run.stderr.contains("app.sqlite would be \(kilobytes(total)) (\(total) bytes), more than limits.bundleBytes (\(total - 1) bytes); the biggest tables: \(biggest) "), run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("app.report.json"))) as? [String: Any])
        XCTAssertEqual(report["built"] as? Bool, false)
        XCTAssertEqual(report["bundleBytes"] as? Int, total, "the report says how big the refused bundle was")
        XCTAssertEqual((report["diagnostics"] as? [[String: Any]])?.compactMap { $0["code"] as? String }.filter { $0 == "bundle.too-large" }.count, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }, [],
                       "the refused bundle's temporary file was left")

        // At the limit, it is built.
        try FileManager.default.removeItem(at: file("patras"))
        try pipeline("patras", limits: "{ bundleBytes: \"\(total)\" }")
        XCTAssertEqual(try kiln("build", "patras", "--out", "app.sqlite", "--quiet").status, 0)
    }

    func testATableOverItsOwnLimitIsNamedWithItsParts() throws {
        try copy("raw/patras", to: "first")
        XCTAssertEqual(try kiln("build", "first", "--out", "app.sqlite", "--quiet").status, 0)
        let expected = try oracle("app.sqlite", tables: ["stop"], owners: ["stop_search": "stop"])
        let stop = try XCTUnwrap((expected["tables"] as? [String: [String: Int]])?["stop"])
        let total = stop.values.reduce(0, +)
        try pipeline("patras", limits: "{ bundleBytes: \"50 MB\", tables: { stop: \(total - 1), line: \"1 MiB\" } }")
        let run = try kiln("build", "patras", "--out", "app.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("table stop would take \(kilobytes(total)) (data \(kilobytes(stop["data"] ?? 0)), index \(kilobytes(stop["index"] ?? 0)), search \(kilobytes(stop["search"] ?? 0))), \(total) bytes, more than limits.tables.stop (\(total - 1) bytes)"), run.stderr)
        XCTAssertFalse(run.stderr.contains("limits.tables.line"), run.stderr)
        XCTAssertFalse(run.stderr.contains("limits.bundleBytes"), run.stderr)
    }

    func testSizesThatAreNotSizesAndUnknownTablesAreManifestErrors() throws {
        for (limits, message) in [
            ("{ bundleBytes: \"50 parsecs\" }", "limits.bundleBytes: expected a size: bytes (250000) or a number with KB, MB, GB"),
            ("{ bundleBytes: 0 }", "limits.bundleBytes: expected a size"),
            ("{ bundleBytes: \"-5 MB\" }", "limits.bundleBytes: expected a size"),
            ("{ tables: { stops: \"1 MB\" } }", "limits.tables.stops: no shipped table named \"stops\"; shipped tables: stop, line,"),
            ("{ tables: { stop: \"1 MB\" }, bytes: 5 }", "limits.bytes"),
        ] {
            try? FileManager.default.removeItem(at: file("patras"))
            try pipeline("patras", limits: limits)
            let run = try kiln("build", "patras", "--out", "app.sqlite")
            XCTAssertEqual(run.status, 64, limits + ": " + run.stderr)
            XCTAssertTrue(run.stderr.contains(message), limits + ": " + run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("app.sqlite").path), limits)
        }
    }

    func testPatchMaxSizeTakesTheSameSizes() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "old.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try kiln("build", "patras", "--out", "new.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try kiln("patch", "old.sqlite", "new.sqlite", "--out", "updates", "--max-size", "2 MB").status, 0)
        let bad = try kiln("patch", "old.sqlite", "new.sqlite", "--out", "updates", "--max-size", "2 parsecs")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--max-size takes a size in bytes (250000, 2 MB) or a share of the new bundle (50%), not \"2 parsecs\""), bad.stderr)
    }
}
