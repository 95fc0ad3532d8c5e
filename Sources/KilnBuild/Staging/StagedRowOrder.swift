import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The rows a shipped table is written from, in the order the bundle holds them (`SchemaSQL.rowOrder`), and the
/// check that lets the bundle and its full-text index skip sorting them. Sources often list their records in key
/// order already (exports sorted by id); when every staged row of a table stands strictly after the row staged
/// before it, in the bundle's order, no two rows are equal and reading them in rowid order gives exactly what
/// `SELECT DISTINCT … ORDER BY` gives: the sort (and its temporary B-tree) is skipped. Any other table is sorted.
package enum StagedRowOrder {
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
    /// `selected` (SQL column list): read in rowid order when `inOrder` (`tablesInOrder`), sorted otherwise.
    package static func rows(of table: TableSpec, selecting selected: String, inOrder: Bool) -> String {
        let source = "staging.\(quoteIdentifier(table.name))"
        if inOrder { return "SELECT \(selected) FROM \(source) ORDER BY rowid" }
        let columns = table.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
        // Selecting every column, DISTINCT sorts once. A subset is selected from the rows grouped on every column (the
        // order's columns are all of them): the same rows as DISTINCT, through one pass of SQLite's sorter, where a
        // DISTINCT subquery first fills a temporary B-tree and then sorts again (3x slower on 300 000 wide rows).
        let order = SchemaSQL.rowOrder(table)
        if selected == columns { return "SELECT DISTINCT \(columns) FROM \(source) ORDER BY \(order)" }
        return "SELECT \(selected) FROM \(source) GROUP BY \(order) ORDER BY \(order)"
    }
}
