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

    /// The plan of the pipeline's one target, as the recorder makes it (the mapped columns, then `_file`, `_line`).
    private func plan(_ target: CompiledTarget) -> StagedRowRecorder.TargetPlan {
        let inserted = target.mappings.map(\.column.name)
        return StagedRowRecorder.TargetPlan(table: 0, columnSlots: target.table.columns.map { inserted.firstIndex(of: $0.name) },
                                            orderSlots: target.table.rowOrderColumnNames.map { inserted.firstIndex(of: $0) },
                                            fileSlot: inserted.count)
    }

    /// Every field of `facts` (its stored form) as bytes: texts compared byte for byte, not as Swift compares strings
    /// (which takes "\u{E9}" for "e\u{301}").
    private func exact(_ facts: StagedTableFacts) -> [UInt8] {
        let segment = facts.segment
        return Array("\(segment.rows) \(segment.nullable) \(String(describing: segment.inOrder)) \(segment.longestSharedPrefix) \(segment.edges)".utf8)
    }

    /// Random rows split at random points (empty segments too): taking them in one by one (`record`, the oracle) and
    /// composing the facts of each segment (`appending`, left to right, right to left, and through the stored form)
    /// give the same facts, field by field; and the recorder, telling the segments apart by their `_file`, gives the
    /// same facts for all the rows and each file's own.
    func testTheFactsOfSegmentsComposeToTheFactsOfAllTheRows() throws {
        var generator = SystemRandomNumberGenerator()
        var inOrder = 0, outOfOrder = 0, unknown = 0, sharing = 0, boundaries = 0
        let rounds = TestTier.size(300, fast: 100)
        for (variant, primaryKey) in ["[\"b\", \"a\"]", "[\"c\"]", "[]"].enumerated() {
            let pipeline = try pipeline(primaryKey: primaryKey)
            let table = try XCTUnwrap(pipeline.manifest.table("t"))
            let target = try XCTUnwrap(pipeline.sources.first?.targets.first)
            let mapped = target.mappings.map(\.column.name)
            let plan = plan(target)
            let probe = try Database(path: ":memory:")
            try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: probe)
            let insert = try probe.prepare("INSERT INTO t (\(mapped.joined(separator: ", "))) VALUES (\(mapped.map { _ in "?" }.joined(separator: ", ")))")
            for round in 0..<rounds {
                var rows: [[SQLValue]] = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                    mapped.map { name in value(for: table.column(name)!.type, using: &generator) }
                }
                // Most rounds sort the rows as SQLite does (runs in order, equal neighbours), some then break the order once.
                if round % 4 != 0 {
                    try probe.execute("DELETE FROM t")
                    for row in rows { try insert.run(row) }
                    rows = try probe.rows("SELECT \(mapped.joined(separator: ", ")) FROM t ORDER BY \(SchemaSQL.rowOrder(table))").map(\.values)
                    if round % 4 == 3, rows.count > 1 { rows.swapAt(Int.random(in: 1..<rows.count, using: &generator) - 1, rows.count - 1) }
                }
                var cuts = (0..<Int.random(in: 0...5, using: &generator)).map { _ in Int.random(in: 0...rows.count, using: &generator) }
                cuts = [0] + cuts.sorted() + [rows.count]
                let segments = zip(cuts, cuts.dropFirst()).enumerated().map { index, bounds in
                    rows[bounds.0..<bounds.1].map { $0 + [.text("f\(index).txt"), .integer(1)] }
                }
                func fold(_ rows: [[SQLValue]]) -> StagedTableFacts {
                    var facts = StagedTableFacts(table: table)
                    for row in rows { facts.record(row, plan) }
                    return facts
                }
                let all = fold(segments.flatMap { $0 })
                let parts = segments.map(fold)
                let context = "variant \(variant) round \(round): \(segments)"
                let empty = StagedTableFacts(table: table)
                XCTAssertEqual(exact(parts.reduce(empty) { $0.appending($1) }), exact(all), context)
                XCTAssertEqual(exact(parts.reversed().reduce(empty) { $1.appending($0) }), exact(all), context)
                let stored = try parts.map { try XCTUnwrap(empty.restoring($0.segment), context) }
                XCTAssertEqual(stored.map(exact), parts.map(exact), context)
                let composed = stored.reduce(empty) { $0.appending($1) }
                XCTAssertEqual(exact(composed), exact(all), context)
                XCTAssertEqual(table.columns.map { composed.mayHoldNull($0.name) }, table.columns.map { all.mayHoldNull($0.name) }, context)

                // A row taken in after the composed facts is compared with the last stored row as with the last row.
                if let next = rows.randomElement(using: &generator) {
                    var afterAll = all, afterComposed = composed
                    afterAll.record(next + [.text("g.txt"), .integer(1)], plan)
                    afterComposed.record(next + [.text("g.txt"), .integer(1)], plan)
                    XCTAssertEqual(exact(afterComposed), exact(afterAll), context)
                }

                var recorder = StagedRowRecorder(targets: [target], continuing: [:], keepingFiles: true)
                for row in segments.joined() { recorder.record(row, target: 0) }
                XCTAssertEqual(exact(recorder.facts["t"] ?? empty), exact(all), context)
                let files = segments.enumerated().filter { !$0.element.isEmpty }
                XCTAssertEqual(recorder.fileFacts.map(\.path), files.map { "f\($0.offset).txt" }, context)
                XCTAssertEqual(try recorder.fileFacts.map { try $0.tables["t"].map(exact) }, try files.map { exact(parts[$0.offset]) }, context)

                switch all.inOrder {
                case true?: inOrder += 1
                case false?: outOfOrder += 1
                case nil: unknown += 1
                }
                if all.inOrder == true, all.longestSharedPrefix > 0 { sharing += 1 }
                if files.count > 1 { boundaries += 1 }
            }
        }
        // Every case occurred.
        XCTAssertGreaterThan(inOrder, rounds / 10)
        XCTAssertGreaterThan(outOfOrder, rounds / 10)
        XCTAssertGreaterThan(unknown, rounds / 10)
        XCTAssertGreaterThan(sharing, rounds / 30)
        XCTAssertGreaterThan(boundaries, rounds)
    }

    /// Every value survives the stored form exactly, NaN and -0 included; what is not a token is refused.
    func testTheStoredFormOfAValueIsExact() {
        let values: [SQLValue] = [.null, .integer(0), .integer(.min), .integer(.max), .real(-0.0), .real(.nan), .real(.infinity), .real(1.5),
                                  .text(""), .text("n"), .text("e\u{301}\n\"x"), .text("\u{301}x"), .text("\r\n"), .blob([]), .blob([0, 255, 16])]
        for value in values {
            let token = value.factsToken
            let back = SQLValue(factsToken: token)
            XCTAssertEqual(back.map { Array($0.factsToken.utf8) }, Array(token.utf8), "\(value)")
            if case .text(let text) = value, case .text(let read)? = back { XCTAssertEqual(Array(read.utf8), Array(text.utf8)) }
            if case .real(let number) = value, case .real(let read)? = back { XCTAssertEqual(read.bitPattern, number.bitPattern) }
        }
        for token in ["", "x1", "i", "i1.5", "r-1", "b0", "bzz", "nn"] { XCTAssertNil(SQLValue(factsToken: token), token) }
    }

    /// A stored segment that does not fit its table (or is cut short) is refused, not read as other facts.
    func testAStoredSegmentThatDoesNotFitItsTableIsRefused() throws {
        let pipeline = try pipeline(primaryKey: "[\"b\", \"a\"]")
        let empty = StagedTableFacts(table: try XCTUnwrap(pipeline.manifest.table("t")))
        // Order columns b, a, then c, d, e: five values for the first row, five for the last.
        let edges = "2:i12:tp20:r46116860184273879043:b012:tx" + "2:i22:tq1:n1:n1:n"
        let good = StagedTableFacts.Segment(rows: 2, nullable: "00001", inOrder: true, longestSharedPrefix: 0, edges: edges)
        let restored = try XCTUnwrap(empty.restoring(good))
        XCTAssertEqual(restored.segment, good)
        XCTAssertEqual(restored.first, [.integer(1), .text("p"), .real(2), .blob([1]), .text("x")])
        XCTAssertEqual(restored.last, [.integer(2), .text("q"), .null, .null, .null])
        var bad: [StagedTableFacts.Segment] = []
        for change in [{ (s: inout StagedTableFacts.Segment) in s.nullable = "0000" }, { $0.nullable = "00002" }, { $0.rows = -1 }, { $0.rows = 0 },
                       { $0.edges = String($0.edges.dropLast()) }, { $0.edges += "1:n" }, { $0.edges = "9" + $0.edges }, { $0.edges = "x" + $0.edges }] {
            var segment = good
            change(&segment)
            bad.append(segment)
        }
        for segment in bad { XCTAssertNil(empty.restoring(segment), "\(segment)") }
        XCTAssertNil(try XCTUnwrap(empty.restoring(good)).restoring(good), "only facts without rows take a segment")
    }
}
