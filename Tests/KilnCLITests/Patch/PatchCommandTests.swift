import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// `kiln patch` and `kiln apply` end to end, on real edits of the sample pipelines. What a patched bundle holds is
/// compared with NEW by `scripts/oracles/bundle_patch.py` (Python's sqlite3), which also applies the SQL patch line by
/// line as an Android app would and computes the content digest from its documented definition.
final class PatchCommandTests: CLITestCase {
    private let script = "bundle_patch.py"

    /// Builds raw/patras (build/patras.sqlite) and a copy whose weekday timetables run less often, as in a summer
    /// semester (build/summer.sqlite).
    private func semesterPair() throws {
        try buildPatras()
        let timetables = try copy("raw/patras", to: "summer").appendingPathComponent("Timetables_UTF8.txt")
        var weekday = false
        var lines: [String] = []
        for line in try String(contentsOf: timetables, encoding: .utf8).components(separatedBy: "\n") {
            if line.hasPrefix("Καθημερινές") { weekday = true } else if line.first?.isNumber == false && !line.hasPrefix("Από") { weekday = false }
            let fields = line.components(separatedBy: "  ")
            if weekday, fields.count == 3, let frequency = Int(fields[2]), let longer = [10: 15, 15: 20, 20: 30][frequency] {
                lines.append("\(fields[0])  \(fields[1])  \(longer)")
            } else {
                lines.append(line)
            }
        }
        try lines.joined(separator: "\n").write(to: timetables, atomically: true, encoding: .utf8)
        let run = try kiln("build", "summer", "--out", "build/summer.sqlite", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    /// Builds raw/itravel (build/itravel.sqlite) and a copy with one listing removed and one edited (build/edited.sqlite).
    private func travelPair() throws {
        try copy("raw/itravel", to: "raw/itravel")
        XCTAssertEqual(try kiln("build", "raw/itravel", "--quiet").status, 0)
        let export = try copy("raw/itravel", to: "edited").appendingPathComponent("itravel-export.xml")
        var text = try String(contentsOf: export, encoding: .utf8)
        let removed = "* {{see | name=Brooklyn Bridge | lat=40.7061 | long=-73.9969 | content=Suspension bridge over the East River, opened in 1883.}}\n"
        let edited = "url=https://www.nps.gov/stli/ | content=The statue on Liberty Island.}}"
        XCTAssertTrue(text.contains(removed) && text.contains(edited))
        text = text.replacingOccurrences(of: removed, with: "")
            .replacingOccurrences(of: edited, with: "url=https://www.nps.gov/stli/ | hours=9AM-5PM | lat=40.6893 | content=The statue on Liberty Island, reached by ferry.}}")
        try text.write(to: export, atomically: true, encoding: .utf8)
        let run = try kiln("build", "edited", "--out", "build/edited.sqlite", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    private func manifest(_ folder: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(folder + "/update.json"))) as? [String: Any])
    }

    private func copyFile(_ from: String, _ to: String) throws {
        try FileManager.default.copyItem(at: file(from), to: file(to))
    }

    /// The oracle's rows of every table of `bundle` (and FTS5 and R*Tree), without the tables in `skip`.
    private func rows(_ bundle: String, skip: [String] = []) throws -> String {
        try PythonOracle.text(script, ["rows", file(bundle).path] + skip)
    }


    /// Without a changeset, the summary says why: here, which table has no primary key.
    func testNoChangesetSaysWhichTableHasNoKey() throws {
        try writePipeline("p", manifest: """
            { bundle: "p", schemaVersion: 1,
              tables: [{ name: "keyed", columns: [{ name: "id", type: "integer" }, { name: "v", type: "text" }], primaryKey: ["id"] },
                       { name: "loose", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "k", format: "delimited", path: "k.txt", options: { fields: ["id", "v"] }, into: "keyed", columns: { id: "id", v: "v" } },
                        { name: "l", format: "delimited", path: "l.txt", options: { fields: ["v"] }, into: "loose", columns: { v: "v" } }] }
            """)
        try "1;a\n2;b\n".write(to: file("p/k.txt"), atomically: true, encoding: .utf8)
        try "x\ny\n".write(to: file("p/l.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--out", "old.sqlite", "--quiet").status, 0)
        try "1;a\n2;c\n".write(to: file("p/k.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--out", "new.sqlite", "--quiet").status, 0)
        let run = try kiln("patch", "old.sqlite", "new.sqlite", "--out", "update", "--manifest", "p")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("no changeset: table loose has no primary key, and SQLite's session extension records only tables with one\n"), run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update/patch.changeset").path))
    }
    func testASemesterTimetableChangePatchesTheShippedBundleIntoTheNewOne() throws {
        try TestTier.requireFull("the Python oracles")
        try semesterPair()
        let run = try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        // Timetable ids come from the periods: a period whose frequency changed is another row, the others stay.
        let changed = try XCTUnwrap(JSONSerialization.jsonObject(with: PythonOracle.run("timetable_changes.py", [file("build/patras.sqlite").path, file("build/summer.sqlite").path])) as? [String: Int])
        XCTAssertTrue(run.stdout.contains("  timetable: \(changed["timetable"] ?? -1) deleted, 0 updated, \(changed["timetable_added"] ?? -1) inserted\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  line_timetable: \(changed["line_timetable"] ?? -1) deleted, 0 updated, \(changed["line_timetable_added"] ?? -1) inserted\n"), run.stdout)
        let update = try manifest("update")
        XCTAssertEqual(update["bundle"] as? String, "patras")
        XCTAssertEqual(update["schemaVersion"] as? Int, 1)
        let tables = try XCTUnwrap(update["tables"] as? [[String: Any]])
        let names = tables.compactMap { $0["name"] as? String }
        let from = try XCTUnwrap((update["from"] as? [String: Any])?["digest"] as? String)
        let to = try XCTUnwrap((update["to"] as? [String: Any])?["digest"] as? String)
        XCTAssertEqual(try PythonOracle.text(script, ["digest", file("build/patras.sqlite").path] + names), from + "\n")
        XCTAssertEqual(try PythonOracle.text(script, ["digest", file("build/summer.sqlite").path] + names), to + "\n")
        XCTAssertEqual((update["to"] as? [String: Any])?["bytes"] as? Int, try FileManager.default.attributesOfItem(atPath: file("build/summer.sqlite").path)[.size] as? Int)
        for patch in try XCTUnwrap(update["patches"] as? [[String: Any]]) {
            let name = try XCTUnwrap(patch["file"] as? String)
            XCTAssertEqual(patch["sha256"] as? String, try sha256("update/" + name))
        }
        XCTAssertEqual(Set(try XCTUnwrap(update["patches"] as? [[String: Any]]).compactMap { $0["kind"] as? String }), ["sql", "changeset"])

        // Any SQLite, one statement per line (Python's here), and kiln apply with either patch give NEW's rows.
        let expected = try rows("build/summer.sqlite")
        try copyFile("build/patras.sqlite", "android.sqlite")
        _ = try PythonOracle.text(script, ["apply-sql", file("android.sqlite").path, file("update/patch.sql").path])
        XCTAssertEqual(try rows("android.sqlite"), expected)
        for kind in ["patch.sql", "patch.changeset"] {
            try copyFile("build/patras.sqlite", kind + ".sqlite")
            let applied = try kiln("apply", kind + ".sqlite", "update/" + kind)
            XCTAssertEqual(applied.status, 0, applied.stderr)
            XCTAssertEqual(try rows(kind + ".sqlite"), expected, kind)
            XCTAssertEqual(try PythonOracle.text(script, ["digest", file(kind + ".sqlite").path] + names), to + "\n")
        }
        // The same OLD and NEW give the same bytes.
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "again").status, 0)
        for name in ["patch.sql", "patch.changeset", "update.json"] { XCTAssertEqual(try sha256("update/" + name), try sha256("again/" + name)) }
    }

    /// SQLite's changeset format (sqlite.org/sessionintro.html, "changeset format") read by Python on its own: the
    /// bytes of each table's header and changes, by table name.
    private static let changesetBytes = """
        import sys
        data = open(sys.argv[1], "rb").read()
        def varint(i):
            value = 0
            while True:
                byte = data[i]; i += 1
                value = (value << 7) | (byte & 0x7F)
                if byte < 0x80: return value, i
        def record(i, count):
            for _ in range(count):
                kind = data[i]; i += 1
                if kind in (1, 2): i += 8
                elif kind in (3, 4):
                    length, i = varint(i); i += length
            return i
        sizes, i, table, columns = {}, 0, None, 0
        while i < len(data):
            start = i
            if data[i] == 0x54:
                columns, i = varint(i + 1); i += columns
                end = data.index(0, i); table = data[i:end].decode(); i = end + 1
            else:
                operation = data[i]; i = record(i + 2, columns)
                if operation == 23: i = record(i, columns)
            sizes[table] = sizes.get(table, 0) + i - start
        for name in sorted(sizes): print(name, sizes[name])
        """

    /// Two stops renamed: the changeset is several times the SQL patch, and the summary says why — the full-text
    /// index's shadow tables, by their bytes in the changeset as Python reads its format.
    /// Builds raw/patras (build/patras.sqlite) and a copy with two stops renamed (build/renamed.sqlite).
    private func renamedPair() throws {
        try buildPatras()
        let stops = try copy("raw/patras", to: "renamed").appendingPathComponent("StopsUTF8.txt")
        var lines = try String(contentsOf: stops, encoding: .utf8).components(separatedBy: "\n")
        lines[0] = lines[0].replacingOccurrences(of: "Ακτή Δυμαίων", with: "Ακτή Δυμαίων Α")
        lines[1] = lines[1].replacingOccurrences(of: "Άγιος Ανδρέας", with: "Άγιος Ανδρέας Β")
        try lines.joined(separator: "\n").write(to: stops, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "renamed", "--out", "build/renamed.sqlite", "--quiet").status, 0)
    }

    /// `-` where kiln patch and kiln apply read one file: a bundle of kiln patch, the patch of kiln apply (with
    /// --update, matched by its SHA-256); the bundle kiln apply replaces cannot be standard input, and says why.
    func testStandardInputForPatchAndApply() throws {
        try renamedPair()
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/renamed.sqlite", "--out", "update").status, 0)
        let piped = try kilnInShell("< build/patras.sqlite", ["patch", "-", "build/renamed.sqlite", "--out", "piped"])
        XCTAssertEqual(piped.status, 0, piped.stderr)
        for name in ["patch.sql", "patch.changeset", "update.json"] { XCTAssertEqual(try sha256("piped/" + name), try sha256("update/" + name), name) }
        let twice = try kiln("patch", "-", "-", "--out", "twice")
        XCTAssertEqual(twice.status, 64)
        XCTAssertTrue(twice.stderr.hasPrefix("Error: standard input (-) can be read once; name the other bundle"), twice.stderr)

        let expected = try rows("build/renamed.sqlite")
        for kind in ["patch.sql", "patch.changeset"] {
            try copyFile("build/patras.sqlite", kind + ".sqlite")
            let applied = try kilnInShell("< update/\(kind)", ["apply", kind + ".sqlite", "-", "--update", "update/update.json"])
            XCTAssertEqual(applied.status, 0, applied.stderr)
            XCTAssertTrue(applied.stdout.hasPrefix("applied standard input (\(kind.dropFirst(6))) to \(kind).sqlite: "), applied.stdout)
            XCTAssertEqual(try rows(kind + ".sqlite"), expected, kind)
        }
        try copyFile("build/patras.sqlite", "app.sqlite")
        let before = try sha256("app.sqlite")
        var refused = try kilnInShell("< update/patch.sql", ["apply", "app.sqlite", "-"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderr.hasPrefix("Error: a patch from standard input (-) needs --update FILE: the update manifest is found beside PATCH, and standard input is beside nothing"), refused.stderr)
        refused = try kilnInShell("< app.sqlite", ["apply", "-", "update/patch.sql"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderr.hasPrefix("Error: BUNDLE cannot be standard input (-): kiln apply replaces the file itself with its patched copy"), refused.stderr)
        refused = try kilnInShell("< update/update.json", ["apply", "app.sqlite", "-", "--update", "update/update.json"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.hasPrefix("Error: standard input is none of the patches update/update.json lists (patch.sql, patch.changeset): its SHA-256 is "), refused.stderr)
        XCTAssertEqual(try sha256("app.sqlite"), before, "nothing was changed")
    }

    func testThePatchSummarySaysWhyTheChangesetIsLargerThanTheSQLPatch() throws {
        try renamedPair()
        let run = try kiln("patch", "build/patras.sqlite", "build/renamed.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("  stop: 0 deleted, 2 updated, 0 inserted\n"), run.stdout)
        let sizes = Dictionary(uniqueKeysWithValues: try PythonOracle.lines(ofProgram: PatchCommandTests.changesetBytes, [file("update/patch.changeset").path]).map { line in
            let parts = line.split(separator: " ")
            return (String(parts[0]), Int(parts[1]) ?? 0)
        })
        let total = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file("update/patch.changeset").path)[.size] as? Int)
        let sql = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file("update/patch.sql").path)[.size] as? Int)
        XCTAssertEqual(sizes.values.reduce(0, +), total, "every byte is a table's")
        let shadows = sizes.filter { $0.key.hasPrefix("stop_search_") }
        XCTAssertGreaterThan(shadows.values.reduce(0, +) * 2, total, "the index's rows are most of the changeset")
        let listed = shadows.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        XCTAssertTrue(run.stdout.contains("the changeset is \(String(format: "%.1f", Double(total) / Double(sql)))× the SQL patch: "
                                          + "\(shadows.values.reduce(0, +)) of its \(total) bytes are the rows of the search and spatial indexes' shadow tables (\(listed)), "
                                          + "which it carries as they are"), run.stdout)
        XCTAssertTrue(run.stdout.contains("apps that apply patch.sql download \(total - sql) bytes less\n"), run.stdout)
    }

    func testSearchAndRegionQueriesOnThePatchedTravelGuideGiveWhatTheNewOneGives() throws {
        try travelPair()
        let run = try kiln("patch", "build/itravel.sqlite", "build/edited.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("  listing: 1 deleted, 1 updated, 0 inserted\n"), run.stdout)
        let queries = [
            "SELECT l.id, l.name FROM listing_search AS s JOIN listing AS l ON l.id = s.id WHERE listing_search MATCH 'ferry OR bridge OR liberty OR statue'",
            "SELECT s.id, s.name, round(bm25(listing_search), 9) FROM listing_search AS s WHERE listing_search MATCH 'island OR suspension'",
            "SELECT l.id, l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id WHERE r.min_lat >= 40.6 AND r.max_lat <= 40.8 AND r.min_lon >= -74.1 AND r.max_lon <= -73.9",
            "SELECT r.* FROM listing_rtree AS r WHERE r.min_lat >= 40.689 AND r.max_lat <= 40.6895",
            "SELECT p.title FROM page_rtree AS r JOIN page AS p ON p.id = r.id WHERE r.min_lat >= 40 AND r.max_lat <= 41",
        ]
        try checkPatchedCopies(of: "build/itravel.sqlite", new: "build/edited.sqlite", queries: queries)
    }

    /// Patches copies of `old` with update/ (Python applying the SQL line by line, kiln apply with either file) and
    /// checks each against `new`: the answers to `queries`, the rows, and kiln check; returns the copies' names.
    @discardableResult
    private func checkPatchedCopies(of old: String, new: String, queries: [String]) throws -> [String] {
        let expected = try PythonOracle.text(script, ["search", file(new).path] + queries)
        XCTAssertNotEqual(try PythonOracle.text(script, ["search", file(old).path] + queries), expected, "the edits change the answers")
        try copyFile(old, "python.sqlite")
        _ = try PythonOracle.text(script, ["apply-sql", file("python.sqlite").path, file("update/patch.sql").path])
        for kind in ["sql", "changeset"] {
            try copyFile(old, kind + ".sqlite")
            let applied = try kiln("apply", kind + ".sqlite", "update/patch." + kind)
            XCTAssertEqual(applied.status, 0, applied.stderr)
        }
        let copies = ["python.sqlite", "sql.sqlite", "changeset.sqlite"]
        for bundle in copies {
            XCTAssertEqual(try PythonOracle.text(script, ["search", file(bundle).path] + queries), expected, bundle)
            XCTAssertEqual(try rows(bundle), try rows(new), bundle)
            let check = try kiln("check", bundle, "--manifest", "edited")
            XCTAssertEqual(check.status, 0, check.stdout)
        }
        return copies
    }

    /// The Android bundles (an FTS4 table reading its text from listing, bounding-box tables instead of R*Trees) patch
    /// like the main ones: OLD patched by either file, or by Python applying the SQL line by line, answers the search
    /// and region queries as NEW does and holds NEW's rows.
    func testTheAndroidBundlesPatchIntoTheNewOne() throws {
        try TestTier.requireFull("the Python oracles")
        try travelPair()
        let run = try kiln("patch", "build/itravel.android.sqlite", "build/edited.android.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("  listing: 1 deleted, 1 updated, 0 inserted\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  listing_search: 2 deleted, 0 updated, 1 inserted\n"), run.stdout)
        let queries = [
            "SELECT l.id, l.name FROM listing_search AS s JOIN listing AS l ON l.id = s.id WHERE listing_search MATCH 'ferry OR bridge OR liberty OR statue' ORDER BY l.id",
            "SELECT s.docid, s.description FROM listing_search AS s WHERE listing_search MATCH 'island OR suspension' ORDER BY s.docid",
            "SELECT l.id, l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id WHERE r.min_lat >= 40.6 AND r.max_lat <= 40.8 AND r.min_lon >= -74.1 AND r.max_lon <= -73.9 ORDER BY l.id",
        ]
        for bundle in try checkPatchedCopies(of: "build/itravel.android.sqlite", new: "build/edited.android.sqlite", queries: queries) {
            let integrity = try PythonOracle.lines(ofProgram: "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\ndb.execute(\"INSERT INTO listing_search (listing_search) VALUES ('integrity-check')\")\nprint('ok')", [file(bundle).path])
            XCTAssertEqual(integrity, ["ok"], bundle)
        }
    }

    func testChainedPatchesGiveTheLastVersionAndAPatchAppliedTwiceIsRefused() throws {
        try TestTier.requireFull("the Python oracles")
        try semesterPair()
        try copyFile("build/summer.sqlite", "v3.sqlite")
        let database = try Database(path: file("v3.sqlite").path, mode: .readWrite)
        // The search table reads the stop table (external content): FTS5 indexes the edited name again ('rebuild').
        try database.execute("UPDATE stop SET name = 'Ακτή Δυμαίων (νέα)' WHERE code = '0102'; INSERT INTO stop_search (stop_search) VALUES ('rebuild'); UPDATE kiln_metadata SET value = 'v3' WHERE key = 'kiln.version'")
        try database.close()
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "v1-v2").status, 0)
        XCTAssertEqual(try kiln("patch", "build/summer.sqlite", "v3.sqlite", "--out", "v2-v3").status, 0)
        try copyFile("build/patras.sqlite", "app.sqlite")
        let early = try kiln("apply", "app.sqlite", "v2-v3/patch.sql")
        XCTAssertEqual(early.status, 1)
        XCTAssertTrue(early.stderr.contains("app.sqlite is not the version v2-v3/patch.sql starts from"), early.stderr)
        XCTAssertEqual(try sha256("app.sqlite"), try sha256("build/patras.sqlite"), "nothing changed")
        XCTAssertEqual(try kiln("apply", "app.sqlite", "v1-v2/patch.sql").status, 0)
        let twice = try kiln("apply", "app.sqlite", "v1-v2/patch.sql")
        XCTAssertEqual(twice.status, 1)
        XCTAssertTrue(twice.stderr.contains(": the patch is already applied; nothing was changed"), twice.stderr)
        XCTAssertEqual(try kiln("apply", "app.sqlite", "v2-v3/patch.sql").status, 0)
        XCTAssertEqual(try rows("app.sqlite"), try rows("v3.sqlite"))
        // The SQL patch checks OLD's metadata itself: run twice outside Kiln, it fails and changes nothing.
        try copyFile("v3.sqlite", "again.sqlite")
        let before = try rows("again.sqlite")
        XCTAssertThrowsError(try PythonOracle.run(script, ["apply-sql", file("again.sqlite").path, file("v2-v3/patch.sql").path]))
        XCTAssertEqual(try rows("again.sqlite"), before)
    }

    func testAPatchThatDoesNotApplyIsAnErrorAndAnOlderKilnsFullTextTableNeedsTheFullBundle() throws {
        try buildPatras()
        // NEW breaks a foreign key: applied to a copy of OLD with foreign keys enforced, as apps may, the patch fails.
        try editBundle("broken.sqlite", "DELETE FROM timetable WHERE id = (SELECT min(timetable_id) FROM line_timetable)")
        let broken = try kiln("patch", "build/patras.sqlite", "broken.sqlite", "--out", "update")
        XCTAssertEqual(broken.status, 1)
        XCTAssertEqual(broken.stderr, "Error: no patch: the SQL patch does not apply to a copy of build/patras.sqlite (FOREIGN KEY constraint failed); nothing was written\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update").path))
        // OLD as a Kiln before issue 26 wrote it: the search table with its own copy of the text. Its definition
        // changed: no patch, the app downloads the full bundle once.
        try editBundle("older.sqlite", """
            DROP TABLE stop_search;
            CREATE VIRTUAL TABLE stop_search USING fts5("name", "search_name", "code" UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
            INSERT INTO stop_search (rowid, name, search_name, code) SELECT rowid, name, search_name, code FROM stop ORDER BY rowid;
            UPDATE kiln_metadata SET value = 'older' WHERE key = 'kiln.version'
            """)
        let older = try kiln("patch", "older.sqlite", "build/patras.sqlite", "--out", "update")
        XCTAssertEqual(older.status, 1, older.stderr)
        XCTAssertEqual(older.stderr, "Error: no patch: the schema changed (stop_search) although the schema version is still 1; the app must download the full bundle (build/patras.sqlite: \(try size("build/patras.sqlite")) bytes)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update").path))
    }

    func testTextInAnotherUnicodeNormalizationIsAChange() throws {
        try buildPatras()
        // «Ακτή» with ή decomposed (η + combining acute): equal as Swift strings, different bytes in the bundle.
        try editBundle("nfd.sqlite", "UPDATE stop SET name = replace(name, '\u{03AE}', '\u{03B7}\u{0301}') WHERE code = '0102'; INSERT INTO stop_search (stop_search) VALUES ('rebuild'); UPDATE kiln_metadata SET value = 'nfd' WHERE key = 'kiln.version'")
        let run = try kiln("patch", "build/patras.sqlite", "nfd.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("  stop: 0 deleted, 1 updated, 0 inserted\n"), run.stdout)
        try copyFile("build/patras.sqlite", "app.sqlite")
        _ = try PythonOracle.text(script, ["apply-sql", file("app.sqlite").path, file("update/patch.sql").path])
        XCTAssertEqual(try rows("app.sqlite"), try rows("nfd.sqlite"))
        XCTAssertNotEqual(try rows("app.sqlite"), try rows("build/patras.sqlite"))
    }

    func testTheUsersRowsInAUserFilledTableSurviveAndNoPatchTouchesIt() throws {
        try copy("raw/atlas", to: "raw/atlas")
        XCTAssertEqual(try kiln("build", "raw/atlas", "--quiet").status, 0)
        try FileManager.default.copyItem(at: file("build/atlas.sqlite"), to: file("new.sqlite"))
        let new = try Database(path: file("new.sqlite").path, mode: .readWrite)
        try new.execute("UPDATE mushroom SET name = name || ' (nový popis)' WHERE rowid % 10 = 0; UPDATE kiln_metadata SET value = 'edited' WHERE key = 'kiln.version'; INSERT INTO finds (id, description, date, category, latitude, longitude) VALUES (1, 'v novém vydání', '2026-09-01', 'elder', 49.5, 15.2)")
        try new.close()
        let run = try kiln("patch", "build/atlas.sqlite", "new.sqlite", "--out", "update")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try manifest("update")["userFilled"] as? [String], ["finds"])
        XCTAssertFalse(try String(contentsOf: file("update/patch.sql"), encoding: .utf8).contains("\"finds\""))

        try copyFile("build/atlas.sqlite", "phone.sqlite")
        let phone = try Database(path: file("phone.sqlite").path, mode: .readWrite)
        try phone.execute("INSERT INTO finds (id, description, date, category, latin, latitude, longitude) VALUES (1, 'u lesa', '2026-10-03', 'mushroom', 'Amanita muscaria', 49.19, 16.6), (2, 'borůvky', '2026-07-12', 'blueberries', NULL, 49.2, 16.61)")
        try phone.close()
        let users = try PythonOracle.text(script, ["search", file("phone.sqlite").path, "SELECT * FROM finds"])
        for kind in ["patch.sql", "patch.changeset"] {
            try copyFile("phone.sqlite", kind + ".sqlite")
            let applied = try kiln("apply", kind + ".sqlite", "update/" + kind)
            XCTAssertEqual(applied.status, 0, applied.stderr)
            XCTAssertEqual(try PythonOracle.text(script, ["search", file(kind + ".sqlite").path, "SELECT * FROM finds"]), users, kind)
            XCTAssertEqual(try rows(kind + ".sqlite", skip: ["finds"]), try rows("new.sqlite", skip: ["finds"]), kind)
        }
    }

    func testWrongPatchesAreRefusedWithOneSentenceAndNothingWritten() throws {
        try semesterPair()
        // NEW with a new schema version.
        try editBundle("v2.sqlite", "ALTER TABLE stop ADD COLUMN zone TEXT; PRAGMA user_version = 2; UPDATE kiln_metadata SET value = '2' WHERE key = 'bundle.schema_version'")
        let schema = try kiln("patch", "build/patras.sqlite", "v2.sqlite", "--out", "update")
        XCTAssertEqual(schema.status, 1)
        XCTAssertEqual(schema.stderr, "Error: no patch: v2.sqlite has schema version 2, build/patras.sqlite 1; the app must download the full bundle (v2.sqlite: \(try size("v2.sqlite")) bytes)\n")
        // A schema change without a new version.
        try editBundle("wider.sqlite", "ALTER TABLE stop ADD COLUMN zone TEXT")
        let wider = try kiln("patch", "build/patras.sqlite", "wider.sqlite", "--out", "update")
        XCTAssertEqual(wider.status, 1)
        XCTAssertTrue(wider.stderr.hasPrefix("Error: no patch: the schema changed (stop) although the schema version is still 1; the app must download the full bundle"), wider.stderr)
        // Another bundle.
        try copy("raw/atlas", to: "raw/atlas")
        XCTAssertEqual(try kiln("build", "raw/atlas", "--quiet").status, 0)
        let other = try kiln("patch", "build/patras.sqlite", "build/atlas.sqlite", "--out", "update")
        XCTAssertEqual(other.status, 1)
        XCTAssertTrue(other.stderr.hasPrefix("Error: no patch: build/patras.sqlite is a bundle of \"patras\" but build/atlas.sqlite of \"atlas\"; the app must download the full bundle"), other.stderr)
        // Larger than the limit.
        let large = try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "update", "--max-size", "1%")
        XCTAssertEqual(large.status, 1)
        XCTAssertTrue(large.stderr.contains("bytes, more than 1% of the new bundle (\(try size("build/summer.sqlite") / 100) bytes); the app must download the full bundle (build/summer.sqlite: \(try size("build/summer.sqlite")) bytes)\n"), large.stderr)
        // OLD that is not a Kiln bundle: a plain SQLite database, and a text file.
        let plain = try Database(path: file("plain.sqlite").path)
        try plain.execute("CREATE TABLE t (a)")
        try plain.close()
        try Data("not a database\n".utf8).write(to: file("notes.txt"))
        for (old, message) in [("plain.sqlite", "Error: plain.sqlite is not a Kiln bundle: it has no kiln_metadata table naming its bundle\n"),
                               ("notes.txt", "Error: notes.txt is not an SQLite database (it does not start with the SQLite header)\n")] {
            let refused = try kiln("patch", old, "build/summer.sqlite", "--out", "update")
            XCTAssertEqual(refused.status, 1)
            XCTAssertEqual(refused.stderr, message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update").path), "nothing written")
        // The manifest's limit, which the option overrides.
        let manifest = file("raw/patras/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "  exports: [", with: "  patch: { maxSize: \"2000\" },\n  exports: [").write(to: manifest, atomically: true, encoding: .utf8)
        let declared = try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "update")
        XCTAssertEqual(declared.status, 1)
        XCTAssertTrue(declared.stderr.contains("bytes, more than the limit (2000 bytes); the app must download the full bundle"), declared.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update").path), "nothing written")
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "update", "--max-size", "50%").status, 0)
        try text.replacingOccurrences(of: "  exports: [", with: "  patch: { maxSize: \"half\" },\n  exports: [").write(to: manifest, atomically: true, encoding: .utf8)
        let wrong = try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "other")
        XCTAssertEqual(wrong.status, 64)
        XCTAssertTrue(wrong.stderr.contains("patch.maxSize"), wrong.stderr)
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite").status, 64, "--out is required")
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "u", "--max-size", "half").status, 64)
    }

    func testTruncatedEditedAndForeignPatchesAreRefusedAndTheBundleIsUnchanged() throws {
        try semesterPair()
        XCTAssertEqual(try kiln("patch", "build/patras.sqlite", "build/summer.sqlite", "--out", "update").status, 0)
        try copyFile("build/patras.sqlite", "app.sqlite")
        let original = try sha256("app.sqlite")
        let sql = try Data(contentsOf: file("update/patch.sql"))
        let changeset = try Data(contentsOf: file("update/patch.changeset"))
        try FileManager.default.createDirectory(at: file("bad"), withIntermediateDirectories: true)
        try copyFile("update/update.json", "bad/update.json")
        var edited = sql
        edited[edited.count / 2] ^= 0x01
        for (name, bytes) in [("patch.sql", sql.prefix(sql.count / 2)), ("patch.changeset", changeset.prefix(changeset.count - 7)), ("patch.sql", edited)] {
            try Data(bytes).write(to: file("bad/" + name))
            let run = try kiln("apply", "app.sqlite", "bad/" + name)
            XCTAssertEqual(run.status, 1)
            XCTAssertTrue(run.stderr.hasPrefix("Error: bad/\(name) is not the patch bad/update.json describes: its SHA-256 is "), run.stderr)
            XCTAssertTrue(run.stderr.hasSuffix("; it is truncated or edited, download it again\n"), run.stderr)
            XCTAssertEqual(try sha256("app.sqlite"), original)
        }
        // A patch of patras applied to another bundle.
        try copy("raw/atlas", to: "raw/atlas")
        XCTAssertEqual(try kiln("build", "raw/atlas", "--quiet").status, 0)
        let atlas = try sha256("build/atlas.sqlite")
        let foreign = try kiln("apply", "build/atlas.sqlite", "update/patch.sql")
        XCTAssertEqual(foreign.status, 1)
        XCTAssertEqual(foreign.stderr, "Error: update/patch.sql is a patch for bundle \"patras\", but build/atlas.sqlite is a bundle of \"atlas\"\n")
        XCTAssertEqual(try sha256("build/atlas.sqlite"), atlas)
        // A BUNDLE that is not a Kiln bundle.
        let plain = try Database(path: file("plain.sqlite").path)
        try plain.execute("CREATE TABLE t (a)")
        try plain.close()
        let notBundle = try kiln("apply", "plain.sqlite", "update/patch.sql")
        XCTAssertEqual(notBundle.status, 1)
        XCTAssertEqual(notBundle.stderr, "Error: plain.sqlite is not a Kiln bundle: it has no kiln_metadata table naming its bundle\n")
        // Not an update manifest, and a file it does not list.
        try Data("{}".utf8).write(to: file("bad/update.json"))
        XCTAssertEqual(try kiln("apply", "app.sqlite", "bad/patch.sql").stderr, "Error: bad/update.json is not a Kiln update manifest (kiln-update-1 JSON as kiln patch writes it)\n")
        let unlisted = try kiln("apply", "app.sqlite", "update/update.json")
        XCTAssertEqual(unlisted.status, 1)
        XCTAssertEqual(unlisted.stderr, "Error: update/update.json lists no patch named update.json (it lists patch.sql, patch.changeset)\n")
        XCTAssertEqual(try sha256("app.sqlite"), original)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path).filter { $0.hasPrefix(".app") }, [], "no temporary file left")
    }

    func testHelpListsPatchAndAMissingArgumentShowsTheUsage() throws {
        XCTAssertTrue(try kiln("--help").stdout.contains("  patch     Writes verified patches from the bundle an app ships (OLD) to a new one (NEW).\n"))
        let missing = try kiln("apply", "only-a-bundle.sqlite")
        XCTAssertEqual(missing.status, 64)
        XCTAssertEqual(missing.stderr, "Error: missing the patch\nUsage: kiln apply BUNDLE PATCH [--update FILE] [--sql-seconds S]\n")
    }

    private func size(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file(path).path)[.size] as? Int)
    }
}
