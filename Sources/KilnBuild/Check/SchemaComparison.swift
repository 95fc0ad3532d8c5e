import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The shape of a database's schema as SQLite itself reports it (`PRAGMA table_list`, `table_xinfo`, `index_list`,
/// `index_info`, `foreign_key_list`, `user_version`), so that two schemas compare the same way whoever wrote them.
/// The manifest's schema is read the same way from an in-memory database made with the DDL the bundle writer uses.
package struct SchemaSnapshot {
    /// One column: name, declared type, NOT NULL, default, and whether it is hidden or generated.
    package struct Column: Equatable {
        package var name: String
        package var type: String
        package var notNull: Bool
        package var defaultValue: String?
        package var hidden: Int

        /// `INTEGER NOT NULL DEFAULT 0`.
        package var description: String {
            var text = type.isEmpty ? "untyped" : type.uppercased()
            if notNull { text += " NOT NULL" }
            if let defaultValue { text += " DEFAULT \(defaultValue)" }
            if hidden == 2 || hidden == 3 { text += " GENERATED" }
            return text
        }
    }

    /// An index, or the index SQLite keeps for a UNIQUE constraint.
    package struct Index: Equatable {
        package var name: String
        package var unique: Bool
        /// `c` for CREATE INDEX, `u` for a UNIQUE constraint.
        package var origin: String
        package var partial: Bool
        package var columns: [String]

        /// Indexes SQLite names itself are matched by what they index, not by name.
        package var subject: String {
            origin == "u" ? "the unique constraint (\(columns.joined(separator: ", ")))" : "index \(name)"
        }

        package var description: String {
            (unique ? "UNIQUE " : "") + "ON (\(columns.joined(separator: ", ")))" + (partial ? " WHERE …" : "")
        }
    }

    /// One ordinary table.
    package struct Table {
        package var name: String
        package var columns: [Column]
        package var primaryKey: [String]
        package var indexes: [Index]
        /// Each foreign key as `(a, b) → other (x, y)`, sorted.
        package var foreignKeys: [String]
        /// The CREATE TABLE statement with white space collapsed.
        package var sql: String
    }

    /// Ordinary tables by name (shadow tables of full-text indexes and R*Trees, and `sqlite_*` tables, left out).
    package var tables: [String: Table] = [:]
    /// Virtual tables (full-text indexes and R*Trees) by name, with their CREATE statement.
    package var virtualTables: [String: String] = [:]
    package var userVersion = 0

    /// Reads the schema of the database attached as `schema` (`main` by default), leaving out tables in `excluding`.
    /// - Throws: `SQLiteError` when SQLite cannot read it.
    package init(_ database: Database, schema: String = "main", excluding: Set<String> = []) throws {
        let prefix = quoteIdentifier(schema) + "."
        userVersion = Int(try database.rows("PRAGMA \(prefix)user_version").first?.values.first?.number ?? 0)
        let listed = try database.rows("SELECT l.name, l.type, s.sql FROM pragma_table_list AS l JOIN \(prefix)sqlite_schema AS s ON s.name = l.name WHERE l.schema = ? ORDER BY l.name", [.text(schema)])
        for entry in listed {
            guard let name = entry["name"].textValue, !name.hasPrefix("sqlite_"), !excluding.contains(name) else { continue }
            let sql = SchemaSnapshot.collapse(entry["sql"].textValue ?? "")
            switch entry["type"].textValue {
            case "virtual": virtualTables[name] = sql
            case "table": tables[name] = try SchemaSnapshot.table(name, sql: sql, in: database, prefix: prefix)
            default: continue
            }
        }
    }

    /// The schema a manifest declares for its bundle: its shipped tables, their indexes and full-text tables, and
    /// its `user_version`, made with the same DDL the bundle writer runs; for `target`'s own bundle, with the tables
    /// it gets instead of the modules it lacks (`TargetSQL.convert`).
    /// - Throws: `SQLiteError` when SQLite refuses the DDL.
    package static func declared(by manifest: Manifest, target: SQLiteTarget? = nil) throws -> SchemaSnapshot {
        let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
        for table in manifest.tables where table.ship {
            try database.execute(SchemaSQL.createTable(table))
            for statement in SchemaSQL.createIndexes(table) { try database.execute(statement) }
            if let fullText = table.fullText { try database.execute(SchemaSQL.createFullText(fullText, content: table.name)) }
            if let spatial = table.spatial { try database.execute(SchemaSQL.createSpatial(spatial)) }
        }
        if let target { try TargetSQL.convert(database, manifest: manifest, target: target, source: nil) }
        try database.execute("PRAGMA user_version = \(manifest.schemaVersion)")
        return try SchemaSnapshot(database)
    }

    private static func table(_ name: String, sql: String, in database: Database, prefix: String) throws -> Table {
        let quoted = quoteIdentifier(name)
        let columnRows = try database.rows("PRAGMA \(prefix)table_xinfo(\(quoted))")
        let columns = columnRows.map { row in
            Column(name: row["name"].textValue ?? "", type: row["type"].textValue ?? "", notNull: row["notnull"].number == 1,
                   defaultValue: row["dflt_value"].textValue, hidden: Int(row["hidden"].number ?? 0))
        }
        let primaryKey = columnRows.filter { ($0["pk"].number ?? 0) > 0 }
            .sorted { ($0["pk"].number ?? 0) < ($1["pk"].number ?? 0) }.compactMap { $0["name"].textValue }
        var indexes: [Index] = []
        for row in try database.rows("PRAGMA \(prefix)index_list(\(quoted))") where row["origin"].textValue != "pk" {
            let indexName = row["name"].textValue ?? ""
            let indexColumns = try database.rows("PRAGMA \(prefix)index_info(\(quoteIdentifier(indexName)))")
                .sorted { ($0["seqno"].number ?? 0) < ($1["seqno"].number ?? 0) }.map { $0["name"].textValue ?? "(expression)" }
            indexes.append(Index(name: indexName, unique: row["unique"].number == 1, origin: row["origin"].textValue ?? "c",
                                 partial: row["partial"].number == 1, columns: indexColumns))
        }
        var keys: [Int: (columns: [String], table: String, to: [String])] = [:]
        for row in try database.rows("PRAGMA \(prefix)foreign_key_list(\(quoted))") {
            let id = Int(row["id"].number ?? 0)
            var key = keys[id] ?? ([], row["table"].textValue ?? "", [])
            key.columns.append(row["from"].textValue ?? "")
            key.to.append(row["to"].textValue ?? "")
            keys[id] = key
        }
        let foreignKeys = keys.values.map { "(\($0.columns.joined(separator: ", "))) → \($0.table) (\($0.to.joined(separator: ", ")))" }.sorted()
        return Table(name: name, columns: columns, primaryKey: primaryKey, indexes: indexes.sorted { $0.subject < $1.subject },
                     foreignKeys: foreignKeys, sql: sql)
    }

    /// SQL with runs of white space made one space, so that layout does not count as a difference.
    private static func collapse(_ sql: String) -> String {
        sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// How `actual` differs from this (expected) schema, table by table in name order, then full-text tables, then
    /// `user_version`.
    package func differences(to actual: SchemaSnapshot) -> [SchemaDifference] {
        var found: [SchemaDifference] = []
        for name in Set(tables.keys).union(actual.tables.keys).sorted() {
            switch (tables[name], actual.tables[name]) {
            case (let expected?, let present?): found += SchemaSnapshot.compare(expected, present)
            case (let expected?, nil):
                found.append(SchemaDifference(kind: .table, table: name, subject: "table \(name)", expected: "\(expected.columns.count) columns", actual: nil))
            case (nil, let present?):
                found.append(SchemaDifference(kind: .table, table: name, subject: "table \(name)", expected: nil, actual: "\(present.columns.count) columns"))
            case (nil, nil): break
            }
        }
        for name in Set(virtualTables.keys).union(actual.virtualTables.keys).sorted() where virtualTables[name] != actual.virtualTables[name] {
            let spatial = [virtualTables[name], actual.virtualTables[name]].contains { $0?.range(of: "USING rtree", options: .caseInsensitive) != nil }
            found.append(SchemaDifference(kind: spatial ? .spatial : .fullText, table: name,
                                          subject: (spatial ? "spatial index " : "full-text table ") + name,
                                          expected: virtualTables[name], actual: actual.virtualTables[name]))
        }
        if userVersion != actual.userVersion {
            found.append(SchemaDifference(kind: .userVersion, table: nil, subject: "user_version",
                                          expected: String(userVersion), actual: String(actual.userVersion)))
        }
        return found
    }

    private static func compare(_ expected: Table, _ actual: Table) -> [SchemaDifference] {
        let name = expected.name
        var found: [SchemaDifference] = []
        func add(_ kind: SchemaDifference.Kind, _ subject: String, _ expectedText: String?, _ actualText: String?) {
            found.append(SchemaDifference(kind: kind, table: name, subject: subject, expected: expectedText, actual: actualText))
        }
        let expectedNames = expected.columns.map(\.name), actualNames = actual.columns.map(\.name)
        for column in expected.columns {
            let other = actual.columns.first { $0.name == column.name }
            if other != column { add(.column, "column \(name).\(column.name)", column.description, other?.description) }
        }
        for column in actual.columns where !expectedNames.contains(column.name) {
            add(.column, "column \(name).\(column.name)", nil, column.description)
        }
        if Set(expectedNames) == Set(actualNames), expectedNames != actualNames {
            add(.column, "the column order of \(name)", expectedNames.joined(separator: ", "), actualNames.joined(separator: ", "))
        }
        if expected.primaryKey != actual.primaryKey {
            func key(_ columns: [String]) -> String? { columns.isEmpty ? nil : "(" + columns.joined(separator: ", ") + ")" }
            add(.primaryKey, "the primary key of \(name)", key(expected.primaryKey), key(actual.primaryKey))
        }
        for subject in Set(expected.indexes.map(\.subject)).union(actual.indexes.map(\.subject)).sorted() {
            let left = expected.indexes.first { $0.subject == subject }, right = actual.indexes.first { $0.subject == subject }
            if left != right { add(.index, subject + " on \(name)", left?.description, right?.description) }
        }
        for key in Set(expected.foreignKeys).symmetricDifference(actual.foreignKeys).sorted() {
            add(.foreignKey, "the foreign key \(name) \(key)", expected.foreignKeys.contains(key) ? "declared" : nil,
                actual.foreignKeys.contains(key) ? "declared" : nil)
        }
        if found.isEmpty, expected.sql != actual.sql {
            add(.definition, "the CREATE TABLE statement of \(name) (a CHECK constraint, collation or default)", expected.sql, actual.sql)
        }
        return found
    }
}

/// One way two schemas differ: what it concerns, and how it reads on each side (`nil` when that side lacks it).
public struct SchemaDifference: Sendable, Equatable {
    /// What kind of schema object differs; `schema.<kind>` is the diagnostic code of `kiln check`.
    public enum Kind: String, Sendable {
        case table, column, primaryKey = "primary-key", index, foreignKey = "foreign-key", definition
        case fullText = "full-text", spatial, userVersion = "user-version"
    }

    /// What kind of object differs.
    public var kind: Kind
    /// The table concerned, when there is one.
    public var table: String?
    /// The object, e.g. `column timetable.frequency`.
    public var subject: String
    /// How the expected (or old) side has it.
    public var expected: String?
    /// How the actual (or new) side has it.
    public var actual: String?

    /// A sentence naming both sides, e.g. `column timetable.frequency is TEXT NOT NULL in the bundle, INTEGER NOT NULL
    /// in the manifest`.
    public func sentence(expected expectedSide: String, actual actualSide: String) -> String {
        switch (expected, actual) {
        case (_?, nil): return "\(subject) is missing in \(actualSide)"
        case (nil, _?): return "\(subject) is in \(actualSide) but not in \(expectedSide)"
        case (let left?, let right?): return "\(subject) is \(right) in \(actualSide), \(left) in \(expectedSide)"
        case (nil, nil): return "\(subject) differs"
        }
    }
}

extension DiagnosticCode {
    /// The code of a schema difference of `kind`.
    package static func schema(_ kind: SchemaDifference.Kind) -> DiagnosticCode {
        switch kind {
        case .table: return schemaTable
        case .column: return schemaColumn
        case .primaryKey: return schemaPrimaryKey
        case .index: return schemaIndex
        case .foreignKey: return schemaForeignKey
        case .definition: return schemaDefinition
        case .fullText: return schemaFullText
        case .spatial: return schemaSpatial
        case .userVersion: return schemaUserVersion
        }
    }
}
