import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Writes the plain SQL patch from schema `main` (OLD) to schema `new` (NEW) of one connection: one transaction, one
/// statement per line — a check that the file being patched is OLD (its `kiln_metadata`, entry by entry), then per
/// covered table its DELETEs, UPDATEs and INSERTs by primary key in key order, the R*Trees' rows the same way by id,
/// and the FTS5 tables' rows (`fullTextStatements`).
package struct SQLPatchWriter {
    package let database: Database
    package let layout: BundleLayout
    package let oldMetadata: [String: String]
    /// What the patch does to each covered table, in name order (filled by `write`).
    package private(set) var changes: [UpdateManifest.TableChange] = []
    /// What the patch does to each R*Tree, then to each FTS5 table it changes row by row (filled by `write`).
    package private(set) var indexChanges: [UpdateManifest.TableChange] = []
    /// The FTS5 tables the patch rebuilds (filled by `write`).
    package private(set) var rebuiltFullText: [String] = []

    package init(database: Database, layout: BundleLayout, oldMetadata: [String: String]) throws {
        self.database = database
        self.layout = layout
        self.oldMetadata = oldMetadata
    }

    /// The patch's text.
    /// - Throws: `SQLiteError` when a table cannot be read; `KilnError.validation` when a full-text table's rows
    ///   come from no covered table.
    package mutating func write() throws -> String {
        var text = "BEGIN IMMEDIATE;\n"
        text += "PRAGMA defer_foreign_keys = ON;\n"
        // A file that is not OLD fails this CHECK, and the transaction with it: its kiln_metadata must be OLD's,
        // entry by entry (one line per entry, so that a pipeline of many inputs makes no deep expression).
        let metadata = "main." + quoteIdentifier(BundleWriter.metadataTable)
        text += "CREATE TEMP TABLE kiln_patch_old (key TEXT PRIMARY KEY, value TEXT);\n"
        for (key, value) in oldMetadata.sorted(by: { $0.key < $1.key }) {
            text += SQLPatchStatements.insert("kiln_patch_old", columns: ["key", "value"], values: [.text(key), .text(value)])
        }
        text += "CREATE TEMP TABLE kiln_patch_check (is_old INTEGER NOT NULL CHECK (is_old = 1));\n"
        text += "INSERT INTO temp.kiln_patch_check SELECT (SELECT count(*) FROM \(metadata)) = (SELECT count(*) FROM temp.kiln_patch_old) AND NOT EXISTS (SELECT key, value FROM \(metadata) EXCEPT SELECT key, value FROM temp.kiln_patch_old);\n"
        text += "DROP TABLE temp.kiln_patch_check;\n"
        text += "DROP TABLE temp.kiln_patch_old;\n"
        // An FTS4 table reading its text from its table forgets a row while the table still holds OLD's text (as
        // Room's BEFORE triggers do); its new rows are added after the table's changes.
        var fullText4: [(BundleLayout.Virtual, added: String)] = []
        for fullText in layout.fullText where BundleLayout.module(of: fullText.sql) == "fts4" && BundleLayout.readsItsTable(fullText.sql) {
            let (deletes, inserts) = try fullText4Statements(fullText)
            text += deletes
            fullText4.append((fullText, inserts))
        }
        for table in layout.tables {
            let (statements, change) = try rowStatements(table, columns: table.columns, key: table.identity)
            text += statements
            changes.append(change)
        }
        for spatial in layout.spatial {
            let (statements, change) = try rowStatements(spatial, columns: spatial.columns, key: [spatial.columns[0]])
            text += statements
            indexChanges.append(change)
        }
        for fullText in layout.fullText {
            if let (_, added) = fullText4.first(where: { $0.0 == fullText }) { text += added } else { text += try fullTextStatements(fullText) }
        }
        return text + "COMMIT;\n"
    }

    /// The statements that keep an FTS4 table with external content NEW's: for each row whose docid or text changed,
    /// `DELETE … WHERE docid = ?` (FTS4 reads the text to forget from its table, which must still be OLD's), and
    /// an insert under NEW's rowid once the table holds NEW's rows.
    private mutating func fullText4Statements(_ fullText: BundleLayout.Virtual) throws -> (deletes: String, inserts: String) {
        let name = quoteIdentifier(fullText.name)
        let list = (["rowid"] + fullText.columns).map(quoteIdentifier).joined(separator: ", ")
        var change = UpdateManifest.TableChange(name: fullText.name, oldRows: try count(fullText.name, in: "main"), newRows: try count(fullText.name, in: "new"),
                                                deleted: 0, updated: 0, inserted: 0)
        var deletes = "", inserts = ""
        try database.forEachRow("SELECT \(list) FROM main.\(name) EXCEPT SELECT \(list) FROM new.\(name) ORDER BY 1") { row in
            deletes += SQLPatchStatements.delete(fullText.name, key: ["docid"], values: [row.values[0]])
            change.deleted += 1
        }
        try database.forEachRow("SELECT \(list) FROM new.\(name) EXCEPT SELECT \(list) FROM main.\(name) ORDER BY 1") { row in
            inserts += SQLPatchStatements.insert(fullText.name, columns: ["docid"] + fullText.columns, values: row.values)
            change.inserted += 1
        }
        if !deletes.isEmpty || !inserts.isEmpty { indexChanges.append(change) }
        return (deletes, inserts)
    }

    /// The statements that give an FTS5 table NEW's rows: none when it holds the same rows (under other rowids
    /// perhaps: queries return columns, and Kiln's own rowids are row positions, which move when a row is added); the
    /// rows gone deleted in one pass (matched on every column) and the new ones inserted, when no two rows are alike;
    /// otherwise the table dropped, created as in NEW and filled from its table in Kiln's row order.
    private mutating func fullTextStatements(_ fullText: BundleLayout.Virtual) throws -> String {
        let columns = fullText.columns
        let name = quoteIdentifier(fullText.name), list = columns.map(quoteIdentifier).joined(separator: ", ")
        if BundleLayout.readsItsTable(fullText.sql) { return try externalContentStatements(fullText) }
        func hasTwinRows(_ schema: String) throws -> Bool {
            try database.rows("SELECT (SELECT count(*) FROM \(schema).\(name)) <> (SELECT count(*) FROM (SELECT DISTINCT \(list) FROM \(schema).\(name)))").first?.values.first == .integer(1)
        }
        var change = UpdateManifest.TableChange(name: fullText.name, oldRows: try count(fullText.name, in: "main"), newRows: try count(fullText.name, in: "new"),
                                                deleted: 0, updated: 0, inserted: 0)
        let scratch = (0..<columns.count).map { "c\($0)" }
        var gone = "", added = ""
        try database.forEachRow("SELECT \(list) FROM main.\(name) EXCEPT SELECT \(list) FROM new.\(name) ORDER BY \(list)") { row in
            gone += SQLPatchStatements.insert("kiln_patch_gone", columns: scratch, values: row.values)
            change.deleted += 1
        }
        try database.forEachRow("SELECT \(list) FROM new.\(name) EXCEPT SELECT \(list) FROM main.\(name) ORDER BY \(list)") { row in
            added += SQLPatchStatements.insert(fullText.name, columns: columns, values: row.values)
            change.inserted += 1
        }
        // The same rows, perhaps under other rowids: nothing to do.
        if try gone.isEmpty && added.isEmpty && change.oldRows == change.newRows && !hasTwinRows("main") { return "" }
        if try hasTwinRows("main") || hasTwinRows("new") {
            guard let base = try layout.base(of: fullText, in: database, schema: "new") else {
                throw KilnError.validation("no patch: the rows of the full-text table \(fullText.name) come from no table the patch covers")
            }
            rebuiltFullText.append(fullText.name)
            return "DROP TABLE \(name);\n" + fullText.sql.replacingOccurrences(of: "\n", with: " ") + ";\n"
                + "INSERT INTO \(name) (\(list)) SELECT \(list) FROM \(quoteIdentifier(base.name)) ORDER BY \(base.order.map(quoteIdentifier).joined(separator: ", "));\n"
        }
        var text = ""
        if !gone.isEmpty {
            // quote() of each column, joined: one text per row that equals another row's only for the same values, so
            // that the rows gone are found in one pass over the table.
            func rowText(_ names: [String]) -> String { names.map { "quote(\($0))" }.joined(separator: " || ',' || ") }
            text += "CREATE TEMP TABLE kiln_patch_gone (\(scratch.joined(separator: ", ")));\n" + gone
            text += "DELETE FROM \(name) WHERE rowid IN (SELECT rowid FROM \(name) WHERE \(rowText(columns.map(quoteIdentifier))) IN (SELECT \(rowText(scratch)) FROM temp.kiln_patch_gone));\n"
            text += "DROP TABLE temp.kiln_patch_gone;\n"
        }
        indexChanges.append(change)
        return text + added
    }

    /// The statements that keep an FTS5 table reading its text from its table (external content) NEW's: for each row
    /// whose rowid or text changed, FTS5's 'delete' command with OLD's values (its table no longer holds them when
    /// the statement runs) and an insert under NEW's rowid. (OLD declares it the same way: a changed definition, such
    /// as an older Kiln's FTS5 table with its own copy of the text, is a schema change, which no patch makes.)
    private mutating func externalContentStatements(_ fullText: BundleLayout.Virtual) throws -> String {
        let name = quoteIdentifier(fullText.name)
        let list = (["rowid"] + fullText.columns).map(quoteIdentifier).joined(separator: ", ")
        var change = UpdateManifest.TableChange(name: fullText.name, oldRows: try count(fullText.name, in: "main"), newRows: try count(fullText.name, in: "new"),
                                                deleted: 0, updated: 0, inserted: 0)
        var text = ""
        try database.forEachRow("SELECT \(list) FROM main.\(name) EXCEPT SELECT \(list) FROM new.\(name) ORDER BY 1") { row in
            text += SQLPatchStatements.insert(fullText.name, columns: [fullText.name, "rowid"] + fullText.columns, values: [.text("delete")] + row.values)
            change.deleted += 1
        }
        try database.forEachRow("SELECT \(list) FROM new.\(name) EXCEPT SELECT \(list) FROM main.\(name) ORDER BY 1") { row in
            text += SQLPatchStatements.insert(fullText.name, columns: ["rowid"] + fullText.columns, values: row.values)
            change.inserted += 1
        }
        if !text.isEmpty { indexChanges.append(change) }
        return text
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
        var change = UpdateManifest.TableChange(name: table.name, oldRows: try count(table.name, in: "main"), newRows: try count(table.name, in: "new"),
                                                deleted: 0, updated: 0, inserted: 0)
        var text = ""
        try database.forEachRow("SELECT \(key.map { "o.\(quoteIdentifier($0))" }.joined(separator: ", ")) FROM main.\(name) AS o WHERE NOT EXISTS (SELECT 1 FROM new.\(name) AS n WHERE \(match)) ORDER BY \(keyOrder)") { row in
            text += SQLPatchStatements.delete(table.name, key: key, values: row.values)
            change.deleted += 1
        }
        // With a UNIQUE constraint besides the key, updates one by one could collide with a row not yet changed (ids
        // renumbered): changed rows are deleted with the removed ones, then inserted with the added ones.
        let uniqueIndexes = try database.rows("PRAGMA main.index_list(\(name))").filter { $0.values[2] == .integer(1) && $0.values[3] != .text("pk") }
        let replaces = !uniqueIndexes.isEmpty
        if !others.isEmpty {
            let selected = key.map { "n.\(quoteIdentifier($0))" } + others.flatMap { ["o.\(quoteIdentifier($0))", "n.\(quoteIdentifier($0))"] }
            try database.forEachRow("SELECT \(selected.joined(separator: ", ")) FROM main.\(name) AS o JOIN new.\(name) AS n ON \(match) WHERE \(differs(others)) ORDER BY \(key.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", "))") { row in
                var assignments: [(String, SQLValue)] = []
                for (index, column) in others.enumerated() {
                    let oldValue = row.values[key.count + 2 * index], newValue = row.values[key.count + 2 * index + 1]
                    if !identical(oldValue, newValue) { assignments.append((column, newValue)) }
                }
                if replaces {
                    text += SQLPatchStatements.delete(table.name, key: key, values: Array(row.values.prefix(key.count)))
                } else {
                    text += SQLPatchStatements.update(table.name, key: key, keyValues: row.values.prefix(key.count), changes: assignments)
                }
                change.updated += 1
            }
        }
        let newKeyOrder = key.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", ")
        let inserted = replaces && !others.isEmpty
            ? "NOT EXISTS (SELECT 1 FROM main.\(name) AS o WHERE \(match) AND NOT (\(differs(others))))"
            : "NOT EXISTS (SELECT 1 FROM main.\(name) AS o WHERE \(match))"
        try database.forEachRow("SELECT \(columns.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", ")), EXISTS (SELECT 1 FROM main.\(name) AS o WHERE \(match)) FROM new.\(name) AS n WHERE \(inserted) ORDER BY \(newKeyOrder)") { row in
            text += SQLPatchStatements.insert(table.name, columns: columns, values: Array(row.values.dropLast()))
            if row.values.last != .integer(1) { change.inserted += 1 }
        }
        return (text, change)
    }

    private func count(_ table: String, in schema: String) throws -> Int {
        Int(try database.rows("SELECT count(*) FROM \(schema).\(quoteIdentifier(table))").first?.values.first?.number ?? 0)
    }

    /// SQL that is true when a row of `o` and one of `n` differ in one of `columns`: binary comparison and the storage
    /// class, since 1 and 1.0, or 'a' and 'A' under NOCASE, are different values.
    private func differs(_ columns: [String]) -> String {
        "(" + columns.map { "o.\(quoteIdentifier($0)) IS NOT n.\(quoteIdentifier($0)) COLLATE BINARY OR typeof(o.\(quoteIdentifier($0))) <> typeof(n.\(quoteIdentifier($0)))" }.joined(separator: " OR ") + ")"
    }

    /// True for the same value to the bit: Swift holds 0.0 and -0.0 equal, and two texts in different Unicode
    /// normalizations (é and e + ◌́), which SQLite and the digest tell apart.
    private func identical(_ left: SQLValue, _ right: SQLValue) -> Bool {
        switch (left, right) {
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
        case (.text(let a), .text(let b)): return a.utf8.elementsEqual(b.utf8)
        default: return left == right
        }
    }
}
