import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// `kiln diff` and `kiln build --baseline` end to end.
final class DiffCommandTests: CLITestCase {
    /// Deletes all timetables but the 5th, 10th, 15th… in id order.
    private let keepEveryFifthTimetable = "DELETE FROM timetable WHERE id NOT IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM timetable) WHERE n % 5 = 0)"

    /// build/patras.sqlite, and `less.sqlite`: the same with 80% of the timetables (and so every line's link to
    /// one) removed, foreign keys kept valid.
    private func shrunkPair() throws {
        try buildPatras()
        try editBundle("less.sqlite", "DELETE FROM line_timetable; \(keepEveryFifthTimetable)")
    }

    /// A copy of raw/patras at `name` whose timetables list only the first period of each line, as if a redesign of
    /// the site hid the others: every row still valid.
    private func thinPipeline(_ name: String) throws {
        let timetables = try copy("raw/patras", to: name).appendingPathComponent("Timetables_UTF8.txt")
        var kept: [String] = [], rowSeen = false
        for line in try String(contentsOf: timetables, encoding: .utf8).components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { rowSeen = false }
            let isRow = line.range(of: #"^\d{1,2}:\d\d\s"#, options: .regularExpression) != nil
            if isRow && rowSeen { continue }
            rowSeen = rowSeen || isRow
            kept.append(line)
        }
        try kept.joined(separator: "\n").write(to: timetables, atomically: true, encoding: .utf8)
    }

