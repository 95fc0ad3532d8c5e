import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The staging writer records facts about each table as it inserts the rows (`StagedTableFacts`): whether they come
/// in the bundle's order, how many leading order columns neighbours share, which columns may hold NULL. The oracle is
/// SQLite reading the staged table back: `StagedRowOrder.isInOrder`, a neighbour join with `=`, `IS NULL` counts. The
/// random tables mix the cases that make stored values differ from bound ones (text in a numeric column, a number in
/// a text one, an integer beside an equal real, integers beyond 2^53, NaN, empty blobs, text equal only under Unicode
/// equivalence).
final class StagedTableFactsTests: KilnTestCase {
    private func pipeline(primaryKey: String) throws -> CompiledPipeline {
        try loadPipeline(manifest: """
            { bundle: "facts", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "a", type: "text" }, { name: "b", type: "integer" }, { name: "c", type: "real" },
                                              { name: "d", type: "blob" }, { name: "e", type: "text" }],
                         primaryKey: \(primaryKey) }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["a", "b", "c", "d"] }, into: "t",
                          columns: { b: "b", a: "a", c: "c", d: "d" } }] }
            """, rows: "x;1;2;y\n")
    }

    /// A random value for a column of `type`, often of another kind than the type calls for.
    private func value(for type: ColumnType, using generator: inout some RandomNumberGenerator) -> SQLValue {
        let choices: [SQLValue]
        switch type {
        case .text: choices = [.text("p"), .text("pq"), .text(""), .text("\u{E9}"), .text("e\u{301}"), .integer(3), .real(3.5), .null]
        case .integer: choices = [.integer(1), .integer(2), .real(1.0), .real(2.5), .integer(1 << 60), .real(Double(1 << 60)), .text("7"), .null]
        case .real: choices = [.real(0.5), .integer(1), .real(1.0), .real(.nan), .text("x"), .null]
        case .blob: choices = [.blob([1]), .blob([1, 2]), .blob([]), .text("x"), .integer(1), .null]
        }
        return choices.randomElement(using: &generator)!
    }

