import Foundation
import KilnC
import KilnCore

/// A pipeline: the bundle it builds, its tables, the sources that fill them, the rules that check them,
/// and the exports that write files back out. Loaded from `kiln.json5` by `ManifestLoader`.
public struct Manifest: Sendable {
    /// The bundle's name; the default output is `build/<bundle>.sqlite`.
    public var bundle: String
    /// The schema version, written to `PRAGMA user_version`.
    public var schemaVersion: Int
    public var tables: [TableSpec]
    public var sources: [SourceSpec]
    public var rules: [RuleSpec]
    /// Severity overrides by diagnostic code.
    public var severity: [String: Severity]
    /// Codes of warnings and infos the pipeline's owners know and accept (`acknowledged`): every report still lists
    /// them, but `kiln build --format github` does not annotate them on every run.
    public var acknowledged: [String] = []
    public var exports: [ExportSpec]
    /// Another manifest (relative to this one's folder) whose exports this one offers too (`ManifestLoader.withSharedExports`).
    public var exportsFrom: String? = nil
    /// Controlled vocabularies by name, for the `terms` normalizer.
    public var vocabularies: [String: VocabularySpec] = [:]
    /// Example inputs with the records a source must extract from them, run by `kiln test`.
    public var fixtures: [FixtureSpec] = []
    /// Limits on rows removed or changed since the previous bundle, for `kiln diff` and the build's baseline guard.
    public var thresholds = Thresholds()
    /// The bundle a build compares its new bundle with before replacing it, as written (relative to the pipeline
    /// folder); `nil` when the manifest names none.
    public var baseline: String?
    /// Limits on the manifest's own SQL (`limits`).
    public var limits = ManifestLimits()
    /// `kiln patch`'s settings (`patch`).
    public var patch = PatchSettings()
    /// What the bundle holds, in the manifest's words (`description`), for the exported data dictionary.
    public var description: String? = nil
    /// The devices the bundle must open on (`targets`), sorted by platform; empty: not checked.
    public var targets: [SQLiteTarget] = []
    /// `kiln fetch`'s settings (`fetch`), the defaults when the manifest has none.
    public var fetch = FetchSettings()
    /// What the capture record (`kiln.fetch.json`) says of each fetching source, by source name, once the loader read
    /// it; the bundle's metadata records it.
    public var captured: [String: CapturedSource] = [:]
    /// The manifest file.
    public var file: URL
    /// The lowercase hexadecimal SHA-256 of the manifest's bytes as they were read (vocabularies and normalizers
    /// included): the build report records it, and it is part of what decides whether a build can reuse the last one.
    public var sha256 = ""
    /// The pipeline folder: source paths are relative to it and may not leave it.
    public var directory: URL { file.deletingLastPathComponent() }

    /// The table named `name`.
    public func table(_ name: String) -> TableSpec? { tables.first { $0.name == name } }

    /// The baseline the manifest names, resolved against the pipeline folder.
    public var baselineURL: URL? {
        baseline.map { URL(fileURLWithPath: $0, relativeTo: directory).standardizedFileURL }
    }
}

/// The SQL type a column is declared with; values are converted to it, never guessed.
public enum ColumnType: String, Codable, Sendable, CaseIterable {
    case text, integer, real, blob
    package var sql: String { rawValue.uppercased() }
}

/// A table of the bundle (or of the staging area only, when `ship` is false).
public struct TableSpec: Sendable {
    public var name: String
    /// What a row is, in the manifest's words; exports (Swift, Datasette, the data dictionary) and the HTML report
    /// carry it.
    public var description: String? = nil
    public var columns: [ColumnSpec]
    /// Primary key columns, in order; composite keys list several.
    public var primaryKey: [String]
    /// Column sets that must be unique together.
    public var unique: [[String]]
    public var foreignKeys: [ForeignKeySpec]
    public var indexes: [IndexSpec]
    /// An FTS5 full-text index over some of the table's columns.
    public var fullText: FullTextSpec?
    /// An R*Tree index over the table's coordinates, for "rows inside this map region" queries.
    public var spatial: SpatialSpec?
    /// SQL over the staged tables that fills this table instead of a source.
    public var query: String?
    /// False for tables that exist only for validation and are not written to the bundle.
    public var ship: Bool
    /// True for a table the app fills (shipped empty or with defaults): `kiln check` does not hold its rows to the
    /// recorded count, and `kiln diff` lists its rows without counting them as added or removed.
    public var userFilled = false

