import Foundation
import XCTest
@testable import KilnC
import CSQLite
@testable import KilnBuild

/// What SQL run under `Database.changingRowsOnly` (an SQL patch, `kiln apply`) may do: change the rows of the
/// scope's tables and nothing else. Every action code SQLite's authorizer reports (sqlite.org/c3ref/c_alter_table.html)
/// is decided, and each is run as SQL against a database file: the refused ones leave it and its folder unchanged.
final class PatchScopeTests: KilnTestCase {
    private var folder: URL { temporaryDirectory }

    /// A bundle-like database: a covered table with a full-text index reading it, kiln_metadata, a table the app
    /// fills (outside the scope), an index, a view and a trigger, a temporary view and trigger.
    private func database() throws -> (Database, RowWriteScope) {
        let database = try Database(path: folder.appendingPathComponent("bundle.sqlite").path)
        try database.execute("""
            CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);
            CREATE TABLE kiln_metadata (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE notes (note TEXT);
            CREATE INDEX t_v ON t (v);
            CREATE VIEW t_view AS SELECT v FROM t;
            CREATE TRIGGER t_trigger AFTER DELETE ON t BEGIN SELECT 1; END;
            CREATE VIRTUAL TABLE t_search USING fts5(v, content='t', content_rowid='k');
            INSERT INTO t VALUES (1, 'one'), (2, 'two');
            INSERT INTO t_search (rowid, v) SELECT k, v FROM t;
            INSERT INTO kiln_metadata VALUES ('bundle.name', 'b');
            INSERT INTO notes VALUES ('the user''s');
            CREATE TEMP VIEW temp_view AS SELECT 1;
            CREATE TEMP TRIGGER temp_trigger AFTER INSERT ON notes BEGIN SELECT 1; END;
            """)
        let layout = try BundleLayout(database, userFilled: ["notes"])
        return (database, PatchKind.patchScope(layout))
    }

    /// The schema, user_version and every row of `database`, and the files of the folder.
    private func state(_ database: Database) throws -> String {
        var text = try database.rows("SELECT type, name, sql FROM sqlite_schema ORDER BY name").map { "\($0.values)" }.joined(separator: "\n")
        text += try database.rows("SELECT type, name FROM sqlite_temp_schema ORDER BY name").map { "\($0.values)" }.joined(separator: "\n")
        for table in ["t", "kiln_metadata", "notes", "t_search"] {
            text += try database.rows("SELECT * FROM \(table) ORDER BY 1").map { "\($0.values)" }.joined(separator: "\n")
        }
        text += try database.rows("PRAGMA user_version").map { "\($0.values)" }.joined()
        return text + (try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().joined(separator: ","))
    }

