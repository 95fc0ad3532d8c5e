import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// `kiln apply` given a patch and update manifest from someone else (both downloaded from the same place, so the
/// manifest's SHA-256 matches whatever the patch holds): the SQL may change the bundle's rows and nothing else; the
/// apply takes turns with builds of the same bundle; an interrupted or killed apply leaves nothing behind for long.
final class HostilePatchCommandTests: CLITestCase {
    /// Builds `build/env.sqlite` (rows a, b, c, with a full-text index) and `old/env.sqlite` (rows a, b), the patch
    /// between them in `update/`, and `app.sqlite`, a copy of OLD.
    private func prepare() throws {
        try writePipeline("p", manifest: """
            { bundle: "env", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }], primaryKey: ["v"], fullText: { name: "t_search", columns: ["v"] } }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
            }
            """)
        try "a\nb\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "old/env.sqlite").status, 0)
        try "a\nb\nc\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let patch = try kiln("patch", "old/env.sqlite", "build/env.sqlite", "--out", "update")
        XCTAssertEqual(patch.status, 0, patch.stderr)
        try FileManager.default.copyItem(at: file("old/env.sqlite"), to: file("app.sqlite"))
    }

    /// Writes `sql` as `folder/patch.sql` with `folder/update.json`: update/'s manifest listing it with its SHA-256.
    private func forge(_ sql: String, in folder: String) throws {
        try FileManager.default.createDirectory(at: file(folder), withIntermediateDirectories: true)
        try Data(sql.utf8).write(to: file(folder + "/patch.sql"))
        var manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("update/update.json"))) as? [String: Any])
        manifest["patches"] = [["file": "patch.sql", "kind": "sql", "bytes": sql.utf8.count, "sha256": try sha256(folder + "/patch.sql")]]
        try JSONSerialization.data(withJSONObject: manifest).write(to: file(folder + "/update.json"))
    }

    /// The hidden files beside `app.sqlite` (temporary copies, journals, locks).
    private func debris() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path).filter { $0.hasPrefix(".app") }.sorted()
    }

    func testAPatchMayChangeTheBundlesRowsAndNothingElse() throws {
        try prepare()
        let original = try sha256("app.sqlite")
        let real = try String(contentsOf: file("update/patch.sql"), encoding: .utf8)
        let stolen = file("stolen.sqlite").path
        let inTransaction = { (statement: String) in real.replacingOccurrences(of: "BEGIN IMMEDIATE;\n", with: "BEGIN IMMEDIATE;\n\(statement)\n") }
        let forged: [(String, String)] = [
            ("VACUUM INTO '\(stolen)';\n" + real, "an ATTACH or VACUUM INTO"),
            ("ATTACH DATABASE '\(stolen)' AS o;\nCREATE TABLE o.copy AS SELECT * FROM main.t;\n" + real, "an ATTACH or VACUUM INTO"),
            (inTransaction("PRAGMA user_version = 9;"), "a PRAGMA (user_version)"),
            (inTransaction("CREATE TRIGGER keep AFTER DELETE ON t BEGIN INSERT INTO t VALUES ('x'); END;"), "a CREATE TRIGGER (keep)"),
            (inTransaction("DROP TABLE t;"), "a DROP TABLE (t)"),
            (inTransaction("SELECT load_extension('/tmp/x.so');"), "a call to load_extension()"),
        ]
        for (sql, what) in forged {
            try forge(sql, in: "bad")
            let run = try kiln("apply", "app.sqlite", "bad/patch.sql")
            XCTAssertEqual(run.status, 1, sql)
            XCTAssertEqual(run.stderr, "Error: bad/patch.sql does not apply to app.sqlite (the patch may only change rows of the database's own tables, but it holds \(what)); nothing was changed\n", sql)
            XCTAssertEqual(try sha256("app.sqlite"), original, sql)
            XCTAssertFalse(FileManager.default.fileExists(atPath: stolen), "\(sql): a file was written outside the bundle")
            XCTAssertEqual(try debris(), [], sql)
        }
        // A full-text table may be dropped to be rebuilt, but the bundle's schema must come out as it went in.
        try forge(real.replacingOccurrences(of: "COMMIT;\n", with: "DROP TABLE t_search;\nCOMMIT;\n"), in: "bad")
        let dropped = try kiln("apply", "app.sqlite", "bad/patch.sql")
        XCTAssertEqual(dropped.status, 1)
        XCTAssertEqual(dropped.stderr, "Error: bad/patch.sql changes the schema of app.sqlite (t_search), which no patch does; nothing was changed\n")
        XCTAssertEqual(try sha256("app.sqlite"), original)
        XCTAssertEqual(try debris(), [])
        // The real patch applies: kiln patch's own statements are within the scope.
        let applied = try kiln("apply", "app.sqlite", "update/patch.sql")
        XCTAssertEqual(applied.status, 0, applied.stderr)
        XCTAssertTrue(try kiln("apply", "app.sqlite", "update/patch.sql").stderr.contains("the patch is already applied"))
    }

    func testApplyWaitsForABuildOfTheSameBundle() throws {
        try prepare()
        let original = try sha256("app.sqlite")
        // This process holds the lock a build of app.sqlite takes.
        let held = try BuildLock(file(".app.sqlite.lock"), timeout: 0)
        let process = Process()
        process.executableURL = CLITestCase.executable
        process.arguments = ["apply", "app.sqlite", "update/patch.sql"]
        process.currentDirectoryURL = workingDirectory
        let errors = Pipe(), output = Pipe()
        process.standardError = errors
        process.standardOutput = output
        try process.run()
        // Its first line says it waits; until the lock is released it changes nothing.
        var said = Data()
        while !said.contains(10) {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
        }
        XCTAssertEqual(String(decoding: said, as: UTF8.self), "waiting for another build of app.sqlite to finish (lock .app.sqlite.lock)\n")
        XCTAssertTrue(process.isRunning)
        XCTAssertEqual(try sha256("app.sqlite"), original)
        held.release()
        process.waitUntilExit()
        let rest = errors.fileHandleForReading.readDataToEndOfFile()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: rest, as: UTF8.self))
        XCTAssertTrue(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).hasPrefix("applied update/patch.sql (sql) to app.sqlite: "))
        XCTAssertNotEqual(try sha256("app.sqlite"), original)
        XCTAssertEqual(try debris(), [], "the lock file goes with the lock")
    }

    func testAnInterruptedApplyLeavesNoJournalAndAKilledOnesFilesAreReclaimed() throws {
        try prepare()
        let original = try sha256("app.sqlite")
        // A patch that writes a row, then reads for a long time: SIGTERM arrives while the copy's journal exists.
        let real = try String(contentsOf: file("update/patch.sql"), encoding: .utf8)
        try forge(real.replacingOccurrences(of: "COMMIT;\n", with: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n;\nCOMMIT;\n"), in: "slow")
        let process = try start(["apply", "app.sqlite", "slow/patch.sql", "--sql-seconds", "600"])
        let journal = ".app.sqlite.\(process.processIdentifier).tmp-journal"
        while process.isRunning, !(try debris()).contains(journal) { usleep(10_000) }
        XCTAssertTrue(process.isRunning, "the apply ended before its journal appeared")
        process.terminate()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertEqual(try debris(), [], "an interrupted apply removes its copy and the copy's journal")
        XCTAssertEqual(try sha256("app.sqlite"), original)

        // What a killed apply left (its copy and journal, under a process id no longer running) goes at the next apply.
        for name in [".app.sqlite.999999.tmp", ".app.sqlite.999999.tmp-journal"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: file(name).path, contents: Data(count: 4096)))
        }
        let applied = try kiln("apply", "app.sqlite", "update/patch.sql")
        XCTAssertEqual(applied.status, 0, applied.stderr)
        XCTAssertEqual(try debris(), [])
    }
}