    /// The column named `name`.
    public func column(_ name: String) -> ColumnSpec? { columns.first { $0.name == name } }

    /// Every foreign key: the table-level ones and those declared on single columns.
    public var allForeignKeys: [ForeignKeySpec] {
        foreignKeys + columns.compactMap { column in
            column.references.map { ForeignKeySpec(columns: [column.name], table: $0.table, referencedColumns: [$0.column]) }
        }
    }

    /// The columns that sort rows when they are written: the primary key, else every column.
    public var orderColumns: [String] { primaryKey.isEmpty ? columns.map(\.name) : primaryKey }

    /// Every column in the order rows are compared when they are written: `orderColumns`, then the others.
    public var rowOrderColumnNames: [String] { orderColumns + columns.map(\.name).filter { !orderColumns.contains($0) } }
}

/// A column: its type and the constraints on its values.
public struct ColumnSpec: Sendable {
    public var name: String
    /// What the column holds, in the manifest's words.
    public var description: String? = nil
    public var type: ColumnType
    public var notNull: Bool
    public var unique: Bool
    /// `table.column` this column refers to.
    public var references: ColumnReference?
    /// Inclusive numeric bounds.
    public var range: RangeSpec?
    /// The allowed values.
    public var allowed: [String]?
    /// A PCRE2 pattern every value must match.
    public var pattern: String?
}

/// A `table.column` reference.
public struct ColumnReference: Sendable, Hashable {
    public var table: String
    public var column: String
}

/// Inclusive numeric bounds; either side may be open.
public struct RangeSpec: Sendable, Hashable {
    public var min: Double?
    public var max: Double?
}

/// A foreign key: columns of this table that must match a row of another table.
public struct ForeignKeySpec: Sendable, Hashable {
    public var columns: [String]
    public var table: String
    public var referencedColumns: [String]

    /// `columns` of a table referring to `referencedColumns` of `table`.
    public init(columns: [String], table: String, referencedColumns: [String]) {
        self.columns = columns
        self.table = table
        self.referencedColumns = referencedColumns
    }
}

/// An index of the bundle.
public struct IndexSpec: Sendable {
    public var name: String?
    public var columns: [String]
    public var unique: Bool
}

/// An FTS5 table built from some columns of its table.
public struct FullTextSpec: Sendable {
    /// The FTS5 table's name.
    public var name: String
    /// The columns searched.
    public var columns: [String]
    /// Columns stored but not indexed, such as the key that leads back to the row.
    public var unindexed: [String]
    /// The FTS5 tokenizer declaration.
    public var tokenize: String
}

/// An R*Tree built from a table's coordinates: `CREATE VIRTUAL TABLE name USING rtree(id, min_lat, max_lat, min_lon,
/// max_lon)`, one entry per row that has both, keyed by the table's INTEGER primary key.
public struct SpatialSpec: Sendable {
    /// The R*Tree's name.
    public var name: String
    /// The latitude and longitude columns (decimal degrees).
    public var latitude: String
    public var longitude: String

    /// The R*Tree's columns, in order.
    public static let columns = ["id", "min_lat", "max_lat", "min_lon", "max_lon"]
}

/// An input: a file or glob in one format, read once, its records going into one table per kind of record.
public struct SourceSpec: Sendable {
    public var name: String
    /// Where the input comes from, in the manifest's words.
    public var description: String? = nil
    public var format: String
    /// A path or a glob (`*`, `?`) relative to the pipeline folder.
    public var path: String
    /// Format options, decoded by the reader of `format`.
    public var options: JSONValue
    /// Where `kiln fetch` gets the source's files (`nil`: they are not fetched).
    public var fetch: SourceFetch? = nil
    /// Where each kind of record goes, in kind-name order: `into: "table"` with `columns` is one target for the
    /// reader's default kind; `into: {kind: {table, columns}, …}` one per kind named.
    public var targets: [SourceTarget]
}

