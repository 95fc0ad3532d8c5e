import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The schema of a bundle as Room (Android's `androidx.room`) would declare it, read from the bundle itself: one entity
/// per ordinary table (columns from `PRAGMA table_info`, key positions, the indexes SQLite was told to create,
/// foreign keys), one FTS4 entity per FTS4 table, and what Room cannot declare, each with its reason. What Room checks
/// when it opens a pre-packaged database (`TableInfo`, `FtsTableInfo`) is what this reads, so that the entities
/// `RoomExport` writes from it validate against the same bundle.
public struct RoomSchema: Sendable {
    /// One column.
    public struct Field: Sendable, Equatable {
        public var column: String
        /// `TEXT`, `INTEGER`, `REAL` or `BLOB`: the column's affinity by SQLite's rules (datatype3 §3.1).
        public var affinity: String
        public var notNull: Bool
        /// `dflt_value` as SQLite reports it.
        public var defaultValue: String?
        /// The column's position in the primary key (1-based), 0 if it is not in it.
        public var primaryKeyPosition: Int
    }

    /// An index SQLite was told to create (`CREATE INDEX`; origin `c`): the only ones Room compares.
    public struct Index: Sendable, Equatable {
        public var name: String
        public var unique: Bool
        public var columns: [String]
        /// `ASC` or `DESC` per column.
        public var orders: [String]
    }

    /// A foreign key, its columns in key order.
    public struct ForeignKey: Sendable, Equatable {
        public var table: String
        public var columns: [String]
        public var referencedColumns: [String]
        /// `NO ACTION`, `CASCADE`, `SET NULL`, `SET DEFAULT` or `RESTRICT`, as `PRAGMA foreign_key_list` says.
        public var onDelete: String
        public var onUpdate: String
    }

    /// The options of an FTS4 table.
    public struct FullText: Sendable, Equatable {
        public var tokenizer: String
        public var tokenizerArguments: [String]
        /// The external content table, if any.
        public var contentTable: String?
        public var notIndexed: [String]
        /// The options as the table's statement writes them (what Room's `FtsTableInfo` reads and compares).
        public var options: Set<String>
    }

    /// One table Room can declare.
    public struct Entity: Sendable {
        public var table: String
        /// In table order.
        public var fields: [Field]
        public var primaryKey: [String]
        /// Sorted by name.
        public var indexes: [Index]
        /// In `PRAGMA foreign_key_list` order (by id).
        public var foreignKeys: [ForeignKey]
        public var fullText: FullText?
    }

    /// The bundle's name (kiln_metadata).
    public var bundle: String
    /// The bundle file's name (`patras.android.sqlite`).
    public var fileName: String
    /// `PRAGMA user_version`: the `@Database` version.
    public var version: Int
    /// Sorted by table name.
    public var entities: [Entity]
    /// The tables Room cannot declare, each with why: `stop_search: FTS5, which Room has no entity for`.
    public var skipped: [String]

    /// A schema given part by part (tests, a schema read from elsewhere).
    package init(bundle: String, fileName: String, version: Int, entities: [Entity], skipped: [String] = []) {
        (self.bundle, self.fileName, self.version, self.entities, self.skipped) = (bundle, fileName, version, entities, skipped)
    }

    /// Reads `url`, a Kiln bundle.
    /// - Throws: as `BundleFile.open`; `KilnError.validation` when SQLite cannot read the schema.
    public init(bundle url: URL) throws {
        bundle = try BundleFile.name(of: url)
        fileName = url.lastPathComponent
        let database = try BundleFile.open(url)
        do {
            version = Int(try database.rows("PRAGMA user_version").first?.values.first?.number ?? 0)
            var tables: [(name: String, sql: String)] = []
            for row in try database.rows("SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table' ORDER BY name") {
                guard let name = row.values[0].textValue, !name.hasPrefix("sqlite_") else { continue }
                tables.append((name, row.values[1].textValue ?? ""))
            }
            let virtual = tables.filter { RoomSchema.module(of: $0.sql) != nil }.map(\.name)
            var entities: [Entity] = [], skipped: [String] = []
            for (name, sql) in tables {
                // The shadow tables of a virtual table are SQLite's, not the app's.
                if virtual.contains(where: { name != $0 && name.hasPrefix($0 + "_") }) { continue }
                if let module = RoomSchema.module(of: sql) {
                    guard module == "fts4" else {
                        skipped.append("\(name): a virtual table of module \(module), which Room has no entity for")
                        continue
                    }
                    switch try RoomSchema.fullTextEntity(name, sql: sql, in: database) {
                    case .success(let entity): entities.append(entity)
                    case .failure(let reason): skipped.append("\(name): \(reason.text)")
                    }
                    continue
                }
                switch try RoomSchema.entity(name, in: database) {
                case .success(let entity): entities.append(entity)
                case .failure(let reason): skipped.append("\(name): \(reason.text)")
                }
            }
            self.entities = entities
            self.skipped = skipped
        } catch let error as SQLiteError {
            throw KilnError.validation("\(url.relativePath) cannot be read: \(error.message)")
        }
    }

    /// Why a table is left out.
    package struct Reason: Error { let text: String }

    /// `fts4` for `CREATE VIRTUAL TABLE x USING fts4(...)`, lowercased; nil for an ordinary table.
    package static func module(of sql: String) -> String? {
        guard sql.range(of: "CREATE VIRTUAL TABLE", options: [.caseInsensitive, .anchored]) != nil,
              let using = sql.range(of: " USING ", options: .caseInsensitive) else { return nil }
        let rest = sql[using.upperBound...].drop { $0 == " " }
        return String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }).lowercased()
    }

    /// SQLite's affinity of a declared type (datatype3 §3.1), as Room's `findAffinity` computes it; `nil` for NUMERIC
    /// affinity and for an untyped column, which Room reads as UNDEFINED and cannot declare.
    package static func affinity(_ declared: String) -> String? {
        let type = declared.uppercased()
        if type.contains("INT") { return "INTEGER" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "TEXT" }
        if type.contains("BLOB") { return "BLOB" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "REAL" }
        return nil
    }

    private static func text(_ value: SQLValue) -> String { value.textValue ?? "" }
    private static func int(_ value: SQLValue) -> Int { Int(value.number ?? 0) }

    private static func fields(_ table: String, in database: Database) throws -> Result<[Field], Reason> {
        var fields: [Field] = []
        for row in try database.rows("PRAGMA table_info(\(quoteIdentifier(table)))") {
            let name = text(row.values[1]), type = text(row.values[2])
            guard let affinity = affinity(type) else {
                return .failure(Reason(text: "column \(name) is \(type.isEmpty ? "untyped" : "of type \(type)") (NUMERIC affinity), which a Room column cannot declare"))
            }
            fields.append(Field(column: name, affinity: affinity, notNull: int(row.values[3]) != 0,
                                defaultValue: row.values[4].textValue, primaryKeyPosition: int(row.values[5])))
        }
        return .success(fields)
    }

    package static func entity(_ table: String, in database: Database) throws -> Result<Entity, Reason> {
        let fields: [Field]
        switch try self.fields(table, in: database) {
        case .success(let found): fields = found
        case .failure(let reason): return .failure(reason)
        }
        let key = fields.filter { $0.primaryKeyPosition > 0 }.sorted { $0.primaryKeyPosition < $1.primaryKeyPosition }
        guard !key.isEmpty else { return .failure(Reason(text: "it has no primary key, which every Room entity needs")) }
        if let nullable = key.first(where: { !$0.notNull }) {
            return .failure(Reason(text: "its key column \(nullable.column) may be NULL, which Room does not allow in a primary key"))
        }
        var indexes: [Index] = []
        for row in try database.rows("PRAGMA index_list(\(quoteIdentifier(table)))") where text(row.values[3]) == "c" {
            let name = text(row.values[1])
            var columns: [String] = [], orders: [String] = []
            for column in try database.rows("PRAGMA index_xinfo(\(quoteIdentifier(name)))") where int(column.values[5]) == 1 {
                guard int(column.values[1]) >= 0 else { return .failure(Reason(text: "index \(name) indexes an expression, which a Room index cannot declare")) }
                columns.append(text(column.values[2]))
                orders.append(int(column.values[3]) != 0 ? "DESC" : "ASC")
            }
            if int(row.values[4]) != 0 { return .failure(Reason(text: "index \(name) is partial (WHERE), which a Room index cannot declare")) }
            indexes.append(Index(name: name, unique: int(row.values[2]) != 0, columns: columns, orders: orders))
        }
        var keys: [Int: ForeignKey] = [:]
        for row in try database.rows("PRAGMA foreign_key_list(\(quoteIdentifier(table)))") {
            let id = int(row.values[0])
            guard let to = row.values[4].textValue else {
                return .failure(Reason(text: "a foreign key to \(text(row.values[2])) names no parent column, which Room reads as a key to nothing"))
            }
            var key = keys[id] ?? ForeignKey(table: text(row.values[2]), columns: [], referencedColumns: [],
                                             onDelete: text(row.values[6]), onUpdate: text(row.values[5]))
            key.columns.append(text(row.values[3]))
            key.referencedColumns.append(to)
            keys[id] = key
        }
        return .success(Entity(table: table, fields: fields, primaryKey: key.map(\.column), indexes: indexes.sorted { $0.name < $1.name },
                               foreignKeys: keys.keys.sorted().compactMap { keys[$0] }, fullText: nil))
    }

    /// The arguments of `USING module(...)`, split at the commas outside quotes as Room's `parseFtsOptions` splits them.
    package static func moduleArguments(_ sql: String) -> [String] {
        guard let open = sql.firstIndex(of: "("), let close = sql.lastIndex(of: ")"), open < close else { return [] }
        return split(sql[sql.index(after: open)..<close], at: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `text` split at each `separator` outside quotes (`'`, `"`, `` ` ``, `[…]`).
    package static func split(_ text: Substring, at separator: Character) -> [String] {
        var parts: [String] = [], current = "", quote: Character?
        for character in text {
            if let open = quote {
                if character == (open == "[" ? "]" : open) { quote = nil }
            } else if character == "'" || character == "\"" || character == "`" || character == "[" {
                quote = character
            } else if character == separator {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        return parts
    }

    /// `name` without its quotes (`"a""b"`, `` `a` ``, `'a'`, `[a]`).
    package static func unquoted(_ name: String) -> String {
        guard let first = name.first, let last = name.last, name.count >= 2 else { return name }
        switch (first, last) {
        case ("[", "]"): return String(name.dropFirst().dropLast())
        case ("\"", "\""), ("`", "`"), ("'", "'"):
            return String(name.dropFirst().dropLast()).replacingOccurrences(of: String(first) + String(first), with: String(first))
        default: return name
        }
    }

    private static let optionNames = ["tokenize=", "compress=", "content=", "languageid=", "matchinfo=", "notindexed=", "order=", "prefix=", "uncompress="]

    package static func fullTextEntity(_ table: String, sql: String, in database: Database) throws -> Result<Entity, Reason> {
        var fullText = FullText(tokenizer: "simple", tokenizerArguments: [], contentTable: nil, notIndexed: [], options: [])
        for argument in moduleArguments(sql) {
            guard let option = optionNames.first(where: { argument.hasPrefix($0) }) else { continue }
            fullText.options.insert(argument)
            let value = String(argument.dropFirst(option.count))
            switch option {
            case "tokenize=":
                let words = moduleWords(value)
                fullText.tokenizer = words.first.map(unquoted) ?? "simple"
                fullText.tokenizerArguments = words.dropFirst().map(unquoted)
            case "content=": fullText.contentTable = unquoted(value)
            case "notindexed=": fullText.notIndexed.append(unquoted(value))
            default: return .failure(Reason(text: "its FTS4 option \(argument) is not one Kiln declares for Room"))
            }
        }
        // Room compares the options as text with those its compiler writes: they must be spelled alike.
        let expected = Set(RoomSchema.roomOptions(fullText))
        guard expected == fullText.options else {
            let missing = expected.subtracting(fullText.options).sorted(), extra = fullText.options.subtracting(expected).sorted()
            return .failure(Reason(text: "its FTS4 options are not spelled as Room's compiler spells them (Room expects \(missing.joined(separator: ", ")), the table has \(extra.joined(separator: ", "))), so Room would refuse the bundle"))
        }
        var fields: [Field] = []
        let content = try fullText.contentTable.map { try self.fields($0, in: database) }
        for row in try database.rows("PRAGMA table_info(\(quoteIdentifier(table)))") {
            let name = text(row.values[1])
            // The column's type and nullability are its content column's: what reading it gives.
            if case .success(let columns)? = content, let column = columns.first(where: { $0.column == name }) {
                fields.append(Field(column: name, affinity: column.affinity, notNull: column.notNull, defaultValue: nil, primaryKeyPosition: 0))
            } else if fullText.contentTable != nil {
                return .failure(Reason(text: "its column \(name) is not a column Room can declare in its content table \(fullText.contentTable ?? "")"))
            } else {
                fields.append(Field(column: name, affinity: "TEXT", notNull: false, defaultValue: nil, primaryKeyPosition: 0))
            }
        }
        return .success(Entity(table: table, fields: fields, primaryKey: [], indexes: [], foreignKeys: [], fullText: fullText))
    }

    /// The words of a `tokenize=` value, split at spaces outside quotes.
    package static func moduleWords(_ value: String) -> [String] {
        split(value[...], at: " ").filter { !$0.isEmpty }
    }

    /// The FTS options as Room's compiler writes them for an `@Fts4` entity (`FtsOptions.databaseDefinition`).
    package static func roomOptions(_ fullText: FullText) -> [String] {
        var options: [String] = []
        if fullText.tokenizer != "simple" || !fullText.tokenizerArguments.isEmpty {
            options.append((["tokenize=\(fullText.tokenizer)"] + fullText.tokenizerArguments.map { "`\($0)`" }).joined(separator: " "))
        }
        if let content = fullText.contentTable { options.append("content=`\(content)`") }
        options += fullText.notIndexed.map { "notindexed=`\($0)`" }
        return options
    }
}
