import Foundation
import XCTest
import KilnKit

/// Names SQLite and Kiln keep for themselves, in any case, through the `kiln` binary: a manifest error at load with
/// the line (exit 64), not a late failure ("cannot write the staging database", exit 74; or exit 1 in the bundle).
final class ReservedNamesCommandTests: CLITestCase {
    func testATableNamedLikeSQLitesOrKilnsOwnInAnotherCaseIsAManifestError() throws {
        for name in ["SQLITE_x", "Kiln_metadata"] {
            let folder = try writePipeline(name, manifest: """
                { bundle: "reserved", schemaVersion: 1,
                  tables: [{ name: "\(name)", columns: [{ name: "v", type: "text" }] }],
                  sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "\(name)", columns: { v: "v" } }] }
                """)
            try "a\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
            let run = try kiln("build", name, "--out", "\(name).sqlite")
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("Error: \(shown(folder.appendingPathComponent("kiln.json5"))):2: manifest error at tables[0].name: table names starting with \"kiln_\" or \"sqlite_\" (in any case) are reserved"), run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("\(name).sqlite").path))
        }
    }

    func testAFullTextColumnNamedRankIsAManifestErrorAtLoad() throws {
        for (name, fullText) in [("rank", "t_search"), ("RowId", "t_search"), ("Search", "search")] {
            let folder = try writePipeline(name, manifest: """
                { bundle: "reserved", schemaVersion: 1,
                  tables: [{ name: "t", columns: [{ name: "\(name)", type: "text" }],
                             fullText: { name: "\(fullText)", columns: ["\(name)"] } }],
                  sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { \(name): "v" } }] }
                """)
            try "a\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
            let run = try kiln("build", name, "--out", "\(name).sqlite")
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("Error: \(name)/kiln.json5:3: manifest error at tables[0].fullText.columns[0]: a full-text table cannot have a column named \"\(name)\": FTS5 keeps \"rank\", \"rowid\" and the full-text table's own name (\"\(fullText)\") for itself, in any case; rename the column"), run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("\(name).sqlite").path))
        }
    }
}