/// Where one kind of a source's records goes: a table, and how each of its columns gets its value.
public struct SourceTarget: Sendable {
    /// The kind of record (`nil`: the reader's default kind, from `into: "table"`).
    public var kind: String?
    /// The table the records go into.
    public var table: String
    /// How each column of `table` gets its value.
    public var columns: [String: ColumnMapping]
    /// The manifest key path of this target (`sources[2].into.listing`), for messages.
    public var keyPath: String
}

/// Where a column's value comes from: a record field or a constant, then a chain of normalizers.
public struct ColumnMapping: Sendable {
    public var field: String?
    public var value: String?
    public var normalize: [NormalizerSpec]
}

/// One normalizing step applied to a field's text.
public enum NormalizerSpec: Sendable, Equatable {
    /// A built-in step by name (`trim`, `collapseSpaces`, `nfc`, `fold`, `lower`, `upper`, `decimal`, `minutes`,
    /// `gtfsSeconds`, `gtfsMinutes`, `naturalSortKey`, `emptyToNull`).
    case named(String)
    /// Keeps the first capture group (or the whole match) of a pattern; no match gives NULL.
    case capture(String)
    /// Reads a text naming terms of a vocabulary; `output` is `codes` (joined by `,`) or `mask`.
    case terms(vocabulary: String, output: String)
    /// A time of day in minutes that ends a period starting at the time in another field: an end not after the
    /// start but before `overnightBefore` runs past midnight (+1440); any other such end is a `time-order` error.
    case minutesAfter(field: String, overnightBefore: String)
    /// ICU's sort key for the locale, as hexadecimal text that sorts (as bytes) in the locale's order.
    case collationKey(locale: String)
}

/// A check over the staged tables (or a shipped bundle): what it checks, the code it reports under, its severity.
public struct RuleSpec: Sendable {
    /// The diagnostic code the rule reports under.
    public var code: String
    /// What the rule checks, with the fields its kind needs.
    public var check: RuleCheck
    public var severity: Severity
    /// What the rule is for, as the manifest describes it (`kiln codes --manifest` shows it).
    public var description: String? = nil

    /// The kind of the check.
    public var kind: RuleKind { check.kind }

    /// A rule reported as `code` at `severity` when `check` finds rows.
    public init(code: String, check: RuleCheck, severity: Severity, description: String? = nil) {
        self.code = code
        self.check = check
        self.severity = severity
        self.description = description
    }
}

/// What a rule checks. Each kind carries exactly the fields it needs, so a rule can never be missing one when it runs.
/// To add a kind (every switch below is exhaustive, so the compiler names each place but the last two):
/// - a case of `RuleKind` with its `defaultCode` and its manifest keys (`RuleKind.keys`, Manifest+Decoding.swift);
/// - a case here with its `kind`, `table`, `columns` and `tablesRead`;
/// - its decoding in `RuleSpec.init(from:)`, its checks in `ManifestChecker.checkRule`, its query in
///   `RuleEngine.evaluate`;
/// - its bullet in docs/reference/manifest.md's "Rules" (`DeclaredListsTests`), and a rule of the kind in a test.
public enum RuleCheck: Sendable {
    /// No two rows share `columns` (a key or a unique set).
    case unique(table: String, columns: [String])
    /// Every row has a value in each of `columns`.
    case notNull(table: String, columns: [String])
    /// Every non-NULL `key.columns` of `table` matches a row of `key.table`.
    case references(table: String, key: ForeignKeySpec)
    /// Numbers in `columns` lie in `range`.
    case range(table: String, columns: [String], range: RangeSpec)
    /// Values in `columns` are among `values`.
    case allowed(table: String, columns: [String], values: [String])
    /// Values in `columns` match the PCRE2 `pattern`.
    case pattern(table: String, columns: [String], pattern: String)
    /// Coordinates lie in `box` (a swap of latitude and longitude is named as such).
    case bounds(table: String, latitude: String, longitude: String, box: BoxSpec)
    /// `query` returns one row per finding (`_file`, `_line` give the place); `message` fills `{column}` from it.
    case sql(query: String, message: String)

