import Foundation
import KilnC
import KilnCore

/// The DDL of a declared table: columns with types, NOT NULL and CHECKs, keys and foreign keys; its indexes and FTS5 table.
package enum SchemaSQL {
    package static func createTable(_ table: TableSpec) -> String {
        var parts: [String] = table.columns.map { column in
            var text = "\(quoteIdentifier(column.name)) \(column.type.sql)"
            if column.notNull || table.primaryKey.contains(column.name) { text += " NOT NULL" }
            if column.unique { text += " UNIQUE" }
            if let range = column.range {
                let tests = [range.min.map { "\(quoteIdentifier(column.name)) >= \(sqlNumber($0))" },
                             range.max.map { "\(quoteIdentifier(column.name)) <= \(sqlNumber($0))" }].compactMap { $0 }
                if !tests.isEmpty { text += " CHECK (\(tests.joined(separator: " AND ")))" }
            }
            if let allowed = column.allowed {
                text += " CHECK (\(quoteIdentifier(column.name)) IN (\(allowed.map(quoteLiteral).joined(separator: ", "))))"
            }
            return text
        }
        if !table.primaryKey.isEmpty { parts.append("PRIMARY KEY (\(table.primaryKey.map(quoteIdentifier).joined(separator: ", ")))") }
        parts += table.unique.map { "UNIQUE (\($0.map(quoteIdentifier).joined(separator: ", ")))" }
        parts += table.allForeignKeys.map { key in
            "FOREIGN KEY (\(key.columns.map(quoteIdentifier).joined(separator: ", "))) REFERENCES \(quoteIdentifier(key.table)) (\(key.referencedColumns.map(quoteIdentifier).joined(separator: ", ")))"
        }
        return "CREATE TABLE \(quoteIdentifier(table.name)) (\n  \(parts.joined(separator: ",\n  "))\n)"
    }

    /// The order a table's rows are written in: its key (or, without one, its columns), then its other columns. Rows
    /// are distinct, so no two share a place: the same rows always get the same rowids.
    package static func rowOrder(_ table: TableSpec) -> String {
        rowOrderColumns(table).joined(separator: ", ")
    }

    /// The columns of `rowOrder`, quoted, one by one.
    package static func rowOrderColumns(_ table: TableSpec) -> [String] {
        table.rowOrderColumnNames.map(quoteIdentifier)
    }

    package static func indexName(_ index: IndexSpec, of table: TableSpec) -> String {
        index.name ?? ([table.name] + index.columns + ["idx"]).joined(separator: "_")
    }

    package static func createIndexes(_ table: TableSpec) -> [String] {
        table.indexes.map { index in
            "CREATE \(index.unique ? "UNIQUE " : "")INDEX \(quoteIdentifier(indexName(index, of: table))) ON \(quoteIdentifier(table.name)) (\(index.columns.map(quoteIdentifier).joined(separator: ", ")))"
        }
    }

    /// The R*Tree of a `spatial` declaration (32-bit bounds, rounded outwards by SQLite, so a region query never
    /// misses a row; compare with the table's own columns for exact positions).
    package static func createSpatial(_ spatial: SpatialSpec) -> String {
        "CREATE VIRTUAL TABLE \(quoteIdentifier(spatial.name)) USING rtree(\(SpatialSpec.columns.joined(separator: ", ")))"
    }

    /// Fills the R*Tree with one point per row that has both coordinates, in key order.
    package static func fillSpatial(_ spatial: SpatialSpec, of table: TableSpec) -> String {
        let key = quoteIdentifier(table.primaryKey[0])
        let latitude = quoteIdentifier(spatial.latitude), longitude = quoteIdentifier(spatial.longitude)
        return "INSERT INTO \(quoteIdentifier(spatial.name)) (\(SpatialSpec.columns.joined(separator: ", "))) SELECT \(key), \(latitude), \(latitude), \(longitude), \(longitude) FROM main.\(quoteIdentifier(table.name)) WHERE typeof(\(latitude)) IN ('integer', 'real') AND typeof(\(longitude)) IN ('integer', 'real') ORDER BY \(key)"
    }

    /// The FTS5 table of a `fullText` declaration, reading its text from `table` (external content,
    /// `content='table'`: the text is stored once, in the table, and the index's rowids are the table's rowids);
    /// `content="table"` is written without spaces, as Datasette and sqlite-utils look for it;
    /// `table` nil: contentless (`content=''`), which gives the same index, document sizes and configuration
    /// (`FullTextBuild` builds that in its scratch database, where the rows are not needed).
    package static func createFullText(_ fullText: FullTextSpec, content table: String?) -> String {
        let columns = fullText.columns.map(quoteIdentifier) + fullText.unindexed.map { "\(quoteIdentifier($0)) UNINDEXED" }
        return "CREATE VIRTUAL TABLE \(quoteIdentifier(fullText.name)) USING fts5(\(columns.joined(separator: ", ")), tokenize = \(quoteLiteral(fullText.tokenize)), content=\(table.map(quoteIdentifier) ?? "''"))"
    }

    /// The column whose values are the rowids of `table`'s rows: its INTEGER primary key, when it has one of a
    /// single column; otherwise `nil` (the rowids are the rows' positions, as they are inserted in order).
    package static func rowidColumn(of table: TableSpec) -> String? {
        guard table.primaryKey.count == 1, table.column(table.primaryKey[0])?.type == .integer else { return nil }
        return table.primaryKey[0]
    }

    /// Why SQLite's FTS5 refuses the declaration's tokenizer (`no such tokenizer: bogus`), asked of an empty
    /// in-memory table when the manifest loads; `nil` when it accepts it.
    package static func fullTextProblem(_ fullText: FullTextSpec) -> String? {
        do {
            let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
            try database.execute("CREATE VIRTUAL TABLE temp.kiln_tokenizer USING fts5(x, tokenize = \(quoteLiteral(fullText.tokenize)))")
            return nil
        } catch let error as SQLiteError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// Creates every declared table as staging holds it: the declared columns and types, no constraints, and the
    /// provenance columns `_file` and `_line`.
    /// - Throws: `SQLiteError` when SQLite refuses a table.
    package static func createStagingTables(_ tables: [TableSpec], in database: Database) throws {
        for table in tables {
            let columns = table.columns.map { "\(quoteIdentifier($0.name)) \($0.type.sql)" } + ["_file TEXT", "_line INTEGER"]
            try database.execute("CREATE TABLE \(quoteIdentifier(table.name)) (\(columns.joined(separator: ", ")))")
        }
    }
}
