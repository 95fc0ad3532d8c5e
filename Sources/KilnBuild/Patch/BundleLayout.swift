import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What a patch covers in a bundle, read from its schema: the shipped tables (with `kiln_metadata`, without the
/// app's `userFilled` tables and without the shadow tables of virtual tables), the FTS5 and R*Tree tables, and the
/// shadow tables behind them. Read the same way from OLD, NEW and a patched copy.
package struct BundleLayout {
    /// A real table: its columns in declaration order, its primary key (empty when it has none) and the order its
    /// rows are compared and digested in (the key; every column without a key).
    package struct Table: Equatable {
        package let name: String
        package let columns: [String]
        package let key: [String]

        /// The columns that identify a row: the primary key, else every column.
        package var identity: [String] { key.isEmpty ? columns : key }

        /// The order Kiln writes the rows in (`TableSpec.rowOrderColumnNames`: the key, then the other columns, which
        /// a key, being unique, never needs).
        package var order: [String] { identity }
    }

    /// An FTS5 or R*Tree table: its columns and the SQL that creates it.
    package struct Virtual: Equatable {
        package let name: String
        package let columns: [String]
        package let sql: String
    }

    /// The tables a patch changes and the content digest covers, sorted by name (`kiln_metadata` among them).
    package let tables: [Table]
    /// The FTS5 tables and the FTS4 tables (a target's bundle has those instead), sorted by name.
    package let fullText: [Virtual]
    /// The R*Tree tables, sorted by name.
    package let spatial: [Virtual]
    /// The real tables that hold the virtual tables' data (`<fts>_data`, `<rtree>_node`…), sorted by name.
    package let shadows: [String]
    /// Every schema entry but the shadow tables' and SQLite's own, as type, name, table and SQL lines, sorted: two
    /// bundles with the same lines have the same schema.
    package let schema: [String]
    /// `PRAGMA user_version`.
    package let userVersion: Int

    /// The suffixes of each module's shadow tables.
    private static let shadowSuffixes = ["fts5": ["_data", "_idx", "_content", "_docsize", "_config"],
                                         "fts4": ["_content", "_segments", "_segdir", "_docsize", "_stat"],
                                         "rtree": ["_node", "_rowid", "_parent"]]

    /// Reads the layout of schema `schema` of `database`, leaving `userFilled` tables out of `tables`.
    /// - Throws: `SQLiteError` when the schema cannot be read.
    package init(_ database: Database, schema: String = "main", userFilled: Set<String>) throws {
        let prefix = quoteIdentifier(schema)
        var entries: [(type: String, name: String, table: String, sql: String)] = []
        for row in try database.rows("SELECT type, name, tbl_name, coalesce(sql, '') FROM \(prefix).sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name") {
            entries.append((row.values[0].textValue ?? "", row.values[1].textValue ?? "", row.values[2].textValue ?? "", row.values[3].textValue ?? ""))
        }
        func columns(_ table: String) throws -> [(name: String, key: Int)] {
            try database.rows("PRAGMA \(prefix).table_info(\(quoteIdentifier(table)))").map {
                ($0.values[1].textValue ?? "", Int($0.values[5].number ?? 0))
            }
        }
        var fullText: [Virtual] = [], spatial: [Virtual] = [], shadows: Set<String> = []
        for entry in entries where entry.type == "table" && entry.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") {
            let module = BundleLayout.module(of: entry.sql)
            let virtual = Virtual(name: entry.name, columns: try columns(entry.name).map(\.name), sql: entry.sql)
            if module == "fts5" || module == "fts4" { fullText.append(virtual) }
            if module == "rtree" { spatial.append(virtual) }
            for suffix in BundleLayout.shadowSuffixes[module] ?? [] { shadows.insert(entry.name + suffix) }
        }
        let virtualNames = Set((fullText + spatial).map(\.name))
        var tables: [Table] = []
        for entry in entries where entry.type == "table" && !virtualNames.contains(entry.name) && !shadows.contains(entry.name) && !userFilled.contains(entry.name) {
            let described = try columns(entry.name)
            let key = described.filter { $0.key > 0 }.sorted { $0.key < $1.key }.map(\.name)
            tables.append(Table(name: entry.name, columns: described.map(\.name), key: key))
        }
        self.tables = tables
        self.fullText = fullText
        self.spatial = spatial
        self.shadows = entries.map(\.name).filter(shadows.contains)
        self.schema = entries.filter { !shadows.contains($0.name) }.map { "\($0.type)\t\($0.name)\t\($0.table)\t\($0.sql)" }
        userVersion = Int(try database.rows("PRAGMA \(prefix).user_version").first?.values.first?.number ?? 0)
    }

    /// The names of the schema entries that differ between this layout and `other`, sorted (empty for one schema).
    package func schemaChanges(from other: BundleLayout) -> [String] {
        Set(Set(schema).symmetricDifference(other.schema).map { $0.split(separator: "\t").dropFirst().first.map(String.init) ?? "" }).sorted()
    }

    /// True when an FTS5 table's statement makes it read its text from a table (`content="table"`, Kiln's since issue
    /// 26; any of FTS5's quotings), not store a copy of it; `content=''` (contentless) is not.
    package static func readsItsTable(_ sql: String) -> Bool {
        sql.range(of: #"content\s*=\s*('[^']+'|"[^"]+"|\[[^\]]+\]|`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)"#, options: .regularExpression) != nil
    }

    /// The module a `CREATE VIRTUAL TABLE … USING module(…)` statement names, lowercased.
    package static func module(of sql: String) -> String {
        guard let using = sql.range(of: " USING ", options: .caseInsensitive) else { return "" }
        return String(sql[using.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }).lowercased()
    }

    /// The real table an FTS5 table indexes: the first shipped table holding every column of it with as many rows
    /// in `schema` (Kiln's full-text tables read their text from one table, `SchemaSQL.createFullText`).
    package func base(of fullText: Virtual, in database: Database, schema: String) throws -> Table? {
        let count = { (name: String) throws -> Double in
            try database.rows("SELECT count(*) FROM \(quoteIdentifier(schema)).\(quoteIdentifier(name))").first?.values.first?.number ?? -1
        }
        let rows = try count(fullText.name)
        for table in tables where Set(fullText.columns).isSubset(of: table.columns) && table.name != BundleWriter.metadataTable {
            if try count(table.name) == rows { return table }
        }
        return nil
    }
}

/// The content digest of a bundle (`kiln patch`'s from- and to-digests): SHA-256 over the rows of the tables a patch
/// covers, not over the file's bytes, so that a bundle built by Kiln and the same version reached by patches have one
/// digest. Each table gives a digest of its name, its column names and its rows in `BundleLayout.Table.order` (every
/// value typed: `N`; `I` and 8 bytes big-endian; `R` and the IEEE 754 bits, big-endian; `T` or `B`, the byte count in
/// 8 bytes big-endian, then the UTF-8 or the bytes); the bundle's digest is SHA-256 of `kiln-content-1\n`, then
/// `name<TAB>table digest\n` per table in name order.
package enum ContentDigest {
    /// The content digest of `tables` in schema `schema`.
    /// - Throws: `SQLiteError` when a table cannot be read.
    package static func of(_ tables: [BundleLayout.Table], in database: Database, schema: String = "main") throws -> String {
        var summary = "kiln-content-1\n"
        for table in tables.sorted(by: { $0.name < $1.name }) {
            summary += table.name + "\t" + (try self.table(table.name, columns: table.columns, order: table.order, in: database, schema: schema)) + "\n"
        }
        return SHA256Digest.hex(of: Data(summary.utf8))
    }

    /// The digest of one table's (or virtual table's) `columns`, its rows sorted by `order`.
    /// - Throws: `SQLiteError` when the table cannot be read.
    package static func table(_ name: String, columns: [String], order: [String], in database: Database, schema: String) throws -> String {
        let digest = SHA256Digest()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        append(.text(name), to: &buffer)
        for column in columns { append(.text(column), to: &buffer) }
        let sql = "SELECT \(columns.map(quoteIdentifier).joined(separator: ", ")) FROM \(quoteIdentifier(schema)).\(quoteIdentifier(name)) ORDER BY \(order.map(quoteIdentifier).joined(separator: ", "))"
        try database.forEachRow(sql) { row in
            for value in row.values { append(value, to: &buffer) }
            if buffer.count >= 1 << 16 {
                digest.update(buffer[...])
                buffer.removeAll(keepingCapacity: true)
            }
        }
        digest.update(buffer[...])
        return digest.hexDigest()
    }

    /// Appends the typed encoding of `value`.
    private static func append(_ value: SQLValue, to buffer: inout [UInt8]) {
        func number(_ bits: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) } }
        switch value {
        case .null: buffer.append(UInt8(ascii: "N"))
        case .integer(let integer): buffer.append(UInt8(ascii: "I")); number(UInt64(bitPattern: integer))
        case .real(let real): buffer.append(UInt8(ascii: "R")); number(real.bitPattern)
        case .text(let text):
            buffer.append(UInt8(ascii: "T"))
            number(UInt64(text.utf8.count))
            buffer.append(contentsOf: text.utf8)
        case .blob(let bytes):
            buffer.append(UInt8(ascii: "B"))
            number(UInt64(bytes.count))
            buffer.append(contentsOf: bytes)
        }
    }
}
