import Foundation
import FoundationXML
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

extension KilnTestCase {
    /// Builds raw/patras (copied into the temporary folder as `patras`) to `name` and returns the bundle.
    func patrasBundle(_ name: String = "patras.sqlite") throws -> URL {
        let folder = temporaryDirectory.appendingPathComponent("patras")
        if !FileManager.default.fileExists(atPath: folder.path) { _ = try copyRepositoryFolder("raw/patras", as: "patras") }
        let output = temporaryDirectory.appendingPathComponent(name)
        let outcome = try Builder.build(try ManifestLoader.load(folder.path), options: BuildOptions(output: output))
        XCTAssertTrue(outcome.built, outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        return output
    }

    /// A copy of `bundle` named `name`, changed by `sql` (foreign keys are not enforced while it runs).
    func edited(_ bundle: URL, _ name: String, _ sql: String) throws -> URL {
        let copy = temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: bundle, to: copy)
        let database = try Database(path: copy.path, mode: .readWrite)
        try database.execute("PRAGMA foreign_keys = OFF; " + sql)
        try database.close()
        return copy
    }
}

/// `BundleChecker` and the check report's formats.
final class CheckTests: KilnTestCase {
    private func check(_ bundle: URL, manifest: String = "patras") throws -> CheckReport {
        try BundleChecker(pipeline: try ManifestLoader.load(temporaryDirectory.appendingPathComponent(manifest).path)).check(bundle)
    }

    private func errors(_ report: CheckReport) -> [String] {
        report.diagnostics.filter { $0.severity == .error }.map { "\($0.code): \($0.message)" }
    }

    /// The table changed so that `column` has type `type`, its rows copied.
    private func retype(_ table: String, _ create: String) -> String {
        "BEGIN; CREATE TABLE old_copy AS SELECT * FROM \(table); DROP TABLE \(table); \(create); INSERT INTO \(table) SELECT * FROM old_copy; DROP TABLE old_copy; COMMIT;"
    }

    func testTheSampleBundlePassesEveryCheck() throws {
        let report = try check(try patrasBundle())
        XCTAssertTrue(report.passed, errors(report).joined(separator: "\n"))
        // The one finding: the sample's hand-placed routes miss the two-change guarantee (a warning).
        XCTAssertEqual(report.diagnostics.map(\.code), ["route.transfers"], report.text)
        XCTAssertEqual(Set(report.results.map(\.category)), Set(CheckCategory.allCases))
        XCTAssertEqual(report.results.filter { $0.category == .schema }.map(\.name),
                       ["table stop", "table line", "table route_stop", "table line_stop", "table timetable", "table line_timetable", "user_version"])
        // Rules on tables that are not shipped are listed, not failed; rules on shipped tables ran.
        XCTAssertEqual(report.notRunSummary.map { $0.components(separatedBy: " (")[0] },
                       ["table line_entry is not shipped", "table starting_point is not shipped",
                        "table stop_line_listing is not shipped", "table timetable_row is not shipped"])
        let ran = report.results.filter { $0.category == .rules && $0.notRun == nil }.map(\.name)
        XCTAssertTrue(ran.contains("coordinates on stop.latitude,longitude (rules[0])"), ran.joined(separator: "\n"))
        XCTAssertTrue(ran.contains("route.order (rules[3])"), "an SQL rule reading _file runs on the bundle")
        XCTAssertTrue(ran.contains("foreign-key on route_stop.stop_code (tables[4])"), ran.joined(separator: "\n"))
        XCTAssertEqual(report.results.first { $0.name == "line.no-route (rules[7])" }?.notRun, "table line_entry is not shipped")
    }

