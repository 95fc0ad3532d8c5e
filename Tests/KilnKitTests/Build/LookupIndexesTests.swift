import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The rules' lookup indexes are created in staging only when a rule needs one (`LookupIndexes`): a key the staging
/// writer saw in order and without repeats needs none, so staging is not written (and the bundle's thread may go on
/// reading it); a repeated key, a foreign key or a manifest SQL rule creates theirs, each in a write phase of its own
/// (which waits for the readers). Creating one does not count against the rule's time limit.
final class LookupIndexesTests: KilnTestCase {
    private let manifest = """
        { bundle: "lookups", schemaVersion: 1,
          tables: [
            { name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true }], primaryKey: ["code"] },
            { name: "visit", columns: [{ name: "stop", type: "text"%REF% }, { name: "n", type: "integer" }] },
          ],
          sources: [{ name: "stops", format: "delimited", path: "rows.txt", options: { fields: ["code", "name"] }, into: "stop",
                      columns: { code: "code", name: "name" } }]%@ }
        """

    /// Stages `codes` into `stop` (recording the writer's facts) and `visits` into `visit` (whose `stop` refers to a
    /// stop when there are visits), runs the rules with lazy
    /// lookup indexes, and returns the findings, the indexes staging then holds and how many write phases were
    /// asked for.
    private func run(codes: [String], visits: [String] = [], rules: String = "") throws -> (findings: [String], indexes: [String], waits: Int) {
        let reference = visits.isEmpty ? "" : #", references: "stop.code""#
        let pipeline = try loadPipeline(manifest: manifest.replacingOccurrences(of: "%@", with: rules).replacingOccurrences(of: "%REF%", with: reference),
                                        rows: "a;b\n")
        let database = try Database(path: temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString).sqlite").path)
        try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: database)
        let insert = try database.prepare("INSERT INTO stop (code, name, _file, _line) VALUES (?, ?, 'rows.txt', ?)")
        var recorder = StagedRowRecorder(targets: try XCTUnwrap(pipeline.sources.first?.targets), continuing: [:])
        for (line, code) in codes.enumerated() {
            let row: [SQLValue] = [.text(code), .text("Stop \(code)")]
            try insert.run(row + [.integer(Int64(line + 1))])
            recorder.record(row + [.text("rows.txt"), .integer(Int64(line + 1))], target: 0)
        }
        let visit = try database.prepare("INSERT INTO visit (stop, n, _file, _line) VALUES (?, 1, 'visits.txt', ?)")
        for (line, code) in visits.enumerated() { try visit.run([.text(code), .integer(Int64(line + 1))]) }
        let log = DiagnosticLog(overrides: [:])
        var engine = RuleEngine(pipeline: pipeline, database: database, log: log)
        let stop = try XCTUnwrap(pipeline.manifest.table("stop"))
        if try StagedRowOrder.isInOrder(stop, in: database) { engine.inOrder = ["stop"] }
        engine.facts = recorder.facts
        var waits = 0
        engine.lookupIndexes = LookupIndexes(manifest: pipeline.manifest, database: database) { create in
            waits += 1
            try create()
        }
        try engine.run()
        let indexes = try database.rows("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").compactMap { $0.values.first?.textValue }
        return (log.diagnostics.map(\.formatted), indexes, waits)
    }

    func testAKeySeenInOrderNeedsNoIndex() throws {
        let result = try run(codes: ["0102", "0104", "0105"])
        XCTAssertEqual(result.findings, [])
        XCTAssertEqual(result.indexes, [])
        XCTAssertEqual(result.waits, 0)
    }

    func testARepeatedKeyIsIndexedAndFoundWithItsLines() throws {
        // Out of order, and "0104" twice (lines 1 and 3): grouping finds the repeat, the search its lines.
        let result = try run(codes: ["0104", "0102", "0104"])
        XCTAssertEqual(result.indexes, ["kiln_lookup_1"])
        XCTAssertEqual(result.waits, 1)
        XCTAssertEqual(result.findings.count, 1, "\(result.findings)")
        XCTAssertTrue(result.findings.first?.contains("rows.txt:3") == true, "\(result.findings)")
        XCTAssertTrue(result.findings.first?.contains("first at rows.txt:1") == true, "\(result.findings)")
    }

    func testAForeignKeyIndexesBothSidesOnce() throws {
        // visits.txt line 2 names a stop nobody listed.
        let result = try run(codes: ["0102", "0104"], visits: ["0104", "0999"])
        XCTAssertEqual(result.indexes, ["kiln_lookup_1", "kiln_lookup_2"])
        XCTAssertEqual(result.waits, 2, "one write phase per index")
        XCTAssertEqual(result.findings.filter { $0.contains(DiagnosticCode.foreignKey.rawValue) }.count, 1, "\(result.findings)")
        XCTAssertTrue(result.findings.contains { $0.contains("visits.txt:2") && $0.contains("0999") }, "\(result.findings)")
    }

    func testAManifestSQLRuleGetsEveryIndex() throws {
        let result = try run(codes: ["0102", "0104"], visits: ["0104"],
                             rules: #", rules: [{ code: "visit.count", kind: "sql", sql: "SELECT _file, _line FROM visit WHERE n > 5", message: "too many" }]"#)
        XCTAssertEqual(result.indexes, ["kiln_lookup_1", "kiln_lookup_2"])
        XCTAssertEqual(result.waits, 2, "one write phase per index")
    }

    func testBuildingAnIndexDoesNotCountAgainstTheTimeLimit() throws {
        let database = try Database(path: ":memory:")
        let counting = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) FROM c"
        // Paused: the time spent inside is given back, and the query after it runs.
        XCTAssertNoThrow(try database.withTimeLimit(0.3) {
            database.pausingTimeLimit { Thread.sleep(forTimeInterval: 0.5) }
            _ = try database.rows(counting)
        })
        // The control: the same sleep without the pause leaves the query no time.
        XCTAssertThrowsError(try database.withTimeLimit(0.3) {
            Thread.sleep(forTimeInterval: 0.5)
            _ = try database.rows(counting)
        }) { error in
            XCTAssertTrue((error as? SQLiteError)?.isInterrupted == true, "\(error)")
        }
    }
}
