import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The rules checked on two threads (`RuleEngine.parallel`: a helper under a read lease of staging) give the log a
/// serial run gives: the same findings, stored and counted, in the same order, rule by rule. The rules here find
/// many rows each (more than a code stores), some need a lookup index (which only the owner's thread may create) and
/// one is the manifest's own SQL.
final class ParallelRulesTests: KilnTestCase {
    private let manifest = """
        { bundle: "parallel", schemaVersion: 1,
          tables: [
            { name: "stop", columns: [
                { name: "code", type: "text" }, { name: "name", type: "text", notNull: true },
                { name: "zone", type: "text", enum: ["A", "B"] }, { name: "ref", type: "text", pattern: "^[0-9]+$" },
                { name: "rank", type: "integer", range: { min: 0, max: 50 } }, { name: "lat", type: "real" }, { name: "lon", type: "real" } ],
              primaryKey: ["code"] },
            { name: "visit", columns: [{ name: "stop", type: "text", references: "stop.code" }, { name: "n", type: "integer", range: { min: 1, max: 9 } }] },
          ],
          sources: [{ name: "stops", format: "delimited", path: "rows.txt", options: { fields: ["code", "name"] }, into: "stop",
                      columns: { code: "code", name: "name" } }],
          rules: [
            { code: "far", kind: "bounds", table: "stop", latitude: "lat", longitude: "lon",
              box: { minLatitude: 38.0, maxLatitude: 38.9, minLongitude: 21.0, maxLongitude: 22.0 } },
            { code: "long-name", kind: "sql", sql: "SELECT _file, _line, name FROM stop WHERE length(name) > 7 ORDER BY rowid", message: "{name} is long" },
          ] }
        """

    /// Stages the same rows into a new staging file, runs the rules (on two threads when `parallel`; those of `known`
    /// replayed instead) and returns the log, the lookup indexes staging then holds and the findings of each rule
    /// checked.
    private func check(parallel: Bool, known: [Int: ReplayableFindings] = [:])
        throws -> (log: DiagnosticLog, indexes: [String], found: [Int: ReplayableFindings]) {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a;b\n")
        let staging = try StagingDatabase(url: temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString).sqlite"))
        try staging.write { database in
            try SchemaSQL.createStagingTables(pipeline.manifest.tables, in: database)
            let stop = try database.prepare("INSERT INTO stop (code, name, zone, ref, rank, lat, lon, _file, _line) VALUES (?, ?, ?, ?, ?, ?, ?, 'rows.txt', ?)")
            // Out of order, every seventh code repeated, zones, refs, ranks and places partly wrong, some names NULL.
            for line in 1...600 {
                let code = String(format: "%04d", (line * 37) % 520)
                let name: SQLValue = line % 11 == 0 ? .null : .text("Stop \(line)")
                try stop.run([.text(code), name, .text(["A", "B", "C"][line % 3]), .text(line % 5 == 0 ? "x\(line)" : "\(line)"),
                              .integer(Int64(line % 70)), .real(38 + Double(line % 13) / 10), .real(21.5), .integer(Int64(line))])
            }
            let visit = try database.prepare("INSERT INTO visit (stop, n, _file, _line) VALUES (?, ?, 'visits.txt', ?)")
            for line in 1...400 { try visit.run([.text(String(format: "%04d", line * 3)), .integer(Int64(line % 12)), .integer(Int64(line))]) }
        }
        let log = DiagnosticLog(overrides: [DiagnosticCode.pattern.rawValue: .warning])
        var engine = RuleEngine(pipeline: pipeline, database: staging.database, log: log)
        engine.lookupIndexes = LookupIndexes(manifest: pipeline.manifest, database: staging.database) { create in
            try staging.write { _ in try create() }
        }
        if parallel { engine.parallel = staging }
        engine.known = known
        let found = try engine.run()
        XCTAssertEqual(staging.outstandingLeases, 0, "the helper returned its lease")
        let indexes = try staging.database.rows("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").compactMap { $0.values.first?.textValue }
        try staging.database.close()
        return (log, indexes, found)
    }

    func testFindingsComeOutInTheOrderOfASerialRun() throws {
        let serial = try check(parallel: false)
        let codes = Set(serial.log.diagnostics.map(\.code))
        let expected: [DiagnosticCode] = [.duplicateKey, .notNull, .enumeration, .range, .foreignKey]
        XCTAssertTrue(codes.isSuperset(of: expected.map(\.rawValue) + ["far", "long-name"]), "\(codes)")
        XCTAssertFalse(serial.log.tally.notStored.isEmpty, "some code finds more rows than it stores")
        for _ in 0..<5 {
            let parallel = try check(parallel: true)
            XCTAssertEqual(parallel.log.diagnostics, serial.log.diagnostics)
            XCTAssertEqual(parallel.log.tally.notStored, serial.log.tally.notStored)
            XCTAssertEqual(parallel.indexes, serial.indexes)
        }
    }

    /// Rules whose findings are known (the build cache's) are not checked, and their findings replayed in their turn
    /// give the log of a run that checked them: every rule known, some, or none, on one thread or two.
    func testKnownFindingsReplayedInTheirTurnGiveTheLogOfARunThatCheckedThem() throws {
        let serial = try check(parallel: false)
        XCTAssertFalse(serial.indexes.isEmpty, "the references and key rules made lookup indexes")
        XCTAssertFalse(serial.found.isEmpty)
        XCTAssertTrue(serial.found.values.contains { !$0.notStored.isEmpty }, "a rule found more rows than a code stores")
        let all = try check(parallel: false, known: serial.found)
        XCTAssertEqual(all.log.diagnostics, serial.log.diagnostics)
        XCTAssertEqual(all.log.tally.notStored, serial.log.tally.notStored)
        // No rule of known findings was checked; a not-null rule that one scan of its table answered with others
        // is checked alone now, and finds nothing.
        XCTAssertTrue(Set(all.found.keys).isDisjoint(with: serial.found.keys), "\(all.found.keys.sorted())")
        XCTAssertTrue(all.found.values.allSatisfy { $0 == ReplayableFindings(DiagnosticLog()) })
        XCTAssertEqual(all.indexes, [], "no rule ran, so no lookup index was made")
        for parallel in [false, true] {
            let some = serial.found.filter { $0.key % 2 == 0 }
            let run = try check(parallel: parallel, known: some)
            XCTAssertEqual(run.log.diagnostics, serial.log.diagnostics, "parallel \(parallel)")
            XCTAssertEqual(run.log.tally.notStored, serial.log.tally.notStored, "parallel \(parallel)")
            XCTAssertTrue(Set(run.found.keys).isSuperset(of: Set(serial.found.keys).subtracting(some.keys)), "the others were checked")
            XCTAssertTrue(Set(run.found.keys).isDisjoint(with: some.keys), "the known were not")
            for (position, findings) in run.found {
                XCTAssertEqual(findings, serial.found[position] ?? ReplayableFindings(DiagnosticLog()), "rule \(position)")
            }
        }
        // Findings made up for one rule are what the log gets for it: the rule is not checked behind them.
        let position = try XCTUnwrap(serial.found.filter { !$0.value.stored.isEmpty }.keys.min())
        let madeUp = ReplayableFindings(DiagnosticLog())
        let replaced = try check(parallel: false, known: [position: madeUp])
        XCTAssertLessThan(replaced.log.diagnostics.count + replaced.log.tally.notStored.values.reduce(0, +),
                          serial.log.diagnostics.count + serial.log.tally.notStored.values.reduce(0, +))
    }
}
