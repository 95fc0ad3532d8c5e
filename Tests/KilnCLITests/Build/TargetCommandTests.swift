import Foundation
import KilnC
import KilnKit
import XCTest

/// The manifest's `targets` through the `kiln` binary. The oracle for the Android bundles is a sqlite3 shell built
/// with Android's platform options (scripts/android-sqlite: AOSP's flags, no FTS5, no R*Tree) running the apps' own
/// queries from the README; what it prints must equal what the system's sqlite3 prints for the main (iOS) bundle.
final class TargetCommandTests: CLITestCase {
    /// The Android-like shell, built (or found cached) by scripts/android-sqlite.
    static let androidShell: Result<String, Error> = Result {
        let run = try CLITestCase.run(CLITestCase.repositoryRoot.appendingPathComponent("scripts/android-sqlite"), [], in: CLITestCase.repositoryRoot)
        guard run.status == 0 else { throw KilnError.io("scripts/android-sqlite failed (\(run.status)): \(run.stderr)") }
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `sql` on `database` through the sqlite3 shell at `shell`; returns what it printed (errors after the rows)
    /// and its exit status.
    private func query(_ shell: String, _ database: URL, _ sql: String) throws -> (output: String, status: Int32) {
        let run = try CLITestCase.run(URL(fileURLWithPath: shell), ["-bail", database.path, sql], in: workingDirectory)
        return (run.stdout + run.stderr, run.status)
    }

    /// Builds `pipeline` (a repository folder) and runs each query on the Android bundle with the Android shell and
    /// on the main bundle with the system's sqlite3: the same rows (in any order), and at least one.
    private func assertAndroidAnswersLikeIOS(_ pipeline: String, bundle: String, queries: [String]) throws {
        let shell = try TargetCommandTests.androidShell.get()
        let folder = try copy(pipeline, to: bundle)
        let run = try kiln("build", folder.path, "--out", file("out/\(bundle).sqlite").path)
        XCTAssertEqual(run.status, 0, run.stderr)
        let main = file("out/\(bundle).sqlite"), android = file("out/\(bundle).android.sqlite")
        XCTAssertTrue(FileManager.default.fileExists(atPath: android.path), run.stdout)
        // The shell is Android's: the main bundle's FTS5 and R*Tree tables are not there for it.
        let refused = try query(shell, main, queries[0])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.output.contains("no such module"), refused.output)
        for sql in queries {
            let expected = try query("/usr/bin/sqlite3", main, sql), actual = try query(shell, android, sql)
            XCTAssertEqual(expected.status, 0, expected.output)
            XCTAssertEqual(actual.status, 0, actual.output)
            XCTAssertFalse(expected.output.isEmpty, sql)
            // Without ORDER BY, an R*Tree gives its rows in the tree's order and the bounding-box table in its index's:
            // the same rows.
            XCTAssertEqual(actual.output.split(separator: "\n").sorted(), expected.output.split(separator: "\n").sorted(), sql)
        }
        let check = try kiln("check", android.path, "--manifest", folder.path)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
    }

    /// The travel guide's map and search queries (README, "The travel-guide pipeline").
    func testTheTravelGuidesAndroidBundleAnswersTheAppsQueriesLikeTheIOSBundle() throws {
        try assertAndroidAnswersLikeIOS("raw/itravel", bundle: "itravel", queries: [
            """
            SELECT l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id
              WHERE r.min_lat >= 47.35 AND r.max_lat <= 47.45 AND r.min_lon >= 11.40 AND r.max_lon <= 11.62
              AND l.category = 'sleep' AND l.outlier = 0
            """,
            """
            SELECT p.title, p.lat, p.lon FROM page_rtree AS r JOIN page AS p ON p.id = r.id
              WHERE r.min_lat >= 45 AND r.max_lat <= 52 AND r.min_lon >= -2 AND r.max_lon <= 12
            """,
            "SELECT l.name FROM listing_search AS s JOIN listing AS l ON l.id = s.id WHERE listing_search MATCH 'eglise'",
            "SELECT l.name FROM listing_search AS s JOIN listing AS l ON l.id = s.id WHERE listing_search MATCH 'église'",
            "SELECT l.id, l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id WHERE r.min_lat >= -90 AND r.max_lat <= 90 AND r.min_lon >= -180 AND r.max_lon <= 180",
        ])
    }

