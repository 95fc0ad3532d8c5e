import Foundation
import KilnTestSupport
import XCTest

/// `kiln export room` on the samples with an android target (raw/patras, raw/itravel): the schema file is compared
/// with the Android bundle as Python's sqlite3 reads it (what Room's TableInfo and FtsTableInfo read when they
/// validate a pre-packaged database), and the Kotlin is compiled with kotlinc against stubs of Room's annotations.
final class RoomExportCommandTests: CLITestCase {
    /// Compares Room's schema file (argv[2]) with the bundle (argv[1]); prints one line per difference, then
    /// `checked N entities of N tables`. Affinity by SQLite's rules (datatype3 §3.1); the options of an FTS4 entity as
    /// Room's compiler spells them (FtsOptions.databaseDefinition), which FtsTableInfo compares as text with the
    /// options in the table's statement; each createSql is run in a scratch database and read back the same way.
    private static let oracle = #"""
        import json, sqlite3, sys
        db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
        schema = json.load(open(sys.argv[2], encoding="utf-8"))["database"]
        def affinity(t):
            t = t.upper()
            if "INT" in t: return "INTEGER"
            if "CHAR" in t or "CLOB" in t or "TEXT" in t: return "TEXT"
            if "BLOB" in t or t == "": return "BLOB"
            if "REAL" in t or "FLOA" in t or "DOUB" in t: return "REAL"
            return "NUMERIC"
        def columns(c, t): return [(r[1], affinity(r[2]), bool(r[3]), r[5]) for r in c.execute("PRAGMA table_info(\"%s\")" % t.replace('"', '""'))]
        def indices(c, t):
            out = []
            for r in c.execute("PRAGMA index_list(\"%s\")" % t):
                if r[3] != "c": continue
                cols = [x[2] for x in c.execute("PRAGMA index_xinfo(\"%s\")" % r[1]) if x[5] == 1]
                out.append((r[1], bool(r[2]), cols))
            return sorted(out)
        def fkeys(c, t):
            keys = {}
            for r in c.execute("PRAGMA foreign_key_list(\"%s\")" % t):
                k = keys.setdefault(r[0], [r[2], r[6], r[5], [], []])
                k[3].append(r[3]); k[4].append(r[4])
            return sorted(map(tuple, [(k[0], k[1], k[2], tuple(k[3]), tuple(k[4])) for k in keys.values()]))
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        virtual = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
        real = sorted(t for t in tables if not any(t.startswith(v + "_") for v in virtual))
        entities = {e["tableName"]: e for e in schema["entities"]}
        if sorted(entities) != real: print("tables", sorted(entities), real)
        scratch = sqlite3.connect(":memory:")
        def create(e):
            if e["tableName"] in [r[0] for r in scratch.execute("SELECT name FROM sqlite_master")]: return
            content = e.get("ftsOptions", {}).get("contentTable")
            if content: create(entities[content])
            for key in e.get("foreignKeys", []):
                if key["table"] != e["tableName"]: create(entities[key["table"]])
            scratch.execute(e["createSql"].replace("${TABLE_NAME}", e["tableName"]))
            for index in e["indices"]: scratch.execute(index["createSql"].replace("${TABLE_NAME}", e["tableName"]))
        checked = 0
        for name, e in sorted(entities.items()):
            create(e)
            fields = [(f["columnName"], f["affinity"], f["notNull"]) for f in e["fields"]]
            if "ftsVersion" in e:
                found = [r[1] for r in db.execute("PRAGMA table_info(\"%s\")" % name)]
                if [f[0] for f in fields] != found: print(name, "fts columns", fields, found)
                o = e["ftsOptions"]
                expected = set()
                if o["tokenizer"] != "simple" or o["tokenizerArgs"]: expected.add(" ".join(["tokenize=" + o["tokenizer"]] + ["`%s`" % a for a in o["tokenizerArgs"]]))
                if o["contentTable"]: expected.add("content=`%s`" % o["contentTable"])
                expected |= {"notindexed=`%s`" % c for c in o["notIndexedColumns"]}
                sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
                args = [a.strip() for a in sql[sql.index("(") + 1:sql.rindex(")")].split(", ")]
                found = {a for a in args if a.split("=")[0] in ("tokenize", "content", "notindexed", "languageid", "matchinfo", "prefix", "order", "compress", "uncompress")}
                if expected != found: print(name, "fts options", sorted(expected), sorted(found))
                if [r[1] for r in scratch.execute("PRAGMA table_info(\"%s\")" % name)] != [f[0] for f in fields]: print(name, "createSql columns")
                if o["contentTable"]:
                    content = {c[0]: c for c in columns(db, o["contentTable"])}
                    for f in fields:
                        c = content.get(f[0])
                        if c is None or (c[1], c[2]) != (f[1], f[2]): print(name, "field", f, "content column", c)
            else:
                found = columns(db, name)
                if fields != [c[:3] for c in found]: print(name, "fields", fields, found)
                key = [c[0] for c in sorted((c for c in found if c[3] > 0), key=lambda c: c[3])]
                if e["primaryKey"]["columnNames"] != key: print(name, "primary key", e["primaryKey"], key)
                mine = sorted((i["name"], i["unique"], i["columnNames"]) for i in e["indices"])
                if mine != indices(db, name): print(name, "indices", mine, indices(db, name))
                keys = sorted((k["table"], k["onDelete"], k["onUpdate"], tuple(k["columns"]), tuple(k["referencedColumns"])) for k in e["foreignKeys"])
                if keys != fkeys(db, name): print(name, "foreign keys", keys, fkeys(db, name))
                if columns(scratch, name) != found: print(name, "createSql columns", columns(scratch, name), found)
                if fkeys(scratch, name) != fkeys(db, name): print(name, "createSql foreign keys")
                if indices(scratch, name) != indices(db, name): print(name, "createSql indices")
            checked += 1
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if schema["version"] != version: print("version", schema["version"], version)
        print("checked %d entities of %d tables" % (checked, len(real)))
        """#

    /// Builds sample `name` and exports room for its main bundle path.
    private func export(_ name: String, out: String, _ extra: String...) throws -> Run {
        if !FileManager.default.fileExists(atPath: file("build/\(name).sqlite").path) {
            try copy("raw/\(name)", to: name)
            let build = try kiln("build", name, "--out", "build/\(name).sqlite", "--quiet")
            XCTAssertEqual(build.status, 0, build.stderr)
        }
        return try kiln(["export", "room", "build/\(name).sqlite", "--manifest", name, "--out", out] + extra)
    }

    private func files(under folder: String) throws -> [String: Data] {
        let root = file(folder)
        var found: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            found[String(url.path.dropFirst(root.path.count + 1))] = try Data(contentsOf: url)
        }
        return found
    }

    func testTheSchemaFileIsTheAndroidBundleAsSQLiteReadsIt() throws {
        try TestTier.requireFull("the Python oracles")
        for (name, type) in [("patras", "Patras"), ("itravel", "Itravel")] {
            let run = try export(name, out: "room-\(name)")
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("reading build/\(name).android.sqlite, the bundle of the android target\n"), run.stderr)
            let schema = "room-\(name)/schemas/\(name).\(type)Database/1.json"
            let lines = try PythonOracle.lines(ofProgram: RoomExportCommandTests.oracle, [file("build/\(name).android.sqlite").path, file(schema).path])
            XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"))
            let counts = try XCTUnwrap(lines.last?.firstMatch(of: /^checked (\d+) entities of (\d+) tables$/), lines.joined(separator: "\n"))
            XCTAssertEqual(counts.1, counts.2, name)
            XCTAssertGreaterThan(Int(counts.1) ?? 0, 5, name)
            // Same bytes again; the Kotlin names every table of the schema file.
            let again = try export(name, out: "again-\(name)")
            XCTAssertEqual(again.status, 0, again.stderr)
            let first = try files(under: "room-\(name)"), second = try files(under: "again-\(name)")
            XCTAssertEqual(first, second, name)
            let document = try XCTUnwrap(JSONSerialization.jsonObject(with: try XCTUnwrap(first["schemas/\(name).\(type)Database/1.json"])) as? [String: Any])
            let entities = try XCTUnwrap((document["database"] as? [String: Any])?["entities"] as? [[String: Any]])
            let kotlin = first.filter { $0.key.hasSuffix(".kt") }.values.map { String(decoding: $0, as: UTF8.self) }.joined()
            for entity in entities {
                XCTAssertTrue(kotlin.contains("tableName = \"\(entity["tableName"] as? String ?? "")\""), "\(entity["tableName"] ?? "")")
            }
            // The database class carries the bundle's version and its content digest as scripts/oracles/bundle_patch.py
            // defines it (the bundle's real tables, not the shadow tables behind its FTS4 tables).
            let android = file("build/\(name).android.sqlite").path
            let digest = try PythonOracle.text("bundle_patch.py", ["digest", android] + PythonOracle.lines(ofProgram: RoomExportCommandTests.realTables, [android]))
            let database = String(decoding: try XCTUnwrap(first["\(name)/\(type)Database.kt"], name), as: UTF8.self)
            XCTAssertTrue(database.contains("public const val CONTENT_DIGEST: kotlin.String = \"\(digest.trimmingCharacters(in: .newlines))\"\n"), database)
            XCTAssertTrue(database.contains("public const val SCHEMA_VERSION: kotlin.Int = 1\n"), database)
        }
    }

    /// The tables of a bundle whose rows its content digest covers: the real tables, without SQLite's own and without
    /// the shadow tables of its full-text tables.
    private static let realTables = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        virtual = [n for n, s in rows if s and s.upper().startswith("CREATE VIRTUAL TABLE")]
        shadow = {v + suffix for v in virtual for suffix in ("_content", "_segments", "_segdir", "_docsize", "_stat", "_data", "_idx", "_config")}
        for n, s in rows:
            if n not in virtual and n not in shadow and not n.startswith("sqlite_"):
                print(n)
        """