    func testAnEditedRowThatBreaksAForeignKeyFails() throws {
        let bundle = try edited(try patrasBundle(), "fk.sqlite", "UPDATE route_stop SET stop_code = '9999' WHERE rowid = 1")
        let report = try check(bundle)
        XCTAssertFalse(report.passed)
        // One broken key is one finding: the manifest's rule reports it, SQLite's foreign_key_check does not again.
        XCTAssertEqual(errors(report), [
            "foreign-key: route_stop.stop_code \"9999\" refers to no stop (no stop.code \"9999\")",
            "line.start-off-route: line 1.1 starts at stop 1008 (StartingPoints.txt), which its route does not visit",
        ])
        XCTAssertEqual(report.diagnostics.first?.provenance, Provenance(file: bundle.relativePath))
    }

    func testADroppedTableFails() throws {
        let report = try check(try edited(try patrasBundle(), "dropped.sqlite", "DROP TABLE line_timetable"))
        XCTAssertEqual(errors(report), [
            "schema.table: table line_timetable is missing in the bundle",
            "check.metadata: kiln_metadata records 71 rows for table line_timetable, which is missing in the bundle",
        ])
        XCTAssertEqual(report.results.first { $0.name == "foreign-key on line_timetable.line_id (tables[9])" }?.notRun,
                       "table line_timetable is missing in the bundle")
    }

    func testAChangedColumnTypeFails() throws {
        let create = "CREATE TABLE timetable (id INTEGER NOT NULL, days TEXT NOT NULL, day_mask INTEGER NOT NULL, from_min INTEGER NOT NULL, until_min INTEGER NOT NULL, frequency TEXT NOT NULL, PRIMARY KEY (id), UNIQUE (days, from_min, until_min, frequency))"
        let report = try check(try edited(try patrasBundle(), "retyped.sqlite", retype("timetable", create)))
        XCTAssertEqual(errors(report), ["schema.column: column timetable.frequency is TEXT NOT NULL in the bundle, INTEGER NOT NULL in the manifest"])
    }

    func testIndexesExtraTablesUserVersionAndConstraintsAreCompared() throws {
        let sql = "DROP INDEX stop_search_name_idx; CREATE TABLE extra (x TEXT); PRAGMA user_version = 2; "
            + retype("line_stop", "CREATE TABLE line_stop (line_id TEXT NOT NULL, stop_code TEXT NOT NULL, position INTEGER NOT NULL CHECK (position >= 0), PRIMARY KEY (line_id, stop_code), FOREIGN KEY (line_id) REFERENCES line (id), FOREIGN KEY (stop_code) REFERENCES stop (code))")
            + "CREATE INDEX line_stop_stop_code_idx ON line_stop (stop_code);"
        let report = try check(try edited(try patrasBundle(), "schema.sqlite", sql))
        XCTAssertEqual(errors(report).filter { $0.hasPrefix("schema.") }, [
            "schema.index: index stop_search_name_idx on stop is missing in the bundle",
            "schema.definition: the CREATE TABLE statement of line_stop (a CHECK constraint, collation or default) is CREATE TABLE line_stop (line_id TEXT NOT NULL, stop_code TEXT NOT NULL, position INTEGER NOT NULL CHECK (position >= 0), PRIMARY KEY (line_id, stop_code), FOREIGN KEY (line_id) REFERENCES line (id), FOREIGN KEY (stop_code) REFERENCES stop (code)) in the bundle, CREATE TABLE \"line_stop\" ( \"line_id\" TEXT NOT NULL, \"stop_code\" TEXT NOT NULL, \"position\" INTEGER NOT NULL, PRIMARY KEY (\"line_id\", \"stop_code\"), FOREIGN KEY (\"line_id\") REFERENCES \"line\" (\"id\"), FOREIGN KEY (\"stop_code\") REFERENCES \"stop\" (\"code\") ) in the manifest",
            "schema.table: table extra is in the bundle but not in the manifest",
            "schema.user-version: user_version is 2 in the bundle, 1 in the manifest",
        ])
        XCTAssertEqual(report.results.filter { $0.category == .schema && $0.failed }.map(\.name),
                       ["table stop", "table line_stop", "table extra", "user_version"])
    }