    func testTheScopeDecidesEveryActionCode() throws {
        let (database, scope) = try database()
        XCTAssertEqual(scope.tables, ["t", "kiln_metadata", "t_search", "t_search_config", "t_search_data", "t_search_docsize", "t_search_idx"])
        XCTAssertEqual(scope.rebuildable, ["t_search"])
        try database.close()
        // Allowed, with the arguments a patch's statements give them; every other code refused whatever its arguments.
        let allowed: [Int32: [(String?, String?, String?)]] = [
            SQLITE_INSERT: [("t", nil, "main"), ("kiln_metadata", nil, "main"), ("t_search_data", nil, "main"), ("scratch", nil, "temp"), ("sqlite_master", nil, "main")],
            SQLITE_UPDATE: [("t", "v", "main")], SQLITE_DELETE: [("t", nil, "main")],
            SQLITE_READ: [("notes", "note", "main")], SQLITE_SELECT: [(nil, nil, nil)], SQLITE_RECURSIVE: [(nil, nil, nil)],
            SQLITE_FUNCTION: [(nil, "abs", nil)], SQLITE_TRANSACTION: [("BEGIN", nil, nil)],
            SQLITE_PRAGMA: [("defer_foreign_keys", "ON", "main"), ("data_version", nil, "main"), ("page_size", nil, "main")],
            SQLITE_CREATE_TEMP_TABLE: [("scratch", nil, "temp")], SQLITE_DROP_TEMP_TABLE: [("scratch", nil, "temp")],
            SQLITE_CREATE_TEMP_INDEX: [("sqlite_autoindex_scratch_1", "scratch", "temp")], SQLITE_DROP_TEMP_INDEX: [("i", "scratch", "temp")],
            SQLITE_CREATE_VTABLE: [("t_search", "fts5", "main")], SQLITE_DROP_VTABLE: [("t_search", "fts5", "main")],
            SQLITE_CREATE_TABLE: [("t_search_data", nil, "main")], SQLITE_DROP_TABLE: [("t_search_idx", nil, "main")],
        ]
        let refused: [(Int32, String?, String?, String?)] = [
            (SQLITE_INSERT, "notes", nil, "main"), (SQLITE_UPDATE, "notes", "note", "main"), (SQLITE_DELETE, "notes", nil, "main"),
            (SQLITE_INSERT, "t", nil, "other"), (SQLITE_PRAGMA, "user_version", "7", nil), (SQLITE_PRAGMA, "writable_schema", "ON", nil), (SQLITE_PRAGMA, "page_size", "512", "main"),
            (SQLITE_CREATE_VTABLE, "other", "fts5", "main"), (SQLITE_DROP_VTABLE, "t", nil, "main"), (SQLITE_CREATE_TABLE, "t", nil, "main"),
            (SQLITE_DROP_TABLE, "t", nil, "main"), (SQLITE_CREATE_TABLE, "other_data", nil, "main"), (SQLITE_CREATE_INDEX, "i", "t", "main"),
        ]
        // SQLITE_CREATE_INDEX (1) … SQLITE_RECURSIVE (33): every code SQLite 3 reports (SQLITE_COPY, 0, is no longer used).
        for code in Int32(0)...33 {
            for (first, second, schema) in allowed[code] ?? [("t", "t", "main"), (nil, nil, nil), ("x", "y", "temp")] {
                XCTAssertEqual(scope.allows(code, first, second, schema: schema), allowed[code] != nil,
                               "action \(code) (\(SandboxState.actionName(code))) on \(first ?? "-"), \(second ?? "-") in \(schema ?? "-")")
            }
        }
        for (code, first, second, schema) in refused {
            XCTAssertFalse(scope.allows(code, first, second, schema: schema), "action \(code) on \(first ?? "-") in \(schema ?? "-")")
        }
    }

    func testRowChangesAndAFullTextRebuildRun() throws {
        let (database, scope) = try database()
        try database.changingRowsOnly(scope) {
            try database.execute("""
                BEGIN IMMEDIATE;
                PRAGMA defer_foreign_keys = ON;
                CREATE TEMP TABLE scratch (key TEXT PRIMARY KEY, value TEXT);
                INSERT INTO temp.scratch VALUES ('a', 'b');
                DROP TABLE temp.scratch;
                INSERT INTO t VALUES (3, 'three');
                UPDATE t SET v = 'uno' WHERE k = 1;
                DELETE FROM t WHERE k = 2;
                UPDATE kiln_metadata SET value = 'c' WHERE key = 'bundle.name';
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT abs(i), quote(i) FROM n;
                DROP TABLE t_search;
                CREATE VIRTUAL TABLE t_search USING fts5(v, content='t', content_rowid='k');
                INSERT INTO t_search (rowid, v) SELECT k, v FROM t ORDER BY k;
                COMMIT;
                """)
        }
        XCTAssertEqual(try database.rows("SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY k)").first?.values, [.text("uno,three")])
        XCTAssertEqual(try database.rows("SELECT rowid FROM t_search WHERE t_search MATCH 'three'").first?.values, [.integer(3)])
        XCTAssertEqual(try database.rows("SELECT value FROM kiln_metadata").first?.values, [.text("c")])
        // After the scope, the connection is as before: Kiln's own statements run.
        try database.execute("CREATE TABLE later (a)")
    }