    func testFactsAgreeWithWhatSQLiteReadsBack() throws {
        var generator = SystemRandomNumberGenerator()
        var known = 0, unknown = 0, inOrder = 0, sharing = 0
        let rounds = TestTier.size(120, fast: 40)
        for (variant, primaryKey) in ["[\"b\", \"a\"]", "[\"c\"]", "[]"].enumerated() {
            let pipeline = try pipeline(primaryKey: primaryKey)
            let table = try XCTUnwrap(pipeline.manifest.table("t"))
            let target = try XCTUnwrap(pipeline.sources.first?.targets.first)
            let mapped = target.mappings.map(\.column.name)
            let orderColumns = SchemaSQL.rowOrderColumns(table)
            for round in 0..<rounds {
                let database = try Database(path: temporaryDirectory.appendingPathComponent("staging-\(variant)-\(round).sqlite").path)
                try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: database)
                var rows: [[SQLValue]] = (0..<Int.random(in: 1...20, using: &generator)).map { _ in
                    mapped.map { name in value(for: table.column(name)!.type, using: &generator) }
                }
                // Half the tables are staged sorted by SQLite (values as it stores them), as a source in key order.
                if round % 2 == 0 {
                    let probe = try Database(path: ":memory:")
                    try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: probe)
                    let insert = try probe.prepare("INSERT INTO t (\(mapped.joined(separator: ", "))) VALUES (\(mapped.map { _ in "?" }.joined(separator: ", ")))")
                    for row in rows { try insert.run(row) }
                    rows = try probe.rows("SELECT \(mapped.joined(separator: ", ")) FROM t ORDER BY \(SchemaSQL.rowOrder(table))").map(\.values)
                }
                var recorder = StagedRowRecorder(targets: [target], continuing: [:])
                let insert = try database.prepare("INSERT INTO t (\(mapped.joined(separator: ", ")), _file, _line) VALUES (\(mapped.map { _ in "?" }.joined(separator: ", ")), 'rows.txt', ?)")
                for (line, row) in rows.enumerated() {
                    let values = row + [.text("rows.txt"), .integer(Int64(line + 1))]
                    try insert.run(Array(row) + [.integer(Int64(line + 1))])
                    recorder.record(values, target: 0)
                }
                let facts = try XCTUnwrap(recorder.facts["t"])
                let context = "variant \(variant) round \(round): \(rows)"
                XCTAssertEqual(facts.rows, rows.count, context)

                // Order: whenever the writer could tell, it says what SQLite says.
                let sqlInOrder = try StagedRowOrder.isInOrder(table, in: database)
                if let factsInOrder = facts.inOrder {
                    known += 1
                    XCTAssertEqual(factsInOrder, sqlInOrder, context)
                } else {
                    unknown += 1
                }

                // Shared prefixes: for a table in order, k leading order columns repeat in neighbours exactly when
                // SQL finds two neighbours equal on them.
                if facts.inOrder == true {
                    inOrder += 1
                    if facts.longestSharedPrefix > 0 { sharing += 1 }
                    for length in 1...orderColumns.count {
                        let join = orderColumns.prefix(length).map { "a.\($0) = b.\($0)" }.joined(separator: " AND ")
                        let repeated = try database.rows("SELECT EXISTS (SELECT 1 FROM t AS a JOIN t AS b ON b.rowid = a.rowid + 1 WHERE \(join))").first?.values.first
                        XCTAssertEqual(facts.longestSharedPrefix >= length, repeated == .integer(1), "\(length) columns, \(context)")
                    }
                }

                // NULLs: a column said to hold none holds none; one said to may holds one, unless only a value that
                // might have become NULL (NaN, an empty blob) was bound.
                for column in table.columns.map(\.name) {
                    let nulls = try database.rows("SELECT count(*) FROM t WHERE \(column) IS NULL").first?.values.first
                    let position = mapped.firstIndex(of: column)
                    let doubtful = position.map { position in rows.contains { $0[position].mayBeStoredAsNull && $0[position] != .null } } ?? false
                    if !facts.mayHoldNull(column) { XCTAssertEqual(nulls, .integer(0), "\(column), \(context)") }
                    if !doubtful { XCTAssertEqual(facts.mayHoldNull(column), nulls != .integer(0), "\(column), \(context)") }
                }
            }
        }
        // Every case occurred: known and unknown orders, tables in order, neighbours sharing a key prefix.
        XCTAssertGreaterThan(known, 100 * rounds / 120)
        XCTAssertGreaterThan(unknown, 20 * rounds / 120)
        XCTAssertGreaterThan(inOrder, 30 * rounds / 120)
        XCTAssertGreaterThan(sharing, 5 * rounds / 120)
    }

    func testTheFactsOfATableContinueFromOneSourceToTheNext() throws {
        let pipeline = try pipeline(primaryKey: "[\"b\", \"a\"]")
        let target = try XCTUnwrap(pipeline.sources.first?.targets.first)
        let mapped = target.mappings.map(\.column.name)
        func row(_ b: Int64, _ a: String) -> [SQLValue] {
            mapped.map { ["a": .text(a), "b": .integer(b), "c": .real(1), "d": .blob([1])][$0]! } + [.text("rows.txt"), .integer(1)]
        }
        var first = StagedRowRecorder(targets: [target], continuing: [:])
        first.record(row(1, "p"), target: 0)
        first.record(row(2, "p"), target: 0)
        // A second source going on in order, then one going back: the last row of the first is compared with the next.
        var second = StagedRowRecorder(targets: [target], continuing: first.facts)
        second.record(row(2, "q"), target: 0)
        XCTAssertEqual(second.facts["t"]?.inOrder, true)
        XCTAssertEqual(second.facts["t"]?.longestSharedPrefix, 1)
        XCTAssertEqual(second.facts["t"]?.rows, 3)
        var third = StagedRowRecorder(targets: [target], continuing: second.facts)
        third.record(row(1, "z"), target: 0)
        XCTAssertEqual(third.facts["t"]?.inOrder, false)
        // Column e is never inserted: it holds NULL in every row; the others hold none.
        XCTAssertEqual(third.facts["t"]?.mayHoldNull("e"), true)
        XCTAssertEqual(["a", "b", "c", "d"].map { third.facts["t"]?.mayHoldNull($0) }, [false, false, false, false])
    }
}
