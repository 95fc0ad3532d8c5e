import Foundation

/// Writes the plain SQL patch from schema `main` (OLD) to schema `new` (NEW) of one connection: one transaction, one
/// statement per line — a check that the file being patched is OLD (its `kiln_metadata`, entry by entry), then per
/// covered table its DELETEs, UPDATEs and INSERTs by primary key in key order, the R*Trees' rows the same way by id,
/// and each FTS5 table whose rows changed or moved dropped, created as in NEW and filled from its table in Kiln's row
/// order (so it holds NEW's rows under NEW's rowids).
struct SQLPatchWriter {
    let database: Database
    let layout: BundleLayout
    let oldMetadata: [String: String]
    /// What the patch does to each covered table, in name order (filled by `write`).
    private(set) var changes: [UpdateManifest.TableChange] = []
    /// The FTS5 tables the patch rebuilds (filled by `write`).
    private(set) var rebuiltFullText: [String] = []

    init(database: Database, layout: BundleLayout, oldMetadata: [String: String]) throws {
        self.database = database
        self.layout = layout
        self.oldMetadata = oldMetadata
    }

    /// The patch's text.
    /// - Throws: `SQLiteError` when a table cannot be read; `KilnError.validation` when a full-text table's rows
    ///   come from no covered table.
    mutating func write() throws -> String {
        var text = "BEGIN IMMEDIATE;\n"
        text += "PRAGMA defer_foreign_keys = ON;\n"
        let entries = oldMetadata.sorted { $0.key < $1.key }
        let matches = entries.map { "EXISTS (SELECT 1 FROM \(BundleWriter.metadataTable) WHERE key = \(SQLLiteral.of(.text($0.key))) AND value = \(SQLLiteral.of(.text($0.value))))" }
        // A file that is not OLD fails this CHECK, and the transaction with it.
        text += "CREATE TEMP TABLE kiln_patch_check (is_old INTEGER NOT NULL CHECK (is_old = 1));\n"
        text += "INSERT INTO temp.kiln_patch_check VALUES ((SELECT count(*) FROM \(BundleWriter.metadataTable)) = \(entries.count)\(matches.map { " AND " + $0 }.joined()));\n"
        text += "DROP TABLE temp.kiln_patch_check;\n"
        for table in layout.tables {
            let (statements, change) = try rowStatements(table, columns: table.columns, key: table.identity)
            text += statements
            changes.append(change)
        }
        for spatial in layout.spatial {
            text += try rowStatements(spatial, columns: spatial.columns, key: [spatial.columns[0]]).statements
        }
        for fullText in layout.fullText {
            let columns = ["rowid"] + fullText.columns
            let old = try ContentDigest.table(fullText.name, columns: columns, order: ["rowid"], in: database, schema: "main")
            guard try old != ContentDigest.table(fullText.name, columns: columns, order: ["rowid"], in: database, schema: "new") else { continue }
            guard let base = try layout.base(of: fullText, in: database, schema: "new") else {
                throw KilnError.validation("no patch: the rows of the full-text table \(fullText.name) come from no table the patch covers")
            }
            let list = fullText.columns.map(quoteIdentifier).joined(separator: ", ")
            text += "DROP TABLE \(quoteIdentifier(fullText.name));\n"
            text += fullText.sql.replacingOccurrences(of: "\n", with: " ") + ";\n"
            text += "INSERT INTO \(quoteIdentifier(fullText.name)) (\(list)) SELECT \(list) FROM \(quoteIdentifier(base.name)) ORDER BY \(base.order.map(quoteIdentifier).joined(separator: ", "));\n"
            rebuiltFullText.append(fullText.name)
        }
        return text + "COMMIT;\n"
    }

    private func rowStatements(_ table: BundleLayout.Virtual, columns: [String], key: [String]) throws -> (statements: String, change: UpdateManifest.TableChange) {
        try rowStatements(BundleLayout.Table(name: table.name, columns: columns, key: key), columns: columns, key: key)
    }

    /// The DELETEs, UPDATEs and INSERTs that turn `table` of OLD into NEW's, each kind in key order.
    private func rowStatements(_ table: BundleLayout.Table, columns: [String], key: [String]) throws -> (statements: String, change: UpdateManifest.TableChange) {
        let name = quoteIdentifier(table.name)
        let keyOrder = key.map(quoteIdentifier).joined(separator: ", ")
        // A primary key is never NULL: `=` lets an R*Tree find its id; rows without a key match on every column with IS.
        let equals = key == columns ? "IS" : "="
        let match = key.map { "o.\(quoteIdentifier($0)) \(equals) n.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let others = columns.filter { !key.contains($0) }
        func count(_ schema: String) throws -> Int {
            Int(try database.rows("SELECT count(*) FROM \(schema).\(name)").first?.values.first?.number ?? 0)
        }
        var change = UpdateManifest.TableChange(name: table.name, oldRows: try count("main"), newRows: try count("new"), deleted: 0, updated: 0, inserted: 0)
        var text = ""
        try database.forEachRow("SELECT \(key.map { "o.\(quoteIdentifier($0))" }.joined(separator: ", ")) FROM main.\(name) AS o WHERE NOT EXISTS (SELECT 1 FROM new.\(name) AS n WHERE \(match)) ORDER BY \(keyOrder)") { row in
            text += SQLPatchStatements.delete(table.name, key: key, values: row.values)
            change.deleted += 1
        }
        if !others.isEmpty {
            // Binary comparison and the storage class: 1 and 1.0, or 'a' and 'A' under NOCASE, are different values.
            let differs = others.map { "o.\(quoteIdentifier($0)) IS NOT n.\(quoteIdentifier($0)) COLLATE BINARY OR typeof(o.\(quoteIdentifier($0))) <> typeof(n.\(quoteIdentifier($0)))" }.joined(separator: " OR ")
            let selected = key.map { "n.\(quoteIdentifier($0))" } + others.flatMap { ["o.\(quoteIdentifier($0))", "n.\(quoteIdentifier($0))"] }
            try database.forEachRow("SELECT \(selected.joined(separator: ", ")) FROM main.\(name) AS o JOIN new.\(name) AS n ON \(match) WHERE \(differs) ORDER BY \(key.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", "))") { row in
                var assignments: [(String, SQLValue)] = []
                for (index, column) in others.enumerated() {
                    let oldValue = row.values[key.count + 2 * index], newValue = row.values[key.count + 2 * index + 1]
                    if oldValue != newValue || !sameBits(oldValue, newValue) { assignments.append((column, newValue)) }
                }
                text += SQLPatchStatements.update(table.name, key: key, keyValues: row.values.prefix(key.count), changes: assignments)
                change.updated += 1
            }
        }
        try database.forEachRow("SELECT \(columns.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", ")) FROM new.\(name) AS n WHERE NOT EXISTS (SELECT 1 FROM main.\(name) AS o WHERE \(match)) ORDER BY \(key.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", "))") { row in
            text += SQLPatchStatements.insert(table.name, columns: columns, values: row.values)
            change.inserted += 1
        }
        return (text, change)
    }

    /// False for two reals Swift holds equal with different bits (0.0 and -0.0).
    private func sameBits(_ left: SQLValue, _ right: SQLValue) -> Bool {
        if case .real(let a) = left, case .real(let b) = right { return a.bitPattern == b.bitPattern }
        return true
    }
}