    /// The Patras stop search, with and without accents (README, "Quick start" and "The Patras bundle"), and a stop
    /// whose name has a letter with two diacritics (ΐ), found through the folded `search_name` column.
    func testThePatrasAndroidBundleFindsStopsLikeTheIOSBundle() throws {
        try assertAndroidAnswersLikeIOS("raw/patras", bundle: "patras", queries: [
            "SELECT code, name FROM stop_search WHERE stop_search MATCH 'πανεπιστημιο'",
            "SELECT code, name FROM stop_search WHERE stop_search MATCH 'Πανεπιστήμιο'",
            "SELECT code, name FROM stop_search WHERE stop_search MATCH 'ΠΑΝΕΠΙΣΤΗΜΙΟ'",
            "SELECT code, name FROM stop_search WHERE stop_search MATCH 'ζαιμη'",
            "SELECT code, name FROM stop_search WHERE stop_search MATCH 'Ζαΐμη'",
        ])
    }

    /// Each target's bundle is in the build report; two builds give the same bytes; the main bundle holds no
    /// `bundle.target`, the Android one says it is Android's.
    func testTargetBundlesAreReportedAndByteDeterministic() throws {
        let folder = try copy("raw/itravel", to: "itravel")
        let first = try kiln("build", folder.path, "--out", file("a/itravel.sqlite").path)
        XCTAssertEqual(first.status, 0)
        XCTAssertTrue(first.stderr.contains("target android 24 (SQLite 3.9.0): \(file("a/itravel.android.sqlite").path)\ntarget ios 15 (SQLite 3.35.0): \(file("a/itravel.sqlite").path)\n"), first.stderr)
        XCTAssertEqual(try kiln("build", folder.path, "--out", file("b/itravel.sqlite").path).status, 0)
        XCTAssertEqual(try sha256("a/itravel.android.sqlite"), try sha256("b/itravel.android.sqlite"))
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: file("a/itravel.report.json"))) as? [String: Any]
        let targets = report?["targets"] as? [[String: String]]
        XCTAssertEqual(targets?.map { $0["target"] }, ["android", "ios"])
        XCTAssertEqual(targets?.first?["output"].map { URL(fileURLWithPath: $0).lastPathComponent }, "itravel.android.sqlite")
        XCTAssertEqual(targets?.last?["output"].map { URL(fileURLWithPath: $0).lastPathComponent }, "itravel.sqlite")
        XCTAssertEqual(targets?.map { $0["sqlite"] }, ["3.9.0", "3.35.0"])
        let android = try Database(path: file("a/itravel.android.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try android.rows("SELECT value FROM kiln_metadata WHERE key = 'bundle.target'").first?.values.first, .text("android"))
        let modules = try android.rows("SELECT sql FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE%'").compactMap { $0.values.first?.textValue }
        XCTAssertFalse(modules.contains { $0.lowercased().contains("fts5") || $0.lowercased().contains("rtree") }, "\(modules)")
        let main = try Database(path: file("a/itravel.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try main.rows("SELECT count(*) FROM kiln_metadata WHERE key = 'bundle.target'").first?.values.first, .integer(0))
    }

    /// An app that ships its own SQLite (with FTS5 and R*Tree) opens the main bundle: no second file.
    func testAnAppWithItsOwnSQLiteOpensTheMainBundle() throws {
        let folder = try copy("raw/itravel", to: "itravel")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
            .replacingOccurrences(of: #"targets: { ios: "15", android: "24" }"#, with: #"targets: { android: { sqlite: "3.45" } }"#)
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", folder.path, "--out", file("out/itravel.sqlite").path)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/itravel.android.sqlite").path))
    }

    /// A tokenizer FTS4 has no counterpart for is an error naming the table, the feature and the target; nothing is
    /// written, and the other findings are still there.
    func testAFeatureATargetLacksIsAnErrorNamingTableFeatureAndTarget() throws {
        let folder = try writePipeline("words", manifest: """
            { bundle: "words", schemaVersion: 1, targets: { android: "24" },
              tables: [{ name: "word", columns: [{ name: "id", type: "integer" }, { name: "text", type: "text" }], primaryKey: ["id"],
                         fullText: { name: "word_search", columns: ["text"], tokenize: "trigram" } }],
              sources: [{ name: "words", format: "delimited", path: "words.txt", options: { fields: ["id", "text"] },
                          columns: { id: "id", text: "text" }, into: "word" }] }
            """)
        try "1;Ελλάδα\n2;Patras\n".write(to: folder.appendingPathComponent("words.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("build", folder.path, "--out", file("out/words.sqlite").path)
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        XCTAssertTrue(run.stderr.contains("target.unsupported (error) ×1"), run.stderr)
        XCTAssertTrue(run.stderr.contains("word_search uses the FTS5 tokenizer trigram, which needs FTS5 (FTS4, which Kiln writes instead, has no counterpart); the target android 24 (SQLite 3.9.0) lacks it"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  word  2 rows"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/words.sqlite").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/words.android.sqlite").path))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file("out").path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    /// A target's bundle that would overwrite an input is refused before anything is read, the input left whole.
    func testATargetBundleNeverOverwritesAnInput() throws {
        let folder = try writePipeline("p", manifest: """
            { bundle: "b", schemaVersion: 1, targets: { android: "24" },
              tables: [{ name: "word", columns: [{ name: "id", type: "integer" }, { name: "text", type: "text" }], primaryKey: ["id"],
                         fullText: { name: "word_search", columns: ["text"] } }],
              sources: [{ name: "words", format: "delimited", path: "b.android.sqlite", options: { fields: ["id", "text"] },
                          columns: { id: "id", text: "text" }, into: "word" }] }
            """)
        let input = folder.appendingPathComponent("b.android.sqlite")
        try "1;Patras\n".write(to: input, atomically: true, encoding: .utf8)
        let run = try kiln("build", folder.path, "--out", folder.appendingPathComponent("b.sqlite").path)
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("Error: the android bundle \(folder.appendingPathComponent("b.android.sqlite").path) is the input b.android.sqlite; it would be overwritten\n"), run.stderr)
        XCTAssertEqual(try String(contentsOf: input, encoding: .utf8), "1;Patras\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("b.sqlite").path))
    }

    /// Wrong `targets` are manifest errors (exit 64) that say what is accepted.
    func testWrongTargetsAreManifestErrors() throws {
        let cases = [
            (#"{ windows: "10" }"#, "unknown target \"windows\"; targets: android, ios"),
            (#"{ android: "19" }"#, "\"19\" is not a android release Kiln knows the SQLite of (from 21 on)"),
            (#"{ android: { sqlite: "4.1" } }"#, "\"4.1\" is not a SQLite version such as \"3.45\""),
            (#"{ android: { version: "3.45" } }"#, "version"),
        ]
        for (targets, message) in cases {
            let folder = try writePipeline("t\(abs(targets.hashValue))", manifest: """
                { bundle: "t", schemaVersion: 1, targets: \(targets),
                  tables: [{ name: "a", columns: [{ name: "x", type: "text" }] }] }
                """)
            let run = try kiln("build", folder.path, "--out", file("out/t.sqlite").path)
            XCTAssertEqual(run.status, 64, targets + run.stderr)
            XCTAssertTrue(run.stderr.contains(message), targets + ": " + run.stderr)
            XCTAssertTrue(run.stderr.contains("targets"), run.stderr)
        }
    }
}
