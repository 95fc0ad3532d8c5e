import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Full-text indexes are built on a thread of their own while the rules run (`FullTextBuild`): a build whose rules
/// then find errors stops them and leaves nothing behind, and SQL run under a raised `StopSignal` stops.
final class FullTextBuildTests: KilnTestCase {
    func testErrorsFoundOnlyByTheRulesStopTheIndexingAndLeaveNoScratchFiles() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let stops = folder.appendingPathComponent("StopsUTF8.txt")
        let first = try XCTUnwrap(String(contentsOf: stops, encoding: .utf8).split(separator: "\n").first)
        let parts = first.split(separator: ";", omittingEmptySubsequences: false)
        // The first stop's code again, under another name: staged without complaint, refused by the key rule.
        let duplicate = "Άλλη στάση;\(parts[1]);\(parts[2]);\(parts[3])\n"
        let handle = try FileHandle(forWritingTo: stops)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(duplicate.utf8))
        try handle.close()
        let output = temporaryDirectory.appendingPathComponent("out/app.sqlite")
        let outcome = try Builder.build(try ManifestLoader.load(folder.path), options: BuildOptions(output: output))
        XCTAssertFalse(outcome.built)
        let keyErrors = outcome.diagnostics.filter { $0.severity == .error && $0.message.contains(String(parts[1]).trimmingCharacters(in: .whitespaces)) }
        XCTAssertFalse(keyErrors.isEmpty, outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        XCTAssertFalse(outcome.diagnostics.contains { $0.code == DiagnosticCode.bundle.rawValue }, "the rules' errors, not the bundle's")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path).filter { $0 != ".kiln-cache" }.sorted(), ["app.report.json"],
                       "the build cache keeps what was read; nothing else is left")
    }

    func testSQLRunUnderARaisedStopSignalIsInterrupted() throws {
        let database = try Database(path: temporaryDirectory.appendingPathComponent("stop.sqlite").path)
        let count = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200000) SELECT count(*) FROM n"
        let signal = StopSignal()
        XCTAssertEqual(try database.stopping(when: signal) { try database.rows(count) }.first?.values.first?.number, 200_000)
        signal.raise()
        XCTAssertThrowsError(try database.stopping(when: signal) { try database.rows(count) }) { error in
            XCTAssertTrue((error as? SQLiteError)?.isInterrupted == true, "\(error)")
        }
        // A time limit inside keeps the signal (one progress handler checks both).
        XCTAssertThrowsError(try database.stopping(when: signal) { try database.withTimeLimit(60) { try database.rows(count) } }) { error in
            XCTAssertTrue((error as? SQLiteError)?.isInterrupted == true, "\(error)")
        }
        // Outside `stopping(when:)` the connection runs as before.
        XCTAssertEqual(try database.rows(count).first?.values.first?.number, 200_000)
    }
}

