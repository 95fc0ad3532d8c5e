import Foundation
import XCTest
import KilnC
import KilnKit

/// The manifest's own SQL (query tables, `sql` rules, export queries) cannot make a bundle depend on the clock or on
/// chance: `random()`, `randomblob()`, `CURRENT_DATE`/`TIME`/`TIMESTAMP` and a date function given `'now'`,
/// `'localtime'` or `'utc'` are a manifest error when the manifest loads, naming the line and the function; what only
/// shows as the SQL runs (`unixepoch()` without arguments, a `'now'` the data holds) is refused then. Before, a query
/// table `SELECT v, date('now') AS w FROM t` shipped the day of the build (two builds under `faketime` at two dates
/// gave two bundles; main at 6cfb167).
final class DeterministicSQLCommandTests: CLITestCase {
    /// A pipeline `p` of one table `t` (v: the lines of in.txt) and `extra` inside the manifest's top-level object.
    @discardableResult
    private func pipeline(tables: String = "", extra: String = "") throws -> URL {
        let folder = try writePipeline("p", manifest: """
            { bundle: "clock", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }\(tables)],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
            \(extra)
            }
            """)
        try "2026-03-01\n2026-04-15\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        return folder
    }

    private func line(containing marker: String) throws -> Int {
        let lines = try String(contentsOf: file("p/kiln.json5"), encoding: .utf8).components(separatedBy: "\n")
        return (lines.firstIndex { $0.contains(marker) } ?? -1) + 1
    }

    private static let why = "is not allowed in manifest SQL: its result is decided by chance, the clock or the machine's time zone, not by the data, so two builds of the same input would differ (compare with a date the data holds, or a parameter)"

