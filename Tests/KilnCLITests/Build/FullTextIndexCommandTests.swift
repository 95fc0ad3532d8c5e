import Foundation
import KilnC
import KilnKit
import XCTest

/// `kiln build` indexes full-text tables in scratch databases on a thread of their own and copies the index into the
/// bundle, whose FTS5 tables read their text from their tables (external content). The oracle is SQLite's FTS5
/// itself: the same FTS5 table rebuilt in place from the shipped table ('rebuild'), as an app developer would, must
/// hold exactly the rows the bundle's shadow tables hold; and the MATCH results of the bundles the base binary
/// (847d5d7, which stored a second copy of the text) built, kept in Tests/Fixtures/fulltext-oracle, are today's.
final class FullTextIndexCommandTests: CLITestCase {
    func testTheBundlesFullTextIndexesAreTheOnesFTS5BuildsInPlace() throws {
        // Real scraped data: the Patras web pipeline (two full-text tables) and the museum pipeline.
        for (pipeline, bundle) in [("raw/patras-web", "patras-web"), ("raw/museum", "museum"), ("raw/itravel", "itravel")] {
            try assertIndexesAreBuiltInPlace(CLITestCase.repositoryRoot.appendingPathComponent(pipeline), bundle: bundle)
        }
    }

    /// Each term of a sample of every FTS5 table's vocabulary (every n-th term, about 60 a table) finds the same
    /// rows, in the same order (`rank`, then rowid), as in the base binary's bundles; the key column stands for the row.
    func testMatchResultsAreTheBaseBinarysOnEverySample() throws {
        let oracle = try JSONSerialization.jsonObject(with: Data(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/fulltext-oracle/match-results.json"))) as? [String: [String: [Any]]]
        let expected = try XCTUnwrap(oracle)
        XCTAssertEqual(expected.keys.sorted(), ["itravel/listing_search", "museum/event_search", "museum/page_search", "patras-web/place_search", "patras-web/stop_search", "patras/stop_search"])
        for bundle in ["patras", "patras-web", "museum", "itravel"] {
            let output = file("out/\(bundle).sqlite")
            let run = try kiln("build", CLITestCase.repositoryRoot.appendingPathComponent("raw/\(bundle)").path, "--out", output.path)
            XCTAssertEqual(run.status, 0, run.stderr)
            let database = try Database(path: output.path, mode: .readOnly)
            for (key, terms) in expected where key.hasPrefix(bundle + "/") {
                let name = String(key.dropFirst(bundle.count + 1))
                let last = try XCTUnwrap(database.rows("SELECT name FROM pragma_table_info(?)", [.text(name)]).last?["name"].textValue)
                for (term, rows) in terms {
                    let found = try database.rows("SELECT \(quoteIdentifier(last)) FROM \(quoteIdentifier(name)) WHERE \(quoteIdentifier(name)) MATCH ? ORDER BY rank, rowid",
                                                  [.text("\"" + term.replacingOccurrences(of: "\"", with: "\"\"") + "\"")])
                    let values = found.map { row -> String in
                        switch row.values[0] {
                        case .integer(let number): return String(number)
                        case .text(let text): return text
                        default: return "?"
                        }
                    }
                    XCTAssertEqual(values, rows.map { "\($0)" }, "\(key): \(term)")
                    XCTAssertFalse(values.isEmpty, "\(key): \(term)")
                }
            }
            try database.close()
        }
    }

    /// A full-text table filled by two sources with another source between them is indexed once both are staged;
    /// one filled by a query, after the queries ran. The rows are real: the Patras stop list, cut in two.
    func testTablesFilledBySeveralSourcesOrByAQueryAreIndexedWhole() throws {
        let folder = file("split")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stops = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(stops.count, 100)
        // Reversed halves: neither source, nor the two together, is in key order.
        try (stops[..<80].reversed().joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try (stops[80...].reversed().joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("b.txt"), atomically: true, encoding: .utf8)
        try (stops.prefix(20).joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("c.txt"), atomically: true, encoding: .utf8)
        let columns = #"[{ name: "code", type: "text" }, { name: "name", type: "text" }, { name: "longitude", type: "real" }, { name: "latitude", type: "real" }]"#
        let fields = #"options: { fields: ["name", "code", "longitude", "latitude"] }, columns: { code: "code", name: "name", longitude: "longitude", latitude: "latitude" }"#
        try """
            { bundle: "split", schemaVersion: 1,
              tables: [
                { name: "stop", columns: \(columns), primaryKey: ["code"], fullText: { name: "stop_search", columns: ["name"], unindexed: ["code"] } },
                { name: "other", columns: \(columns) },
                { name: "named", columns: [{ name: "code", type: "text" }, { name: "name", type: "text" }], primaryKey: ["code"],
                  query: "SELECT code, name FROM stop WHERE name LIKE '%Α%'", fullText: { name: "named_search", columns: ["name"] } },
              ],
              sources: [
                { name: "first", format: "delimited", path: "a.txt", \(fields), into: "stop" },
                { name: "between", format: "delimited", path: "c.txt", \(fields), into: "other" },
                { name: "second", format: "delimited", path: "b.txt", \(fields), into: "stop" },
              ] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try assertIndexesAreBuiltInPlace(folder, bundle: "split", rows: ["stop": stops.count])
    }

    /// Builds the pipeline in `folder` and checks each full-text index against the oracle; `rows`: tables that must
    /// hold that many rows.
    /// The Android bundle's FTS4 tables (its SQLite has no FTS5) are indexed on the full-text thread while the main
    /// bundle is written, then copied in: their shadow tables must hold exactly the rows FTS4 itself writes when it
    /// rebuilds them in place from their tables. Real data (the travel guide, the Patras stops) and a generated dump
    /// large enough for FTS4 to flush and merge segments.
    func testTheAndroidBundlesFTS4IndexesAreTheOnesFTS4BuildsInPlace() throws {
        let dump = try generatedTravelDump("dump", megabytes: 4)
        for (folder, bundle) in [(CLITestCase.repositoryRoot.appendingPathComponent("raw/itravel"), "itravel"),
                                 (CLITestCase.repositoryRoot.appendingPathComponent("raw/patras"), "patras"), (dump, "dump")] {
            let output = file("out/\(bundle).sqlite")
            let run = try kiln("build", folder.path, "--out", output.path, "--no-cache")
            XCTAssertEqual(run.status, 0, "\(bundle): \(run.stderr)")
            let android = file("out/\(bundle).android.sqlite")
            let copy = file("out/\(bundle).android.oracle.sqlite")
            try FileManager.default.copyItem(at: android, to: copy)
            let database = try Database(path: android.path, mode: .readOnly)
            let oracle = try Database(path: copy.path, mode: .readWrite)
            let names = try database.rows("SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE % USING fts4(%' ORDER BY name")
                .compactMap { $0["name"].textValue }
            XCTAssertFalse(names.isEmpty, bundle)
            var segments = 0
            for name in names {
                try oracle.execute("INSERT INTO \(quoteIdentifier(name)) (\(quoteIdentifier(name))) VALUES ('rebuild')")
                for shadow in ["segments", "segdir", "docsize", "stat"].map({ "\(name)_\($0)" }) {
                    let ours = try database.rows("SELECT * FROM \(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    let theirs = try oracle.rows("SELECT * FROM \(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    // A small index keeps its one segment in its segdir row (no _segments rows).
                    if !shadow.hasSuffix("_segments") || bundle == "dump" { XCTAssertFalse(theirs.isEmpty, "\(bundle): \(shadow)") }
                    XCTAssertEqual(ours, theirs, "\(bundle): \(shadow)")
                    if shadow.hasSuffix("_segdir") { segments += theirs.count }
                }
                XCTAssertNoThrow(try database.rows("SELECT count(*) FROM \(quoteIdentifier(name)) WHERE \(quoteIdentifier(name)) MATCH 'a*'"))
            }
            if bundle == "dump" { XCTAssertGreaterThan(segments, 1, "the generated dump's index is flushed in several segments") }
            try oracle.close()
            try database.close()
        }
    }

    private func assertIndexesAreBuiltInPlace(_ folder: URL, bundle: String, rows: [String: Int] = [:]) throws {
        let pipeline = folder.path
        do {
            let output = file("out/\(bundle).sqlite")
            let run = try kiln("build", folder.path, "--out", output.path)
            XCTAssertEqual(run.status, 0, "\(pipeline): \(run.stderr)")
            let database = try Database(path: output.path, mode: .readWrite)
            for (table, count) in rows {
                XCTAssertEqual(try database.rows("SELECT count(*) FROM \(quoteIdentifier(table))").first?.values.first, .integer(Int64(count)), table)
            }
            let declared = try ManifestLoader.load(folder.path).manifest.tables
                .compactMap { table in table.fullText.map { (table: table.name, index: $0.name) } }
            XCTAssertFalse(declared.isEmpty, pipeline)
            // The oracle: a copy of the bundle whose FTS5 tables FTS5 itself rebuilt from their tables ('rebuild').
            let copy = file("out/\(bundle).oracle.sqlite")
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: output, to: copy)
            let oracle = try Database(path: copy.path, mode: .readWrite)
            for (table, name) in declared {
                let sql = try XCTUnwrap(database.rows("SELECT sql FROM sqlite_schema WHERE name = ?", [.text(name)]).first?["sql"].textValue)
                // External content: the text is stored once, in the table (no _content shadow table).
                XCTAssertTrue(sql.hasSuffix("content=\(quoteIdentifier(table)))"), sql)
                try oracle.execute("INSERT INTO \(quoteIdentifier(name)) (\(quoteIdentifier(name))) VALUES ('rebuild')")
                let shadows = try database.rows("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE ? ESCAPE '\\' ORDER BY name",
                                                [.text(name + "\\_%")]).compactMap { $0["name"].textValue }
                XCTAssertEqual(shadows, ["config", "data", "docsize", "idx"].map { "\(name)_\($0)" }, "\(pipeline): \(name)")
                for shadow in shadows {
                    let ours = try database.rows("SELECT * FROM main.\(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    let theirs = try oracle.rows("SELECT * FROM main.\(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    XCTAssertFalse(theirs.isEmpty, "\(pipeline): \(shadow)")
                    XCTAssertEqual(ours, theirs, "\(pipeline): \(shadow)")
                }
                try database.execute("INSERT INTO main.\(quoteIdentifier(name)) (\(quoteIdentifier(name)), rank) VALUES ('integrity-check', 1)")
            }
            try oracle.close()
            try database.close()
        }
    }
}

/// Staged rows already in the bundle's order are read as they stand instead of sorted (`StagedRowOrder`): the real
/// Patras stop list is in code order, the same list reversed is not, and both must give the same tables and the same
/// full-text index.
final class StagedRowOrderCommandTests: CLITestCase {
    func testStopsInKeyOrderAndReversedGiveTheSameTablesAndIndex() throws {
        let inOrder = try copy("raw/patras", to: "in-order")
        let reversed = try copy("raw/patras", to: "reversed")
        let stops = reversed.appendingPathComponent("StopsUTF8.txt")
        let lines = try String(contentsOf: stops, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let body = lines.last == "" ? lines.dropLast() : lines[...]
        XCTAssertGreaterThan(body.count, 100)
        try (body.reversed().joined(separator: "\n") + "\n").write(to: stops, atomically: true, encoding: .utf8)
        var contents: [[String: [[SQLValue]]]] = []
        for folder in [inOrder, reversed] {
            let output = folder.appendingPathComponent("out.sqlite")
            let run = try kiln("build", folder.path, "--out", output.path)
            XCTAssertEqual(run.status, 0, run.stderr)
            let database = try Database(path: output.path, mode: .readOnly)
            let tables = try database.rows("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'kiln_metadata' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")
                .compactMap { $0["name"].textValue }
            XCTAssertTrue(tables.contains("stop_search_data"), tables.joined(separator: ", "))
            var rows: [String: [[SQLValue]]] = [:]
            // Rowid order, not a sort: the rows must stand in the same places.
            for table in tables {
                let withoutRowid = try database.rows("SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk'", [.text(table)]).isEmpty == false
                    && (try database.rows("SELECT sql FROM sqlite_schema WHERE name = ?", [.text(table)]).first?["sql"].textValue?.contains("WITHOUT ROWID") ?? false)
                rows[table] = try database.rows("SELECT * FROM \(quoteIdentifier(table)) ORDER BY \(withoutRowid ? "1, 2" : "rowid")").map(\.values)
            }
            try database.close()
            contents.append(rows)
        }
        XCTAssertEqual(contents[0].keys.sorted(), contents[1].keys.sorted())
        for table in contents[0].keys.sorted() {
            XCTAssertEqual(contents[0][table], contents[1][table], table)
        }
        XCTAssertEqual(contents[0]["stop"]?.count, body.count)
    }
}
