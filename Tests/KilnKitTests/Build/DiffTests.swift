import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `BundleDiff`, `Thresholds` and the build's baseline guard.
final class DiffTests: KilnTestCase {
    /// A small SQLite file made by hand: `sql` run on a new database, with a `kiln_metadata` naming bundle `toy`.
    private func bundle(_ name: String, _ sql: String, bundle: String = "toy") throws -> URL {
        let url = temporaryDirectory.appendingPathComponent(name)
        let database = try Database(path: url.path)
        try database.execute("CREATE TABLE kiln_metadata (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL); INSERT INTO kiln_metadata VALUES ('bundle.name', \(quoteLiteral(bundle))); " + sql)
        try database.close()
        return url
    }

    private let schema = "CREATE TABLE item (code TEXT NOT NULL, name TEXT, price REAL, PRIMARY KEY (code)); CREATE TABLE tag (item TEXT, tag TEXT);"

    /// Five items and two tags; the new one adds two items, removes one, changes three (two names, two prices),
    /// and replaces one tag.
    private func pair() throws -> (old: URL, new: URL) {
        let old = try bundle("old.sqlite", schema + """
            INSERT INTO item VALUES ('a', 'Apple', 1.0), ('b', 'Banana', 2.0), ('c', 'Cherry', 3.0), ('d', 'Date', 4.0), ('e', 'Elder', 5);
            INSERT INTO tag VALUES ('a', 'red'), ('b', 'yellow');
            """)
        let new = try bundle("new.sqlite", schema + """
            INSERT INTO item VALUES ('a', 'Apple', 1), ('b', 'Banana', 2.5), ('c', 'Cherry!', 3.0), ('e', 'Elderberry', 5.5), ('f', 'Fig', NULL), ('g', 'Grape', 7.0);
            INSERT INTO tag VALUES ('a', 'red'), ('a', 'green');
            """)
        return (old, new)
    }

    func testCountsAndExamplesOfAHandMadePair() throws {
        let (old, new) = try pair()
        let diff = try BundleDiff.compare(old: old, new: new, oldName: "old", newName: "new")
        XCTAssertTrue(diff.passed)
        XCTAssertEqual(diff.schema, [])
        XCTAssertEqual(diff.tables.map(\.name), ["item", "tag"])

        let item = diff.tables[0]
        XCTAssertEqual(item.key, ["code"])
        XCTAssertEqual([item.oldRows, item.newRows, item.added, item.removed, item.changed], [5, 6, 2, 1, 3])
        XCTAssertEqual(item.changedColumns, ["name": 2, "price": 2])
        XCTAssertEqual(item.addedExamples, [[.text("f")], [.text("g")]])
        XCTAssertEqual(item.removedExamples, [[.text("d")]])
        XCTAssertEqual(item.changedExamples.map(\.key), [[.text("b")], [.text("c")], [.text("e")]])
        XCTAssertEqual(item.changedExamples[2].changes.map(\.column), ["name", "price"])
        XCTAssertEqual(item.changedExamples[2].changes.map(\.new), [.text("Elderberry"), .real(5.5)])
        XCTAssertEqual(item.changedExamples[0].changes.map(\.old), [.real(2.0)])

        let tag = diff.tables[1]
        XCTAssertEqual(tag.key, ["item", "tag"], "a table without a primary key is matched on every column")
        XCTAssertEqual([tag.oldRows, tag.newRows, tag.added, tag.removed, tag.changed], [2, 2, 1, 1, 0])
        XCTAssertEqual(tag.addedExamples, [[.text("a"), .text("green")]])

        XCTAssertEqual(diff.text, """
            diff old new
              item  5 → 6         2 added, 1 removed (20%), 3 changed (60%): name ×2, price ×2
                  added: item f; item g
                  removed: item d
                  changed: item b: price 2.0 → 2.5; item c: name "Cherry" → "Cherry!"; item e: name "Elder" → "Elderberry", price 5.0 → 5.5
              tag   2 → 2         1 added, 1 removed (50%), 0 changed (0%)
                  added: tag a green
                  removed: tag b yellow
            schema: unchanged, user_version 0
            thresholds: none
            passed

            """)
    }

