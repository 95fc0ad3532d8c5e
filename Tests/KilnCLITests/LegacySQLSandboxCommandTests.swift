import Foundation
import XCTest
import KilnKit

/// The legacy-SQL sandbox through the `kiln` binary: what an input's SQL computes must be decided by the input.
/// `DEFAULT (random())` in a script and a database file's view calling `random()` are errors naming the line or
/// the file (before, they ran and two builds shipped different values); multi-row `VALUES` and a statement after a
/// refused one on its line run.
final class LegacySQLSandboxCommandTests: CLITestCase {
    private func pipeline(input: String) throws {
        try writePipeline("p", manifest: """
            { bundle: "legacy", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "name", type: "text" }, { name: "n", type: "integer" }] }],
              sources: [{ name: "s", format: "sqlite", path: "\(input)",
                          options: { query: "SELECT name, n FROM m ORDER BY name", fields: ["name", "n"] },
                          into: "t", columns: { name: "name", n: "n" } }] }
            """)
    }

    func testAScriptsRandomDefaultIsAnErrorAndTheRestIsRead() throws {
        try pipeline(input: "legacy.sql")
        try """
            CREATE TABLE m (name TEXT CHECK (length(name) > 0), n INTEGER DEFAULT (random()));
            INSERT INTO m VALUES ('a', 1), ('b', 2);
            INSERT INTO m (name) VALUES ('c');
            DROP TABLE m; INSERT INTO m VALUES ('d', 4);

            """.write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let first = try kiln("build", "p", "--out", "one.sqlite")
        XCTAssertEqual(first.status, 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("p/legacy.sql:3: statement failed: random() is not allowed in data read from a file: its result is not decided by the input"), first.stderr)
        XCTAssertTrue(first.stderr.contains("p/legacy.sql:4: DROP TABLE is not allowed"), first.stderr)
        XCTAssertTrue(first.stderr.contains("t  3 rows"), "a, b and d were read: \(first.stderr)")
        let second = try kiln("build", "p", "--out", "two.sqlite")
        XCTAssertEqual(second.stderr.replacingOccurrences(of: "two", with: "one"), first.stderr, "the same findings every time")
    }

    func testADatabaseFilesViewCallingRandomIsRefused() throws {
        try pipeline(input: "legacy.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", file("p/legacy.sqlite").path,
                             "CREATE TABLE data (name TEXT); INSERT INTO data VALUES ('a'); CREATE VIEW m AS SELECT name, random() AS n FROM data;"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("the source's query failed on legacy.sqlite: refused: it calls random(), whose result is not decided by the input"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/legacy.sqlite").path), "nothing shipped")
    }
}
