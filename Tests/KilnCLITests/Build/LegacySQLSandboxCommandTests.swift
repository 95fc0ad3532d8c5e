import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// The legacy-SQL sandbox through the `kiln` binary: what an input's SQL computes must be decided by the input.
/// `DEFAULT (random())` in a script and a database file's view calling `random()` are errors naming the line or
/// the file (before, they ran and two builds shipped different values); multi-row `VALUES` and a statement after a
/// refused one on its line run.
final class LegacySQLSandboxCommandTests: CLITestCase {
    /// A pipeline reading `name` and the column `n` (of `type`) of `m` in `input` into `t`.
    private func pipeline(input: String, n: String = "n", type: String = "integer") throws {
        try writePipeline("p", manifest: """
            { bundle: "legacy", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "name", type: "text" }, { name: "\(n)", type: "\(type)" }] }],
              sources: [{ name: "s", format: "sqlite", path: "\(input)",
                          options: { query: "SELECT name, \(n) FROM m ORDER BY name", fields: ["name", "\(n)"] },
                          into: "t", columns: { name: "name", \(n): "\(n)" } }] }
            """)
    }

    func testAScriptsRandomDefaultIsAnErrorAndTheRestIsRead() throws {
        try pipeline(input: "legacy.sql")
        try """
            CREATE TABLE m (name TEXT CHECK (length(name) > 0), n INTEGER DEFAULT (random()));
            INSERT INTO m VALUES ('a', 1), ('b', 2);
            INSERT INTO m (name) VALUES ('c');
            DROP TABLE m; INSERT INTO m VALUES ('d', 4);

            """.write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let first = try kiln("build", "p", "--out", "one.sqlite")
        XCTAssertEqual(first.status, 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("p/legacy.sql:3: statement failed: random() is not allowed in data read from a file: its result is not decided by the input"), first.stderr)
        XCTAssertTrue(first.stderr.contains("p/legacy.sql:4: DROP TABLE is not allowed"), first.stderr)
        XCTAssertTrue(first.stderr.contains("t  3 rows"), "a, b and d were read: \(first.stderr)")
        let second = try kiln("build", "p", "--out", "two.sqlite")
        XCTAssertEqual(second.stderr.replacingOccurrences(of: "two", with: "one"), first.stderr, "the same findings every time")
    }

