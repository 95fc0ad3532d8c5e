import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// A bundle another process holds (issue 31, item 4): a writer's `BEGIN EXCLUSIVE` before its first change, a WAL
/// writer with an open transaction, a WAL connection whose committed edit is still only in the log. Every command
/// that reads or replaces the bundle refuses with exit 74 and one sentence, and nothing is replaced or exported.
final class BundleLockCommandTests: CLITestCase {
    private func firstLine(_ run: Run) -> String { String(run.stderr.prefix { $0 != "\n" }) }

    private func locked(_ path: String) -> String {
        "Error: \(path) is locked by another process (an app or a database browser has it open); close it and try again"
    }

    /// The SHA-256 of `path`, read by another process (this one would drop its holders' locks).
    private func digestElsewhere(_ path: String) throws -> String { try ExternalDigest.sha256sum(file(path).path) }

    /// Builds `build/env.sqlite` (rows a, b, c) and `old/env.sqlite` (rows a, b), and the patch between them.
    private func prepare() throws {
        try writePipeline("p", manifest: """
            { bundle: "env", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }], primaryKey: ["v"] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
              exports: [{ name: "text", files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }] }],
            }
            """)
        try "a\nb\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "old/env.sqlite").status, 0)
        try "a\nb\nc\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        XCTAssertEqual(try kiln("patch", "old/env.sqlite", "build/env.sqlite", "--out", "update").status, 0)
    }

    /// A connection of this (test) process to `path` in the state `holder` names; the `kiln` binary is another process.
    private func hold(_ path: String, _ holder: String) throws -> Database {
        let database = try Database(path: file(path).path, mode: .readWrite)
        switch holder {
        case "exclusive":
            try database.execute("BEGIN EXCLUSIVE")
        case "WAL writer":
            _ = try database.rows("PRAGMA journal_mode = WAL")
            try database.execute("BEGIN; INSERT INTO t VALUES ('EDITED')")
        default:
            _ = try database.rows("PRAGMA journal_mode = WAL")
            _ = try database.rows("PRAGMA wal_autocheckpoint = 0")
            try database.execute("INSERT INTO t VALUES ('EDITED')")
        }
        return database
    }

    func testEveryCommandRefusesABundleAnotherProcessHolds() throws {
        try prepare()
        for holder in ["exclusive", "WAL writer", "WAL edit not checkpointed"] {
            let browser = try hold("build/env.sqlite", holder)
            let oldBrowser = try hold("old/env.sqlite", holder)
            var before: [String: String] = [:]
            for path in ["build/env.sqlite", "build/env.report.json", "old/env.sqlite"] { before[path] = try digestElsewhere(path) }
            let runs: [(String, [String], String)] = [
                ("build", ["build", "p", "--quiet"], "build/env.sqlite"),
                ("baseline guard", ["build", "p", "--quiet", "--out", "other/env.sqlite", "--baseline", "build/env.sqlite"], "build/env.sqlite"),
                ("check", ["check", "build/env.sqlite", "--manifest", "p"], "build/env.sqlite"),
                ("diff", ["diff", "build/env.sqlite", "old/env.sqlite", "--manifest", "p"], "build/env.sqlite"),
                ("export", ["export", "text", "build/env.sqlite", "--out", "out", "--manifest", "p"], "build/env.sqlite"),
                ("patch", ["patch", "build/env.sqlite", "old/env.sqlite", "--out", "again"], "build/env.sqlite"),
                ("apply", ["apply", "old/env.sqlite", "update/patch.sql"], "old/env.sqlite"),
                ("report", ["report", "build/env.report.json", "--bundle", "build/env.sqlite", "--out", "page.html"], "build/env.sqlite"),
            ]
            for (name, arguments, held) in runs {
                let run = try kiln(arguments)
                XCTAssertEqual(run.status, 74, "\(holder): \(name): \(run.stderr)")
                XCTAssertEqual(firstLine(run), locked(held), "\(holder): \(name)")
                for (path, digest) in before { XCTAssertEqual(try digestElsewhere(path), digest, "\(holder): \(name) left \(path) as it was") }
            }
            // The build makes its output folder before it finds the baseline held; nothing is in it but the build
            // cache's entries of the sources it read (kept after any build that stops, as the next one may use them).
            XCTAssertEqual(((try? FileManager.default.contentsOfDirectory(atPath: file("other").path)) ?? []).filter { $0 != KilnFileNames.cacheFolder }, [], holder)
            for path in ["out", "again", "page.html"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: file(path).path), "\(holder): \(path) was written")
            }
            try browser.execute(holder == "WAL edit not checkpointed" ? "DELETE FROM t WHERE v = 'EDITED'" : "ROLLBACK")
            try oldBrowser.execute(holder == "WAL edit not checkpointed" ? "DELETE FROM t WHERE v = 'EDITED'" : "ROLLBACK")
            _ = try browser.rows("PRAGMA journal_mode = DELETE")
            _ = try oldBrowser.rows("PRAGMA journal_mode = DELETE")
            try browser.close()
            try oldBrowser.close()
        }
        // Once the holders are gone, every command goes on, and the edit never shipped.
        let export = try kiln("export", "text", "build/env.sqlite", "--out", "out", "--manifest", "p")
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertEqual(try String(contentsOf: file("out/out.txt"), encoding: .utf8), "a\nb\nc\n")
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        XCTAssertEqual(try kiln("check", "build/env.sqlite", "--manifest", "p").status, 0)
    }

    /// Issue 31, item 9: a build refused because the bundle is held leaves the report in place as it was (not a
    /// `"built": false` report), and says so in one sentence.
    func testALockRefusalKeepsThePreviousReport() throws {
        try prepare()
        let report = try String(contentsOf: file("build/env.report.json"), encoding: .utf8)
        let browser = try hold("build/env.sqlite", "exclusive")
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 74)
        XCTAssertEqual(firstLine(run), locked("build/env.sqlite"))
        XCTAssertEqual(try String(contentsOf: file("build/env.report.json"), encoding: .utf8), report)
        XCTAssertTrue(report.contains(#""built" : true"#) || report.contains(#""built":true"#), report)
        try browser.execute("ROLLBACK")
        try browser.close()
    }
}