    func testExamplesAreLimited() throws {
        let (old, new) = try pair()
        let item = try BundleDiff.compare(old: old, new: new, examples: 1).tables[0]
        XCTAssertEqual(item.changed, 3)
        XCTAssertEqual(item.changedExamples.count, 1)
        XCTAssertEqual(item.addedExamples, [[.text("f")]])
    }

    func testThresholdsFailTheDiffPerTable() throws {
        let (old, new) = try pair()
        var thresholds = Thresholds()
        try thresholds.add(.removed, from: "20%,tag=50%", named: "--max-removed")
        XCTAssertTrue(try BundleDiff.compare(old: old, new: new, thresholds: thresholds).passed, "exactly the limit is allowed")
        try thresholds.add(.removed, from: "19%,tag=1", named: "--max-removed")
        try thresholds.add(.changed, from: "2", named: "--max-removed")
        let diff = try BundleDiff.compare(old: old, new: new, oldName: "old", newName: "new", thresholds: thresholds)
        XCTAssertFalse(diff.passed)
        XCTAssertEqual(diff.findings.map(\.message), [
            "item: 1 of 5 rows removed since old (20%), more than the 19% allowed",
            "item: 3 of 5 rows changed since old (60%), more than the 2 rows allowed",
        ])
        XCTAssertEqual(diff.findings.map(\.code), ["diff.threshold", "diff.threshold"])
        XCTAssertEqual(diff.findings.first?.provenance, Provenance(file: "new"))
        XCTAssertEqual(thresholds.summary, "removed ≤ 19% (tag ≤ 1 row); changed ≤ 2 rows")
        let lenient = try BundleDiff.compare(old: old, new: new, thresholds: thresholds, severity: ["diff.threshold": .warning])
        XCTAssertTrue(lenient.passed)
        XCTAssertEqual(lenient.findings.map(\.severity), [.warning, .warning])
    }

    func testSchemaChangesNeedANewUserVersion() throws {
        let old = try bundle("old.sqlite", "CREATE TABLE item (code TEXT PRIMARY KEY, price REAL); CREATE TABLE gone (x); INSERT INTO gone VALUES (1), (2), (3);")
        let new = try bundle("new.sqlite", "CREATE TABLE item (code TEXT PRIMARY KEY, price TEXT); CREATE TABLE fresh (y); INSERT INTO fresh VALUES (1);")
        let diff = try BundleDiff.compare(old: old, new: new, oldName: "old", newName: "new")
        XCTAssertEqual(diff.schema.map { $0.sentence(expected: "old", actual: "new") }, [
            "table fresh is in new but not in old",
            "table gone is missing in new",
            "column item.price is TEXT in new, REAL in old",
        ])
        XCTAssertEqual(diff.tables.map { [$0.name, String($0.added), String($0.removed)] }, [["fresh", "1", "0"], ["gone", "0", "3"], ["item", "0", "0"]])
        XCTAssertEqual(diff.findings.map(\.message), ["the schema changed (3 differences) but user_version is still 0: raise the manifest's schemaVersion so that apps notice"])

        let bumped = try bundle("bumped.sqlite", "CREATE TABLE item (code TEXT PRIMARY KEY, price TEXT); PRAGMA user_version = 2;")
        let next = try BundleDiff.compare(old: old, new: bumped)
        XCTAssertTrue(next.passed, next.text)
        XCTAssertEqual(next.schema.last?.sentence(expected: "old", actual: "new"), "user_version is 2 in new, 0 in old")
    }