extension FullTextBuildTests {
    /// An index started during a write phase of staging (the next source being staged) copies its rows once the
    /// phase is over, under a read lease (`StagingDatabase.lease`), so it sees the rows the phase wrote, never a
    /// lock; and then indexes every row.
    func testAnIndexStartedDuringAWritePhaseCopiesItsRowsAfterIt() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "phases", schemaVersion: 1,
              tables: [{ name: "place", columns: [{ name: "name", type: "text" }, { name: "code", type: "text" }], primaryKey: ["code"],
                         fullText: { name: "place_search", columns: ["name"], unindexed: ["code"] } }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["name", "code"] }, into: "place",
                          columns: { name: "name", code: "code" } }] }
            """, rows: "Άγιος Ανδρέας;1\n")
        let tables = pipeline.manifest.tables
        let staging = try StagingDatabase(url: temporaryDirectory.appendingPathComponent("staging.sqlite"))
        let names = ["Άγιος Ανδρέας", "Ακτή Δυμαίων", "Αγίου Νικολάου"]
        try staging.write { database in
            try SchemaSQL.createStagingTables(tables, in: database)
            for (number, name) in names.enumerated() {
                try database.execute("INSERT INTO place (name, code) VALUES (\(quoteLiteral(name)), '\(number)')")
            }
        }
        let build = FullTextBuild(tables: tables, destination: temporaryDirectory.appendingPathComponent("out.sqlite"))
        defer { build.discard() }
        var leasedDuringThePhase = -1
        try staging.write { database in
            build.start("place", staging: staging, inOrder: false)
            // The copy has had time to ask for its lease: it waits for this phase, which writes one row more.
            Thread.sleep(forTimeInterval: 0.3)
            leasedDuringThePhase = staging.outstandingLeases
            try database.execute("INSERT INTO place (name, code) VALUES ('Ρίο', '3')")
        }
        XCTAssertEqual(leasedDuringThePhase, 0, "no lease is handed out during a write phase")
        // The bundle's table and its FTS5 table reading it, as `BundleWriter` writes them, then the index.
        let bundle = try Database(path: temporaryDirectory.appendingPathComponent("bundle.sqlite").path, readOnlyAttachments: true)
        let table = try XCTUnwrap(tables.first)
        try bundle.execute(SchemaSQL.createTable(table))
        let lease = staging.lease()
        try lease.attach(to: bundle, as: "staging")
        try bundle.execute("INSERT INTO place (name, code) \(StagedRowOrder.rows(of: table, selecting: "name, code", arrangement: .sorted))")
        try lease.release(detaching: "staging", from: bundle)
        try bundle.execute(SchemaSQL.createFullText(try XCTUnwrap(table.fullText), content: table.name))
        try build.copy("place_search", into: bundle)
        XCTAssertEqual(staging.outstandingLeases, 0, "the copy returned its lease")
        XCTAssertEqual(try bundle.rows("SELECT name FROM place_search ORDER BY rowid").compactMap { $0.values.first?.textValue },
                       try staging.database.rows("SELECT name FROM place ORDER BY code").compactMap { $0.values.first?.textValue })
        XCTAssertEqual(try bundle.rows("SELECT code FROM place_search WHERE place_search MATCH 'Ρίο'").compactMap { $0.values.first?.textValue }, ["3"],
                       "the row the phase wrote is indexed")
        try bundle.execute("INSERT INTO place_search (place_search, rank) VALUES ('integrity-check', 1)")
        XCTAssertEqual(try bundle.rows("SELECT code FROM place_search WHERE place_search MATCH 'Ακτή'").compactMap { $0.values.first?.textValue }, ["1"])
    }
}

extension FullTextBuildTests {
    /// For a target whose SQLite has FTS4 and no FTS5 (Android 24), the FTS4 table its bundle gets is indexed from the
    /// same rows after the FTS5 index; its shadow rows are those FTS4 writes when it rebuilds the table in place. A
    /// target with FTS5 gets none, and an index the cache supplied (`adopt`) leaves the target to rebuild its own.
    func testATargetsFTS4IndexHoldsTheRowsFTS4RebuildsAndAnAdoptedIndexHasNone() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "targets", schemaVersion: 1, targets: { ios: "15", android: "24" },
              tables: [{ name: "place", columns: [{ name: "id", type: "integer" }, { name: "name", type: "text" }], primaryKey: ["id"],
                         fullText: { name: "place_search", columns: ["name"], unindexed: ["id"], tokenize: "unicode61 remove_diacritics 2" } }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["id", "name"] }, into: "place",
                          columns: { id: "id", name: "name" } }] }
            """, rows: "1;Άγιος Ανδρέας\n")
        let tables = pipeline.manifest.tables
        let table = try XCTUnwrap(tables.first)
        let fullText = try XCTUnwrap(table.fullText)
        let android = try XCTUnwrap(pipeline.manifest.targets.first { $0.platform == "android" })
        let ios = try XCTUnwrap(pipeline.manifest.targets.first { $0.platform == "ios" })
        let staging = try StagingDatabase(url: temporaryDirectory.appendingPathComponent("staging.sqlite"))
        let names = ["Άγιος Ανδρέας", "Ακτή Δυμαίων", "Αγίου Νικολάου", "Café Müller", "Ρίο"]
        try staging.write { database in
            try SchemaSQL.createStagingTables(tables, in: database)
            // Staged out of key order, so that the rows are sorted and take their keys as rowids.
            for (number, name) in names.enumerated().reversed() {
                try database.execute("INSERT INTO place (id, name) VALUES (\(number * 7 + 3), \(quoteLiteral(name)))")
            }
        }
        let build = FullTextBuild(tables: tables, destination: temporaryDirectory.appendingPathComponent("out.sqlite"), targets: [android, ios])
        defer { build.discard() }
        build.start("place", staging: staging, inOrder: false)
        let indexes = build.targetIndexes(for: android)
        let index = try XCTUnwrap(indexes["place_search"], "\(indexes)")
        XCTAssertEqual(build.targetIndexes(for: ios), [:], "iOS has FTS5")
        // The oracle: the bundle's table with the FTS4 table, rebuilt in place; then the same with the built index copied in.
        let declaration = try XCTUnwrap(TargetSQL.fullText4(fullText, of: table, target: android))
        func bundle(_ name: String) throws -> Database {
            let database = try Database(path: temporaryDirectory.appendingPathComponent(name).path)
            try database.execute(SchemaSQL.createTable(table))
            let lease = staging.lease()
            try lease.attach(to: database, as: "staging")
            try database.execute("INSERT INTO place (id, name) \(StagedRowOrder.rows(of: table, selecting: "id, name", arrangement: .sorted))")
            try lease.release(detaching: "staging", from: database)
            try database.execute(declaration)
            return database
        }
        let rebuilt = try bundle("rebuilt.sqlite")
        try rebuilt.execute("INSERT INTO place_search (place_search) VALUES ('rebuild')")
        let copied = try bundle("copied.sqlite")
        try copied.execute("ATTACH DATABASE \(quoteLiteral(index.path)) AS built")
        try copied.transaction { try FullTextBuild.copyShadowTables(of: "place_search", from: "built", into: copied) }
        for shadow in ["segments", "segdir", "docsize", "stat"].map({ "place_search_\($0)" }) {
            let theirs = try rebuilt.rows("SELECT * FROM \(shadow) ORDER BY 1, 2").map(\.values)
            XCTAssertFalse(theirs.isEmpty && !shadow.hasSuffix("_segments"), shadow)
            XCTAssertEqual(try copied.rows("SELECT * FROM \(shadow) ORDER BY 1, 2").map(\.values), theirs, shadow)
        }
        XCTAssertEqual(try copied.rows("SELECT id FROM place_search WHERE place_search MATCH 'muller'").compactMap { $0.values.first?.number }, [24])

        let adopting = FullTextBuild(tables: tables, destination: temporaryDirectory.appendingPathComponent("adopted.sqlite"), targets: [android])
        defer { adopting.discard() }
        adopting.adopt("place", index: index)
        XCTAssertEqual(adopting.targetIndexes(for: android), [:], "an adopted index: the target rebuilds its FTS4 table")
    }
}
