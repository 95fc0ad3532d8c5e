import Foundation
import FoundationXML
import XCTest
import KilnC
import KilnKit

extension CLITestCase {
    /// Copies raw/patras to raw/patras in the working folder and builds build/patras.sqlite with the binary.
    func buildPatras() throws {
        try copy("raw/patras", to: "raw/patras")
        let run = try kiln("build", "raw/patras", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    /// A copy of build/patras.sqlite at `name`, changed by `sql` through SQLite (foreign keys not enforced).
    func editBundle(_ name: String, _ sql: String) throws {
        try FileManager.default.copyItem(at: file("build/patras.sqlite"), to: file(name))
        let database = try Database(path: file(name).path, mode: .readWrite)
        try database.execute("PRAGMA foreign_keys = OFF; " + sql)
        try database.close()
    }
}

/// `kiln check` end to end: each broken bundle exits 1 with a sentence naming the problem.
final class CheckCommandTests: CLITestCase {
    let notRun = "not run on a bundle: table line_entry is not shipped (7 checks); table starting_point is not shipped (6 checks); table stop_line_listing is not shipped (7 checks); table timetable_row is not shipped (8 checks)\n"

    /// Builds the sample, edits a copy `name` with `sql` and checks it in `format`: the check exits 1.
    private func checkBroken(_ name: String, _ sql: String, format: String = "text") throws -> Run {
        try buildPatras()
        try editBundle(name, sql)
        let run = try kiln("check", name, "--format", format)
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        return run
    }

    func testTheSampleBundlePasses() throws {
        try buildPatras()
        let run = try kiln("check", "build/patras.sqlite")
        XCTAssertEqual(run.status, 0, run.stdout)
        XCTAssertEqual(run.stderr, "")
        XCTAssertEqual(run.stdout, """
            check build/patras.sqlite with raw/patras/kiln.json5
              file       passed (1 check)
              integrity  passed (3 checks)
              schema     passed (7 checks)
              metadata   passed (1 check)
              rules      passed (49 checks), 28 not run on a bundle
              build/patras.sqlite: warning: stop pairs needing more than two changes: 588 (the app promises at most two); the worst, stop 0304 «Ρωμαϊκό Ωδείο» and stop 2103 «Πύλη Αγίου Νικολάου», needs 4 changes [route.transfers]

            """ + notRun + "passed: 0 errors, 1 warning, 0 info\n")
    }

    func testARowEditedToBreakAForeignKeyFails() throws {
        let run = try checkBroken("fk.sqlite", "UPDATE route_stop SET stop_code = '9999' WHERE rowid = 1")
        // One broken key is one finding (it was two: [check.foreign-key] and [foreign-key]).
        XCTAssertTrue(run.stdout.contains("  integrity  passed (3 checks)\n"), run.stdout)
        XCTAssertFalse(run.stdout.contains("[check.foreign-key]"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  fk.sqlite: error: route_stop.stop_code \"9999\" refers to no stop (no stop.code \"9999\") [foreign-key]\n"), run.stdout)
        // Position 0 of line 1.1 was its start stop, so the line now starts off its route.
        XCTAssertTrue(run.stdout.contains("  fk.sqlite: error: line 1.1 starts at stop 1008 (StartingPoints.txt), which its route does not visit [line.start-off-route]\n"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("failed: 2 errors, 1 warning, 0 info\n"), run.stdout)
    }

    func testADroppedTableFails() throws {
        let run = try checkBroken("dropped.sqlite", "DROP TABLE line_timetable")
        XCTAssertTrue(run.stdout.contains("  dropped.sqlite: error: table line_timetable is missing in the bundle [schema.table]\n"), run.stdout)
    }

    func testAChangedColumnTypeFails() throws {
        let run = try checkBroken("retyped.sqlite", """
            BEGIN; CREATE TABLE copy AS SELECT * FROM timetable; DROP TABLE timetable;
            CREATE TABLE timetable (id INTEGER NOT NULL, days TEXT NOT NULL, day_mask INTEGER NOT NULL, from_min INTEGER NOT NULL,
              until_min INTEGER NOT NULL, frequency TEXT NOT NULL, PRIMARY KEY (id), UNIQUE (days, from_min, until_min, frequency));
            INSERT INTO timetable SELECT * FROM copy; DROP TABLE copy; COMMIT;
            """)
        XCTAssertTrue(run.stdout.contains("  retyped.sqlite: error: column timetable.frequency is TEXT NOT NULL in the bundle, INTEGER NOT NULL in the manifest [schema.column]\n"), run.stdout)
    }

    func testFilesThatAreNotBundlesGetOneSentence() throws {
        try buildPatras()
        let data = try Data(contentsOf: file("build/patras.sqlite"))
        try data.prefix(data.count / 2).write(to: file("half.sqlite"))
        try "name;code\n".write(to: file("text.sqlite"), atomically: true, encoding: .utf8)
        try Data().write(to: file("empty.sqlite"))
        try editBundle("travel.sqlite", "UPDATE kiln_metadata SET value = 'travel' WHERE key = 'bundle.name'")
        for (name, sentence) in [
            ("half.sqlite", "half.sqlite is truncated: it holds \(data.count / 2) bytes, but its header declares \(data.count / 4096) pages of 4096 bytes (\(data.count) bytes)"),
            ("text.sqlite", "text.sqlite is not an SQLite database (it does not start with the SQLite header)"),
            ("empty.sqlite", "empty.sqlite is empty (0 bytes), not an SQLite database"),
            ("travel.sqlite", "travel.sqlite is a bundle of \"travel\", not of \"patras\" which raw/patras/kiln.json5 builds"),
        ] {
            let run = try kiln("check", name, "--manifest", "raw/patras")
            XCTAssertEqual(run.status, 1, name)
            XCTAssertEqual(run.stdout, "check \(name) with raw/patras/kiln.json5\n  file       FAILED (1 of 1 check)\n  \(name): error: \(sentence) [check.file]\nfailed: 1 error, 0 warnings, 0 info\n")
            XCTAssertEqual(run.stderr, "")
        }
        let withoutManifest = try kiln("check", "text.sqlite")
        XCTAssertEqual(withoutManifest.status, 1)
        XCTAssertTrue(withoutManifest.stdout.contains("text.sqlite is not an SQLite database"), withoutManifest.stdout)
    }

    func testJUnitOutputIsXMLThatCIServersRead() throws {
        let run = try checkBroken("fk.sqlite", "UPDATE route_stop SET stop_code = '9999' WHERE rowid = 1", format: "junit")
        let document = try XMLDocument(data: Data(run.stdout.utf8))
        let root = try XCTUnwrap(document.rootElement())
        XCTAssertEqual(root.name, "testsuites")
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, "2")
        XCTAssertEqual(root.attribute(forName: "skipped")?.stringValue, "28")
        let suites = try document.nodes(forXPath: "/testsuites/testsuite").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        XCTAssertEqual(suites, ["file", "integrity", "schema", "metadata", "rules"])
        let failures = try document.nodes(forXPath: "//testcase[failure]").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        XCTAssertEqual(failures, ["foreign-key on route_stop.stop_code (tables[4])", "line.start-off-route (rules[9])"])
        let message = (try document.nodes(forXPath: "//testcase[@name='foreign-key on route_stop.stop_code (tables[4])']/failure").first as? XMLElement)?.attribute(forName: "message")?.stringValue
        XCTAssertEqual(message, "route_stop.stop_code \"9999\" refers to no stop (no stop.code \"9999\")")
    }

    func testGitHubAnnotations() throws {
        let run = try checkBroken("dropped.sqlite", "DROP TABLE line_timetable", format: "github")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("::error") }, [
            "::error file=dropped.sqlite,title=schema.table::table line_timetable is missing in the bundle",
            "::error file=dropped.sqlite,title=check.metadata::kiln_metadata records 71 rows for table line_timetable, which is missing in the bundle",
        ])
        XCTAssertTrue(lines.contains { $0.hasPrefix("::notice file=dropped.sqlite,title=check.not-run::not run on a bundle: table line_entry is not shipped") }, run.stdout)
        XCTAssertEqual(lines.last, "kiln check dropped.sqlite: failed (2 errors, 1 warning, 0 info)")
    }