    func testBundlesOfTwoPipelinesAndFilesThatAreNotBundles() throws {
        let (old, _) = try pair()
        let other = try bundle("other.sqlite", schema, bundle: "travel")
        XCTAssertEqual(try BundleDiff.compare(old: old, new: other, oldName: "old", newName: "other").findings.map(\.code), ["diff.bundle"])
        let text = try write("not a database", to: "text.sqlite")
        XCTAssertThrowsError(try BundleDiff.compare(old: old, new: text)) { error in
            XCTAssertTrue({ if case .validation? = error as? KilnError { return true }; return false }(), "\(error)")
            XCTAssertTrue("\(error)".contains("is not an SQLite database"), "\(error)")
        }
    }

    func testJSONHasCountsAndExamplesAsObjects() throws {
        let (old, new) = try pair()
        var thresholds = Thresholds()
        try thresholds.add(.removed, from: "10%,tag=50%", named: "--max-removed")
        let json = try BundleDiff.compare(old: old, new: new, thresholds: thresholds).json
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(document["passed"] as? Bool, false)
        let tables = try XCTUnwrap(document["tables"] as? [[String: Any]])
        XCTAssertEqual(tables[0]["added"] as? Int, 2)
        XCTAssertEqual(tables[0]["changedColumns"] as? [String: Int], ["name": 2, "price": 2])
        let examples = try XCTUnwrap(tables[0]["examples"] as? [String: Any])
        XCTAssertEqual(examples["removed"] as? [[String: String]], [["code": "d"]])
        let changed = try XCTUnwrap(examples["changed"] as? [[String: Any]])
        XCTAssertEqual(changed[0]["key"] as? [String: String], ["code": "b"])
        XCTAssertEqual((changed[0]["changes"] as? [String: [String: Double]])?["price"], ["old": 2.0, "new": 2.5])
        let limits = try XCTUnwrap(document["thresholds"] as? [String: Any])
        XCTAssertEqual(limits["maxRemoved"] as? String, "10%")
        XCTAssertEqual(limits["tables"] as? [String: [String: String]], ["tag": ["maxRemoved": "50%"]])
    }

    func testLimitsParseAndMerge() throws {
        XCTAssertEqual(RowLimit("10%"), .percent(10))
        XCTAssertEqual(RowLimit(" 2.5 % "), .percent(2.5))
        XCTAssertEqual(RowLimit("25"), .rows(25))
        XCTAssertNil(RowLimit("120%"))
        XCTAssertNil(RowLimit("ten"))
        XCTAssertTrue(RowLimit.percent(10).isExceeded(by: 2, of: 10))
        XCTAssertFalse(RowLimit.percent(10).isExceeded(by: 1, of: 10))
        XCTAssertFalse(RowLimit.percent(0).isExceeded(by: 0, of: 0))
        var refused = Thresholds()
        XCTAssertThrowsError(try refused.add(.removed, from: "10%,=5%", named: "--max-removed")) { error in
            XCTAssertEqual("\(error)", "--max-removed takes limits such as 10%, 25 or TABLE=5%, not \"=5%\"")
        }
        let manifest = Thresholds(defaults: .init(maxRemoved: .percent(10), maxChanged: .percent(20)), tables: ["t": .init(maxRemoved: .percent(5))])
        var given = Thresholds()
        try given.add(.changed, from: "50%,t=1", named: "--max-changed")
        let merged = manifest.overridden(by: given)
        XCTAssertEqual(merged.limit(.removed, for: "t"), .percent(5))
        XCTAssertEqual(merged.limit(.changed, for: "t"), .rows(1))
        XCTAssertEqual(merged.limit(.changed, for: "u"), .percent(50))
        XCTAssertEqual(merged.limit(.removed, for: "u"), .percent(10))
    }

