import Foundation

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
struct DatasetteMetadata {
    private struct Document: Encodable {
        var title: String
        var description: String?
        var databases: [String: Database]
    }

    private struct Database: Encodable {
        var description: String?
        var tables: [String: Table]
        var queries: [String: Query]?
    }

    private struct Table: Encodable {
        var description: String?
        var source: String?
        var columns: [String: String]?
        var fts_table: String?
        var fts_pk: String?
        var hidden: Bool?
    }

    private struct Query: Encodable {
        var sql: String
        var title: String
    }

    let description: BundleDescription
    /// The database's name in Datasette: the bundle file's name without its extension.
    let databaseName: String

    init(_ description: BundleDescription, databaseName: String) {
        self.description = description
        self.databaseName = databaseName
    }

    /// The metadata as JSON, keys sorted (deterministic).
    func json() throws -> String {
        var tables: [String: Table] = [:], queries: [String: Query] = [:]
        for table in description.tables {
            let columns = Dictionary(uniqueKeysWithValues: table.columns.compactMap { column in column.description.map { (column.name, $0) } })
            var entry = Table(description: table.description, source: source(of: table), columns: columns.isEmpty ? nil : columns)
            if let fullText = table.fullText {
                if table.rowidsArePositions {
                    entry.fts_table = fullText.name
                    entry.fts_pk = "rowid"
                } else if let query = searchQuery(table, fullText) {
                    queries["search_\(table.name)"] = query
                }
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

    /// `search_<table>`: the rows whose FTS entry matches `:q`, best first, through the FTS table's unindexed copy of
    /// the table's single-column key; `nil` when the FTS table keeps no such copy.
    private func searchQuery(_ table: BundleDescription.Table, _ fullText: FullTextSpec) -> Query? {
        guard table.primaryKey.count == 1, fullText.unindexed.contains(table.primaryKey[0]) || fullText.columns.contains(table.primaryKey[0]) else { return nil }
        let key = quoteIdentifier(table.primaryKey[0]), fts = quoteIdentifier(fullText.name), name = quoteIdentifier(table.name)
        return Query(sql: "SELECT \(name).* FROM \(fts) JOIN \(name) ON \(name).\(key) = \(fts).\(key) WHERE \(fts) MATCH :q ORDER BY \(fts).rank",
                     title: "Search \(table.name)")
    }
}
