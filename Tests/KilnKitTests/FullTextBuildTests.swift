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
