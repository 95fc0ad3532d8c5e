import Foundation
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild
import XCTest

/// `TargetCompatibility` against schemas made by SQLite itself. The facts it is held to: AOSP's dist/Android.bp
/// builds the framework SQLite with FTS3/FTS4 and without FTS5, R*Tree and JSON1; SQLite's release notes give the
/// version each feature came in (window functions 3.25.0, generated columns 3.31.0, iif() 3.32.0, RETURNING 3.35.0,
/// STRICT 3.37.0, built-in JSON 3.38.0).
final class TargetCompatibilityTests: XCTestCase {
    private let android24 = SQLiteTarget(platform: "android", release: "24", sqlite: SQLiteTargetTable.row(platform: "android", release: 24)!.sqlite,
                                         options: SQLiteTargetTable.row(platform: "android", release: 24)!.options)
    private let ownSQLite = SQLiteTarget(platform: "android", release: nil, sqlite: SQLiteVersion("3.45")!, options: SQLiteTargetTable.ownBuild)

    /// The schema SQLite stores for `statements`, run in a fresh database.
    private func schema(_ statements: [String]) throws -> [TargetCompatibility.Entry] {
        let database = try Database(path: ":memory:")
        for statement in statements { try database.execute(statement) }
        return try TargetCompatibility.entries(of: database)
    }

    func testAndroidsFrameworkSQLiteHasNeitherFTS5NorRTree() throws {
        let entries = try schema([
            "CREATE TABLE stop (code TEXT PRIMARY KEY, name TEXT)",
            "CREATE VIRTUAL TABLE stop_search USING fts5(name, code UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')",
            "CREATE VIRTUAL TABLE stop_rtree USING rtree(id, min_lat, max_lat, min_lon, max_lon)",
            "CREATE VIRTUAL TABLE old_search USING fts4(name, tokenize=unicode61)",
        ])
        let problems = TargetCompatibility.problems(entries, target: android24)
        XCTAssertEqual(problems.map(\.table), ["stop_rtree", "stop_search"], "\(problems)")
        XCTAssertEqual(problems.map(\.needs), ["SQLite built with RTREE", "SQLite built with FTS5"])
        XCTAssertEqual(problems.first?.sentence, "stop_rtree uses virtual-table module rtree, which needs SQLite built with RTREE; the target android 24 (SQLite 3.9.0) lacks it")
        XCTAssertEqual(TargetCompatibility.problems(entries, target: ownSQLite), [])
        // SQLite 3.9.0's FTS5 has no remove_diacritics 2 (3.27.0).
        let oldOwn = SQLiteTarget(platform: "android", release: nil, sqlite: SQLiteVersion(3, 20), options: SQLiteTargetTable.ownBuild)
        XCTAssertEqual(TargetCompatibility.problems(entries, target: oldOwn).map(\.feature), ["tokenizer option remove_diacritics 2"])
    }

    func testSyntaxAndFunctionsOfViewsAndTriggersAreCheckedByVersion() throws {
        let entries = try schema([
            "CREATE TABLE t (a INTEGER, b TEXT, c INTEGER GENERATED ALWAYS AS (a + 1)) STRICT",
            "CREATE TABLE log (x TEXT)",
            "CREATE VIEW ranked AS SELECT a, row_number() OVER (ORDER BY a) AS n, iif(a > 1, 'big', 'small') AS size, json_extract(b, '$.x') AS x FROM t",
            "CREATE VIEW plain AS SELECT 'iif(' AS text, upper(b) AS b, \"count\" FROM (SELECT b, 1 AS \"count\" FROM t)",
            "CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log (x) VALUES (my_function(new.b)); END",
        ])
        let features = TargetCompatibility.problems(entries, target: android24).map { "\($0.table): \($0.feature)" }
        XCTAssertEqual(features, [
            "ranked: window function (OVER)", "ranked: function row_number()", "ranked: function iif()", "ranked: function json_extract()",
            "t: STRICT table", "t: generated column",
            "t_log: function my_function()",
        ])
        // A SQLite that has them all still lacks the app's own function.
        XCTAssertEqual(TargetCompatibility.problems(entries, target: ownSQLite).map(\.feature), ["function my_function()"])
        // JSON is built in from 3.38.0 on, also where JSON1 was not enabled (Android API 34: SQLite 3.39).
        let android34 = SQLiteTarget(platform: "android", release: "34", sqlite: SQLiteVersion(3, 39), options: [.fts3, .fts4])
        XCTAssertEqual(TargetCompatibility.problems(entries, target: android34).map(\.feature), ["function my_function()"])
    }

