import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The not-null rules of a table are answered by one scan of it (`RuleEngine`), or by what the staging writer saw
/// (`StagedTableFacts`): columns free of NULLs are not queried again, and every NULL still becomes one finding with
/// its file and line, either way.
final class NotNullScanTests: KilnTestCase {
    func testEveryMissingValueIsReportedOnceWithItsLineAndFreeColumnsNone() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "nulls", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "k", type: "text" }, { name: "x", type: "text", notNull: true },
                                              { name: "y", type: "text", notNull: true }, { name: "z", type: "text", notNull: true }],
                         primaryKey: ["k"] }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["k", "x", "y", "z"] }, into: "t",
                          columns: { k: "k", x: "x", y: "y", z: "z" } }] }
            """, rows: "a;b;c;d\n")
        let database = try Database(path: temporaryDirectory.appendingPathComponent("staging.sqlite").path)
        try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: database)
        // Rows 1…50 from rows.txt; y is missing on lines 7 and 31, z on line 31; x and k are never missing.
        let insert = try database.prepare("INSERT INTO t (k, x, y, z, _file, _line) VALUES (?, ?, ?, ?, 'rows.txt', ?)")
        var missing: [(column: String, line: Int)] = []
        var recorder = StagedRowRecorder(targets: try XCTUnwrap(pipeline.sources.first?.targets), continuing: [:])
        for line in 1...50 {
            let y: SQLValue = [7, 31].contains(line) ? .null : .text("y\(line)")
            let z: SQLValue = line == 31 ? .null : .text("z\(line)")
            if y == .null { missing.append(("y", line)) }
            if z == .null { missing.append(("z", line)) }
            let row: [SQLValue] = [.text(String(format: "%03d", line)), .text("x"), y, z, .integer(Int64(line))]
            try insert.run(row)
            recorder.record(Array(row[..<4]) + [.text("rows.txt"), .integer(Int64(line))], target: 0)
        }
        XCTAssertEqual(["k", "x", "y", "z"].map { recorder.facts["t"]?.mayHoldNull($0) }, [false, false, true, true])
        for useFacts in [false, true] {
            let log = DiagnosticLog(overrides: [:])
            var engine = RuleEngine(pipeline: pipeline, database: database, log: log)
            if useFacts { engine.facts = recorder.facts }
            try engine.run()
            let found = log.diagnostics.filter { $0.code == DiagnosticCode.notNull.rawValue }
            XCTAssertEqual(found.map { "\($0.provenance?.file ?? ""):\($0.provenance?.line ?? 0)" }.sorted(),
                           missing.map { "rows.txt:\($0.line)" }.sorted())
            for (column, line) in missing {
                XCTAssertEqual(found.filter { $0.provenance?.line == line && $0.message.hasSuffix("has no \(column)") }.count, 1, "\(column) on line \(line)")
            }
            XCTAssertFalse(found.contains { $0.message.hasSuffix("has no x") || $0.message.hasSuffix("has no k") })
        }
    }
}