    func testJSONFormat() throws {
        try buildPatras()
        let run = try kiln("check", "build/patras.sqlite", "--format", "json")
        XCTAssertEqual(run.status, 0)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["passed"] as? Bool, true)
        XCTAssertEqual(report["manifest"] as? String, "raw/patras/kiln.json5")
        XCTAssertEqual((report["checks"] as? [Any])?.count, 89)
    }

    func testUsageAndIOErrors() throws {
        let missing = try kiln("check", "missing.sqlite")
        XCTAssertEqual(missing.status, 74)
        XCTAssertTrue(missing.stderr.hasPrefix("Error: cannot read "), missing.stderr)

        try buildPatras()
        try FileManager.default.moveItem(at: file("build/patras.sqlite"), to: file("app.sqlite"))
        try FileManager.default.removeItem(at: file("raw"))
        let noPipeline = try kiln("check", "app.sqlite")
        XCTAssertEqual(noPipeline.status, 64)
        XCTAssertEqual(noPipeline.stderr, "Error: app.sqlite is a bundle of \"patras\", but there is no kiln.json5 here nor raw/patras/kiln.json5; give its manifest with --manifest\nUsage: kiln check BUNDLE [--manifest M] [--format text|json|junit|github]\n")

        let format = try kiln("check", "app.sqlite", "--format", "xml")
        XCTAssertEqual(format.status, 64)
        XCTAssertTrue(format.stderr.hasPrefix("Error: --format must be one of text, json, junit, github, not \"xml\""), format.stderr)

        let help = try kiln("--help")
        XCTAssertTrue(help.stdout.contains("  check     Checks a shipped bundle"), help.stdout)
        XCTAssertTrue(help.stdout.contains("  diff      Compares two versions of a bundle"), help.stdout)
    }

    /// The errors carry their file and the system's error as data; what the commands print of them stays the sentence.
    func testTypedErrorsPrintTheirSentenceAndPlaceTheirFinding() throws {
        try buildPatras()
        let missing = try kiln("check", "missing.sqlite", "--manifest", "raw/patras")
        XCTAssertEqual(missing.status, 74)
        XCTAssertEqual(missing.stderr, "Error: cannot read missing.sqlite: there is no such file\n")
        XCTAssertEqual(missing.stdout, "")
        try FileManager.default.createDirectory(at: file("folder.sqlite"), withIntermediateDirectories: true)
        let folder = try kiln("check", "folder.sqlite", "--manifest", "raw/patras")
        XCTAssertEqual(folder.status, 74)
        XCTAssertEqual(folder.stderr, "Error: folder.sqlite is a folder, not a bundle file\n")
        try "name;code\n".write(to: file("text.sqlite"), atomically: true, encoding: .utf8)
        let github = try kiln("check", "text.sqlite", "--manifest", "raw/patras", "--format", "github")
        XCTAssertEqual(github.status, 1)
        XCTAssertTrue(github.stdout.contains("::error file=text.sqlite,title=check.file::text.sqlite is not an SQLite database (it does not start with the SQLite header)\n"), github.stdout)
        let export = try kiln("export", "legacy-text", "text.sqlite", "--out", "out", "--manifest", "raw/patras")
        XCTAssertEqual(export.status, 1)
        XCTAssertEqual(export.stderr, "Error: text.sqlite is not an SQLite database (it does not start with the SQLite header)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out").path))
    }
}