    func testMetadataAndFullTextCountsAreChecked() throws {
        let sql = "UPDATE kiln_metadata SET value = '5' WHERE key = 'rows.stop'; UPDATE kiln_metadata SET value = '2' WHERE key = 'bundle.schema_version'; DELETE FROM stop_search WHERE rowid <= 8"
        let report = try check(try edited(try patrasBundle(), "metadata.sqlite", sql))
        XCTAssertEqual(errors(report), [
            "check.full-text: full-text table stop_search holds 160 rows, but its table stop holds 168",
            "check.metadata: kiln_metadata records 5 rows for table stop, but the table holds 168",
            "check.metadata: kiln_metadata records schema version 2, but the bundle's user_version is 1",
            "check.metadata: kiln_metadata records schema version 2, but the manifest's schemaVersion is 1",
        ])
    }

    func testRulesRunAgainWithTheManifestsSeverityOverrides() throws {
        let bundle = try edited(try patrasBundle(), "rules.sqlite",
                                "UPDATE stop SET latitude = 40.5 WHERE code = '0102'; UPDATE route_stop SET position = 99 WHERE line_id = '1.1' AND position = 1")
        XCTAssertEqual(errors(try check(bundle)), [
            "coordinates: stop 0102: coordinates 40.5, 21.72433 are outside the box latitude 38.19…38.32, longitude 21.7…21.82",
            "route.order: route of line 1.1: its 20 stops are numbered 0…99; expected 0…n-1 with no gap or repeat",
        ])
        let manifest = temporaryDirectory.appendingPathComponent("patras/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "\"duplicate-row\": \"warning\",", with: "\"duplicate-row\": \"warning\", coordinates: \"warning\", \"route.order\": \"off\",")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let report = try check(bundle)
        XCTAssertTrue(report.passed, report.text)
        XCTAssertEqual(report.diagnostics.map(\.severity), [.warning, .warning])
        XCTAssertEqual(report.diagnostics.map(\.code), ["coordinates", "route.transfers"])
    }

    func testFilesThatAreNotBundlesGiveOneSentence() throws {
        let bundle = try patrasBundle()
        let data = try Data(contentsOf: bundle)
        let cases: [(URL, String)] = [
            (try write(data.prefix(data.count / 2), to: "half.sqlite"), "half.sqlite is truncated: it holds \(data.count / 2) bytes, but its header declares \(data.count / 4096) pages of 4096 bytes (\(data.count) bytes)"),
            (try write("stop;code\n", to: "text.sqlite"), "text.sqlite is not an SQLite database (it does not start with the SQLite header)"),
            (try write(Data(), to: "empty.sqlite"), "empty.sqlite is empty (0 bytes), not an SQLite database"),
            (try edited(bundle, "travel.sqlite", "UPDATE kiln_metadata SET value = 'travel' WHERE key = 'bundle.name'"),
             "travel.sqlite is a bundle of \"travel\", not of \"patras\" which \(displayPath(temporaryDirectory.appendingPathComponent("patras/kiln.json5"))) builds"),
        ]
        for (url, sentence) in cases {
            let report = try check(URL(fileURLWithPath: url.lastPathComponent, relativeTo: temporaryDirectory))
            XCTAssertFalse(report.passed)
            XCTAssertEqual(report.diagnostics.map(\.message), [sentence])
            XCTAssertEqual(report.diagnostics.map(\.code), ["check.file"])
        }
        XCTAssertThrowsError(try check(temporaryDirectory.appendingPathComponent("missing.sqlite"))) { error in
            XCTAssertTrue({ if case .io? = error as? KilnError { return true }; return false }(), "\(error)")
        }
    }

