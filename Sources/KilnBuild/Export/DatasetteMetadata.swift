import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Datasette's metadata for a bundle (`kiln export datasette BUNDLE --out DIR` writes `DIR/<bundle>.metadata.json`;
/// `datasette serve BUNDLE --metadata DIR/<bundle>.metadata.json`): the manifest's table and column descriptions, the
/// sources of each table, the full-text table Datasette's `?_search=` should use (`fts_table`, `fts_pk`), and every
/// full-text and R*Tree table with its shadow tables hidden. Datasette finds a table's FTS table by itself only when
/// the FTS table names it as `content=`, which Kiln's self-contained FTS5 tables do not.
///
/// Datasette searches with `fts_pk IN (SELECT rowid FROM fts_table WHERE fts_table MATCH …)`: Kiln's full-text rowids
/// are the rows' positions, so `fts_pk` is `rowid` when the table's rowids are 1, 2, 3…. A table whose rowids have
/// gaps (an INTEGER key with gaps) gets no `fts_table`, and a canned query `search_<table>` instead, which joins the
/// FTS table's unindexed key back to the table.
package struct DatasetteMetadata {
    private struct Document: Encodable {
        package var title: String
        package var description: String?
        package var databases: [String: Database]
    }

    private struct Database: Encodable {
        package var description: String?
        package var tables: [String: Table]
        package var queries: [String: Query]?
    }

    private struct Table: Encodable {
        package var description: String?
        package var source: String?
        package var columns: [String: String]?
        package var fts_table: String?
        package var fts_pk: String?
        package var hidden: Bool?
    }

    private struct Query: Encodable {
        package var sql: String
        package var title: String
    }

    package let description: BundleDescription
    /// The database's name in Datasette: the bundle file's name without its extension.
    package let databaseName: String

    package init(_ description: BundleDescription, databaseName: String) {
        self.description = description
        self.databaseName = databaseName
    }

    /// The metadata as JSON, keys sorted (deterministic).
    package func json() throws -> String {
        var tables: [String: Table] = [:], queries: [String: Query] = [:]
        for table in description.tables {
            let columns = Dictionary(uniqueKeysWithValues: table.columns.compactMap { column in column.description.map { (column.name, $0) } })
            var entry = Table(description: table.description, source: source(of: table), columns: columns.isEmpty ? nil : columns)
            // A full-text table reads its text from its table (`content='table'`), under the table's own rowids.
            if let fullText = table.fullText {
                entry.fts_table = fullText.name
                entry.fts_pk = "rowid"
            }
            tables[table.name] = entry
        }
        for name in description.machinery { tables[name] = Table(hidden: true) }
        let document = Document(title: description.bundle, description: description.description,
                                databases: [databaseName: Database(description: description.description, tables: tables,
                                                                   queries: queries.isEmpty ? nil : queries)])
        return String(decoding: try KilnJSON.encode(document), as: UTF8.self) + "\n"
    }

    /// Where the table's rows come from: its sources (name, format, path, description) or its query.
    private func source(of table: BundleDescription.Table) -> String? {
        if table.userFilled { return "filled by the app (userFilled)" }
        if table.query != nil { return "a query over the staged tables (kiln.json5)" }
        let sources = table.sources.map { source in
            BundleDescription.sourcePhrase(source) + (source.description.map { ": " + $0 } ?? "")
        }
        return sources.isEmpty ? nil : sources.joined(separator: "; ")
    }

}
