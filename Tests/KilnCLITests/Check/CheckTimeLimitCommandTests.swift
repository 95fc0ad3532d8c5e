import Foundation
import XCTest
import KilnC
import KilnKit

/// `kiln check` on a doctored bundle whose full-text table was replaced by an endless recursive view: the check's
/// own reading of the bundle (integrity, schema, metadata) is under the manifest's `limits.sqlSeconds`, like its
/// rules. Before, it ran past 120 s with `sqlSeconds: 2`; now it stops at the limit with one error, exit 1.
final class CheckTimeLimitCommandTests: CLITestCase {
    func testAnEndlessViewInABundleIsStoppedAtTheTimeLimit() throws {
        let folder = try copy("raw/patras", to: "p")
        let manifest = folder.appendingPathComponent("kiln.json5")
        var text = try String(contentsOf: manifest, encoding: .utf8)
        let brace = try XCTUnwrap(text.firstIndex(of: "{"))
        text.insert(contentsOf: " limits: { sqlSeconds: 1 },", at: text.index(after: brace))
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--out", "b.sqlite", "--quiet").status, 0)
        let clean = try kiln("check", "b.sqlite", "--manifest", "p")
        XCTAssertFalse(clean.stdout.contains("sql.time-limit"), clean.stdout)

        let database = try Database(path: file("b.sqlite").path, mode: .readWrite)
        try database.execute("DROP TABLE stop_search; CREATE VIEW stop_search AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x AS name FROM r")
        try database.close()
        let started = Date()
        let run = try kiln("check", "b.sqlite", "--manifest", "p")
        XCTAssertLessThan(Date().timeIntervalSince(started), 60, "stopped at the limit, not run forever")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("b.sqlite: error: reading b.sqlite took longer than 1 s (limits.sqlSeconds, per 100 MB of the bundle) and was stopped; the checks after it did not run [sql.time-limit]"), run.stdout)
    }
}