    func testTheManifestDeclaresThresholdsAndABaseline() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        func load(_ settings: String) throws -> Manifest {
            try text.replacingOccurrences(of: "  exports: [", with: settings + "\n  exports: [").write(to: manifest, atomically: true, encoding: .utf8)
            return try ManifestLoader.load(folder.path).manifest
        }
        let loaded = try load("thresholds: { maxRemoved: \"10%\", maxChanged: 30, tables: { timetable: { maxRemoved: \"5%\" } } }, baseline: \"../previous.sqlite\",")
        XCTAssertEqual(loaded.thresholds, Thresholds(defaults: .init(maxRemoved: .percent(10), maxChanged: .rows(30)),
                                                     tables: ["timetable": .init(maxRemoved: .percent(5))]))
        XCTAssertEqual(loaded.baselineURL, temporaryDirectory.appendingPathComponent("previous.sqlite").standardizedFileURL)
        for (settings, expected) in [
            ("thresholds: { maxRemoved: \"lots\" },", "manifest error at thresholds.maxRemoved: expected a share of rows such as \"10%\" (0 to 100) or a number of rows such as 25, found \"lots\""),
            ("thresholds: { tables: { line_entry: { maxRemoved: 1 } } },", "manifest error at thresholds.tables.line_entry: no shipped table named \"line_entry\"; shipped tables: stop, line, route_stop, line_stop, timetable, line_timetable"),
            ("thresholds: { maxDropped: 1 },", "manifest error at thresholds.maxDropped: unknown key \"maxDropped\"; expected one of: maxRemoved, maxChanged, derived, tables"),
        ] {
            XCTAssertThrowsError(try load(settings)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
    }

    func testTheBuildKeepsThePreviousBundleOverAThreshold() throws {
        let previous = try patrasBundle()
        // The previous bundle had five times the timetables, so the new build removes 80% of them.
        let sql = "INSERT INTO timetable SELECT id + 1000 * k.k, days, day_mask, from_min, until_min, frequency + k.k FROM timetable, (SELECT 1 AS k UNION SELECT 2 UNION SELECT 3 UNION SELECT 4) AS k"
        let baseline = try edited(previous, "baseline.sqlite", sql)
        let before = try Data(contentsOf: previous)
        let pipeline = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("patras").path)

        var thresholds = Thresholds()
        try thresholds.add(.removed, from: "10%", named: "--max-removed")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: previous, baseline: baseline, thresholds: thresholds))
        XCTAssertFalse(outcome.built)
        XCTAssertEqual(outcome.diagnostics.filter { $0.code != "route.transfers" }.map(\.message), ["timetable: 192 of 240 rows removed since \(displayPath(baseline)) (80%), more than the 10% allowed"])
        XCTAssertNil(outcome.diagnostics.first { $0.code != "route.transfers" }?.provenance)
        XCTAssertEqual(try Data(contentsOf: previous), before, "the previous bundle was replaced")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }, [],
                       "a temporary file was left")
        XCTAssertEqual(outcome.comparison?.tables.first { $0.name == "timetable" }?.removed, 192)

        let within = try Builder.build(pipeline, options: BuildOptions(output: previous, baseline: previous, thresholds: thresholds))
        XCTAssertTrue(within.built)
        XCTAssertEqual(within.comparison?.summaryLine, "compared with \(displayPath(previous)): no row added, removed or changed")
    }

    func testAManifestBaselineThatDoesNotExistYetIsNotedAndAMissingOptionIsAnIOError() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let manifest = folder.appendingPathComponent("kiln.json5")
        try (try String(contentsOf: manifest, encoding: .utf8)).replacingOccurrences(of: "  exports: [", with: "  baseline: \"../first.sqlite\",\n  exports: [")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let pipeline = try ManifestLoader.load(folder.path)
        let output = temporaryDirectory.appendingPathComponent("first.sqlite")
        let first = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(first.built)
        XCTAssertEqual(first.diagnostics.map(\.code), ["diff.no-baseline", "route.transfers"])
        XCTAssertNil(first.comparison)
        let second = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertEqual(second.diagnostics.map(\.code), ["route.transfers"])
        XCTAssertEqual(second.comparison?.tables.count, 6)

        XCTAssertThrowsError(try Builder.build(pipeline, options: BuildOptions(output: output, baseline: temporaryDirectory.appendingPathComponent("nope.sqlite")))) { error in
            XCTAssertTrue({ if case .io? = error as? KilnError { return true }; return false }(), "\(error)")
        }
    }
}
