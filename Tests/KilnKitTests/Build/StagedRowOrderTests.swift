import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `StagedRowOrder` may only call a table "in order" when reading it in rowid order gives exactly the rows, in
/// exactly the order, that SQLite's own `SELECT DISTINCT … ORDER BY` gives (the oracle); and it must see sorted tables.
final class StagedRowOrderTests: KilnTestCase {
    /// Table `t` (key `k`) and table `u` (no key) of a manifest, as `ManifestLoader` reads them.
    private func tables() throws -> (keyed: TableSpec, unkeyed: TableSpec) {
        let columns = #"[{ name: "k", type: "text" }, { name: "n", type: "real" }, { name: "s", type: "text" }]"#
        let pipeline = try loadPipeline(manifest: """
            { bundle: "order", schemaVersion: 1,
              tables: [{ name: "t", columns: \(columns), primaryKey: ["k"] }, { name: "u", columns: \(columns) }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["k", "n", "s"] }, into: "t",
                          columns: { k: "k", n: "n", s: "s" } }] }
            """, rows: "x;1;y\n")
        let declared = pipeline.manifest.tables
        return (try XCTUnwrap(declared.first { $0.name == "t" }), try XCTUnwrap(declared.first { $0.name == "u" }))
    }

    /// Small values with NULLs, ties, integers beside reals and text beside numbers, so that every comparison case occurs.
    private func randomValue(_ generator: inout SystemRandomNumberGenerator, column: Int) -> SQLValue {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0: return .null
        case 1, 2: return .integer(Int64.random(in: 0..<3, using: &generator))
        case 3: return .real(Double(Int.random(in: 0..<6, using: &generator)) / 2)
        default: return .text(["a", "b", "B", "ä", "1", ""][Int.random(in: 0..<6, using: &generator)])
        }
    }

    func testTablesCalledInOrderReadAsSQLiteSortsThemAndSortedTablesAreSeen() throws {
        let database = try Database(path: temporaryDirectory.appendingPathComponent("staging.sqlite").path)
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        var generator = SystemRandomNumberGenerator()
        var inOrderSeen = 0, sortedSeen = 0
        let (keyed, unkeyed) = try tables()
        for round in 0..<400 {
            // Table u's rows are staged in a table named t here, so that one query serves both declarations.
            var spec = round % 2 == 0 ? keyed : unkeyed
            spec.name = "t"
            let order = SchemaSQL.rowOrder(spec)
            try database.execute("DROP TABLE IF EXISTS t; CREATE TABLE t (k TEXT, n REAL, s TEXT, _file TEXT, _line INTEGER)")
            let insert = try database.prepare("INSERT INTO t (k, n, s) VALUES (?, ?, ?)")
            for _ in 0..<Int.random(in: 0..<6, using: &generator) {
                try insert.run((0..<3).map { randomValue(&generator, column: $0) })
            }
            if round % 3 == 0 {
                // Staged in the oracle's own order (duplicates dropped): must be seen as in order.
                try database.execute("CREATE TABLE sorted AS SELECT DISTINCT k, n, s FROM t ORDER BY \(order); DELETE FROM t; INSERT INTO t (k, n, s) SELECT k, n, s FROM sorted ORDER BY rowid; DROP TABLE sorted")
            }
            let oracle = try database.rows("SELECT DISTINCT k, n, s FROM t ORDER BY \(order)").map(\.values)
            let asStaged = try database.rows("SELECT k, n, s FROM t ORDER BY rowid").map(\.values)
            let inOrder = try StagedRowOrder.tablesInOrder([spec], in: database).contains("t")
            if inOrder {
                inOrderSeen += 1
                XCTAssertEqual(asStaged, oracle, "round \(round)")
            }
            if round % 3 == 0 {
                sortedSeen += 1
                XCTAssertTrue(inOrder, "round \(round): \(asStaged)")
            }
        }
        XCTAssertGreaterThan(sortedSeen, 100)
        XCTAssertGreaterThan(inOrderSeen, sortedSeen)
    }

    /// The rows a full-text index or a bundle table is written from (`StagedRowOrder.rows`, sorted) are exactly
    /// SQLite's `SELECT DISTINCT` of every column in the bundle's order, projected on the columns selected.
    func testSortedRowsOfSomeColumnsAreTheDistinctRowsInTheBundlesOrder() throws {
        let path = temporaryDirectory.appendingPathComponent("rows.sqlite").path
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        try database.execute("ATTACH DATABASE \(quoteLiteral(path)) AS staging")
        var generator = SystemRandomNumberGenerator()
        let (keyed, unkeyed) = try tables()
        var duplicatesSeen = 0, uniqueKeysSeen = 0
        for round in 0..<300 {
            var spec = round % 2 == 0 ? keyed : unkeyed
            spec.name = "t"
            try database.execute("DROP TABLE IF EXISTS t; CREATE TABLE t (k TEXT, n REAL, s TEXT, _file TEXT, _line INTEGER)")
            let insert = try database.prepare("INSERT INTO t (k, n, s, _line) VALUES (?, ?, ?, ?)")
            var staged = (0..<Int.random(in: 0..<8, using: &generator)).map { _ in (0..<3).map { randomValue(&generator, column: $0) } }
            // Some rows staged twice (from another line), as a source that repeats a record stages them.
            if round % 3 == 0, let repeated = staged.randomElement(using: &generator) { staged.append(repeated) }
            for (line, values) in staged.enumerated() { try insert.run(values + [.integer(Int64(line))]) }
            let distinct = try database.rows("SELECT DISTINCT k, n, s FROM t ORDER BY \(SchemaSQL.rowOrder(spec))").map(\.values)
            if try database.rows("SELECT count(*) FROM t").first?.values.first?.number != Double(distinct.count) { duplicatesSeen += 1 }
            let oracle = distinct.map { [$0[2], $0[0]] }
            // A key is unique when no two rows share it as DISTINCT compares them (SQLite's own count is the oracle).
            let keys = try database.rows("SELECT k FROM t").map(\.values)
            let distinctKeys = try database.rows("SELECT DISTINCT k FROM t").count
            let uniqueKey = !spec.primaryKey.isEmpty && distinctKeys == keys.count
            if uniqueKey { uniqueKeysSeen += 1 }
            if !spec.primaryKey.isEmpty {
                // Sorted on the key with the key beside the rows, as the full-text copy tries first: a repeated key shows.
                try database.execute("DROP TABLE IF EXISTS temp.keyed; CREATE TEMP TABLE keyed AS \(StagedRowOrder.keyedRows(of: spec, selecting: "s, k"))")
                XCTAssertEqual(try StagedRowOrder.repeatsKey(of: spec, in: "keyed", of: database), !uniqueKey, "round \(round): \(keys)")
                if uniqueKey {
                    XCTAssertEqual(try database.rows("SELECT s, k FROM keyed ORDER BY rowid").map(\.values), oracle, "round \(round)")
                }
            }
            let arrangements: [StagedRowOrder.Arrangement] = uniqueKey ? [.sorted, .uniqueKey] : [.sorted]
            for arrangement in arrangements {
                for selected in ["s, k", "k, n, s"] {
                    let rows = try database.rows(StagedRowOrder.rows(of: spec, selecting: selected, arrangement: arrangement)).map(\.values)
                    XCTAssertEqual(rows.map { selected == "s, k" ? $0 : [$0[2], $0[0]] }, oracle, "round \(round), \(arrangement), \(selected)")
                }
            }
        }
        XCTAssertGreaterThan(duplicatesSeen, 50, "rows that DISTINCT drops occur")
        XCTAssertGreaterThan(uniqueKeysSeen, 30, "tables whose rows never share a key occur")
    }

    func testARowidGapIsNeverTakenForOrder() throws {
        let database = try Database(path: temporaryDirectory.appendingPathComponent("gap.sqlite").path)
        let keyed = try tables().keyed
        try database.execute("CREATE TABLE t (k TEXT, n REAL, s TEXT, _file TEXT, _line INTEGER)")
        // a, c, b: out of order, but the row between c and b is gone, so no neighbouring pair shows it.
        try database.execute("INSERT INTO t (rowid, k) VALUES (1, 'a'), (2, 'c'), (4, 'b')")
        XCTAssertEqual(try StagedRowOrder.tablesInOrder([keyed], in: database), [])
        try database.execute("UPDATE t SET rowid = 3 WHERE rowid = 4")
        XCTAssertEqual(try StagedRowOrder.tablesInOrder([keyed], in: database), [])
        try database.execute("UPDATE t SET k = 'd' WHERE rowid = 3")
        XCTAssertEqual(try StagedRowOrder.tablesInOrder([keyed], in: database), ["t"])
        try database.execute("DELETE FROM t")
        XCTAssertEqual(try StagedRowOrder.tablesInOrder([keyed], in: database), ["t"], "no rows: nothing to sort")
    }
}

extension StagedRowOrderTests {
    /// A table as wide as real manifests get is checked without SQLite refusing the query.
    func testAWideTableIsChecked() throws {
        let database = try Database(path: temporaryDirectory.appendingPathComponent("wide.sqlite").path)
        let names = (0..<60).map { "c\($0)" }
        try database.execute("CREATE TABLE w (\(names.joined(separator: ", ")))")
        try database.execute("INSERT INTO w VALUES (\(names.indices.map(String.init).joined(separator: ", "))), (\(names.indices.map { String($0 == 59 ? 60 : $0) }.joined(separator: ", ")))")
        let sql = "SELECT \(StagedRowOrder.after(names)) FROM w AS a JOIN w AS b ON b.rowid = a.rowid + 1"
        XCTAssertEqual(try database.rows(sql).first?.values.first?.number, 1)
    }
}
