import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The rows a shipped table is written from, in the order the bundle holds them (`SchemaSQL.rowOrder`), and the
/// check that lets the bundle and its full-text index skip sorting them. Sources often list their records in key
/// order already (exports sorted by id); when every staged row of a table stands strictly after the row staged
/// before it, in the bundle's order, no two rows are equal and reading them in rowid order gives exactly what
/// `SELECT DISTINCT … ORDER BY` gives: the sort (and its temporary B-tree) is skipped. Any other table is sorted on
/// every column, duplicates dropped; but when no two of its rows share the primary key (a query table's listings keyed
/// by a stable id, staged in page order), no two are equal either and the key alone decides the order: sorting on the
/// key gives the same rows in the same order. Whether the key is unique shows only once the rows are sorted on it, so
/// the writers try that first and fall back on the full sort (`BundleWriter`, `FullTextBuild`).
package enum StagedRowOrder {
    /// How a table's staged rows are brought into the bundle's order (`rows`).
    package enum Arrangement: Sendable, Equatable {
        /// Already in that order, each row strictly after the one before (`isInOrder`): read in rowid order.
        case inOrder
        /// Sorted on the primary key alone: the bundle's order only when no two rows share the key.
        case uniqueKey
        /// Sorted on every column, duplicate rows dropped.
        case sorted
    }

    /// The names of the tables of `tables` whose staged rows are already in the bundle's order (`isInOrder`).
    /// - Throws: `SQLiteError` when the staging database cannot be read.
    package static func tablesInOrder(_ tables: [TableSpec], in database: Database) throws -> Set<String> {
        Set(try tables.filter { try isInOrder($0, in: database) }.map(\.name))
    }

    /// True when `table`'s staged rows (in the main schema of `database`) are already in the bundle's order, each
    /// strictly after the one before. Rowids must run without gaps, so that each row is compared with the one before
    /// it; NULLs come first, as in `ORDER BY`.
    /// - Throws: `SQLiteError` when the staging database cannot be read.
    package static func isInOrder(_ table: TableSpec, in database: Database) throws -> Bool {
        let name = quoteIdentifier(table.name)
        let sql = """
            SELECT (SELECT count(*) FROM \(name)) = coalesce((SELECT max(rowid) - min(rowid) + 1 FROM \(name)), 0)
               AND NOT EXISTS (SELECT 1 FROM \(name) AS a JOIN \(name) AS b ON b.rowid = a.rowid + 1 WHERE NOT (\(after(SchemaSQL.rowOrderColumns(table)))))
            """
        return try database.rows(sql).first?.values.first?.number == 1
    }

    /// SQL that is 1 when row `b` sorts strictly after row `a` on `columns`, compared one after the other as
    /// `ORDER BY` compares them (NULL before any value), and 0 otherwise; never NULL. Flat (one term per column), so
    /// that wide tables stay within SQLite's parser depth.
    package static func after(_ columns: [String]) -> String {
        guard !columns.isEmpty else { return "0" }
        let terms = columns.indices.map { position in
            let column = columns[position]
            let greater = "CASE WHEN a.\(column) IS NULL THEN b.\(column) IS NOT NULL WHEN b.\(column) IS NULL THEN 0 ELSE b.\(column) > a.\(column) END"
            return (columns[..<position].map { "b.\($0) IS a.\($0)" } + [greater]).joined(separator: " AND ")
        }
        return terms.map { "(\($0))" }.joined(separator: " OR ")
    }

    /// The query giving `table`'s distinct staged rows (from schema `staging`) in the bundle's order, selecting
    /// `selected` (SQL column list), as `arrangement` says: read in rowid order, sorted on the key (the bundle's
    /// order only when the key is unique), or sorted on every column with duplicates dropped.
    package static func rows(of table: TableSpec, selecting selected: String, arrangement: Arrangement) -> String {
        let source = "staging.\(quoteIdentifier(table.name))"
        switch arrangement {
        case .inOrder: return "SELECT \(selected) FROM \(source) ORDER BY rowid"
        case .uniqueKey: return "SELECT \(selected) FROM \(source) ORDER BY \(table.primaryKey.map(quoteIdentifier).joined(separator: ", "))"
        case .sorted: break
        }
        let columns = table.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
        // Selecting every column, DISTINCT sorts once. A subset is selected from the rows grouped on every column (the
        // order's columns are all of them): the same rows as DISTINCT, through one pass of SQLite's sorter, where a
        // DISTINCT subquery first fills a temporary B-tree and then sorts again (3x slower on 300 000 wide rows).
        let order = SchemaSQL.rowOrder(table)
        if selected == columns { return "SELECT DISTINCT \(columns) FROM \(source) ORDER BY \(order)" }
        return "SELECT \(selected) FROM \(source) GROUP BY \(order) ORDER BY \(order)"
    }

    /// The columns `keyedRows` names after `table`'s primary key columns, in key order.
    package static func keyColumnNames(of table: TableSpec) -> [String] {
        table.primaryKey.indices.map { "kiln key \($0 + 1)" }
    }

    /// The query `rows(of:selecting:arrangement: .uniqueKey)` gives, with the key's columns first, named
    /// `keyColumnNames`: written into a table, `repeatsKey` then tells whether the key was unique.
    package static func keyedRows(of table: TableSpec, selecting selected: String) -> String {
        let key = zip(table.primaryKey, keyColumnNames(of: table)).map { "\(quoteIdentifier($0)) AS \(quoteIdentifier($1))" }
        return rows(of: table, selecting: (key + [selected]).joined(separator: ", "), arrangement: .uniqueKey)
    }

    /// True when two neighbouring rows (by rowid) of `rowsTable` in `database`, filled from `keyedRows` in its order,
    /// share the key, compared as `DISTINCT` compares (two NULLs alike): sorted on it, equal keys are neighbours.
    /// - Throws: `SQLiteError` when the table cannot be read.
    package static func repeatsKey(of table: TableSpec, in rowsTable: String, of database: Database) throws -> Bool {
        let name = quoteIdentifier(rowsTable)
        let same = keyColumnNames(of: table).map { "b.\(quoteIdentifier($0)) IS a.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        return try database.rows("SELECT EXISTS (SELECT 1 FROM \(name) AS a JOIN \(name) AS b ON b.rowid = a.rowid + 1 WHERE \(same))").first?.values.first?.number != 0
    }
}
