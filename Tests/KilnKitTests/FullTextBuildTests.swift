import Foundation
import XCTest
@testable import KilnKit

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
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path), ["app.report.json"])
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
    /// An index started while the next source's writer holds the staging file (it wrote pages out) waits for it,
    /// instead of failing with "database is locked", and then indexes every row.
    func testAnIndexStartedWhileStagingIsLockedWaitsForTheLock() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "locked", schemaVersion: 1,
              tables: [{ name: "place", columns: [{ name: "name", type: "text" }, { name: "code", type: "text" }], primaryKey: ["code"],
                         fullText: { name: "place_search", columns: ["name"], unindexed: ["code"] } }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["name", "code"] }, into: "place",
                          columns: { name: "name", code: "code" } }] }
            """, rows: "Άγιος Ανδρέας;1\n")
        let tables = pipeline.manifest.tables
        let stagingURL = temporaryDirectory.appendingPathComponent("staging.sqlite")
        let staging = try Database(path: stagingURL.path)
        try SchemaSQL.createStagingTables(tables, in: staging)
        let names = ["Άγιος Ανδρέας", "Ακτή Δυμαίων", "Αγίου Νικολάου"]
        for (number, name) in names.enumerated() {
            try staging.execute("INSERT INTO place (name, code) VALUES (\(quoteLiteral(name)), '\(number)')")
        }
        // Another connection takes the file as a writer writing pages out does, and lets go a little later.
        let writer = try Database(path: stagingURL.path, mode: .readWrite)
        try writer.execute("BEGIN EXCLUSIVE")
        final class Holder: @unchecked Sendable { let writer: Database; init(_ writer: Database) { self.writer = writer } }
        let holder = Holder(writer)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            try? holder.writer.execute("COMMIT")
            released.signal()
        }
        let build = FullTextBuild(tables: tables, destination: temporaryDirectory.appendingPathComponent("out.sqlite"))
        defer { build.discard() }
        build.start("place", staging: stagingURL, inOrder: false)
        build.waitForRowCopies()
        XCTAssertEqual(released.wait(timeout: .now() + 5), .success, "the copy waited for the writer")
        // The bundle's table and its FTS5 table reading it, as `BundleWriter` writes them, then the index.
        let bundle = try Database(path: temporaryDirectory.appendingPathComponent("bundle.sqlite").path)
        let table = try XCTUnwrap(tables.first)
        try bundle.execute(SchemaSQL.createTable(table))
        try bundle.execute("ATTACH DATABASE \(quoteLiteral(stagingURL.path)) AS staging")
        try bundle.execute("INSERT INTO place (name, code) \(StagedRowOrder.rows(of: table, selecting: "name, code", inOrder: false))")
        try bundle.execute("DETACH DATABASE staging")
        try bundle.execute(SchemaSQL.createFullText(try XCTUnwrap(table.fullText), content: table.name))
        try build.copy("place_search", into: bundle)
        XCTAssertEqual(try bundle.rows("SELECT name FROM place_search ORDER BY rowid").compactMap { $0.values.first?.textValue },
                       try staging.rows("SELECT name FROM place ORDER BY code").compactMap { $0.values.first?.textValue })
        try bundle.execute("INSERT INTO place_search (place_search, rank) VALUES ('integrity-check', 1)")
        XCTAssertEqual(try bundle.rows("SELECT code FROM place_search WHERE place_search MATCH 'Ακτή'").compactMap { $0.values.first?.textValue }, ["1"])
    }
}
