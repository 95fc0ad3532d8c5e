import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Before it searches for duplicate keys, the key rule asks whether any key can repeat: for a table staged in the
/// bundle's order (`StagedRowOrder`), whether two neighbouring rows share it (from the staging writer's
/// `StagedTableFacts`, or SQL); for any other, whether grouping on the key finds a group of two. The oracle is the full
/// search itself (`RuleEngine.exhaustive`): on random staged tables, in order or not, with and without duplicate keys
/// (text and numbers, NULLs, an integer beside the same real), the findings must be exactly the search's; so must
/// they be when the rules are told which tables' primary keys no two rows share (`RuleEngine.keyKnownUnique`).
final class InOrderDuplicatesTests: KilnTestCase {
    func testKnowingTheOrderChangesNoFinding() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "keys", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "a", type: "text" }, { name: "b", type: "real" }, { name: "c", type: "text" }],
                         primaryKey: ["a", "b"] }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["a", "b", "c"] }, into: "t",
                          columns: { a: "a", b: "b", c: "c" } }] }
            """, rows: "x;1;y\n")
        let table = try XCTUnwrap(pipeline.manifest.table("t"))
        var generator = SystemRandomNumberGenerator()
        var inOrderTables = 0, inOrderWithDuplicates = 0, uniqueTables = 0
        let rounds = TestTier.size(150, fast: 50)
        for round in 0..<rounds {
            let database = try Database(path: temporaryDirectory.appendingPathComponent("staging\(round).sqlite").path)
            try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: database)
            let count = Int.random(in: 1...25, using: &generator)
            var rows: [[SQLValue]] = (0..<count).map { _ in
                let a: SQLValue = Int.random(in: 0..<10, using: &generator) == 0 ? .null : .text(["p", "q", "r"].randomElement(using: &generator)!)
                let b: SQLValue = [.integer(1), .real(1.0), .real(2.5), .integer(3), .null].randomElement(using: &generator)!
                return [a, b, .text(String(Int.random(in: 0..<1000, using: &generator)))]
            }
            // Half the tables are staged sorted (as a source listing its records by key would), half as they come.
            if round % 2 == 0 {
                let probe = try Database(path: ":memory:")
                try probe.execute("CREATE TABLE s (a TEXT, b REAL, c TEXT)")
                let insert = try probe.prepare("INSERT INTO s VALUES (?, ?, ?)")
                for row in rows { try insert.run(row) }
                rows = try probe.rows("SELECT a, b, c FROM s ORDER BY a, b, c").map(\.values)
            }
            let insert = try database.prepare("INSERT INTO t (a, b, c, _file, _line) VALUES (?, ?, ?, 'rows.txt', ?)")
            var recorder = StagedRowRecorder(targets: try XCTUnwrap(pipeline.sources.first?.targets), continuing: [:])
            for (line, row) in rows.enumerated() {
                try insert.run(row + [.integer(Int64(line + 1))])
                recorder.record(row + [.text("rows.txt"), .integer(Int64(line + 1))], target: 0)
            }
            let ordered = try StagedRowOrder.isInOrder(table, in: database)
            // The key is unique when no two rows share it as DISTINCT compares them: SQLite's count is the oracle.
            let unique = try database.rows("SELECT (SELECT count(*) FROM t) = (SELECT count(*) FROM (SELECT DISTINCT a, b FROM t))").first?.values.first?.number == 1
            if unique { uniqueTables += 1 }
            func findings(knowingOrder: Bool, facts: Bool = false, knowingUniqueKeys: Bool = false, exhaustive: Bool = false) throws -> [String] {
                let log = DiagnosticLog(overrides: [:])
                var engine = RuleEngine(pipeline: pipeline, database: database, log: log)
                if knowingOrder && ordered { engine.inOrder = ["t"] }
                if knowingUniqueKeys && unique { engine.keyKnownUnique = { $0 == "t" } }
                if facts { engine.facts = recorder.facts }
                engine.exhaustive = exhaustive
                try engine.run()
                return log.diagnostics.map(\.formatted)
            }
            let oracle = try findings(knowingOrder: false, exhaustive: true)
            XCTAssertEqual(try findings(knowingOrder: false), oracle, "round \(round): \(rows)")
            XCTAssertEqual(try findings(knowingOrder: true), oracle, "round \(round): \(rows)")
            XCTAssertEqual(try findings(knowingOrder: true, facts: true), oracle, "round \(round): \(rows)")
            XCTAssertEqual(try findings(knowingOrder: false, knowingUniqueKeys: true), oracle, "round \(round): \(rows)")
            if ordered {
                inOrderTables += 1
                if oracle.contains(where: { $0.contains(DiagnosticCode.duplicateKey.rawValue) || $0.contains(DiagnosticCode.duplicateRow.rawValue) }) {
                    inOrderWithDuplicates += 1
                }
            }
        }
        // The cases that matter occurred: tables in order, some of them with duplicate keys found.
        XCTAssertGreaterThan(inOrderTables, 20 * rounds / 150)
        XCTAssertGreaterThan(inOrderWithDuplicates, 5 * rounds / 150)
        XCTAssertGreaterThan(uniqueTables, 5 * rounds / 150, "tables whose key no two rows share")
    }
}