    /// Every statement that fills a column from its `DEFAULT (random())` is refused at its line, however the row
    /// comes (`DEFAULT VALUES`, `INSERT … SELECT`, an upsert, `REPLACE`), and the findings are the same in two builds.
    func testEveryInsertThatReachesARandomDefaultIsRefused() throws {
        try pipeline(input: "legacy.sql")
        for insert in ["INSERT INTO m DEFAULT VALUES;", "INSERT INTO m (name) SELECT 'z';", "INSERT INTO m (name) VALUES ('c') ON CONFLICT DO NOTHING;",
                       "REPLACE INTO m (name) VALUES ('c');"] {
            try "CREATE TABLE m (name TEXT DEFAULT 'x' UNIQUE, n INTEGER DEFAULT (abs(random()) % 10));\n\(insert)\n"
                .write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
            let first = try kiln("build", "p", "--out", "one.sqlite", "--quiet")
            XCTAssertEqual(first.status, 1, "\(insert): \(first.stderr)")
            XCTAssertTrue(first.stderr.contains("p/legacy.sql:2: error: statement failed: random() is not allowed in data read from a file: its result is not decided by the input"), "\(insert): \(first.stderr)")
            let second = try kiln("build", "p", "--out", "one.sqlite", "--quiet")
            XCTAssertEqual(second.stderr, first.stderr, insert)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("one.sqlite").path), insert)
        }
    }

    func testADatabaseFilesViewCallingRandomIsRefused() throws {
        try pipeline(input: "legacy.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", file("p/legacy.sqlite").path,
                             "CREATE TABLE data (name TEXT); INSERT INTO data VALUES ('a'); CREATE VIEW m AS SELECT name, random() AS n FROM data;"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("the source's query failed on legacy.sqlite: refused: it calls random(), whose result is not decided by the input"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/legacy.sqlite").path), "nothing shipped")
    }

    /// A query reading an FTS5 table of a database file (a MATCH among them) reads it: compiling FTS5's
    /// declaration asks the authorizer to UPDATE the schema table and FTS5 reads `PRAGMA data_version`, which the
    /// sandbox took for writes ("refused: UPDATE"). The rows are what Python's sqlite3 reads.
    func testAQueryOfAnFTS5TableInADatabaseFileReadsIt() throws {
        for query in ["SELECT name, n FROM m ORDER BY name", #"SELECT name, n FROM m WHERE m MATCH 'alpha OR gamma' ORDER BY name"#] {
            try writePipeline("p", manifest: """
                { bundle: "legacy", schemaVersion: 1,
                  tables: [{ name: "t", columns: [{ name: "name", type: "text" }, { name: "n", type: "text" }] }],
                  sources: [{ name: "s", format: "sqlite", path: "legacy.sqlite",
                              options: { query: "\(query.replacingOccurrences(of: "'", with: "\\'"))", fields: ["name", "n"] },
                              into: "t", columns: { name: "name", n: "n" } }] }
                """)
            try? FileManager.default.removeItem(at: file("p/legacy.sqlite"))
            try sqlite3("p/legacy.sqlite", "CREATE VIRTUAL TABLE m USING fts5(name, n); INSERT INTO m VALUES ('alpha', 'one'), ('beta', 'two'), ('gamma', 'three');")
            let run = try kiln("build", "p", "--out", "fts.sqlite", "--quiet")
            XCTAssertEqual(run.status, 0, run.stderr)
            let expected = try PythonOracle.lines(ofProgram: "import sqlite3, sys\nfor r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print('|'.join(r))",
                                                  [file("p/legacy.sqlite").path, query])
            let shipped = try PythonOracle.lines(ofProgram: "import sqlite3, sys\nfor r in sqlite3.connect(sys.argv[1]).execute('SELECT name, n FROM t ORDER BY name'): print('|'.join(r))",
                                                 [file("fts.sqlite").path])
            XCTAssertFalse(expected.isEmpty)
            XCTAssertEqual(shipped, expected, query)
        }
    }

    /// Runs the `sqlite3` shell on `path` with `sql`.
    private func sqlite3(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", file(path).path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    /// Issue 31, item 13: the clock and the time zone decide nothing that ships. `date('now')` in a DEFAULT,
    /// `julianday('now')`, `time()`, the `'localtime'` modifier and `CURRENT_DATE` are errors at their lines, the
    /// same in two builds; the deterministic calls give what Python's sqlite3 gives.
    func testTheClockAndTheTimeZoneDecideNothingInAScript() throws {
        try pipeline(input: "legacy.sql", n: "d", type: "text")
        let script = """
            CREATE TABLE m (name TEXT, d TEXT DEFAULT (date('now')));
            INSERT INTO m VALUES ('a', date('2024-02-29', '+1 year')), ('b', strftime('%Y-%m-%d %H:%M', '2024-01-01 10:30'));
            INSERT INTO m (name) VALUES ('c');
            INSERT INTO m VALUES ('d', julianday('NOW'));
            INSERT INTO m VALUES ('e', datetime('2024-01-01', 'localtime'));
            INSERT INTO m VALUES ('f', CURRENT_DATE);
            INSERT INTO m VALUES ('g', unixepoch('2024-01-01') || ' ' || julianday('2000-01-01 12:00'));
            INSERT INTO m VALUES ('h', time());

            """
        try script.write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let first = try kiln("build", "p", "--out", "one.sqlite")
        XCTAssertEqual(first.status, 1, first.stderr)
        let refused = "is not allowed in data read from a file: its result is decided by the clock or the machine's time zone, not by the input"
        for (line, call) in [(3, "date('now')"), (4, "julianday('now')"), (5, "datetime(…, 'localtime')")] {
            XCTAssertTrue(first.stderr.contains("p/legacy.sql:\(line): statement failed: \(call) \(refused)"), "\(line): \(first.stderr)")
        }
        let report = try String(contentsOf: file("one.report.json"), encoding: .utf8)
        XCTAssertTrue(report.contains("statement failed: time() \(refused)"), report)
        XCTAssertTrue(first.stderr.contains("p/legacy.sql:6: INSERT calls current_date()"), first.stderr)
        XCTAssertTrue(first.stderr.contains("t  3 rows"), first.stderr)
        let second = try kiln("build", "p", "--out", "two.sqlite")
        XCTAssertEqual(second.stderr.replacingOccurrences(of: "two", with: "one"), first.stderr, "the same findings every time")

        // Without the refused lines, the bundle holds what Python's sqlite3 computes from the same script.
        let kept = script.components(separatedBy: "\n").enumerated().filter { ![2, 3, 4, 5, 7].contains($0.offset) }.map(\.element)
        try kept.joined(separator: "\n").replacingOccurrences(of: " DEFAULT (date('now'))", with: "")
            .write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let built = try kiln("build", "p", "--quiet")
        XCTAssertEqual(built.status, 0, built.stderr)
        let program = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            if len(sys.argv) > 2: c.executescript(open(sys.argv[2]).read())
            for row in c.execute("SELECT name, d FROM " + ("m" if len(sys.argv) > 2 else "t") + " ORDER BY name"): print(row)
            """
        let expected = try PythonOracle.lines(ofProgram: program, [":memory:", file("p/legacy.sql").path])
        XCTAssertEqual(expected.count, 3)
        XCTAssertEqual(try PythonOracle.lines(ofProgram: program, [file("build/legacy.sqlite").path]), expected)
    }

    func testADatabaseFilesViewReadingTheClockIsRefused() throws {
        try pipeline(input: "legacy.sqlite")
        try sqlite3("p/legacy.sqlite", "CREATE TABLE data (name TEXT); INSERT INTO data VALUES ('a'); CREATE VIEW m AS SELECT name, julianday('now') AS n FROM data;")
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("the source's query failed on legacy.sqlite: julianday('now') is not allowed in data read from a file"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/legacy.sqlite").path), "nothing shipped")
    }

    /// Issue 31, item 11: a database whose generated column makes a 60 MB blob per row stops at the source's
    /// `seconds` (before, SQLite's progress handler saw only its own steps, and the build ran past 60 s).
    func testAGeneratedColumnOfHugeBlobsStopsAtTheTimeLimit() throws {
        // The fast tier's blobs are 6 MB and its limit half a second: one such row still costs more than the limit in
        // a debug build, and 200 of them minutes, had the limit not stopped the query.
        let (seconds, blob) = TestTier.isFast ? ("0.5", "6e6") : ("2.0", "6e7")
        try writePipeline("p", manifest: """
            { bundle: "legacy", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "integer" }, { name: "big", type: "blob" }] }],
              sources: [{ name: "s", format: "sqlite", path: "legacy.sqlite",
                          options: { query: "SELECT id, big FROM m", fields: ["id", "big"], seconds: \(seconds) },
                          into: "t", columns: { id: "id", big: "big" } }] }
            """)
        try sqlite3("p/legacy.sqlite", "CREATE TABLE m (id INTEGER, big BLOB GENERATED ALWAYS AS (zeroblob(\(blob))) VIRTUAL); "
                        + "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO m (id) SELECT i FROM n;")
        let started = Date()
        let run = try kiln("build", "p")
        // A few rows pass before the limit (each 60 MB blob is read, spelt in hexadecimal for its facts and staged):
        // about 6 s in a debug build, 40 s with the cores oversubscribed twice; without the limit, minutes.
        XCTAssertLessThan(Date().timeIntervalSince(started), 100, "stopped after the first rows")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("sql.time-limit"), run.stderr)
        XCTAssertTrue(run.stderr.contains("the source's query on legacy.sqlite ran longer than \(seconds) s (the source's \"seconds\") and was stopped after"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/legacy.sqlite").path), "nothing shipped")
    }
}
