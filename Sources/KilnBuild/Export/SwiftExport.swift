import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln export swift BUNDLE --out DIR`: one Swift file an app compiles to read the bundle — a struct per shipped
/// table (names, types and optionality from the bundle's schema, doc comments from the manifest), read-only queries
/// by primary key, foreign key, full-text search (of what a user typed: `SearchAccessor`) and region where the table
/// has them, through a small reader over SQLite's C API (`import SQLite3` on Apple platforms, a module named `CSQLite`
/// elsewhere), and GRDB's
/// `FetchableRecord`/`TableRecord` under `#if canImport(GRDB)`. It carries the bundle's schema version and content
/// digest. Every type lives in one namespace (`<Bundle>Bundle`) and the code names `Swift.String` and the like in full,
/// so that a table called `date` or `string` shadows nothing; a table or column whose name would be one the generated
/// code uses itself (`Value`, `Reader`, a keyword type such as `Self`), or another table's or column's, is refused
/// (`GeneratedNames`).
package struct SwiftExport {
    package let description: BundleDescription
    /// The property of each column, by table, in column order.
    private let members: [String: [(column: BundleDescription.Column, name: String)]]

    /// The types of the generated file that a table's type may not be: the runtime's, the modules it names, the
    /// keywords a type name cannot be.
    private static func reservedTypes(namespace: String) -> [String: String] {
        var reserved = [namespace: "the namespace of every generated type", "Value": "the reader's type of SQLite values",
                        "ReaderError": "the reader's error type", "Row": "the protocol of every row type",
                        "Statement": "the reader's statement type", "Reader": "the reader",
                        "Search": "the search accessors' namespace"]
        for module in ["Swift", "Foundation", "GRDB", "SQLite3", "CSQLite"] { reserved[module] = "a module the file names" }
        for keyword in ["Any", "Self", "Type", "Protocol"] { reserved[keyword] = "a Swift keyword" }
        return reserved
    }

    /// - Throws: `KilnError.validation` when a table's type or a column's property would be a name the generated code
    ///   uses itself or another table's or column's, or two query functions of the reader would be the same.
    package init(_ description: BundleDescription) throws {
        self.description = description
        var types = GeneratedNames("Swift type", reserved: SwiftExport.reservedTypes(namespace: SwiftExport.namespace(description.bundle)))
        var members: [String: [(column: BundleDescription.Column, name: String)]] = [:]
        for table in description.tables {
            try types.claim(SwiftExport.typeName(table.name), for: .table(table.name))
            var properties = GeneratedNames("Swift property", reserved: ["values": "the row's values in column order"])
            members[table.name] = try table.columns.map { column in
                let name = SwiftExport.memberName(column.name)
                try properties.claim(name, for: .column(column.name, table: table.name))
                return (column, name)
            }
        }
        self.members = members
        var functions = GeneratedNames("Swift function of the reader", reserved: [
            "select(_:_:_:)": "the reader's own", "rows(_:where:_:)": "the reader's own", "all(_:)": "the reader's own",
        ])
        for table in description.tables {
            for (kind, signature) in querySignatures(table) { try functions.claim(signature, for: .query(kind, table: table.name)) }
        }
    }

    /// `PatrasBundle.swift`.
    package static func fileName(for description: BundleDescription) -> String {
        namespace(description.bundle) + ".swift"
    }

    /// `PatrasBundle` for bundle `patras`.
    package static func namespace(_ bundle: String) -> String {
        typeName(bundle) + "Bundle"
    }

    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout", "internal",
        "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static", "struct",
        "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
        "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as",
        "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "Type", "Protocol",
    ]

    /// `route_stop` → `RouteStop`.
    package static func typeName(_ name: String) -> String {
        let words = name.split { !$0.isLetter && !$0.isNumber }.map { $0.prefix(1).uppercased() + $0.dropFirst() }
        let joined = words.joined()
        return joined.isEmpty || joined.first!.isNumber ? "T" + joined : joined
    }

    /// `line_id` → `lineId`, keywords in backticks.
    package static func memberName(_ name: String) -> String {
        let type = typeName(name)
        let member = type.prefix(1).lowercased() + type.dropFirst()
        return keywords.contains(member) ? "`\(member)`" : member
    }

    /// A name used inside another one (`stop` + `ByCode`): no backticks.
    private static func bare(_ name: String) -> String { name.replacingOccurrences(of: "`", with: "") }

    /// The Swift type of a column: `Swift.String`, `Swift.Int64`, `Swift.Double`, `[Swift.UInt8]` or `Value` (untyped).
    private static func swiftType(_ column: BundleDescription.Column) -> (type: String, getter: String) {
        let base: (String, String)
        switch column.type {
        case "TEXT": base = ("Swift.String", "text")
        case "INTEGER": base = ("Swift.Int64", "integer")
        case "REAL": base = ("Swift.Double", "real")
        case "BLOB": base = ("[Swift.UInt8]", "blob")
        default: return ("Value", "value")
        }
        return column.notNull ? base : (base.0 + "?", "optional" + base.1.prefix(1).uppercased() + base.1.dropFirst())
    }

    /// Doc comment lines for `text`, indented.
    private static func doc(_ text: String?, indent: String) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { indent + "/// " + $0 }
    }

    /// A Swift string literal of `text`.
    private static func literal(_ text: String) -> String {
        SourceLiteral.quoted(text, unsafe: { $0.value == 0x7F }) { "\\u{\(String($0.value, radix: 16))}" }
    }

    /// The Swift file.
    package func source() -> String {
        let space = SwiftExport.namespace(description.bundle)
        var lines: [String] = [
            "// Generated by kiln export swift from bundle \(description.bundle) (schema version \(description.schemaVersion)). Do not edit: export it again.",
            "#if canImport(SQLite3)",
            "import SQLite3",
            "#else",
            "import CSQLite",
            "#endif",
        ]
        let searches = description.tables.contains { $0.fullText != nil }
        // The search accessors fold with Foundation's canonical decomposition and composition.
        if searches { lines.append("import Foundation") }
        lines += [
            "#if canImport(GRDB)",
            "import Foundation",
            "import GRDB",
            "#endif",
            "",
        ]
        lines += SwiftExport.doc(description.description ?? "The tables of bundle \(description.bundle).", indent: "")
        lines += [
            "public enum \(space) {",
            "    /// The bundle's schema version (`PRAGMA user_version`): these types fit bundles of this version.",
            "    public static let schemaVersion: Swift.Int = \(description.schemaVersion)",
            "    /// The content digest of the bundle this file was made from (`kiln patch`'s digest).",
            "    public static let contentDigest: Swift.String = \(SwiftExport.literal(description.contentDigest))",
            "    /// Every table's row type, in the manifest's order.",
            "    public static let rowTypes: [any Row.Type] = [\(description.tables.map { SwiftExport.typeName($0.name) + ".self" }.joined(separator: ", "))]",
            "",
        ]
        lines += SwiftExport.runtime.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }
        if searches { lines += [""] + SearchAccessor.swiftSource().map { $0.isEmpty ? "" : "    " + $0 } }
        for table in description.tables { lines += structLines(table) }
        lines.append("}")
        lines.append("")
        lines.append("extension \(space).Reader {")
        for table in description.tables { lines += queryLines(table) }
        lines.append("}")
        lines += ["", "#if canImport(GRDB)"]
        for table in description.tables { lines += grdbLines(table, space: space) }
        lines += ["#endif", ""]
        return lines.joined(separator: "\n")
    }

    private func properties(_ table: BundleDescription.Table) -> [(column: BundleDescription.Column, name: String)] {
        members[table.name] ?? []
    }

    private func structLines(_ table: BundleDescription.Table) -> [String] {
        let type = SwiftExport.typeName(table.name)
        var lines = [""] + SwiftExport.doc(table.description, indent: "    ")
        lines.append("    public struct \(type): Row, Swift.Equatable, Swift.Sendable {")
        let members = properties(table)
        for (column, name) in members {
            lines += SwiftExport.doc(column.description, indent: "        ")
            lines.append("        public var \(name): \(SwiftExport.swiftType(column).type)")
        }
        lines.append("")
        lines.append("        public static let tableName = \(SwiftExport.literal(table.name))")
        lines.append("        public static let columnNames: [Swift.String] = [\(table.columns.map { SwiftExport.literal($0.name) }.joined(separator: ", "))]")
        let order = table.primaryKey.isEmpty ? "rowid" : table.primaryKey.map(quoteIdentifier).joined(separator: ", ")
        lines.append("        public static let quotedTableName = \(SwiftExport.literal(quoteIdentifier(table.name)))")
        lines.append("        public static let selection = \(SwiftExport.literal(table.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")))")
        lines.append("        public static let order = \(SwiftExport.literal(order))")
        lines.append("")
        lines.append("        public init(statement: Statement) throws {")
        for (index, member) in members.enumerated() {
            lines.append("            self.\(member.name) = try statement.\(SwiftExport.swiftType(member.column).getter)(\(index), \(SwiftExport.literal(table.name + "." + member.column.name)))")
        }
        lines.append("        }")
        lines.append("")
        lines.append("        public var values: [Value] {")
        lines.append("            [\(members.map { "Value(self.\($0.name))" }.joined(separator: ", "))]")
        lines.append("        }")
        lines.append("    }")
        return lines
    }

    /// The reader's query functions for `table`, as `name(label:…)` with what each is (the same as `queryLines` writes).
    private func querySignatures(_ table: BundleDescription.Table) -> [(kind: String, signature: String)] {
        let type = SwiftExport.typeName(table.name), member = SwiftExport.bare(SwiftExport.memberName(table.name))
        let properties = properties(table)
        func labels(_ columns: [String]) -> String? {
            let found = columns.compactMap { name in properties.first { $0.column.name == name }.map { SwiftExport.bare($0.name) + ":" } }
            return found.count == columns.count ? found.joined() : nil
        }
        var signatures = [("query of every row", "all\(type)()")]
        if !table.primaryKey.isEmpty, let keys = labels(table.primaryKey) { signatures.append(("key query", "\(member)(\(keys))")) }
        var seen: Set<String> = []
        for key in table.foreignKeys {
            guard let keys = labels(key.columns) else { continue }
            let name = "\(member)By" + key.columns.map { SwiftExport.typeName($0) }.joined()
            if seen.insert(name).inserted { signatures.append(("foreign key query", "\(name)(\(keys))")) }
        }
        if table.fullText != nil {
            signatures += [("search", "search\(type)(_:limit:)"), ("search", "search\(type)(fts5Query:limit:)")]
        }
        if table.spatial != nil, table.primaryKey.count == 1 { signatures.append(("region query", "\(member)In(latitude:longitude:)")) }
        return signatures
    }

    private func queryLines(_ table: BundleDescription.Table) -> [String] {
        let type = SwiftExport.typeName(table.name), member = SwiftExport.bare(SwiftExport.memberName(table.name))
        let space = SwiftExport.namespace(description.bundle)
        let qualified = "\(space).\(type)"
        let columns = properties(table)
        func parameter(_ name: String) -> (label: String, type: String)? {
            guard let property = columns.first(where: { $0.column.name == name }) else { return nil }
            var swiftType = SwiftExport.swiftType(property.column).type
            if swiftType.hasSuffix("?") { swiftType.removeLast() }
            return (property.name, swiftType)
        }
        var lines: [String] = [""]
        lines.append("    /// Every row of \(table.name), in key order.")
        lines.append("    public func all\(type)() throws -> [\(qualified)] { try self.all(\(qualified).self) }")
        // Each argument is called key0, key1… inside the function: a label such as `self` or `rows` would shadow
        // the reader there.
        func arguments(_ keys: [(label: String, type: String)]) -> String {
            keys.enumerated().map { "\($1.label) key\($0): \($1.type)" }.joined(separator: ", ")
        }
        func values(_ keys: [(label: String, type: String)]) -> String {
            keys.indices.map { "\(space).Value(key\($0))" }.joined(separator: ", ")
        }
        if !table.primaryKey.isEmpty, let keys = Optional(table.primaryKey.compactMap(parameter)), keys.count == table.primaryKey.count {
            let condition = table.primaryKey.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
            lines.append("")
            lines.append("    /// The \(table.name) row with this key, if any.")
            lines.append("    public func \(SwiftExport.memberName(table.name))(\(arguments(keys))) throws -> \(qualified)? {")
            lines.append("        try self.rows(\(qualified).self, where: \(SwiftExport.literal(condition)), [\(values(keys))]).first")
            lines.append("    }")
        }
        var seen: Set<String> = []
        for key in table.foreignKeys {
            let keys = key.columns.compactMap(parameter)
            guard keys.count == key.columns.count else { continue }
            let name = "\(member)By" + key.columns.map { SwiftExport.typeName($0) }.joined()
            guard seen.insert(name).inserted else { continue }
            let condition = key.columns.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
            lines.append("")
            lines.append("    /// The \(table.name) rows whose \(key.columns.joined(separator: ", ")) refer to this \(key.table) row, in key order.")
            lines.append("    public func \(name)(\(arguments(keys))) throws -> [\(qualified)] {")
            lines.append("        try self.rows(\(qualified).self, where: \(SwiftExport.literal(condition)), [\(values(keys))])")
            lines.append("    }")
        }
        let selected = table.columns.map { "t.\(quoteIdentifier($0.name))" }.joined(separator: ", ")
        if let fullText = table.fullText {
            let fts = quoteIdentifier(fullText.name), name = quoteIdentifier(table.name)
            // The full-text table reads its text from the table (`content='table'`): its rowids are the table's.
            let join = "FROM \(fts) AS f JOIN \(name) AS t ON t.rowid = f.rowid"
            let sql = "SELECT \(selected) \(join) WHERE \(fts) MATCH ? ORDER BY f.rank, f.rowid LIMIT ?"
            let folds = SearchAccessor.folds(fullText, table: table.name, manifest: description.manifest)
            lines.append("")
            lines.append("    /// The \(table.name) rows whose \(fullText.columns.joined(separator: ", ")) hold the words of `text` (\(folds ? "folded as the bundle's `fold` normalizer folded them, " : "")the last one a")
            lines.append("    /// prefix: `\(space).Search.fts5Query`), best first; none when `text` has no word. FTS5's syntax in `text` is read as words.")
            lines.append("    public func search\(type)(_ text: Swift.String, limit: Swift.Int = 50) throws -> [\(qualified)] {")
            lines.append("        guard let query = \(space).Search.fts5Query(text, fold: \(folds)) else { return [] }")
            lines.append("        return try search\(type)(fts5Query: query, limit: limit)")
            lines.append("    }")
            lines.append("")
            lines.append("    /// The \(table.name) rows matching an FTS5 query as it is written (`\(fullText.name) MATCH query`, FTS5's own syntax), best first.")
            lines.append("    public func search\(type)(fts5Query query: Swift.String, limit: Swift.Int = 50) throws -> [\(qualified)] {")
            lines.append("        try self.select(\(qualified).self, \(SwiftExport.literal(sql)), [.text(query), .integer(Swift.Int64(limit))])")
            lines.append("    }")
        }
        if let spatial = table.spatial, table.primaryKey.count == 1 {
            let rtree = quoteIdentifier(spatial.name), name = quoteIdentifier(table.name), key = quoteIdentifier(table.primaryKey[0])
            let lat = quoteIdentifier(spatial.latitude), lon = quoteIdentifier(spatial.longitude)
            // The R*Tree's 32-bit bounds are rounded outwards: it finds candidates, the table's own columns decide.
            let sql = "SELECT \(selected) FROM \(rtree) AS r JOIN \(name) AS t ON t.\(key) = r.id WHERE r.max_lat >= ?1 AND r.min_lat <= ?2 AND r.max_lon >= ?3 AND r.min_lon <= ?4 AND t.\(lat) BETWEEN ?1 AND ?2 AND t.\(lon) BETWEEN ?3 AND ?4 ORDER BY t.\(key)"
            lines.append("")
            lines.append("    /// The \(table.name) rows whose \(spatial.latitude), \(spatial.longitude) lie in the region (decimal degrees, bounds included), in key order.")
            lines.append("    public func \(member)In(latitude: Swift.ClosedRange<Swift.Double>, longitude: Swift.ClosedRange<Swift.Double>) throws -> [\(qualified)] {")
            lines.append("        try self.select(\(qualified).self, \(SwiftExport.literal(sql)), [.real(latitude.lowerBound), .real(latitude.upperBound), .real(longitude.lowerBound), .real(longitude.upperBound)])")
            lines.append("    }")
        }
        return lines
    }

    /// The GRDB conformances: each column read as GRDB's `DatabaseValue` (GRDB 7's throwing `Row.decode`, never the
    /// subscript that traps on a missing column) and checked as the reader checks it, since GRDB's own `Double` or
    /// `String` decoding takes SQLite's conversion (a text `'north'` would be latitude 0.0).
    private func grdbLines(_ table: BundleDescription.Table, space: String) -> [String] {
        let type = "\(space).\(SwiftExport.typeName(table.name))"
        var lines = ["extension \(type): GRDB.FetchableRecord, GRDB.TableRecord {",
                     "    public static var databaseTableName: Swift.String { tableName }",
                     "    public init(row: GRDB.Row) throws {"]
        for (column, name) in properties(table) {
            let value = "\(space).Value(try row.decode(GRDB.DatabaseValue.self, forColumn: \(SwiftExport.literal(column.name))))"
            let getter = SwiftExport.swiftType(column).getter
            let context = SwiftExport.literal(table.name + "." + column.name)
            lines.append(getter == "value" ? "        self.\(name) = \(value)" : "        self.\(name) = try \(value).\(getter)Value(\(context))")
        }
        lines += ["    }", "}"]
        return lines
    }

    /// The reader every generated file embeds: a read-only connection, statements, values.
    private static let runtime = #"""
    /// A value as SQLite stores it.
    public enum Value: Swift.Equatable, Swift.Sendable {
        case null, integer(Swift.Int64), real(Swift.Double), text(Swift.String), blob([Swift.UInt8])

        public init(_ value: Swift.Int64?) { self = value.map { .integer($0) } ?? .null }
        public init(_ value: Swift.Double?) { self = value.map { .real($0) } ?? .null }
        public init(_ value: Swift.String?) { self = value.map { .text($0) } ?? .null }
        public init(_ value: [Swift.UInt8]?) { self = value.map { .blob($0) } ?? .null }
        public init(_ value: Value) { self = value }

        /// The value as a column of type INTEGER, REAL (an integer is taken as a double), TEXT or BLOB; a value of
        /// another type, or NULL where the column does not allow it, is a `ReaderError` naming the `column`.
        public func optionalIntegerValue(_ column: Swift.String) throws -> Swift.Int64? {
            switch self {
            case .null: return nil
            case .integer(let number): return number
            default: throw ReaderError(code: SQLITE_MISMATCH, message: "\(column) holds a value that is not an integer")
            }
        }

        public func optionalRealValue(_ column: Swift.String) throws -> Swift.Double? {
            switch self {
            case .null: return nil
            case .real(let number): return number
            case .integer(let number): return Swift.Double(number)
            default: throw ReaderError(code: SQLITE_MISMATCH, message: "\(column) holds a value that is not a number")
            }
        }

        public func optionalTextValue(_ column: Swift.String) throws -> Swift.String? {
            switch self {
            case .null: return nil
            case .text(let text): return text
            default: throw ReaderError(code: SQLITE_MISMATCH, message: "\(column) holds a value that is not text")
            }
        }

        public func optionalBlobValue(_ column: Swift.String) throws -> [Swift.UInt8]? {
            switch self {
            case .null: return nil
            case .blob(let bytes): return bytes
            default: throw ReaderError(code: SQLITE_MISMATCH, message: "\(column) holds a value that is not a blob")
            }
        }

        private func required<T>(_ value: T?, _ column: Swift.String) throws -> T {
            guard let value else { throw ReaderError(code: SQLITE_MISMATCH, message: "\(column) is NULL, which its declaration does not allow") }
            return value
        }

        public func integerValue(_ column: Swift.String) throws -> Swift.Int64 { try required(optionalIntegerValue(column), column) }
        public func realValue(_ column: Swift.String) throws -> Swift.Double { try required(optionalRealValue(column), column) }
        public func textValue(_ column: Swift.String) throws -> Swift.String { try required(optionalTextValue(column), column) }
        public func blobValue(_ column: Swift.String) throws -> [Swift.UInt8] { try required(optionalBlobValue(column), column) }
        #if canImport(GRDB)
        public init(_ value: GRDB.DatabaseValue) {
            switch value.storage {
            case .null: self = .null
            case .int64(let number): self = .integer(number)
            case .double(let number): self = .real(number)
            case .string(let text): self = .text(text)
            case .blob(let data): self = .blob([Swift.UInt8](data))
            }
        }
        #endif
    }

    /// What went wrong reading the bundle: SQLite's result code and message, or a value of an unexpected type.
    public struct ReaderError: Swift.Error, Swift.CustomStringConvertible {
        public var code: Swift.Int32
        public var message: Swift.String
        public var description: Swift.String { "SQLite error \(code): \(message)" }
    }

    /// A table's row type: its table, its columns in order, and how it is read from a statement's current row.
    public protocol Row: Swift.Sendable {
        static var tableName: Swift.String { get }
        static var columnNames: [Swift.String] { get }
        /// The table's name and columns quoted for SQL.
        static var quotedTableName: Swift.String { get }
        static var selection: Swift.String { get }
        /// The ORDER BY of `Reader.all`: the primary key, or the rowid.
        static var order: Swift.String { get }
        init(statement: Statement) throws
        /// The row's values in column order.
        var values: [Value] { get }
    }

    /// A prepared statement's current row, read by column position.
    public struct Statement {
        let handle: Swift.OpaquePointer

        private func type(_ index: Swift.Int32) -> Swift.Int32 { sqlite3_column_type(handle, index) }

        public func value(_ index: Swift.Int32, _ column: Swift.String) throws -> Value {
            switch type(index) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
            case SQLITE_TEXT: return .text(Swift.String(cString: sqlite3_column_text(handle, index)))
            case SQLITE_BLOB:
                let count = Swift.Int(sqlite3_column_bytes(handle, index))
                guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
                return .blob([Swift.UInt8](Swift.UnsafeRawBufferPointer(start: bytes, count: count)))
            default: return .null
            }
        }

        public func optionalInteger(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.Int64? { try value(index, column).optionalIntegerValue(column) }
        public func optionalReal(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.Double? { try value(index, column).optionalRealValue(column) }
        public func optionalText(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.String? { try value(index, column).optionalTextValue(column) }
        public func optionalBlob(_ index: Swift.Int32, _ column: Swift.String) throws -> [Swift.UInt8]? { try value(index, column).optionalBlobValue(column) }
        public func integer(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.Int64 { try value(index, column).integerValue(column) }
        public func real(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.Double { try value(index, column).realValue(column) }
        public func text(_ index: Swift.Int32, _ column: Swift.String) throws -> Swift.String { try value(index, column).textValue(column) }
        public func blob(_ index: Swift.Int32, _ column: Swift.String) throws -> [Swift.UInt8] { try value(index, column).blobValue(column) }
    }

    /// A read-only connection to a bundle file. Not thread-safe: one reader per thread.
    public final class Reader {
        private var handle: Swift.OpaquePointer?

        /// Opens the bundle at `path` read-only; `checkVersion` refuses a bundle of another schema version.
        public init(path: Swift.String, checkVersion: Swift.Bool = true) throws {
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
                let message = handle.map { Swift.String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
                sqlite3_close(handle)
                throw ReaderError(code: SQLITE_CANTOPEN, message: message)
            }
            if checkVersion {
                let version = try select("PRAGMA user_version", []) { try $0.integer(0, "user_version") }.first ?? 0
                guard version == Swift.Int64(schemaVersion) else {
                    throw ReaderError(code: SQLITE_MISMATCH, message: "\(path) has schema version \(version); this code reads version \(schemaVersion)")
                }
            }
        }

        deinit { sqlite3_close(handle) }

        /// Runs `sql` with `arguments` bound to `?1`, `?2`…, reading each row with `read`.
        public func select<T>(_ sql: Swift.String, _ arguments: [Value], _ read: (Statement) throws -> T) throws -> [T] {
            var prepared: Swift.OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
                throw ReaderError(code: sqlite3_errcode(handle), message: Swift.String(cString: sqlite3_errmsg(handle)) + " in " + sql)
            }
            defer { sqlite3_finalize(statement) }
            // SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
            let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            for (offset, argument) in arguments.enumerated() {
                let index = Swift.Int32(offset + 1)
                switch argument {
                case .null: sqlite3_bind_null(statement, index)
                case .integer(let number): sqlite3_bind_int64(statement, index, number)
                case .real(let number): sqlite3_bind_double(statement, index, number)
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, transient)
                case .blob(let bytes): _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Swift.Int32($0.count), transient) }
                }
            }
            var rows: [T] = []
            while true {
                let result = sqlite3_step(statement)
                if result == SQLITE_DONE { return rows }
                guard result == SQLITE_ROW else {
                    throw ReaderError(code: result, message: Swift.String(cString: sqlite3_errmsg(handle)))
                }
                rows.append(try read(Statement(handle: statement)))
            }
        }

        /// Rows of `type` from `sql`, which selects its columns in order.
        public func select<T: Row>(_ type: T.Type, _ sql: Swift.String, _ arguments: [Value]) throws -> [T] {
            try select(sql, arguments) { try T(statement: $0) }
        }

        /// The rows of `type` meeting `condition` (SQL over its columns, `?` bound to `arguments`), in key order.
        public func rows<T: Row>(_ type: T.Type, where condition: Swift.String, _ arguments: [Value]) throws -> [T] {
            try select(type, "SELECT \(T.selection) FROM \(T.quotedTableName) WHERE \(condition) ORDER BY \(T.order)", arguments)
        }

        /// Every row of `type`, in key order.
        public func all<T: Row>(_ type: T.Type) throws -> [T] {
            try rows(type, where: "1", [])
        }
    }
    """#
}
