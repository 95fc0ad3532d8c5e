import Foundation
import XCTest
@testable import KilnCore
@testable import KilnManifest
@testable import KilnBuild

/// The columns nothing fills (`SQLRuleCheck.unfilledColumns`): no source maps them, no query selects them.
final class UnfilledColumnTests: KilnTestCase {
    private func manifest(_ text: String) throws -> Manifest {
        let folder = temporaryDirectory.appendingPathComponent("p")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("a,b\n".utf8).write(to: folder.appendingPathComponent("a.csv"))
        try text.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        return try ManifestLoader.load(folder.path).manifest
    }

    func testEveryColumnNoSourceMapsAndNoQuerySelectsIsFound() throws {
        let loaded = try manifest("""
            { bundle: "b", schemaVersion: 1,
              tables: [
                { name: "t", columns: [{ name: "a", type: "text" }, { name: "b", type: "text" }, { name: "c", type: "text" }, { name: "d", type: "text" }] },
                { name: "q", columns: [{ name: "n", type: "integer" }, { name: "m", type: "integer" }], query: "SELECT count(*) AS n FROM t" },
                { name: "app", columns: [{ name: "x", type: "text" }], userFilled: true },
                { name: "empty", columns: [{ name: "y", type: "text" }] },
              ],
              sources: [
                { name: "one", format: "delimited", path: "a.csv", options: { separator: ",", fields: ["a", "b"] }, into: "t", columns: { a: "a" } },
                { name: "two", format: "delimited", path: "a.csv", options: { separator: ",", fields: ["a", "b"] }, into: "t",
                  columns: { b: "b", c: { value: "constant" } } },
              ] }
            """)
        let found = SQLRuleCheck(manifest: loaded).unfilledColumns()
        XCTAssertEqual(found.map { "\($0.table).\($0.column) \($0.keyPath)" },
                       ["t.d tables[0].columns[3]", "q.m tables[1].columns[1]", "empty.y tables[3].columns[0]"],
                       "a column either source maps, or a constant, is filled; the app's table is its own")
    }

    func testAQuerySQLiteCannotPrepareIsLeftToItsRun() throws {
        let loaded = try manifest("""
            { bundle: "b", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "a", type: "text" }] },
                       { name: "q", columns: [{ name: "n", type: "integer" }], query: "SELECT n FROM nowhere" }],
              sources: [{ name: "one", format: "delimited", path: "a.csv", options: { separator: ",", fields: ["a", "b"] }, into: "t", columns: { a: "a" } }] }
            """)
        XCTAssertEqual(SQLRuleCheck(manifest: loaded).unfilledColumns().count, 0)
    }
}