    /// Room's FTS4 entity names its content entity, its tokenizer and its unindexed columns as the bundle has them.
    func testTheFullTextEntityReadsItsTable() throws {
        let run = try export("patras", out: "room")
        XCTAssertEqual(run.status, 0, run.stderr)
        let search = try String(contentsOf: file("room/patras/StopSearch.kt"), encoding: .utf8)
        XCTAssertTrue(search.contains(#"@androidx.room.Fts4(contentEntity = Stop::class, tokenizer = "unicode61", tokenizerArgs = ["remove_diacritics=1"], notIndexed = ["code"])"#), search)
        // camelCase properties, the column's name in @ColumnInfo, the manifest's descriptions as KDoc (as the Swift export).
        let stop = try String(contentsOf: file("room/patras/Stop.kt"), encoding: .utf8)
        XCTAssertTrue(stop.contains("    /** name folded: lower case, no accents */\n    @androidx.room.ColumnInfo(name = \"search_name\", typeAffinity = androidx.room.ColumnInfo.TEXT)\n    val searchName: kotlin.String,"), stop)
        XCTAssertTrue(stop.contains("/** Bus stops. Codes are unique; names are not (several stops are called Κορίνθου). */\n@androidx.room.Entity("), stop)
        XCTAssertTrue(search.contains("    /** name folded: lower case, no accents */\n    @androidx.room.ColumnInfo(name = \"search_name\""), search)
        let routeStop = try String(contentsOf: file("room/patras/RouteStop.kt"), encoding: .utf8)
        XCTAssertTrue(routeStop.contains("    val stopCode: kotlin.String"), routeStop)
        let schema = try String(contentsOf: file("room/schemas/patras.PatrasDatabase/1.json"), encoding: .utf8)
        XCTAssertNotNil(schema.firstMatch(of: /"fieldPath": "searchName",\n *"columnName": "search_name"/), schema)
        // The pipeline folder instead of the bundle: kiln build's default bundle, the same files.
        let folder = try kiln("export", "room", "patras", "--out", "from-folder")
        XCTAssertEqual(folder.status, 0, folder.stderr)
        XCTAssertTrue(folder.stderr.hasPrefix("reading build/patras.android.sqlite, the bundle of the android target\n"), folder.stderr)
        XCTAssertEqual(try files(under: "from-folder"), try files(under: "room"))
        let database = try String(contentsOf: file("room/patras/PatrasDatabase.kt"), encoding: .utf8)
        XCTAssertTrue(database.contains(#"public const val ASSET: kotlin.String = "patras.android.sqlite""#), database)
        XCTAssertTrue(database.contains("    version = 1,\n    exportSchema = true\n"), database)
    }

    /// kotlinc type-checks the generated sources against stubs of the Room annotations they use (the signatures of
    /// androidx.room's Entity, ColumnInfo, ForeignKey, Index, Fts4, Database; RoomDatabase, Room.databaseBuilder and
    /// android.content.Context reduced to what the @Database class calls). Skipped without kotlinc.
    func testTheKotlinCompilesAgainstRoomsAnnotations() throws {
        let kotlinc = try kotlinCompiler()
        for name in ["patras", "itravel"] {
            let run = try export(name, out: "kotlin-\(name)", "--package", "gr.kiln.\(name)")
            XCTAssertEqual(run.status, 0, run.stderr)
            try compileKotlin(kotlinc, folder: "kotlin-\(name)", minimumFiles: 6)
        }
    }

    /// Keywords and the generated code's own words as table and column names (`CLITestCase.hostileNamesManifest`):
    /// the Kotlin compiles; a table whose class would be the database class, and tables whose classes differ only in
    /// case (one file each, on a file system that may ignore case), are refused naming the clash.
    func testHostileNamesCompileOrAreRefusedNamingTheClash() throws {
        try buildHostileNames("hostile")
        for (tables, message) in [
            ([("hostile_database", ["v"])], "table \"hostile_database\" would be the Kotlin class HostileDatabase, which is the database class in the generated code: rename it in the manifest"),
            ([("a_b", ["v"]), ("a__b", ["v"])], "tables \"a__b\" and \"a_b\" would both be the Kotlin class AB: rename one in the manifest"),
            ([("a_b", ["v"]), ("ab", ["v"])], "tables \"a_b\" and \"ab\" would both be the Kotlin class Ab (AB differs from it only in case): rename one in the manifest"),
        ] as [([(name: String, columns: [String])], String)] {
            let name = "clash-" + tables.map(\.name).joined(separator: "-")
            try buildHostileNames(name, manifest: CLITestCase.namesOnlyManifest(tables), inputs: [:])
            let run = try kiln("export", "room", "build/\(name).sqlite", "--manifest", name, "--out", "room-\(name)")
            XCTAssertEqual(run.status, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains(message), run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("room-\(name)").path), "nothing was written")
        }
        let kotlinc = try kotlinCompiler()
        let run = try kiln("export", "room", "build/hostile.sqlite", "--manifest", "hostile", "--out", "kotlin-hostile")
        XCTAssertEqual(run.status, 0, run.stderr)
        try compileKotlin(kotlinc, folder: "kotlin-hostile", minimumFiles: 4)
    }

    private func kotlinCompiler() throws -> String {
        try TestTier.requireFull("kotlinc")
        guard let kotlinc = ["/usr/bin/kotlinc", "/usr/local/bin/kotlinc"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("kotlinc is not installed (scripts/install-deps installs Debian's kotlin)")
        }
        return kotlinc
    }

    /// Compiles the `.kt` files under `folder` with the stubs; fails the test on an error.
    private func compileKotlin(_ kotlinc: String, folder: String, minimumFiles: Int) throws {
        let sources = try files(under: folder).keys.filter { $0.hasSuffix(".kt") }.sorted().map { file("\(folder)/" + $0).path }
        XCTAssertGreaterThanOrEqual(sources.count, minimumFiles)
        try RoomExportCommandTests.stubs.write(to: file("stubs.kt"), atomically: true, encoding: .utf8)
        try RoomExportCommandTests.contextStub.write(to: file("context.kt"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: kotlinc)
        process.arguments = [file("stubs.kt").path, file("context.kt").path] + sources + ["-d", file("classes-\(folder)").path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = err
        try process.run()
        let output = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, output)
        XCTAssertFalse(output.contains("error:"), output)
    }

    func testWrongOptionsAndAMissingAndroidBundleAreRefusedAndNothingIsWritten() throws {
        var run = try export("patras", out: "bad", "--package", "gr.in.patras")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("the Kotlin package must be names of letters, digits and underscores joined by dots, none a Kotlin keyword nor starting with a digit: not \"gr.in.patras\""), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("bad").path))
        run = try kiln("export", "swift", "build/patras.sqlite", "--manifest", "patras", "--out", "bad", "--package", "x")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("--package is an option of kiln export room, not of swift"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("bad").path))
        try FileManager.default.removeItem(at: file("build/patras.android.sqlite"))
        run = try export("patras", out: "bad")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("the manifest has an android target but build/patras.android.sqlite, its bundle, is not there: build the pipeline first"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("bad").path))
    }

