import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The bytes a table takes in a bundle file: its own b-tree, its indexes, its full-text tables (the FTS shadow
/// tables) and its R*Tree (the R*Tree shadow tables), as SQLite's `dbstat` virtual table counts pages.
public struct TableBytes: Codable, Sendable, Equatable {
    public var data = 0
    public var index = 0
    public var search = 0
    public var spatial = 0

    public init(data: Int = 0, index: Int = 0, search: Int = 0, spatial: Int = 0) {
        self.data = data
        self.index = index
        self.search = search
        self.spatial = spatial
    }

    /// Every byte of the table.
    public var total: Int { data + index + search + spatial }

    /// `12.3 KB (data 8.2 KB, index 4.1 KB)`: the parts that are not empty.
    public var phrase: String {
        let parts = [("data", data), ("index", index), ("search", search), ("spatial", spatial)].filter { $0.1 > 0 }
        return BundleBytes.size(total) + (parts.isEmpty ? "" : " (" + parts.map { "\($0.0) \(BundleBytes.size($0.1))" }.joined(separator: ", ") + ")")
    }
}

/// Where the bytes of a bundle file go, per shipped table (`TableBytes`), measured with SQLite's `dbstat` virtual
/// table (Debian's libsqlite3 is built with `SQLITE_ENABLE_DBSTAT_VTAB`). Each b-tree is the table's own, one of its
/// indexes (`sqlite_schema.tbl_name`), or a shadow table of a virtual table (named `<virtual table>_…`) that
/// `owners` assigns to a table; everything else (the schema, `kiln_metadata`, free pages) is `other`.
public struct BundleBytes: Codable, Sendable, Equatable {
    /// The file's size: page size × page count.
    public var total: Int
    /// Per table, by name.
    public var tables: [String: TableBytes]
    /// The schema, `kiln_metadata`, free pages and anything no table owns.
    public var other: Int

    /// Which table a virtual table belongs to and whether it searches (FTS) or locates (R*Tree).
    public struct Owner: Sendable, Equatable {
        public var table: String
        public var spatial: Bool

        public init(table: String, spatial: Bool) {
            self.table = table
            self.spatial = spatial
        }
    }

    /// The owners of the virtual tables `tables` declare: each full-text table and R*Tree.
    public static func owners(of tables: [TableSpec]) -> [String: Owner] {
        var owners: [String: Owner] = [:]
        for table in tables {
            if let fullText = table.fullText { owners[fullText.name] = Owner(table: table.name, spatial: false) }
            if let spatial = table.spatial { owners[spatial.name] = Owner(table: table.name, spatial: true) }
        }
        return owners
    }

    /// Measures the database `database` has open as `schema`.
    /// - Parameters:
    ///   - tables: the tables to measure (others count as `other`).
    ///   - owners: the virtual tables of those tables (`owners(of:)`).
    /// - Throws: `SQLiteError` when SQLite cannot read the file or has no `dbstat`.
    package static func measure(_ database: Database, schema: String = "main", tables: [String], owners: [String: Owner]) throws -> BundleBytes {
        let quoted = quoteIdentifier(schema)
        let pageSize = Int(try database.rows("PRAGMA \(quoted).page_size").first?.values.first?.number ?? 0)
        let pageCount = Int(try database.rows("PRAGMA \(quoted).page_count").first?.values.first?.number ?? 0)
        var tableOf: [String: String] = [:]
        for row in try database.rows("SELECT name, tbl_name FROM \(quoted).sqlite_schema WHERE type IN ('table', 'index')") {
            if let name = row.values[0].textValue, let table = row.values[1].textValue { tableOf[name] = table }
        }
        var result = BundleBytes(total: pageSize * pageCount, tables: Dictionary(uniqueKeysWithValues: tables.map { ($0, TableBytes()) }), other: 0)
        // The longest virtual table name first, so that `a_b_data` is `a_b`'s before `a`'s.
        let virtualNames = owners.keys.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
        var counted = 0
        for row in try database.rows("SELECT name, pgsize FROM dbstat(?) WHERE aggregate = 1 ORDER BY name", [.text(schema)]) {
            guard let name = row.values[0].textValue else { continue }
            let bytes = Int(row.values[1].number ?? 0)
            counted += bytes
            let table = tableOf[name] ?? name
            if let virtual = owners[table] ?? virtualNames.first(where: { table.hasPrefix($0 + "_") }).flatMap({ owners[$0] }),
               result.tables[virtual.table] != nil {
                if virtual.spatial { result.tables[virtual.table]!.spatial += bytes } else { result.tables[virtual.table]!.search += bytes }
            } else if result.tables[table] != nil {
                if table == name { result.tables[table]!.data += bytes } else { result.tables[table]!.index += bytes }
            } else {
                result.other += bytes
            }
        }
        result.other += result.total - counted
        return result
    }

    /// Measures the bundle file at `url` (opened read-only).
    /// - Throws: as `BundleFile.open`; `KilnError.validation` when SQLite cannot measure it.
    public static func measure(_ url: URL, tables: [TableSpec]) throws -> BundleBytes {
        let database = try BundleFile.open(url)
        do {
            return try measure(database, tables: tables.map(\.name), owners: owners(of: tables))
        } catch let error as SQLiteError {
            if let stopped = BundleReadLimit.current.stopped(error, reading: [url]) { throw stopped }
            throw KilnError.validation("cannot measure \(url.relativePath): \(error.message)")
        }
    }

    /// How many tables a `bundle.too-large` message names.
    package static let contributorsNamed = 3

    /// The `bundle.too-large` errors of a bundle of these bytes under `limits`: the file over `bundleBytes` (naming
    /// its biggest tables), each table over its own limit.
    package func exceeding(_ limits: ManifestLimits, bundle: URL) -> [Diagnostic] {
        var found: [Diagnostic] = []
        if let limit = limits.bundleBytes, total > limit.bytes {
            let biggest = largest.prefix(BundleBytes.contributorsNamed).map { "\($0.name) \($0.bytes.phrase)" }
            let rest = other > 0 ? "; schema, metadata and free pages \(BundleBytes.size(other))" : ""
            found.append(Diagnostic(code: .bundleTooLarge,
                                    message: "\(bundle.relativePath) would be \(BundleBytes.size(total)) (\(total) bytes), more than limits.bundleBytes (\(limit.phrase)); the biggest tables: \(biggest.joined(separator: "; "))\(rest)"))
        }
        for (name, limit) in limits.tables.sorted(by: { $0.key < $1.key }) {
            guard let bytes = tables[name], bytes.total > limit.bytes else { continue }
            found.append(Diagnostic(code: .bundleTooLarge,
                                    message: "table \(name) would take \(bytes.phrase), \(bytes.total) bytes, more than limits.tables.\(name) (\(limit.phrase))"))
        }
        return found
    }

    /// The tables by size, largest first (ties by name).
    public var largest: [(name: String, bytes: TableBytes)] {
        tables.sorted { $0.value.total != $1.value.total ? $0.value.total > $1.value.total : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// A byte count as people read it (powers of 1000, as the build's progress shows sizes).
    public static func size(_ bytes: Int) -> String { BuildStage.size(bytes) }
}