    func testEveryOtherStatementIsRefusedBeforeItRunsAndChangesNothing() throws {
        let (database, scope) = try database()
        let before = try state(database)
        let stolen = folder.appendingPathComponent("stolen.sqlite").path
        let statements: [(String, String)] = [
            ("VACUUM INTO '\(stolen)'", "an ATTACH or VACUUM INTO"),
            ("VACUUM", "an ATTACH or VACUUM INTO"),
            ("ATTACH DATABASE '\(stolen)' AS o", "an ATTACH or VACUUM INTO"),
            ("DETACH DATABASE temp", "a DETACH (temp)"),
            ("PRAGMA user_version = 7", "a PRAGMA (user_version)"),
            ("PRAGMA writable_schema = ON", "a PRAGMA (writable_schema)"),
            ("PRAGMA journal_mode = OFF", "a PRAGMA (journal_mode)"),
            ("CREATE TABLE x (a)", "a CREATE TABLE (x)"),
            ("CREATE INDEX t_k ON t (k, v)", "a CREATE INDEX (t_k)"),
            ("CREATE VIEW v2 AS SELECT 1", "a CREATE VIEW (v2)"),
            ("CREATE TRIGGER t2 AFTER INSERT ON t BEGIN DELETE FROM notes; END", "a CREATE TRIGGER (t2)"),
            ("CREATE TEMP VIEW v3 AS SELECT 1", "a CREATE VIEW (v3)"),
            ("CREATE TEMP TRIGGER t3 AFTER INSERT ON t BEGIN SELECT 1; END", "a CREATE TRIGGER (t3)"),
            ("CREATE VIRTUAL TABLE g USING fts5(a)", "a CREATE VIRTUAL TABLE (g)"),
            ("DROP TABLE t", "a DROP TABLE (t)"),
            ("DROP TABLE notes", "a DROP TABLE (notes)"),
            ("DROP INDEX t_v", "a DROP INDEX (t_v)"),
            ("DROP VIEW t_view", "a DROP VIEW (t_view)"),
            ("DROP TRIGGER t_trigger", "a DROP TRIGGER (t_trigger)"),
            ("DROP VIEW temp.temp_view", "a DROP VIEW (temp_view)"),
            ("DROP TRIGGER temp.temp_trigger", "a DROP TRIGGER (temp_trigger)"),
            ("ALTER TABLE t ADD COLUMN w", "an ALTER TABLE (t)"),
            ("ALTER TABLE t RENAME TO u", "an ALTER TABLE (t)"),
            ("REINDEX t", "a REINDEX (t_v)"),
            ("ANALYZE", "a CREATE TABLE (sqlite_stat1)"),
            ("SAVEPOINT s", "a SAVEPOINT (s)"),
            ("INSERT INTO notes VALUES ('x')", "an INSERT (notes)"),
            ("UPDATE notes SET note = 'x'", "an UPDATE (notes)"),
            ("DELETE FROM notes", "a DELETE (notes)"),
            ("SELECT load_extension('/tmp/x')", "a call to load_extension()"),
            ("INSERT INTO t VALUES (9, random())", "a call to random(), whose result is not decided by its arguments"),
        ]
        for (sql, what) in statements {
            XCTAssertThrowsError(try database.changingRowsOnly(scope) { try database.execute(sql) }, sql) { error in
                let error = error as? SQLiteError
                XCTAssertEqual(error?.isRefused, true, sql)
                XCTAssertEqual(error?.message, "may only change rows of the database's own tables, but it holds \(what)", sql)
            }
            XCTAssertEqual(try state(database), before, sql)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: stolen))
        // SQLite's schema table is written only by SQLite itself (no writable_schema).
        XCTAssertThrowsError(try database.changingRowsOnly(scope) { try database.execute("UPDATE sqlite_master SET sql = 'x'") })
        XCTAssertEqual(try state(database), before)
    }
}