    /// Without an android target the main bundle is exported, which the first line says; its FTS5 and R*Tree tables
    /// are named as left out, one line each, and every other table is an entity.
    func testWithoutAnAndroidTargetTheMainBundleIsExportedAndWhatRoomCannotDeclareIsNamed() throws {
        try TestTier.requireFull("the Python oracles")
        let run = try export("museum", out: "room")
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "the manifest has no android target: exporting for build/museum.sqlite, the main bundle (FTS5 and R*Tree tables, which Room cannot declare, are left out)")
        let virtual = try PythonOracle.lines(ofProgram: """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"):
                print(name + " " + sql.split(" USING ")[1].split("(")[0].strip().lower())
            """, [file("build/museum.sqlite").path])
        XCTAssertFalse(virtual.isEmpty)
        for entry in virtual {
            let parts = entry.split(separator: " ")
            XCTAssertTrue(lines.contains("not an entity: \(parts[0]): a virtual table of module \(parts[1]), which Room has no entity for"), run.stderr)
        }
    }

    /// The Room annotations' signatures (androidx.room, room-common) and what the @Database class calls.
    private static let stubs = """
        package androidx.room
        import kotlin.reflect.KClass
        @Target(AnnotationTarget.CLASS) annotation class Entity(val tableName: String = "", val indices: Array<Index> = [], val inheritSuperIndices: Boolean = false, val primaryKeys: Array<String> = [], val foreignKeys: Array<ForeignKey> = [], val ignoredColumns: Array<String> = [])
        @Target(AnnotationTarget.FIELD, AnnotationTarget.FUNCTION, AnnotationTarget.VALUE_PARAMETER) annotation class ColumnInfo(val name: String = "[field-name]", val typeAffinity: Int = 1, val index: Boolean = false, val collate: Int = 1, val defaultValue: String = "[value-unspecified]") {
            companion object { const val UNDEFINED = 1; const val TEXT = 2; const val INTEGER = 3; const val REAL = 4; const val BLOB = 5 }
        }
        @Target() annotation class ForeignKey(val entity: KClass<*>, val parentColumns: Array<String>, val childColumns: Array<String>, val onDelete: Int = 1, val onUpdate: Int = 1, val deferred: Boolean = false) {
            companion object { const val NO_ACTION = 1; const val RESTRICT = 2; const val SET_NULL = 3; const val SET_DEFAULT = 4; const val CASCADE = 5 }
        }
        @Target() annotation class Index(vararg val value: String, val orders: Array<Order> = [], val name: String = "", val unique: Boolean = false) {
            enum class Order { ASC, DESC }
        }
        enum class MatchInfo { FTS3, FTS4 }
        enum class FtsOrder { ASC, DESC }
        @Target(AnnotationTarget.CLASS) annotation class Fts4(val tokenizer: String = "simple", val tokenizerArgs: Array<String> = [], val contentEntity: KClass<*> = Any::class, val languageId: String = "", val matchInfo: MatchInfo = MatchInfo.FTS4, val notIndexed: Array<String> = [], val prefix: IntArray = [], val order: FtsOrder = FtsOrder.ASC)
        @Target(AnnotationTarget.CLASS) annotation class Database(val entities: Array<KClass<*>> = [], val views: Array<KClass<*>> = [], val version: Int, val exportSchema: Boolean = true)
        abstract class RoomDatabase {
            class Builder<T : RoomDatabase> { fun createFromAsset(databaseFilePath: String): Builder<T> = this; fun build(): T = throw UnsupportedOperationException() }
        }
        object Room { fun <T : RoomDatabase> databaseBuilder(context: android.content.Context, klass: Class<T>, name: String?): RoomDatabase.Builder<T> = RoomDatabase.Builder() }
        """

    /// android.content.Context, as far as the @Database class names it.
    private static let contextStub = "package android.content\nopen class Context\n"
}
