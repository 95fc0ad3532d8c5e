import Foundation
import XCTest
import KilnC
import KilnKit

/// Every command that reads a bundle it did not build, given a doctored one: `kiln_metadata` replaced by a view that
/// never ends (every command reads the bundle's name), a shipped table replaced by one (`report --bundle` draws it), or
/// triggers that run one on every change (`patch` and `apply` change a copy). Before `BundleReadLimit`, each ran until
/// killed (`timeout 20` ended every one of them on main at 6cfb167); now each stops at the limit with one sentence
/// naming the file, the statement, the limit and how to raise it, exit 1, and writes nothing.
final class DoctoredBundleCommandTests: CLITestCase {
    /// A statement that counts forever, in constant memory.
    private static let endless = "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c)"

    /// Builds the Patras bundle `b.sqlite` and, from a copy with one stop renamed, `n.sqlite`.
    private func buildPair() throws {
        try copy("raw/patras", to: "p")
        let edited = try copy("raw/patras", to: "p2")
        let stops = edited.appendingPathComponent("StopsUTF8.txt")
        let text = try String(contentsOf: stops, encoding: .utf8)
        try text.replacingOccurrences(of: "Ακτή Δυμαίων", with: "Ακτή Δυμαίων Νέα").write(to: stops, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--out", "b.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try kiln("build", "p2", "--out", "n.sqlite", "--quiet").status, 0)
    }

    /// Copies `source` to `name` and runs `sql` on the copy.
    private func doctor(_ source: String, _ name: String, _ sql: String) throws {
        try FileManager.default.copyItem(at: file(source), to: file(name))
        let database = try Database(path: file(name).path, mode: .readWrite)
        try database.execute(sql)
        try database.close()
    }

    /// `kiln_metadata` as a view: its rows, then one more that never comes.
    private func endlessMetadata(_ source: String, _ name: String) throws {
        let database = try Database(path: file(source).path, mode: .readOnly)
        let rows = try database.rows("SELECT key, value FROM kiln_metadata").map { row in
            "SELECT \(quoteLiteral(row.values[0].textValue ?? "")), \(quoteLiteral(row.values[1].textValue ?? ""))"
        }
        try database.close()
        try doctor(source, name, "DROP TABLE kiln_metadata; CREATE VIEW kiln_metadata(key, value) AS \(rows.joined(separator: " UNION ALL ")) UNION ALL SELECT 'endless', \(Self.endless)")
    }

    /// A trigger running the endless statement after every insert, update and delete of each Patras table.
    private func endlessTriggers(_ source: String, _ name: String) throws {
        let tables = ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable", "kiln_metadata"]
        let sql = tables.flatMap { table in
            ["INSERT", "UPDATE", "DELETE"].map { "CREATE TRIGGER \"endless_\(table)_\($0)\" AFTER \($0) ON \"\(table)\" BEGIN SELECT \(Self.endless); END;" }
        }
        try doctor(source, name, sql.joined(separator: "\n"))
    }

    private func quoteLiteral(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// Runs kiln, which must stop at the limit: exit 1, the sentence naming `files` and `origin`, well within 60 s.
    private func assertStopped(_ arguments: [String], reading files: String, origin: String = "--sql-seconds 1",
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let started = Date()
        let run = try kiln(arguments)
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "stopped at the limit, not run until killed", file: file, line: line)
        XCTAssertEqual(run.status, 1, run.stderr, file: file, line: line)
        XCTAssertTrue(run.stderr.hasPrefix("Error: reading \(files) was stopped after 1 s (SQLite was running: "), run.stderr, file: file, line: line)
        XCTAssertTrue(run.stderr.contains("): a bundle Kiln did not build is read for at most 1 s per 100 MB of it (\(origin)), so that a view, trigger or generated column that never ends cannot hang the command; nothing was written. If the bundle is sound but large, or the machine slow, "),
                      run.stderr, file: file, line: line)
    }