    func testSQLOfChanceOrTheClockIsAManifestErrorWhenTheManifestLoads() throws {
        let rule = { (sql: String) in #"rules: [{ code: "x", kind: "sql", sql: "\#(sql)", message: "x" }],"# }
        let query = { (sql: String) in #", { name: "u", columns: [{ name: "w", type: "text" }], query: "\#(sql)" }"# }
        let cases: [(tables: String, extra: String, marker: String, path: String, call: String)] = [
            ("", rule("SELECT _file, _line FROM t WHERE random() > 0"), "rules:", "rules[0].sql", "random()"),
            ("", rule("SELECT _file, _line FROM t WHERE length(randomblob(4)) = 4"), "rules:", "rules[0].sql", "randomblob()"),
            ("", rule("SELECT _file, _line FROM t WHERE v > CURRENT_DATE"), "rules:", "rules[0].sql", "current_date()"),
            ("", rule("SELECT _file, _line FROM t WHERE v > CURRENT_TIME"), "rules:", "rules[0].sql", "current_time()"),
            ("", rule("SELECT _file, _line FROM t WHERE v < date('now')"), "rules:", "rules[0].sql", "date(…'now'…)"),
            ("", rule("SELECT _file, _line FROM t WHERE julianday(v) < julianday(' NOW ')"), "rules:", "rules[0].sql", "julianday(…'now'…)"),
            ("", rule("SELECT _file, _line FROM t WHERE datetime(v, 'localtime') > v"), "rules:", "rules[0].sql", "datetime(…'localtime'…)"),
            ("", rule("SELECT _file, _line FROM t WHERE unixepoch(v) > unixepoch('now', 'utc')"), "rules:", "rules[0].sql", "unixepoch(…'now'…)"),
            (query("SELECT CURRENT_TIMESTAMP AS w FROM t"), "", "query:", "tables[1].query", "current_timestamp()"),
            (query("SELECT strftime('%Y', 'now') AS w FROM t"), "", "query:", "tables[1].query", "strftime(…'now'…)"),
            ("", #"exports: [{ name: "text", files: [{ path: "out.txt", format: "delimited", query: "SELECT v, datetime('now') FROM t" }] }],"#,
             "exports:", "exports[0].files[0].query", "datetime(…'now'…)"),
        ]
        for item in cases {
            try pipeline(tables: item.tables, extra: item.extra)
            for arguments in [["build", "p", "--quiet"], ["check", "b.sqlite", "--manifest", "p"]] {
                let run = try kiln(arguments)
                XCTAssertEqual(run.status, 64, "\(item.call): \(run.stderr)")
                XCTAssertEqual(run.stderr, "Error: \(shown(file("p/kiln.json5"))):\(try line(containing: item.marker)): manifest error at \(item.path): SQLite refuses \(item.path.hasPrefix("rules") ? "the rule's query" : "the query"): \(item.call) \(Self.why)\n")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("build").path), "nothing built")
        }
        // The same words inside a comment, an identifier or another literal are no call to the clock.
        try pipeline(tables: query(#"SELECT date(v) AS w FROM t AS \"now\" WHERE v <> 'nowhere' /* 'now' */ -- 'utc'\n"#))
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
    }

    /// A rule that reads the schema through pragma functions (`pragma_table_info('t')`, `pragma_index_list`,
    /// `pragma_foreign_key_list`) only reads: it runs and reports its rows. Compiling a pragma function's declaration
    /// asks the authorizer to UPDATE the schema table, which was refused as "a change to the schema".
    func testARuleReadingTheSchemaThroughAPragmaFunctionRuns() throws {
        let rule = #"rules: [{ code: "x", kind: "sql", sql: "SELECT t._file, t._line FROM t WHERE (SELECT count(*) FROM pragma_table_info('t') WHERE name = 'v') = 1 AND (SELECT count(*) FROM pragma_index_list('t')) >= 0 AND (SELECT count(*) FROM pragma_foreign_key_list('t')) = 0 AND t.v = '2026-04-15'", message: "v is there" }],"#
        try pipeline(extra: rule)
        let run = try kiln("build", "p", "--out", "b.sqlite", "--quiet")
        XCTAssertEqual(run.status, 1, "the rule's finding is an error: \(run.stderr)")
        XCTAssertTrue(run.stderr.contains("p/in.txt:2: error: v is there [x]"), run.stderr)
        XCTAssertFalse(run.stderr.contains("p/in.txt:1:"), run.stderr)
    }

    func testWhatOnlyShowsAsTheSQLRunsIsRefusedThen() throws {
        // unixepoch() without arguments reads the clock; so does a date function given the text 'now' from the data.
        try pipeline(extra: #"rules: [{ code: "x", kind: "sql", sql: "SELECT _file, _line FROM t WHERE unixepoch() > 0", message: "x" }],"#)
        var run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix("manifest error at rules[0].sql: SQLite refuses the rule's query: unixepoch() \(Self.why)\n"), run.stderr)

        try pipeline(extra: #"rules: [{ code: "x", kind: "sql", sql: "SELECT _file, _line FROM t WHERE date(v) IS NULL", message: "x" }],"#)
        try "2026-03-01\nnow\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix("manifest error at rules[0].sql: SQLite refuses the rule's query: date('now') \(Self.why)\n"), run.stderr)
    }

    func testBuildsAtTwoFakedClocksGiveTheSameBundle() throws {
        let faketime = "/usr/bin/faketime"
        guard FileManager.default.isExecutableFile(atPath: faketime) else { throw XCTSkip("faketime is not installed (scripts/install-deps)") }
        // Dates computed from the data, not the clock, in a query table and a rule.
        try pipeline(tables: #", { name: "u", columns: [{ name: "v", type: "text" }, { name: "w", type: "text" }], query: "SELECT v, date(v, '+1 month', 'start of month') AS w FROM t" }"#,
                     extra: #"rules: [{ code: "x", kind: "sql", sql: "SELECT _file, _line FROM t WHERE julianday(v) < julianday('2026-01-01')", message: "x" }],"#)
        var digests: [String] = []
        for (index, clock) in ["2020-01-01 00:00:00", "2031-07-15 12:00:00"].enumerated() {
            let run = try program(faketime, [clock, CLITestCase.executable.path, "build", "p", "--out", "b\(index).sqlite", "--quiet"])
            XCTAssertEqual(run.status, 0, run.stderr)
            digests.append(try sha256("b\(index).sqlite"))
        }
        XCTAssertEqual(digests[0], digests[1], "the clock decides nothing")
        let database = try Database(path: file("b0.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try database.rows("SELECT w FROM u ORDER BY v").map { $0.values[0].textValue }, ["2026-04-01", "2026-05-01"])

        // The clock in a query table is refused under either clock, with the same words.
        try pipeline(tables: #", { name: "u", columns: [{ name: "w", type: "text" }], query: "SELECT date('now') AS w FROM t" }"#)
        let refusals = try ["2020-01-01 00:00:00", "2031-07-15 12:00:00"].map { clock in
            try program(faketime, [clock, CLITestCase.executable.path, "build", "p", "--out", "c.sqlite", "--quiet"])
        }
        XCTAssertEqual(refusals.map(\.status), [64, 64])
        XCTAssertEqual(refusals[0].stderr, refusals[1].stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("c.sqlite").path))
    }
}
