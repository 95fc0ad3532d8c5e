import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln export room BUNDLE --out DIR`: what an Android app compiles to open the bundle with Room — an `@Entity` data
/// class per table (`@Fts4` for an FTS4 table; camelCase properties and the manifest's descriptions as KDoc, as the
/// Swift export has them), a `@Database` class without DAOs that opens the bundle from the app's
/// assets (`createFromAsset`), and the schema file Room's compiler would export for those classes
/// (`schemas/<package>.<Database>/<version>.json`). Every name the code uses from Kotlin or Room is written in full
/// (`kotlin.String`, `androidx.room.Entity`), so that a table called `string` or `entity` shadows nothing.
public struct RoomExport: Sendable {
    public let schema: RoomSchema
    /// The Kotlin package.
    public let package: String

    /// One generated class: its Kotlin name and what it is made from.
    package struct Class {
        package var name: String
        package var entity: RoomSchema.Entity
        /// Property name per field, in field order.
        package var properties: [String]
    }

    package let classes: [Class]
    /// `PatrasDatabase`.
    package let databaseName: String
    /// The content digest of the bundle (`kiln patch`'s), so that an app can tell which data it holds.
    package let contentDigest: String
    /// The manifest's descriptions, by table: the table's and its columns' (KDoc on the classes and properties).
    package let descriptions: [String: (table: String?, columns: [String: String])]
    /// `PatrasSearch`: the object that makes a search box's text an FTS4 query (`SearchAccessor`), when the bundle
    /// has an FTS4 table.
    package let searchName: String?
    /// The FTS4 tables whose queries are folded (`SearchAccessor.foldedTables`).
    package let foldedSearches: Set<String>

    /// - Throws: `KilnError.usage` for a package that is not a Kotlin package name, `KilnError.validation` when two
    ///   tables or two columns of a table would get the same Kotlin name (naming both).
    public init(_ schema: RoomSchema, package: String?, contentDigest: String, foldedSearches: Set<String> = [],
                descriptions: [String: (table: String?, columns: [String: String])] = [:]) throws {
        self.schema = schema
        self.descriptions = descriptions
        self.contentDigest = contentDigest
        self.foldedSearches = foldedSearches
        let package = package ?? RoomExport.defaultPackage(schema.bundle)
        guard RoomExport.isPackage(package) else {
            throw KilnError.usage("the Kotlin package must be names of letters, digits and underscores joined by dots, none a Kotlin keyword nor starting with a digit: not \"\(package)\"")
        }
        self.package = package
        guard schema.version >= 1 else {
            throw KilnError.validation("\(schema.fileName) has user_version \(schema.version), and a Room database's version is 1 or more: set the manifest's schemaVersion")
        }
        let tables = Set(schema.entities.map(\.table))
        for entity in schema.entities {
            let parents = entity.foreignKeys.map(\.table) + (entity.fullText?.contentTable.map { [$0] } ?? [])
            if let missing = parents.first(where: { !tables.contains($0) }) {
                let why = schema.skipped.first { $0.hasPrefix(missing + ": ") } ?? "\(missing): not a table of the bundle"
                throw KilnError.validation("table \(entity.table) refers to \(missing), which Room cannot declare (\(why))")
            }
            // Room's compiler wants a foreign key's parent columns to be the parent's key or a unique index (Entity.isUnique).
            for key in entity.foreignKeys {
                guard let parent = schema.entities.first(where: { $0.table == key.table }) else { continue }
                let columns = Set(key.referencedColumns)
                let unique = [parent.primaryKey] + parent.indexes.filter(\.unique).map(\.columns)
                if !unique.contains(where: { $0.count == columns.count && Set($0) == columns }) {
                    throw KilnError.validation("table \(entity.table)'s foreign key to \(key.table) (\(key.referencedColumns.joined(separator: ", "))) names neither its primary key nor a unique index, which Room requires")
                }
            }
        }
        databaseName = RoomExport.typeName(schema.bundle) + "Database"
        searchName = schema.entities.contains { $0.fullText != nil } ? RoomExport.typeName(schema.bundle) + "Search" : nil
        var names = GeneratedNames("Kotlin class", ignoringCase: true, reserved: [databaseName: "the database class"])
        if let searchName { names.reserve(searchName, for: "the search object") }
        var classes: [Class] = []
        for entity in schema.entities {
            let name = RoomExport.typeName(entity.table)
            try names.claim(name, for: .table(entity.table))
            var properties: [String] = [], used = GeneratedNames("Kotlin property")
            for field in entity.fields {
                let property = RoomExport.propertyName(field.column)
                try used.claim(property, for: .column(field.column, table: entity.table))
                properties.append(property)
            }
            classes.append(Class(name: name, entity: entity, properties: properties))
        }
        self.classes = classes
    }

    /// The bundle to read for `bundle`: the Android bundle beside it (`<bundle>.android.sqlite`) when the manifest has
    /// an android target, `bundle` itself when it is that bundle or when there is none (`note` says so).
    /// - Throws: `KilnError.usage` when the manifest has an android target and its bundle is not there.
    public static func androidBundle(for bundle: URL, manifest: Manifest, note: (String) -> Void) throws -> URL {
        guard manifest.targets.contains(where: { $0.platform == "android" }) else {
            note("the manifest has no android target: exporting for \(bundle.relativePath), the main bundle (FTS5 and R*Tree tables, which Room cannot declare, are left out)")
            return bundle
        }
        let database = try BundleFile.open(bundle)
        if try BundleFile.metadata(of: database)?["bundle.target"] == "android" { return bundle }
        let android = KilnFileNames.targetBundle(for: bundle, platform: "android")
        guard FileManager.default.fileExists(atPath: android.path) else {
            throw KilnError.usage("the manifest has an android target but \(android.relativePath), its bundle, is not there: build the pipeline first (kiln build writes it beside \(bundle.lastPathComponent))")
        }
        note("reading \(android.relativePath), the bundle of the android target")
        return android
    }

    // MARK: Names

    /// Kotlin's hard keywords, which a name may only be in backticks.
    package static let keywords: Set<String> = [
        "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface", "is", "null",
        "object", "package", "return", "super", "this", "throw", "true", "try", "typealias", "typeof", "val", "var",
        "when", "while",
    ]

    /// True for a name Kotlin accepts without backticks, keywords aside: a letter or `_`, then letters, digits, `_`,
    /// and not only underscores (those names are reserved).
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
            && name.contains { $0 != "_" }
    }

    /// `patras-web` → `patras_web`: the default package.
    package static func defaultPackage(_ bundle: String) -> String {
        var name = String(bundle.lowercased().unicodeScalars.map { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) ? Character($0) : "_" })
        if name.first.map({ $0.isNumber || $0 == "_" }) ?? true { name = "bundle_" + name }
        return keywords.contains(name) ? name + "_" : name
    }

    /// True for a Kotlin package name: identifiers (ASCII, no keyword) joined by dots.
    package static func isPackage(_ package: String) -> Bool {
        let parts = package.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return !parts.isEmpty && parts.allSatisfy { part in
            isIdentifier(part) && part.unicodeScalars.allSatisfy(\.isASCII) && !keywords.contains(part)
        }
    }

    /// `route_stop` → `RouteStop`.
    package static func typeName(_ name: String) -> String {
        let words = name.split { !($0.isLetter || $0.isNumber) }.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        let joined = words.joined()
        return joined.isEmpty || joined.first!.isNumber ? "T" + joined : joined
    }

    /// The property of a column, camelCase as the Swift export's (`line_id` → `lineId`): the words of letters and
    /// digits joined, each after the first capitalized; `_` first before a digit, `column` for a name without a word,
    /// a keyword in backticks. `@ColumnInfo(name = …)` keeps the column's own name.
    package static func propertyName(_ column: String) -> String {
        var words: [String] = [], word = ""
        for scalar in column.unicodeScalars {
            if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                word.unicodeScalars.append(scalar)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        guard let first = words.first else { return "column" }
        var name = first.prefix(1).lowercased() + first.dropFirst() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if name.first.map({ $0.isNumber }) ?? false { name = "_" + name }
        return keywords.contains(name) ? "`\(name)`" : name
    }

    /// KDoc lines for `text`, indented (`*/` in it spaced so that it cannot end the comment).
    package static func kdoc(_ text: String?, indent: String) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        let lines = text.replacingOccurrences(of: "*/", with: "* /").split(separator: "\n", omittingEmptySubsequences: false)
        if lines.count == 1 { return ["\(indent)/** \(lines[0]) */"] }
        return ["\(indent)/**"] + lines.map { $0.isEmpty ? "\(indent) *" : "\(indent) * \($0)" } + ["\(indent) */"]
    }

    /// A Kotlin string literal (`$` escaped: no templates; a control or a character a terminal obeys as `\\uXXXX`).
    package static func literal(_ text: String) -> String {
        SourceLiteral.quoted(text, escapes: ["$": "\\$"], unsafe: { $0.value == 0x7F || TerminalText.isUnsafe($0) }) {
            String(format: "\\u%04x", $0.value)
        }
    }

    private static func list(_ items: [String]) -> String { "[" + items.map(literal).joined(separator: ", ") + "]" }

    private static let kotlinTypes = ["TEXT": "kotlin.String", "INTEGER": "kotlin.Long", "REAL": "kotlin.Double", "BLOB": "kotlin.ByteArray"]
    private static let actions = ["NO ACTION": "NO_ACTION", "RESTRICT": "RESTRICT", "SET NULL": "SET_NULL", "SET DEFAULT": "SET_DEFAULT", "CASCADE": "CASCADE"]

    // MARK: Files

    /// Every file, path relative to the output folder → text; sorted by path.
    public func files() -> [(path: String, text: String)] {
        let folder = package.split(separator: ".").joined(separator: "/")
        var files = classes.map { ("\(folder)/\($0.name).kt", entitySource($0)) }
        files.append(("\(folder)/\(databaseName).kt", databaseSource()))
        if let searchName { files.append(("\(folder)/\(searchName).kt", searchSource(searchName))) }
        files.append(("schemas/\(package).\(databaseName)/\(schema.version).json", schemaJSON()))
        return files.sorted { $0.0 < $1.0 }
    }

    private var header: String {
        "// Generated by kiln export room from \(schema.fileName) (bundle \(schema.bundle), user_version \(schema.version)). Do not edit: export it again."
    }

    private func className(ofTable table: String) -> String? {
        classes.first { $0.entity.table == table }?.name
    }

    package func entitySource(_ type: Class) -> String {
        let entity = type.entity
        var lines = [header, "package \(package)", ""]
        var arguments = ["tableName = \(RoomExport.literal(entity.table))"]
        if !entity.primaryKey.isEmpty { arguments.append("primaryKeys = \(RoomExport.list(entity.primaryKey))") }
        if !entity.foreignKeys.isEmpty {
            let keys = entity.foreignKeys.map { key in
                return "        androidx.room.ForeignKey(entity = \(className(ofTable: key.table) ?? key.table)::class, parentColumns = \(RoomExport.list(key.referencedColumns)), childColumns = \(RoomExport.list(key.columns)), onDelete = androidx.room.ForeignKey.\(RoomExport.actions[key.onDelete] ?? "NO_ACTION"), onUpdate = androidx.room.ForeignKey.\(RoomExport.actions[key.onUpdate] ?? "NO_ACTION"))"
            }
            arguments.append("foreignKeys = [\n" + keys.joined(separator: ",\n") + "\n    ]")
        }
        if !entity.indexes.isEmpty {
            let indexes = entity.indexes.map { index in
                var parts = ["value = \(RoomExport.list(index.columns))", "name = \(RoomExport.literal(index.name))"]
                if index.unique { parts.append("unique = true") }
                if index.orders.contains("DESC") { parts.append("orders = [\(index.orders.map { "androidx.room.Index.Order.\($0)" }.joined(separator: ", "))]") }
                return "        androidx.room.Index(\(parts.joined(separator: ", ")))"
            }
            arguments.append("indices = [\n" + indexes.joined(separator: ",\n") + "\n    ]")
        }
        // No trailing commas: Kotlin before 1.4 rejects them.
        lines += RoomExport.kdoc(descriptions[entity.table]?.table, indent: "")
        lines.append("@androidx.room.Entity(")
        lines.append(arguments.map { "    " + $0 }.joined(separator: ",\n"))
        lines.append(")")
        if let fullText = entity.fullText {
            var parts: [String] = []
            if let content = fullText.contentTable {
                parts.append("contentEntity = \(className(ofTable: content) ?? content)::class")
            }
            if fullText.tokenizer != "simple" { parts.append("tokenizer = \(RoomExport.literal(fullText.tokenizer))") }
            if !fullText.tokenizerArguments.isEmpty { parts.append("tokenizerArgs = \(RoomExport.list(fullText.tokenizerArguments))") }
            if !fullText.notIndexed.isEmpty { parts.append("notIndexed = \(RoomExport.list(fullText.notIndexed))") }
            lines.append("@androidx.room.Fts4(\(parts.joined(separator: ", ")))")
        }
        lines.append("public data class \(type.name)(")
        let parameters = zip(entity.fields, type.properties).map { field, property in
            var info = ["name = \(RoomExport.literal(field.column))", "typeAffinity = androidx.room.ColumnInfo.\(field.affinity)"]
            if let value = field.defaultValue { info.append("defaultValue = \(RoomExport.literal(value))") }
            // An FTS entity's columns are its content table's.
            let described = descriptions[entity.table]?.columns[field.column]
                ?? entity.fullText?.contentTable.flatMap { descriptions[$0]?.columns[field.column] }
            let doc = RoomExport.kdoc(described, indent: "    ").map { $0 + "\n" }.joined()
            return doc + "    @androidx.room.ColumnInfo(\(info.joined(separator: ", ")))\n    val \(property): \(RoomExport.kotlinTypes[field.affinity] ?? "kotlin.ByteArray")\(field.notNull ? "" : "?")"
        }
        lines.append(parameters.joined(separator: ",\n"))
        lines += [")", ""]
        return lines.joined(separator: "\n")
    }

    /// The search object: a `MATCH` argument builder per FTS4 entity.
    package func searchSource(_ name: String) -> String {
        let entities = classes.compactMap { type -> (table: String, content: String?, function: String, folds: Bool)? in
            guard let fullText = type.entity.fullText else { return nil }
            let function = type.name.prefix(1).lowercased() + type.name.dropFirst() + "Match"
            return (type.entity.table, fullText.contentTable, function, foldedSearches.contains(type.entity.table))
        }
        return SearchAccessor.kotlinSource(object: name, header: header, package: package, entities: entities)
    }

    package func databaseSource() -> String {
        let name = databaseName
        return ([header, "package \(package)", "",
                 "/**",
                 " * The bundle \(schema.bundle) as a Room database, read from the app's assets (\(schema.fileName)).",
                 " * Add your `@Dao` interfaces as abstract functions here; every table is an entity already.",
                 " */",
                 "@androidx.room.Database(",
                 "    entities = ["]
            + [classes.map { "        \($0.name)::class" }.joined(separator: ",\n")]
            + ["    ],",
               "    version = \(schema.version),",
               "    exportSchema = true",
               ")",
               "public abstract class \(name) : androidx.room.RoomDatabase() {",
               "    public companion object {",
               "        /** The bundle's file name among the app's assets. */",
               "        public const val ASSET: kotlin.String = \(RoomExport.literal(schema.fileName))",
               "",
               "        /** The manifest's schemaVersion of the bundle (its user_version, Room's version). */",
               "        public const val SCHEMA_VERSION: kotlin.Int = \(schema.version)",
               "",
               "        /** The content digest of the bundle this file was made from (`kiln patch`'s digest). */",
               "        public const val CONTENT_DIGEST: kotlin.String = \(RoomExport.literal(contentDigest))",
               "",
               "        /** Opens the database, copying it from the assets on first use (Room validates its schema then). */",
               "        public fun open(context: android.content.Context, name: kotlin.String = \(RoomExport.literal(schema.bundle + ".sqlite"))): \(name) =",
               "            androidx.room.Room.databaseBuilder(context, \(name)::class.java, name)",
               "                .createFromAsset(ASSET)",
               "                .build()",
               "    }",
               "}",
               ""]).joined(separator: "\n")
    }

    // MARK: Schema JSON and identity hash

    /// `` `name` `` as Room's compiler quotes names in SQL.
    private static func quoted(_ name: String) -> String { "`" + name.replacingOccurrences(of: "`", with: "``") + "`" }

    /// A column's definition as Room writes it: `` `code` TEXT NOT NULL ``.
    package static func columnDefinition(_ field: RoomSchema.Field) -> String {
        var text = "\(quoted(field.column)) \(field.affinity)"
        if field.notNull { text += " NOT NULL" }
        if let value = field.defaultValue { text += " DEFAULT \(value)" }
        return text
    }

    /// The `CREATE` statement of Room's schema file, `${TABLE_NAME}` for the table's name.
    package static func createSQL(_ entity: RoomSchema.Entity, table: String = "${TABLE_NAME}") -> String {
        if let fullText = entity.fullText {
            let definitions = entity.fields.map(columnDefinition) + RoomSchema.roomOptions(fullText)
            return "CREATE VIRTUAL TABLE IF NOT EXISTS \(quoted(table)) USING FTS4(\(definitions.joined(separator: ", ")))"
        }
        var definitions = entity.fields.map(columnDefinition)
        definitions.append("PRIMARY KEY(\(entity.primaryKey.map(quoted).joined(separator: ", ")))")
        for key in entity.foreignKeys {
            definitions.append("FOREIGN KEY(\(key.columns.map(quoted).joined(separator: ", "))) REFERENCES \(quoted(key.table))(\(key.referencedColumns.map(quoted).joined(separator: ", "))) ON UPDATE \(key.onUpdate) ON DELETE \(key.onDelete) ")
        }
        return "CREATE TABLE IF NOT EXISTS \(quoted(table)) (\(definitions.joined(separator: ", ")))"
    }

    /// An index's `CREATE` statement as Room writes it.
    package static func createIndexSQL(_ index: RoomSchema.Index, table: String = "${TABLE_NAME}") -> String {
        let declared = index.orders.contains("DESC")
        let columns = index.columns.enumerated().map { declared ? "\(quoted($1)) \(index.orders[$0])" : quoted($1) }
        return "CREATE \(index.unique ? "UNIQUE INDEX" : "INDEX") IF NOT EXISTS \(quoted(index.name)) ON \(quoted(table)) (\(columns.joined(separator: ", ")))"
    }

    /// The triggers Room's schema lists for an FTS entity with external content (`FtsEntity.createSyncTriggers`).
    package static func contentSyncTriggers(_ entity: RoomSchema.Entity) -> [String] {
        guard let content = entity.fullText?.contentTable else { return [] }
        let table = entity.table, columns = entity.fields.map(\.column)
        let name = { (operation: String) in "room_fts_content_sync_\(table)_\(operation)" }
        let before = ["UPDATE", "DELETE"].map { operation in
            "CREATE TRIGGER IF NOT EXISTS \(name("BEFORE_" + operation)) BEFORE \(operation) ON \(quoted(content)) BEGIN DELETE FROM \(quoted(table)) WHERE `docid`=OLD.`rowid`; END"
        }
        let after = ["UPDATE", "INSERT"].map { operation in
            "CREATE TRIGGER IF NOT EXISTS \(name("AFTER_" + operation)) AFTER \(operation) ON \(quoted(content)) BEGIN INSERT INTO \(quoted(table))(\((["docid"] + columns).map(quoted).joined(separator: ", "))) VALUES (\((["rowid"] + columns).map { "NEW.\(quoted($0))" }.joined(separator: ", "))); END"
        }
        return before + after
    }

    /// Room's `SchemaIdentityKey`: each part followed by `?:?`, then MD5 in hexadecimal.
    package static func identityKey(_ parts: [String]) -> String {
        MD5Digest.hex(parts.map { $0 + "?:?" }.joined())
    }

    /// Room's sort of identity parts: by their lowercase text, UTF-16 unit by unit (Java's `compareTo`).
    package static func sortedParts(_ parts: [String]) -> [String] {
        parts.sorted { $0.lowercased().utf16.lexicographicallyPrecedes($1.lowercased().utf16) }
    }

    /// An entity's identity (`Entity.getIdKey`, `FtsEntity.getIdKey`).
    package static func identity(_ entity: RoomSchema.Entity) -> String {
        let fields = sortedParts(entity.fields.map { field in
            "\(field.column)-\(field.affinity)-\(field.notNull)" + (field.defaultValue.map { "-defaultValue=\($0)" } ?? "")
        })
        if let fullText = entity.fullText {
            let options = identityKey([fullText.tokenizer, fullText.tokenizerArguments.joined(separator: ", "), fullText.contentTable ?? "", "",
                                       "FTS4", fullText.notIndexed.joined(separator: ", "), "", "ASC"])
            return identityKey([entity.table] + fields + ["FTS4", options])
        }
        let key = "false-[\(entity.primaryKey.joined(separator: ", "))]"
        let indexes = sortedParts(entity.indexes.map { index in
            "\(index.unique)-\(index.name)-\(index.columns.joined(separator: ","))" + (index.orders.contains("DESC") ? "-" + index.orders.joined(separator: ",") : "")
        })
        let foreignKeys = sortedParts(entity.foreignKeys.map { key in
            "\(key.table)-\(key.referencedColumns.joined(separator: ","))-\(key.columns.joined(separator: ","))-\(key.onDelete)-\(key.onUpdate)-false"
        })
        return identityKey([entity.table, key] + fields + indexes + foreignKeys)
    }

    /// The database's identity hash (`Database.identityHash`): what Room writes into `room_master_table`.
    public var identityHash: String {
        RoomExport.identityKey(RoomExport.sortedParts(schema.entities.map(RoomExport.identity)))
    }

    /// A JSON value whose object keys keep their order (Room's).
    package indirect enum JSON {
        case string(String), number(Int), bool(Bool), array([JSON]), object([(String, JSON)])

        package func text(_ indent: String = "") -> String {
            let inner = indent + "  "
            switch self {
            case .string(let value): return JSONText.string(value)
            case .number(let value): return String(value)
            case .bool(let value): return value ? "true" : "false"
            case .array(let items):
                return items.isEmpty ? "[]" : "[\n" + items.map { inner + $0.text(inner) }.joined(separator: ",\n") + "\n\(indent)]"
            case .object(let members):
                return members.isEmpty ? "{}" : "{\n" + members.map { inner + JSONText.string($0.0) + ": " + $0.1.text(inner) }.joined(separator: ",\n") + "\n\(indent)}"
            }
        }
    }

    private static func strings(_ items: [String]) -> JSON { .array(items.map(JSON.string)) }

    private func entityJSON(_ type: Class) -> JSON {
        let entity = type.entity
        let fields: [JSON] = zip(entity.fields, type.properties).map { field, property in
            var members: [(String, JSON)] = [("fieldPath", .string(property.replacingOccurrences(of: "`", with: ""))), ("columnName", .string(field.column)),
                                             ("affinity", .string(field.affinity)), ("notNull", .bool(field.notNull))]
            if let value = field.defaultValue { members.append(("defaultValue", .string(value))) }
            return .object(members)
        }
        var members: [(String, JSON)] = [
            ("tableName", .string(entity.table)),
            ("createSql", .string(RoomExport.createSQL(entity))),
            ("fields", .array(fields)),
            ("primaryKey", .object([("autoGenerate", .bool(false)), ("columnNames", RoomExport.strings(entity.primaryKey))])),
            ("indices", .array(entity.indexes.map { index in
                .object([("name", .string(index.name)), ("unique", .bool(index.unique)), ("columnNames", RoomExport.strings(index.columns)),
                         ("orders", RoomExport.strings(index.orders.contains("DESC") ? index.orders : [])),
                         ("createSql", .string(RoomExport.createIndexSQL(index)))])
            })),
            ("foreignKeys", .array(entity.foreignKeys.map { key in
                .object([("table", .string(key.table)), ("onDelete", .string(key.onDelete)), ("onUpdate", .string(key.onUpdate)),
                         ("columns", RoomExport.strings(key.columns)), ("referencedColumns", RoomExport.strings(key.referencedColumns))])
            })),
        ]
        if let fullText = entity.fullText {
            members += [
                ("ftsVersion", .string("FTS4")),
                ("ftsOptions", .object([("tokenizer", .string(fullText.tokenizer)), ("tokenizerArgs", RoomExport.strings(fullText.tokenizerArguments)),
                                        ("contentTable", .string(fullText.contentTable ?? "")), ("languageIdColumnName", .string("")),
                                        ("matchInfo", .string("FTS4")), ("notIndexedColumns", RoomExport.strings(fullText.notIndexed)),
                                        ("prefixSizes", .array([])), ("preferredOrder", .string("ASC"))])),
                ("contentSyncTriggers", RoomExport.strings(RoomExport.contentSyncTriggers(entity))),
            ]
        }
        return .object(members)
    }

    /// Room's schema file (`SchemaBundle`, format version 1) for the generated classes.
    package func schemaJSON() -> String {
        let hash = identityHash
        let document = JSON.object([
            ("formatVersion", .number(1)),
            ("database", .object([
                ("version", .number(schema.version)),
                ("identityHash", .string(hash)),
                ("entities", .array(classes.map(entityJSON))),
                ("views", .array([])),
                ("setupQueries", RoomExport.strings([
                    "CREATE TABLE IF NOT EXISTS room_master_table (id INTEGER PRIMARY KEY,identity_hash TEXT)",
                    "INSERT OR REPLACE INTO room_master_table (id,identity_hash) VALUES(42, '\(hash)')",
                ])),
            ])),
        ])
        return document.text() + "\n"
    }
}

/// The string literals the exports write into Swift and Kotlin sources: quotes, backslashes and line breaks escaped,
/// the language's own escapes added, controls (and what `unsafe` names) through the language's Unicode escape.
package enum SourceLiteral {
    package static func quoted(_ text: String, escapes: [Unicode.Scalar: String] = [:], unsafe: (Unicode.Scalar) -> Bool, unicode: (Unicode.Scalar) -> String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if let escape = escapes[scalar] {
                    out += escape
                } else if scalar.value < 0x20 || unsafe(scalar) {
                    out += unicode(scalar)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
