import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// Real public inputs of the shapes that lost, shifted or refused values without a word (Tests/Fixtures/real/, each
/// with its provenance and licence), built through the `kiln` binary and compared with an independent reader.
final class RealInputsCommandTests: CLITestCase {
    private func rows(_ bundle: String, _ sql: String) throws -> [[String]] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" } }
    }

    /// The findings of a build's report, as `file:line: severity: code: message`.
    private func findings(_ report: String) throws -> [String] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return (object["diagnostics"] as? [[String: Any]] ?? []).map { finding in
            let place = [finding["file"] as? String, (finding["line"] as? Int).map(String.init)]
            return place.compactMap { $0 }.joined(separator: ":")
                + ": \(finding["severity"] as? String ?? ""): \(finding["code"] as? String ?? ""): \(finding["message"] as? String ?? "")"
        }
    }

    /// An `sqlite3 .dump` and a migration whose `CREATE INDEX` follows a comment: the indexes are created (SQLite asks
    /// for a REINDEX while filling them, which is theirs), the rows are Python's sqlite3's, and the two statements
    /// the sandbox refuses (the PRAGMA, the view) are named at their lines — never the comment before a statement.
    func testSQLScriptsWithIndexesLoadAndRefusalsQuoteTheStatement() throws {
        let folder = try copy("Tests/Fixtures/real/sql-dump-index", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let oracle = try PythonOracle.lines(ofProgram: """
            import sqlite3, sys
            for path in sys.argv[1:]:
                db = sqlite3.connect(":memory:")
                db.executescript(open(path).read())
                for name, table in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"):
                    print("index", name, table, path.rsplit("/", 1)[-1], sep="|")
                if "dump" in path:
                    for row in db.execute("SELECT id, value FROM test ORDER BY id"): print("row", *row, sep="|")
            """, [folder.appendingPathComponent("000002_route_stops.up.sql").path, folder.appendingPathComponent("file_dump.sql").path])
        XCTAssertEqual(oracle.filter { $0.hasPrefix("index|") }.count, 2)
        XCTAssertEqual(try rows("p.sqlite", "SELECT name, tbl, file FROM index_name ORDER BY file, name").map { "index|" + $0.joined(separator: "|") },
                       oracle.filter { $0.hasPrefix("index|") })
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, value FROM message ORDER BY id").map { "row|" + $0.joined(separator: "|") },
                       oracle.filter { $0.hasPrefix("row|") })
        let found = try findings("p.report.json")
        XCTAssertEqual(found.sorted(), [
            "file_dump.sql:1: warning: sql.denied: PRAGMA is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: PRAGMA foreign_keys=OFF;",
            "file_dump.sql:1: warning: sql.denied: PRAGMA is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: PRAGMA foreign_keys=OFF;",
            "file_dump.sql:8: warning: sql.denied: CREATE VIEW is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: CREATE VIEW schema as select * from sqlite_master;",
            "file_dump.sql:8: warning: sql.denied: CREATE VIEW is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: CREATE VIEW schema as select * from sqlite_master;",
        ], found.joined(separator: "\n"))
    }

    /// A refused statement after a comment is quoted and placed at its own line, not the comment's; a script's own
    /// REINDEX is still refused, also right after the `CREATE INDEX` of the index it names.
    func testARefusedStatementAfterACommentIsQuotedAtItsLine() throws {
        let folder = try copy("Tests/Fixtures/real/sql-dump-index", to: "p")
        try """
            /* a header
               over two lines */
            CREATE TABLE test (id integer primary key, value text);
            INSERT INTO test VALUES (1, 'one');
            -- rebuild the index
            CREATE INDEX test_idx ON test (value); REINDEX test_idx;
            -- drop it
            DROP INDEX test_idx;

            """.write(to: folder.appendingPathComponent("file_dump.sql"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let found = try findings("p.report.json").filter { $0.hasPrefix("file_dump.sql") }
        XCTAssertEqual(Set(found), [
            "file_dump.sql:6: warning: sql.denied: REINDEX is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: REINDEX test_idx;",
            "file_dump.sql:8: warning: sql.denied: DROP INDEX is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run); statement not run: DROP INDEX test_idx;",
        ], found.joined(separator: "\n"))
        XCTAssertEqual(try rows("p.sqlite", "SELECT name FROM index_name WHERE file = 'file_dump.sql'"), [["test_idx"]])
    }
}
