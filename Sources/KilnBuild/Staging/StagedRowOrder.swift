import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The rows a shipped table is written from, in the order the bundle holds them (`SchemaSQL.rowOrder`), and the
/// check that lets the bundle and its full-text index skip sorting them. Sources often list their records in key
/// order already (exports sorted by id); when every staged row of a table stands strictly after the row staged
/// before it, in the bundle's order, no two rows are equal and reading them in rowid order gives exactly what
/// `SELECT DISTINCT … ORDER BY` gives: the sort (and its temporary B-tree) is skipped. A table whose staged rows
/// never share a primary key (a query table's listings keyed by a stable id, staged in page order) holds no two equal
/// rows either, and its key alone decides its order: it is sorted on the key, not on every column. Any other table is
/// sorted on every column, duplicates dropped.
package enum StagedRowOrder {
    /// How a table's staged rows are brought into the bundle's order (`arrangement`).
    package enum Arrangement: Sendable, Equatable {
        /// Already in that order, each row strictly after the one before (`isInOrder`): read in rowid order.
        case inOrder
        /// No two rows share the primary key (`hasUniqueKey`): sorted on the key alone.
        case uniqueKey
        /// Sorted on every column, duplicate rows dropped.
        case sorted
    }

    /// How `table`'s staged rows (in the main schema of `database`) come in the bundle's order: `inOrder` when the
    /// staging writer saw them in order (`knownInOrder`, `nil` when it could not tell) or SQL finds them so, else
    /// `uniqueKey` when no two share the primary key, else `sorted`.
    /// - Throws: `SQLiteError` when the staging database cannot be read.
    package static func arrangement(of table: TableSpec, in database: Database, knownInOrder: Bool?) throws -> Arrangement {
        if try knownInOrder ?? isInOrder(table, in: database) { return .inOrder }
        return try hasUniqueKey(table, in: database) ? .uniqueKey : .sorted
    }

    /// True when `table` has a primary key and no two of its staged rows share it, as `SELECT DISTINCT` compares
    /// them (two NULL keys are the same key). Then no two rows are equal, and ordering on the key gives the order of
    /// every column. A table without a key is never taken for unique: checking would cost the sort it saves.
    /// - Throws: `SQLiteError` when the staging database cannot be read.
    package static func hasUniqueKey(_ table: TableSpec, in database: Database) throws -> Bool {
        guard !table.primaryKey.isEmpty else { return false }
        let name = quoteIdentifier(table.name), key = table.primaryKey.map(quoteIdentifier).joined(separator: ", ")
        let sql = "SELECT (SELECT count(*) FROM \(name)) = (SELECT count(*) FROM (SELECT DISTINCT \(key) FROM \(name)))"
        return try database.rows(sql).first?.values.first?.number == 1
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
    /// `selected` (SQL column list), as `arrangement` says: read in rowid order, sorted on the key, or sorted on
    /// every column with duplicates dropped.
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
}