    func testEightyPercentOfTheTimetablesRemovedFailsTheThreshold() throws {
        try shrunkPair()
        let run = try kiln("diff", "build/patras.sqlite", "less.sqlite", "--max-removed", "10%")
        XCTAssertEqual(run.status, 1, run.stderr)
        // The first three removed, as SQLite orders their ids.
        let database = try Database(path: file("build/patras.sqlite").path, mode: .readOnly)
        let removed = try database.rows("SELECT id FROM timetable ORDER BY id LIMIT 3").compactMap { $0.values.first?.textValue }
        try database.close()
        XCTAssertTrue(run.stdout.contains("  timetable       48 → 9        0 added, 39 removed (81.3%), 0 changed (0%)\n      removed: \(removed.map { "timetable " + $0 }.joined(separator: "; ")); … 36 more\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  less.sqlite: error: timetable: 39 of 48 rows removed since build/patras.sqlite (81.3%), more than the 10% allowed [diff.threshold]\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  less.sqlite: error: line_timetable: 71 of 71 rows removed since build/patras.sqlite (100%), more than the 10% allowed [diff.threshold]\n"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("failed: 2 errors\n"), run.stdout)

        let unlimited = try kiln("diff", "build/patras.sqlite", "less.sqlite")
        XCTAssertEqual(unlimited.status, 0, "without thresholds the counts are only reported")
        XCTAssertTrue(unlimited.stdout.hasSuffix("thresholds: none\npassed\n"), unlimited.stdout)
    }

    func testJSONCountsAreExact() throws {
        try shrunkPair()
        try editBundle("renamed.sqlite", "DELETE FROM line_timetable; \(keepEveryFifthTimetable); UPDATE stop SET name = 'Αλλού' WHERE code = '0102'")
        let run = try kiln("diff", "build/patras.sqlite", "renamed.sqlite", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        var counts: [String: [Int]] = [:]
        for table in tables {
            counts[table["name"] as? String ?? ""] = ["oldRows", "newRows", "added", "removed", "changed"].map { table[$0] as? Int ?? -1 }
        }
        XCTAssertEqual(counts, ["stop": [168, 168, 0, 0, 1], "line": [21, 21, 0, 0, 0], "route_stop": [301, 301, 0, 0, 0],
                                "line_stop": [301, 301, 0, 0, 0], "timetable": [48, 9, 0, 39, 0], "line_timetable": [71, 0, 0, 71, 0]])
        let stop = try XCTUnwrap(tables.first { $0["name"] as? String == "stop" })
        XCTAssertEqual(stop["changedColumns"] as? [String: Int], ["name": 1])
    }

    func testManifestThresholdsAndPerTableOptions() throws {
        try shrunkPair()
        let manifest = file("raw/patras/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "  exports: [", with: "  thresholds: { maxRemoved: \"50%\", tables: { timetable: { maxRemoved: \"5%\" } } },\n  exports: [")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let declared = try kiln("diff", "build/patras.sqlite", "less.sqlite")
        XCTAssertEqual(declared.status, 1)
        XCTAssertTrue(declared.stdout.contains("thresholds: removed ≤ 50% (timetable ≤ 5%)\n"), declared.stdout)
        XCTAssertTrue(declared.stdout.contains("error: timetable: 39 of 48 rows removed since build/patras.sqlite (81.3%), more than the 5% allowed"), declared.stdout)
        let overridden = try kiln("diff", "build/patras.sqlite", "less.sqlite", "--max-removed", "timetable=90%,line_timetable=100%")
        XCTAssertEqual(overridden.status, 0, overridden.stdout)
    }

    func testASchemaChangeWithoutANewUserVersionFails() throws {
        try buildPatras()
        try editBundle("wider.sqlite", "ALTER TABLE stop ADD COLUMN zone TEXT")
        let run = try kiln("diff", "build/patras.sqlite", "wider.sqlite")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("schema: 1 difference, user_version 1\n  column stop.zone is in the new bundle but not in the old bundle\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("error: the schema changed (1 difference) but user_version is still 1: raise the manifest's schemaVersion so that apps notice [diff.user-version]"), run.stdout)
        try editBundle("bumped.sqlite", "ALTER TABLE stop ADD COLUMN zone TEXT; PRAGMA user_version = 2")
        XCTAssertEqual(try kiln("diff", "build/patras.sqlite", "bumped.sqlite").status, 0)
    }

    func testErrorsAreSentences() throws {
        try buildPatras()
        try "not a database".write(to: file("text.sqlite"), atomically: true, encoding: .utf8)
        let notSQLite = try kiln("diff", "build/patras.sqlite", "text.sqlite")
        XCTAssertEqual(notSQLite.status, 1)
        XCTAssertEqual(notSQLite.stderr, "Error: text.sqlite is not an SQLite database (it does not start with the SQLite header)\n")
        let limit = try kiln("diff", "build/patras.sqlite", "build/patras.sqlite", "--max-removed", "lots")
        XCTAssertEqual(limit.status, 64)
        XCTAssertTrue(limit.stderr.hasPrefix("Error: --max-removed takes limits such as 10%, 25 or TABLE=5%, not \"lots\"\nUsage: kiln diff OLD NEW"), limit.stderr)
        XCTAssertEqual(try kiln("diff", "build/patras.sqlite").status, 64)
        XCTAssertEqual(try kiln("diff", "build/patras.sqlite", "missing.sqlite").status, 74)
    }

    func testDroppingTimetablesShowsOnlyThoseRemoved() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "full.sqlite", "--quiet").status, 0)
        try thinPipeline("thin")
        XCTAssertEqual(try kiln("build", "thin", "--out", "thin.sqlite", "--quiet").status, 0)
        let gone = try XCTUnwrap(JSONSerialization.jsonObject(with: PythonOracle.run("timetable_changes.py", [file("full.sqlite").path, file("thin.sqlite").path])) as? [String: Int])
        XCTAssertGreaterThan(gone["timetable"] ?? 0, 10)

        let run = try kiln("diff", "full.sqlite", "thin.sqlite", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        for name in ["timetable", "line_timetable"] {
            let table = try XCTUnwrap(tables.first { $0["name"] as? String == name })
            XCTAssertEqual(table["removed"] as? Int, gone[name], name)
            XCTAssertEqual(table["added"] as? Int, gone[name + "_added"], name)
            XCTAssertEqual(table["changed"] as? Int, 0, "\(name): ids shifted")
        }
        XCTAssertEqual(tables.filter { !["timetable", "line_timetable"].contains($0["name"] as? String) }.compactMap { $0["removed"] as? Int }.reduce(0, +), 0)
    }

    func testTheBuildKeepsThePreviousBundleWhenTheNewOneIsOverAThreshold() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "app.sqlite", "--quiet").status, 0)
        let before = try sha256("app.sqlite")
        try thinPipeline("thin")

        let run = try kiln("build", "thin", "--out", "app.sqlite", "--baseline", "app.sqlite", "--max-removed", "10%")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try sha256("app.sqlite"), before, "the previous bundle was replaced")
        XCTAssertTrue(run.stderr.hasPrefix("not built: patras has errors; app.sqlite was left as it was\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  diff.threshold (error) ×2\n    line_timetable: 50 of 71 rows removed since app.sqlite (70.4%), more than the 10% allowed\n    timetable: 35 of 48 rows removed since app.sqlite (72.9%), more than the 10% allowed\n"), run.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("").path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }, [], "a temporary file was left")

        let same = try kiln("build", "patras", "--out", "app.sqlite", "--baseline", "app.sqlite", "--max-removed", "10%")
        XCTAssertEqual(same.status, 0, same.stderr)
        XCTAssertTrue(same.stderr.hasSuffix("compared with app.sqlite: no row added, removed or changed\n"), same.stderr)

        let missing = try kiln("build", "patras", "--out", "app.sqlite", "--baseline", "old.sqlite")
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.stderr.hasPrefix("Error: cannot read the baseline "), missing.stderr)
    }
}