    func testFTS4TokenizerForEachFTS5Declaration() {
        let android30 = SQLiteTarget(platform: "android", release: "30", sqlite: SQLiteVersion(3, 28), options: [.fts3, .fts4])
        XCTAssertEqual(TargetSQL.fts4Tokenizer("unicode61 remove_diacritics 2", target: android30).tokenizer, "unicode61 `remove_diacritics=2`")
        let older = TargetSQL.fts4Tokenizer("unicode61 remove_diacritics 2", target: android24)
        XCTAssertEqual(older.tokenizer, "unicode61 `remove_diacritics=1`")
        XCTAssertTrue(older.folded)
        XCTAssertEqual(TargetSQL.fts4Tokenizer("unicode61 tokenchars '-_'", target: android24).tokenizer, "unicode61 `tokenchars=-_`")
        XCTAssertEqual(TargetSQL.fts4Tokenizer("porter", target: android24).tokenizer, "porter")
        XCTAssertNotNil(TargetSQL.fts4Tokenizer("trigram", target: android24).problem)
        XCTAssertNotNil(TargetSQL.fts4Tokenizer("porter unicode61", target: android24).problem)
        XCTAssertNotNil(TargetSQL.fts4Tokenizer("unicode61 categories 'L*'", target: android24).problem)
    }