    func testJUnitIsValidXMLWithEscapedText() throws {
        let finding = Diagnostic(code: "sql", severity: .error, message: "a <b> & \"c\" \u{1} 'd'\nline two", provenance: Provenance(file: "x.sqlite"))
        let report = CheckReport(bundle: "x.sqlite", manifest: "raw/x", results: [
            CheckResult(category: .rules, name: "rule <1>", findings: [finding, Diagnostic(code: "note", severity: .info, message: "fine")]),
            CheckResult(category: .rules, name: "rule 2", notRun: "table t is not shipped"),
            CheckResult(category: .schema, name: "table t"),
        ])
        let document = try XMLDocument(data: Data(report.junit.utf8))
        let root = try XCTUnwrap(document.rootElement())
        XCTAssertEqual(root.name, "testsuites")
        XCTAssertEqual(root.attribute(forName: "tests")?.stringValue, "3")
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, "1")
        XCTAssertEqual(root.attribute(forName: "skipped")?.stringValue, "1")
        XCTAssertEqual(try document.nodes(forXPath: "//testsuite").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }, ["schema", "rules"])
        let failure = try XCTUnwrap(document.nodes(forXPath: "//testcase[@name='rule <1>']/failure").first as? XMLElement)
        XCTAssertEqual(failure.attribute(forName: "message")?.stringValue, "a <b> & \"c\" \u{FFFD} 'd'\nline two")
        XCTAssertEqual(failure.attribute(forName: "type")?.stringValue, "sql")
        XCTAssertEqual(try document.nodes(forXPath: "//testcase[@name='rule <1>']/system-out").first?.stringValue, "info: fine [note]")
        XCTAssertEqual((try document.nodes(forXPath: "//skipped").first as? XMLElement)?.attribute(forName: "message")?.stringValue,
                       "not run on a bundle: table t is not shipped")
    }

    func testGitHubAnnotationsEscapeWhatTheRunnerReserves() {
        let error = Diagnostic(code: "a,b:c", severity: .error, message: "50% done\nnext", provenance: Provenance(file: "dir,x/y:z.sqlite", line: 3))
        XCTAssertEqual(githubAnnotation(error), "::error file=dir%2Cx/y%3Az.sqlite,line=3,title=a%2Cb%3Ac::50%25 done%0Anext")
        XCTAssertEqual(githubAnnotation(Diagnostic(code: "w", severity: .warning, message: "m")), "::warning title=w::m")
        XCTAssertEqual(githubAnnotation(Diagnostic(code: "i", severity: .info, message: "m")), "::notice title=i::m")
    }

    func testJSONReportListsEveryCheck() throws {
        let report = try check(try edited(try patrasBundle(), "fk.sqlite", "UPDATE route_stop SET stop_code = '9999' WHERE rowid = 1"))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try report.json.utf8)) as? [String: Any])
        XCTAssertEqual(json["passed"] as? Bool, false)
        XCTAssertEqual(json["summary"] as? [String: Int], ["error": 2, "warning": 1, "info": 0, "notRun": 28])
        let checks = try XCTUnwrap(json["checks"] as? [[String: Any]])
        XCTAssertEqual(checks.count, report.results.count)
        let failed = checks.filter { $0["status"] as? String == "failed" }.map { $0["name"] as? String }
        XCTAssertEqual(failed, ["foreign-key on route_stop.stop_code (tables[4])", "line.start-off-route (rules[9])"])
    }

    func testAForeignKeyTheManifestDoesNotDeclareIsStillSQLitesFinding() throws {
        // A doctored bundle: a table the manifest knows gains a foreign key it does not declare, and breaks it.
        let bundle = try edited(try patrasBundle(), "doctored.sqlite", """
            PRAGMA foreign_keys = OFF; BEGIN; CREATE TABLE copy AS SELECT * FROM line; DROP TABLE line;
            CREATE TABLE line (id TEXT NOT NULL PRIMARY KEY, number INTEGER NOT NULL, variant INTEGER,
              name TEXT NOT NULL REFERENCES stop (code), sort_key TEXT NOT NULL, start_stop TEXT REFERENCES stop (code));
            INSERT INTO line SELECT * FROM copy; DROP TABLE copy; COMMIT;
            """)
        let report = try check(bundle)
        XCTAssertTrue(errors(report).contains { $0.hasPrefix("check.foreign-key: PRAGMA foreign_key_check: line ") }, errors(report).joined(separator: "\n"))
    }
}
