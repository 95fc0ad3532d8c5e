import Foundation
import XCTest

/// Pipelines whose table and column names are the generated code's own names or a language's keywords, for the
/// Swift and Room exports' tests.
extension CLITestCase {
    /// Tables whose names the exports must carry into code that compiles: Swift and Kotlin keywords (`in`, `default`,
    /// `init`), the reader's own methods (`select`, `handle`), columns named `self`, `statement`, `row`, `rows`,
    /// `tableName`'s column, a key column `rows` and a foreign key through a column `self`; a full-text table over a
    /// column `init`; columns named as what a Kotlin data class and the JVM declare (`class`, `copy`, `hash_code`,
    /// `to_string`, `component1`, `equals`), filled by no source.
    static let hostileNamesManifest = """
        { bundle: "hostile", schemaVersion: 2,
          tables: [
            { name: "in", columns: [{ name: "self", type: "text", notNull: true }, { name: "statement", type: "text", notNull: true }, { name: "row", type: "integer", notNull: true },
                                    { name: "init", type: "text", notNull: true }, { name: "table_name", type: "text", notNull: true }, { name: "in", type: "text", notNull: true }],
              primaryKey: ["self"], fullText: { name: "in_search", columns: ["init"] } },
            { name: "default", columns: [{ name: "rows", type: "text", notNull: true }, { name: "self", type: "text", notNull: true, references: "in.self" }, { name: "Type", type: "real", notNull: true }],
              primaryKey: ["rows"] },
            { name: "select", columns: [{ name: "handle", type: "integer", notNull: true }, { name: "value", type: "text", notNull: true }], primaryKey: ["handle"] },
            { name: "handle", columns: [{ name: "id", type: "integer", notNull: true }, { name: "protocol", type: "text", notNull: true }], primaryKey: ["id"] },
            { name: "data", columns: [{ name: "class", type: "text" }, { name: "copy", type: "text" }, { name: "hash_code", type: "integer" },
                                      { name: "to_string", type: "text" }, { name: "component1", type: "text" }, { name: "equals", type: "text" }],
              primaryKey: ["class"] },
          ],
          sources: [
            { name: "a", format: "delimited", path: "in.txt", options: { fields: ["s", "t", "r", "i", "n", "k"] }, into: "in",
              columns: { self: "s", statement: "t", row: "r", init: "i", table_name: "n", in: "k" } },
            { name: "b", format: "delimited", path: "default.txt", options: { fields: ["r", "s", "t"] }, into: "default",
              columns: { rows: "r", self: "s", Type: "t" } },
            { name: "c", format: "delimited", path: "select.txt", options: { fields: ["h", "v"] }, into: "select", columns: { handle: "h", value: "v" } },
            { name: "d", format: "delimited", path: "handle.txt", options: { fields: ["i", "p"] }, into: "handle", columns: { id: "i", protocol: "p" } },
          ] }
        """

    /// The input files of `hostileNamesManifest` (`;` separates, the delimited reader's default).
    static let hostileNamesInputs = [
        "in.txt": "s1;t1;7;first words;n1;k1\ns2;t2;8;second words;n2;k2\n",
        "default.txt": "r1;s1;1.5\nr2;s2;2.5\nr3;s1;3.5\n",
        "select.txt": "1;v1\n2;v2\n",
        "handle.txt": "10;p10\n",
    ]

    /// Writes pipeline `name` with `manifest` and the inputs, builds it into `build/<name>.sqlite`.
    func buildHostileNames(_ name: String, manifest: String = CLITestCase.hostileNamesManifest,
                           inputs: [String: String] = CLITestCase.hostileNamesInputs) throws {
        let folder = try writePipeline(name, manifest: manifest)
        for (file, text) in inputs { try text.write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8) }
        let build = try kiln("build", name, "--out", "build/\(name).sqlite", "--quiet")
        XCTAssertEqual(build.status, 0, build.stderr)
    }

    /// A manifest of `tables` (text columns, the first the key; no sources): a pipeline whose only point is its names.
    static func namesOnlyManifest(_ tables: [(name: String, columns: [String])]) -> String {
        let declared = tables.map { table in
            "{ name: \"\(table.name)\", columns: [\(table.columns.map { "{ name: \"\($0)\", type: \"text\" }" }.joined(separator: ", "))], primaryKey: [\"\(table.columns[0])\"] }"
        }
        return "{ bundle: \"hostile\", schemaVersion: 1, tables: [\(declared.joined(separator: ", "))], sources: [] }"
    }
}