    /// The files in the working folder, by name.
    private func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: file("").path).sorted()
    }

    func testDiffPatchExportAndCheckOfABundleWhoseMetadataNeverEndsStopAtTheLimit() throws {
        try buildPair()
        try endlessMetadata("n.sqlite", "evil.sqlite")
        let before = try listing()
        try assertStopped(["diff", "b.sqlite", "evil.sqlite", "--sql-seconds", "1"], reading: "evil.sqlite")
        try assertStopped(["patch", "evil.sqlite", "n.sqlite", "--out", "patch", "--sql-seconds", "1"], reading: "evil.sqlite")
        try assertStopped(["export", "legacy-text", "evil.sqlite", "--manifest", "p", "--out", "text", "--sql-seconds", "1"], reading: "evil.sqlite")
        try assertStopped(["export", "swift", "evil.sqlite", "--manifest", "p", "--out", "swift", "--sql-seconds", "1"], reading: "evil.sqlite")
        XCTAssertEqual(try listing(), before, "no patch, export folder or temporary file")

        // Without the option, the manifest's limits.sqlSeconds is the limit, and the sentence says how to raise it.
        let manifest = file("p/kiln.json5")
        var text = try String(contentsOf: manifest, encoding: .utf8)
        text.insert(contentsOf: " limits: { sqlSeconds: 1 },", at: text.index(after: try XCTUnwrap(text.firstIndex(of: "{"))))
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        // With --manifest, no manifest is looked for in NEW: the diff's connection to both stops.
        try assertStopped(["diff", "b.sqlite", "evil.sqlite", "--manifest", "p"], reading: "b.sqlite and evil.sqlite", origin: "limits.sqlSeconds of p/kiln.json5")
        let run = try kiln("diff", "b.sqlite", "evil.sqlite", "--manifest", "p")
        XCTAssertTrue(run.stderr.hasSuffix("raise limits.sqlSeconds in p/kiln.json5 or give --sql-seconds\n"), run.stderr)

        // kiln check reads the metadata under the manifest's limit too: a finding, not a hang.
        let started = Date()
        let check = try kiln("check", "evil.sqlite", "--manifest", "p")
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.stdout.contains("evil.sqlite: error: reading evil.sqlite took longer than 1 s (limits.sqlSeconds, per 100 MB of the bundle) and was stopped; the checks after it did not run [sql.time-limit]"), check.stdout)

        // The sound pair is compared and patched under the same limit.
        XCTAssertEqual(try kiln("diff", "b.sqlite", "n.sqlite", "--sql-seconds", "1").status, 0)
        XCTAssertEqual(try kiln("patch", "b.sqlite", "n.sqlite", "--out", "patch", "--sql-seconds", "1").status, 0)
    }

    func testPatchAndApplyStopWhenTheBundlesTriggersNeverEnd() throws {
        try buildPair()
        XCTAssertEqual(try kiln("patch", "b.sqlite", "n.sqlite", "--out", "patch").status, 0)
        try endlessTriggers("b.sqlite", "evil-old.sqlite")
        try endlessTriggers("n.sqlite", "evil-new.sqlite")
        let before = try listing()
        // The patch is applied to a copy of OLD to verify it: the copy's triggers run.
        try assertStopped(["patch", "evil-old.sqlite", "evil-new.sqlite", "--out", "evil-patch", "--sql-seconds", "1"],
                          reading: "evil-old.sqlite and evil-new.sqlite")
        // The app's copy has the content of b.sqlite (its digest is the patch's from-digest) and the triggers.
        let digest = try sha256("evil-old.sqlite")
        try assertStopped(["apply", "evil-old.sqlite", "patch/patch.sql", "--sql-seconds", "1"], reading: "evil-old.sqlite")
        XCTAssertEqual(try sha256("evil-old.sqlite"), digest, "the bundle is as it was")
        XCTAssertEqual(try listing(), before, "no patch folder, no temporary copy")
    }

    func testReportDrawingATableThatNeverEndsStopsAtTheLimit() throws {
        try buildPair()
        try doctor("b.sqlite", "evil.sqlite", "ALTER TABLE stop RENAME TO stop_rows; CREATE VIEW stop AS SELECT * FROM stop_rows WHERE \(Self.endless) > 0")
        let before = try listing()
        try assertStopped(["report", "b.report.json", "--bundle", "evil.sqlite", "--out", "page.html", "--sql-seconds", "1"], reading: "evil.sqlite")
        XCTAssertEqual(try listing(), before, "no page")
        XCTAssertEqual(try kiln("report", "b.report.json", "--bundle", "b.sqlite", "--out", "page.html", "--sql-seconds", "1").status, 0)
    }

    func testTheOptionTakesOnlySecondsAboveZero() throws {
        for value in ["0", "-1", "soon", "inf"] {
            let run = try kiln("diff", "a.sqlite", "b.sqlite", "--sql-seconds", value)
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("Error: --sql-seconds takes a number of seconds above 0, not \"\(value)\""), run.stderr)
        }
    }
}