    /// The kind, as manifests write it.
    public var kind: RuleKind {
        switch self {
        case .unique: return .unique
        case .notNull: return .notNull
        case .references: return .references
        case .range: return .range
        case .allowed: return .enum
        case .pattern: return .pattern
        case .bounds: return .bounds
        case .sql: return .sql
        }
    }

    /// The table the check reads; `nil` for SQL, which may read any.
    public var table: String? {
        switch self {
        case .unique(let table, _), .notNull(let table, _), .references(let table, _), .range(let table, _, _),
             .allowed(let table, _, _), .pattern(let table, _, _), .bounds(let table, _, _, _):
            return table
        case .sql: return nil
        }
    }

    /// The tables the check reads, by name; `nil` when it may read any (a manifest's SQL).
    public var tablesRead: [String]? {
        switch self {
        case .unique(let table, _), .notNull(let table, _), .range(let table, _, _), .allowed(let table, _, _),
             .pattern(let table, _, _), .bounds(let table, _, _, _):
            return [table]
        case .references(let table, let key): return [table, key.table]
        case .sql: return nil
        }
    }

    /// The columns the check reads (empty for SQL).
    public var columns: [String] {
        switch self {
        case .unique(_, let columns), .notNull(_, let columns), .range(_, let columns, _), .allowed(_, let columns, _),
             .pattern(_, let columns, _):
            return columns
        case .references(_, let key): return key.columns
        case .bounds(_, let latitude, let longitude, _): return [latitude, longitude]
        case .sql: return []
        }
    }
}

/// The kinds of rule, as manifests write them: the one list of them (the decoder's accepted `kind` values, its keys
/// per kind, the default codes and docs/reference/manifest.md follow it; see `RuleCheck` for adding one).
public enum RuleKind: String, Codable, Sendable, CaseIterable {
    case unique, references, notNull, range, `enum`, pattern, bounds, sql

    /// The code a rule of this kind reports under when its table declares it (a constraint, not a manifest rule).
    public var defaultCode: DiagnosticCode {
        switch self {
        case .unique: return .duplicateKey
        case .references: return .foreignKey
        case .notNull: return .notNull
        case .range: return .range
        case .enum: return .enumeration
        case .pattern: return .pattern
        case .bounds: return .outOfBounds
        case .sql: return .sql
        }
    }
}

/// A latitude/longitude box.
public struct BoxSpec: Codable, Sendable, Hashable {
    public var minLatitude: Double
    public var maxLatitude: Double
    public var minLongitude: Double
    public var maxLongitude: Double
}

/// An example input and the file holding what a source must extract from it.
public struct FixtureSpec: Sendable {
    /// The source whose reader runs.
    public var source: String
    /// The example input, relative to the pipeline folder.
    public var input: String
    /// The JSON file of expected records and unmatched lines, relative to the pipeline folder.
    public var expected: String
}

/// A named export: files written from a bundle by queries, in the formats the readers read.
public struct ExportSpec: Sendable {
    public var name: String
    public var files: [ExportFileSpec]
    /// A ZIP archive of the files, written beside the output folder (relative to its parent); `nil` for none.
    public var archive: String? = nil
    /// Values bound to `:name` parameters in the export's queries (numbers, text, booleans as 0/1).
    public var parameters: [String: JSONValue] = [:]
    /// The dates the exported service runs, bound as `:kiln_service_start` and `:kiln_service_end` (`YYYYMMDD`).
    public var servicePeriod: ServicePeriodSpec? = nil
    /// The manifest that declares the export and its place in that manifest's `exports`, when it was taken from
    /// another manifest (`exportsFrom`); nil for the manifest's own. Its writers read their options against it.
    public var declaredIn: Manifest? = nil
    public var declaredIndex: Int? = nil
}

/// One exported file.
public struct ExportFileSpec: Sendable {
    /// The file name inside the output folder.
    public var path: String
    public var format: String
    public var options: JSONValue
    /// The query over the bundle whose rows the file holds, in order.
    public var query: String
}
