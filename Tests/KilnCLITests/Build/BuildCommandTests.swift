import Foundation
import XCTest
import KilnKit

/// `kiln build` end to end through the binary.
final class BuildCommandTests: CLITestCase {

    /// `enum` takes numbers for a number column, as well as strings: the values outside are `enum` errors at their line.
    func testAnIntegerColumnsEnumTakesNumbers() throws {
        try writePipeline("p", manifest: """
            { bundle: "p", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "level", type: "integer", enum: [1, 2, 3] }, { name: "share", type: "real", enum: [0.5, "1"] }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["level", "share"] }, into: "t", columns: { level: "level", share: "share" } }] }
            """)
        try "1;0.5\n3;1\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        let built = try kiln("build", "p", "--quiet")
        XCTAssertEqual(built.status, 0, built.stderr)
        try "1;0.5\n4;1\n2;0.25\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        let refused = try kiln("build", "p")
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("p/in.txt:2: "), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("level \"4\" is not one of 1, 2, 3"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("share \"0.25\" is not one of 0.5, 1"), refused.stderr)
    }
    func testBuildsThePatrasBundleAndPrintsItsSummary() throws {
        try copy("raw/patras", to: "raw/patras")
        let run = try kiln("build", "raw/patras")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(run.stderr.hasPrefix("built build/patras.sqlite (bundle patras)\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  stop            168 rows\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  line            21 rows\n"), run.stderr)
        // The one warning: the sample's hand-placed routes miss the two-change guarantee (README, "The routing guarantee").
        XCTAssertTrue(run.stderr.contains("diagnostics: 0 errors, 1 warning, 0 info\n  route.transfers (warning) ×1\n"), run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("build/patras.sqlite").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("build/patras.report.json").path))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file("build").path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }
        XCTAssertEqual(leftovers, [], "temporary files left in build/")
    }

    func testTwoBuildsGiveTheSameBytes() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "one.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try kiln("build", "patras/kiln.json5", "--out", "two.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try sha256("one.sqlite"), try sha256("two.sqlite"))
        XCTAssertEqual(try Data(contentsOf: file("one.report.json")).count > 0, true)
    }

    func testQuietPrintsNothingOnSuccess() throws {
        try copy("raw/patras", to: "patras")
        let run = try kiln("build", "patras", "--quiet")
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stdout + run.stderr, "")
    }

    func testJSONFormatPutsTheReportOnStandardOutput() throws {
        try copy("raw/patras", to: "patras")
        let run = try kiln("build", "patras", "--format", "json", "--report", "out/r.json")
        XCTAssertEqual(run.status, 0)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["built"] as? Bool, true)
        XCTAssertEqual(report["bundle"] as? String, "patras")
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.map { $0["name"] as? String }, ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("out/r.json").path))
    }

    func testBrokenInputsFailWithFileAndLineAndKeepThePreviousBundle() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "app.sqlite", "--quiet").status, 0)
        let before = try sha256("app.sqlite")
        try brokenPipeline()

        let run = try kiln("build", "broken", "--out", "app.sqlite")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(try sha256("app.sqlite"), before, "a failed build replaced the previous bundle")
        XCTAssertTrue(run.stderr.hasPrefix("not built: patras has errors; app.sqlite was left as it was\n"), run.stderr)
        for expected in [
            "broken/StopsUTF8.txt:30: stop 0307: latitude 21.741253 and longitude 38.245887 are swapped",
            "broken/StopsUTF8.txt:13: expected 4 fields (name; code; longitude; latitude), found 3",
            "broken/Timetables_UTF8.txt:48: line 1.4: unknown day heading \"Τρίτη\"",
            "broken/StartingPoints.txt:9: line 4.1 starts at stop 0302, but its route's first stop is 0217",
            "broken/linesutf8.txt:11:23: line is not valid UTF-8 (byte 0xFF at column 23)",
        ] {
            XCTAssertTrue(run.stderr.contains(expected), "missing: \(expected)\n\(run.stderr)")
        }
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("app.report.json"))) as? [String: Any])
        XCTAssertEqual(report["built"] as? Bool, false)
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        let routeStop = diagnostics.first { $0["code"] as? String == "foreign-key" && $0["line"] as? Int == 24 && $0["file"] as? String == "Routes_UTF8.txt" }
        XCTAssertEqual(routeStop?["message"] as? String, "route_stop.stop_code \"0999\" refers to no stop (no stop.code \"0999\")")
        XCTAssertEqual(routeStop?["severity"] as? String, "error")
    }

    func testQuietStillPrintsErrors() throws {
        try brokenPipeline()
        let run = try kiln("build", "broken", "--quiet")
        XCTAssertEqual(run.status, 1)
        // Each line carries its severity and code, as kiln check's do.
        XCTAssertTrue(run.stderr.contains("broken/Routes_UTF8.txt:38: error: route of line 8.1: its 11 stops are numbered 0…11"), run.stderr)
        XCTAssertTrue(run.stderr.split(separator: "\n").allSatisfy { $0.contains(": error: ") && $0.hasSuffix("]") }, run.stderr)
        XCTAssertFalse(run.stderr.contains("stop.similar-name"), "info findings are not printed with --quiet")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/patras.sqlite").path))
    }

    func testBadManifestNamesTheLineAndKeyPath() throws {
        let folder = try copy("raw/patras", to: "patras")
        let manifest = folder.appendingPathComponent("kiln.json5")
        var text = try String(contentsOf: manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "{ name: \"search_name\", type: \"text\", notNull: true,",
                                         with: "{ name: \"search_name\", type: \"text\", nullable: false,")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let line = text.components(separatedBy: "\n").firstIndex { $0.contains("nullable: false") }! + 1

        let run = try kiln("build", "patras")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: patras/kiln.json5:\(line): manifest error at tables[0].columns[2].nullable: unknown key \"nullable\""), run.stderr)
    }

    func testMissingInputFileIsAManifestError() throws {
        let folder = try copy("raw/patras", to: "patras")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("StartingPoints.txt"))
        let run = try kiln("build", "patras")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[2].path: input file \"StartingPoints.txt\" does not exist"), run.stderr)
    }

    func testUnwritableOutputIsAnIOError() throws {
        try copy("raw/patras", to: "patras")
        let run = try kiln("build", "patras", "--out", "/dev/null/bundle.sqlite")
        XCTAssertEqual(run.status, 74)
        XCTAssertTrue(run.stderr.hasPrefix("Error: cannot create the output folder /dev/null"), run.stderr)
    }

    func testNoPipelineIsAUsageError() throws {
        let run = try kiln("build", "nowhere")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: no pipeline at nowhere"), run.stderr)
    }
}

/// Manifest mistakes found when the readers are made, before any input is read.
final class ManifestCheckTests: CLITestCase {
    func testUnknownEncodingIsAManifestError() throws {
        let folder = try copy("raw/patras", to: "patras")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(
            of: "options: { fields: [\"line\", \"stop\"] },", with: "options: { fields: [\"line\", \"stop\"], encoding: \"klingon\" },")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "patras")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[2].options.encoding: unknown encoding \"klingon\""), run.stderr)
    }

    func testInvalidRowPatternNamesItsOffset() throws {
        let folder = try copy("raw/patras-web", to: "web")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "row: \"^(?<from>", with: "row: \"^(?<from")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "web")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[5].options: invalid regular expression at offset"), run.stderr)
    }
}