    /// The FTS4 table Kiln writes for a target is accepted by SQLite and answers like the FTS5 one.
    func testTheFTS4TableAnswersLikeTheFTS5Table() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE stop (code TEXT PRIMARY KEY, name TEXT)")
        for (code, name) in [("0110", "Ζαΐμη"), ("0200", "Πανεπιστήμιο"), ("0300", "Église Saint-Médard")] {
            try database.execute("INSERT INTO stop VALUES (\(quoteLiteral(code)), \(quoteLiteral(name)))")
        }
        let fullText = FullTextSpec(name: "stop_search", columns: ["name"], unindexed: ["code"], tokenize: "unicode61 remove_diacritics 2")
        let table = TableSpec(name: "stop", columns: [], primaryKey: ["code"], unique: [], foreignKeys: [], indexes: [], fullText: fullText, spatial: nil, query: nil, ship: true)
        try database.execute(SchemaSQL.createFullText(fullText, content: "stop").replacingOccurrences(of: "stop_search", with: "five"))
        try database.execute("INSERT INTO five (rowid, name, code) SELECT rowid, name, code FROM stop")
        try database.execute(TargetSQL.createFullText4(fullText, of: table, tokenizer: "unicode61 `remove_diacritics=2`"))
        try database.execute("INSERT INTO stop_search (stop_search) VALUES ('rebuild')")
        // unicode61 folds Latin diacritics only: Greek accents stay (Patras indexes a folded column for them).
        for word in ["Ζαΐμη", "Πανεπιστήμιο", "eglise", "EGLISE", "médard", "medard"] {
            let five = try database.rows("SELECT code FROM five WHERE five MATCH ?", [.text(word)])
            let four = try database.rows("SELECT code FROM stop_search WHERE stop_search MATCH ?", [.text(word)])
            XCTAssertEqual(four.map(\.values), five.map(\.values), word)
            XCTAssertEqual(four.count, 1, word)
        }
        try database.execute("INSERT INTO stop_search (stop_search) VALUES ('integrity-check')")
        // remove_diacritics=1 (SQLite before 3.27.0) keeps ΐ's two marks: the word is not found by its folded form.
        XCTAssertEqual(TargetSQL.wordWithSeveralDiacritics("Οδός Ζαΐμη 3"), "Ζαΐμη")
        XCTAssertNil(TargetSQL.wordWithSeveralDiacritics("Πανεπιστήμιο Église"))
        // ASCII text is skipped at once; an ASCII letter followed by two combining marks (decomposed ΐ) is not ASCII.
        XCTAssertNil(TargetSQL.wordWithSeveralDiacritics("Odos Zaimi 3, plain ASCII"))
        XCTAssertEqual(TargetSQL.wordWithSeveralDiacritics("Odos Zai\u{0308}\u{0301}mi 3"), "Zai\u{0308}\u{0301}mi")
    }

    /// Before SQLite 3.27.0 the FTS4 table folds with remove_diacritics=1: «Nguyễn» (ễ: e with circumflex and tilde)
    /// is no longer found as «nguyen». SQLite itself says so (the FTS5 table in `src` finds it, the FTS4 one not),
    /// and the conversion reports that word; «Huế» (ế: two marks too) likewise; «Patras» not.
    func testAFoldThatLosesRowsOnAnOlderTargetIsReported() throws {
        let database = try Database(path: ":memory:")
        try database.execute("ATTACH DATABASE ':memory:' AS src")
        let fullText = FullTextSpec(name: "place_search", columns: ["name"], unindexed: ["id"], tokenize: "unicode61 remove_diacritics 2")
        let table = TableSpec(name: "place", columns: [ColumnSpec(name: "id", type: .integer, notNull: true, unique: false),
                                                         ColumnSpec(name: "name", type: .text, notNull: false, unique: false)],
                              primaryKey: ["id"], unique: [], foreignKeys: [], indexes: [], fullText: fullText, spatial: nil, query: nil, ship: true)
        for schema in ["main", "src"] {
            try database.execute("CREATE TABLE \(schema).place (id INTEGER PRIMARY KEY NOT NULL, name TEXT)")
            try database.execute("INSERT INTO \(schema).place VALUES (1, 'Nguyễn Huệ'), (2, 'Patras'), (3, 'Huế')")
        }
        try database.execute("CREATE VIRTUAL TABLE src.place_search USING fts5(name, id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2', content = 'place')")
        try database.execute("INSERT INTO src.place_search (place_search) VALUES ('rebuild')")
        try database.execute(SchemaSQL.createFullText(fullText, content: "place"))
        var manifest = try ManifestLoader.load(KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras").path, resolvingInputs: false).manifest
        manifest.tables = [table]
        let (notes, problems) = try TargetSQL.convert(database, manifest: manifest, target: android24, source: "src")
        XCTAssertEqual(problems, [])
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue(notes[0].contains("2 words of place searched without accents find other rows there (first «nguyen»: 1 rows in the main bundle, 0 there)"), notes[0])
        XCTAssertEqual(try database.rows("SELECT id FROM place_search WHERE place_search MATCH 'patras'").first?.values.first, .integer(2))
    }

    func testTheTargetTableResolvesReleases() {
        XCTAssertEqual(SQLiteTargetTable.row(platform: "android", release: 29)?.sqlite, SQLiteVersion(3, 22))
        XCTAssertEqual(SQLiteTargetTable.row(platform: "android", release: 33)?.sqlite, SQLiteVersion(3, 32))
        XCTAssertNil(SQLiteTargetTable.row(platform: "android", release: 19))
        // iOS: the cited rows (docs/guide/app.md), and a release without one takes the newest row before it.
        XCTAssertEqual(SQLiteTargetTable.row(platform: "ios", release: 14)?.sqlite, SQLiteVersion(3, 30))
        XCTAssertEqual(SQLiteTargetTable.row(platform: "ios", release: 15)?.sqlite, SQLiteVersion(3, 35))
        XCTAssertEqual(SQLiteTargetTable.row(platform: "ios", release: 18)?.sqlite, SQLiteVersion(3, 39))
        XCTAssertEqual(SQLiteTargetTable.row(platform: "ios", release: 26)?.sqlite, SQLiteVersion(3, 51))
        XCTAssertTrue(SQLiteTargetTable.rows.filter { $0.platform == "ios" }.allSatisfy { $0.options.isSuperset(of: [.fts5, .rtree]) })
        XCTAssertFalse(SQLiteTargetTable.rows.filter { $0.platform == "android" }.contains { $0.options.contains(.fts5) || $0.options.contains(.rtree) })
        XCTAssertEqual(SQLiteVersion("3.8.10.2"), SQLiteVersion(3, 8, 10))
        XCTAssertNil(SQLiteVersion("3.x"))
        XCTAssertTrue(SQLiteVersion(3, 9) < SQLiteVersion(3, 10))
    }
}
