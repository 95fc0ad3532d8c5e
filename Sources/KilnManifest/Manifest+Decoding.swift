import Foundation
import KilnC
import KilnCore

// Every manifest type decodes through a strict container: an unknown key is an error naming the keys accepted.

/// The manifest's top level as written, before the loader resolves it against the pipeline folder.
package struct ManifestDocument: Decodable {
    package var bundle: String
    package var schemaVersion: Int
    package var tables: [TableSpec]
    package var sources: [SourceSpec]
    package var rules: [RuleSpec]
    package var severity: [String: Severity]
    /// Codes of warnings and infos known and accepted: not annotated in CI output (`Manifest.acknowledged`).
    package var acknowledged: [String]
    package var exports: [ExportSpec]
    /// Another manifest whose exports this one also offers (a path relative to this manifest's folder).
    package var exportsFrom: String?
    package var thresholds: Thresholds
    package var baseline: String?
    package var vocabularies: [String: VocabularySpec]
    package var fixtures: [FixtureSpec]
    package var limits: ManifestLimits
    package var patch: PatchSettings
    package var description: String?
    package var targets: [SQLiteTarget]
    /// `kiln fetch`'s settings for every fetching source; `nil` when the manifest has none.
    package var fetch: FetchSettings?

    package enum CodingKeys: String, CodingKey, CaseIterable {
        case bundle, schemaVersion, description, vocabularies, fixtures, tables, sources, rules, severity, acknowledged, exports, thresholds, baseline, limits, patch, targets, exportsFrom, fetch
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        bundle = try c.decode(String.self, forKey: .bundle)
        schemaVersion = try c.decodeWholeNumber(forKey: .schemaVersion)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        tables = try c.decode([TableSpec].self, forKey: .tables)
        sources = try c.decodeIfPresent([SourceSpec].self, forKey: .sources) ?? []
        rules = try c.decodeIfPresent([RuleSpec].self, forKey: .rules) ?? []
        severity = try c.decodeIfPresent([String: Severity].self, forKey: .severity) ?? [:]
        acknowledged = try c.decodeIfPresent([String].self, forKey: .acknowledged) ?? []
        exports = try c.decodeIfPresent([ExportSpec].self, forKey: .exports) ?? []
        exportsFrom = try c.decodeIfPresent(String.self, forKey: .exportsFrom)
        thresholds = try c.decodeIfPresent(Thresholds.self, forKey: .thresholds) ?? Thresholds()
        baseline = try c.decodeIfPresent(String.self, forKey: .baseline)
        vocabularies = try c.decodeIfPresent([String: VocabularySpec].self, forKey: .vocabularies) ?? [:]
        fixtures = try c.decodeIfPresent([FixtureSpec].self, forKey: .fixtures) ?? []
        limits = try c.decodeIfPresent(ManifestLimits.self, forKey: .limits) ?? ManifestLimits()
        patch = try c.decodeIfPresent(PatchSettings.self, forKey: .patch) ?? PatchSettings()
        targets = try c.decodeIfPresent(TargetList.self, forKey: .targets)?.targets ?? []
        fetch = try c.decodeIfPresent(FetchSettings.self, forKey: .fetch)
        let shipped = tables.filter(\.ship).map(\.name)
        for name in limits.tables.keys.sorted() where !shipped.contains(name) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [CodingKeys.limits, AnyKey(stringValue: "tables"), AnyKey(stringValue: name)],
                debugDescription: "no shipped table named \"\(name)\"; shipped tables: \(shipped.joined(separator: ", "))"))
        }
        for name in thresholds.tables.keys.sorted() where !shipped.contains(name) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [CodingKeys.thresholds, AnyKey(stringValue: "tables"), AnyKey(stringValue: name)],
                debugDescription: "no shipped table named \"\(name)\"; shipped tables: \(shipped.joined(separator: ", "))"))
        }
    }
}

extension Thresholds: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case maxRemoved, maxChanged, derived, tables }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        defaults = Limits(maxRemoved: try c.decodeIfPresent(RowLimit.self, forKey: .maxRemoved),
                          maxChanged: try c.decodeIfPresent(RowLimit.self, forKey: .maxChanged),
                          derived: try c.decodeIfPresent([String].self, forKey: .derived) ?? [])
        tables = try c.decodeIfPresent([String: Limits].self, forKey: .tables) ?? [:]
    }
}

extension Thresholds.Limits: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case maxRemoved, maxChanged, derived }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        maxRemoved = try c.decodeIfPresent(RowLimit.self, forKey: .maxRemoved)
        maxChanged = try c.decodeIfPresent(RowLimit.self, forKey: .maxChanged)
        derived = try c.decodeIfPresent([String].self, forKey: .derived) ?? []
    }
}

extension RowLimit: Decodable {
    /// A string such as `"10%"` or `"25"`, or a whole number of rows.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let count = try? container.decode(Int.self), let limit = RowLimit("\(count)") {
            self = limit
            return
        }
        let text = (try? container.decode(String.self)) ?? (try? container.decode(Double.self)).map { "\($0)" } ?? ""
        guard let limit = RowLimit(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected a share of rows such as \"10%\" (0 to 100) or a number of rows such as 25, found \"\(text)\""))
        }
        self = limit
    }
}

extension TableSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, columns, primaryKey, unique, foreignKeys, indexes, fullText, spatial, query, ship, userFilled
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        columns = try c.decode([ColumnSpec].self, forKey: .columns)
        primaryKey = try c.decodeIfPresent([String].self, forKey: .primaryKey) ?? []
        unique = try c.decodeIfPresent([[String]].self, forKey: .unique) ?? []
        foreignKeys = try c.decodeIfPresent([ForeignKeySpec].self, forKey: .foreignKeys) ?? []
        indexes = try c.decodeIfPresent([IndexSpec].self, forKey: .indexes) ?? []
        fullText = try c.decodeIfPresent(FullTextSpec.self, forKey: .fullText)
        spatial = try c.decodeIfPresent(SpatialSpec.self, forKey: .spatial)
        query = try c.decodeIfPresent(String.self, forKey: .query)
        ship = try c.decodeIfPresent(Bool.self, forKey: .ship) ?? true
        userFilled = try c.decodeIfPresent(Bool.self, forKey: .userFilled) ?? false
    }
}

extension ColumnSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, type, notNull, unique, references, range, allowed = "enum", pattern
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        type = try c.decode(ColumnType.self, forKey: .type)
        notNull = try c.decodeIfPresent(Bool.self, forKey: .notNull) ?? false
        unique = try c.decodeIfPresent(Bool.self, forKey: .unique) ?? false
        references = try c.decodeIfPresent(ColumnReference.self, forKey: .references)
        range = try c.decodeIfPresent(RangeSpec.self, forKey: .range)
        allowed = try c.decodeIfPresent([EnumValue].self, forKey: .allowed)?.map(\.text)
        pattern = try c.decodeIfPresent(String.self, forKey: .pattern)
    }
}

/// One value of `enum`: a string, or a number as the manifest writes it (`3`, `2.5`) for an integer or real column,
/// kept as its text (SQLite compares it with the column's affinity, so `3` and `"3"` allow the same values).
package struct EnumValue: Decodable {
    package let text: String

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self.text = text
        } else if let number = try? container.decode(Int64.self) {
            text = String(number)
        } else if let number = try? container.decode(Double.self), number.isFinite {
            text = "\(number)"
        } else {
            throw DecodingError.typeMismatch(String.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or a number"))
        }
    }
}

extension ColumnReference: Decodable {
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected \"table.column\", found \"\(text)\""))
        }
        table = String(parts[0])
        column = String(parts[1])
    }
}

extension ForeignKeySpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case columns, references, to }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        columns = try c.decode([String].self, forKey: .columns)
        table = try c.decode(String.self, forKey: .references)
        referencedColumns = try c.decode([String].self, forKey: .to)
    }
}

extension IndexSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case name, columns, unique }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        columns = try c.decode([String].self, forKey: .columns)
        unique = try c.decodeIfPresent(Bool.self, forKey: .unique) ?? false
    }
}

extension FullTextSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case name, columns, unindexed, tokenize }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        columns = try c.decode([String].self, forKey: .columns)
        unindexed = try c.decodeIfPresent([String].self, forKey: .unindexed) ?? []
        tokenize = try c.decodeIfPresent(String.self, forKey: .tokenize) ?? "unicode61 remove_diacritics 2"
    }
}

extension SpatialSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case name, latitude, longitude }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        latitude = try c.decode(String.self, forKey: .latitude)
        longitude = try c.decode(String.self, forKey: .longitude)
    }
}

extension SourceSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case name, description, format, path, options, into, columns, fetch }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        format = try c.decode(String.self, forKey: .format)
        path = try c.decode(String.self, forKey: .path)
        fetch = try c.decodeIfPresent(SourceFetch.self, forKey: .fetch)
        options = try c.decodeIfPresent(JSONValue.self, forKey: .options) ?? .object([:])
        let prefix = keyPathString(c.codingPath)
        if !c.contains(.into) || (try? c.decode(String.self, forKey: .into)) != nil {
            let table = try c.decode(String.self, forKey: .into)
            targets = [SourceTarget(kind: nil, table: table, columns: try c.decode([String: ColumnMapping].self, forKey: .columns),
                                    keyPath: prefix + ".into")]
            return
        }
        if c.contains(.columns) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.columns], debugDescription:
                "with \"into\" as an object, each kind's columns go inside it: into: {kind: {table: \"…\", columns: {…}}}"))
        }
        let kinds = try c.decode([String: KindTarget].self, forKey: .into)
        guard !kinds.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.into], debugDescription:
                "expected a table name, or an object mapping kinds of record to {table, columns}"))
        }
        targets = kinds.keys.sorted().map { kind in
            SourceTarget(kind: kind, table: kinds[kind]!.table, columns: kinds[kind]!.columns, keyPath: "\(prefix).into.\(kind)")
        }
    }

    /// One kind's entry in `into: {kind: {table, columns}}`.
    private struct KindTarget: Decodable {
        package var table: String
        package var columns: [String: ColumnMapping]

        package enum CodingKeys: String, CodingKey, CaseIterable { case table, columns }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            table = try c.decode(String.self, forKey: .table)
            columns = try c.decode([String: ColumnMapping].self, forKey: .columns)
        }
    }
}

extension ColumnMapping: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case field, value, normalize }

    public init(from decoder: Decoder) throws {
        if let field = try? decoder.singleValueContainer().decode(String.self) {
            self.field = field
            value = nil
            normalize = [.named("trim")]
            return
        }
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        field = try c.decodeIfPresent(String.self, forKey: .field)
        value = try c.decodeIfPresent(JSONValue.self, forKey: .value)?.scalarText
        normalize = try c.decodeIfPresent([NormalizerSpec].self, forKey: .normalize) ?? [.named("trim")]
        if (field == nil) == (value == nil) {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "give exactly one of \"field\" and \"value\""))
        }
    }
}

extension NormalizerSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case capture, terms, output, minutesAfter, overnightBefore, collationKey }

    public init(from decoder: Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self = .named(name)
            return
        }
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        if let pattern = try c.decodeIfPresent(String.self, forKey: .capture) {
            self = .capture(pattern)
        } else if let vocabulary = try c.decodeIfPresent(String.self, forKey: .terms) {
            let output = try c.decodeIfPresent(String.self, forKey: .output) ?? "codes"
            guard output == "codes" || output == "mask" else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.output],
                                                        debugDescription: "expected \"codes\" or \"mask\", found \"\(output)\""))
            }
            self = .terms(vocabulary: vocabulary, output: output)
        } else if let field = try c.decodeIfPresent(String.self, forKey: .minutesAfter) {
            self = .minutesAfter(field: field, overnightBefore: try c.decodeIfPresent(String.self, forKey: .overnightBefore) ?? "04:00")
        } else if let locale = try c.decodeIfPresent(String.self, forKey: .collationKey) {
            self = .collationKey(locale: locale)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath,
                                                    debugDescription: "expected a normalizer name or one of {capture}, {terms, output}, {minutesAfter, overnightBefore}, {collationKey}"))
        }
    }
}

extension RuleSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case code, description, kind, table, columns, column, references, range, allowed = "enum", pattern
        case latitude, longitude, box, sql, message, severity
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        code = try c.decode(String.self, forKey: .code)
        let kind = try c.decode(RuleKind.self, forKey: .kind)
        severity = try c.decodeIfPresent(Severity.self, forKey: .severity) ?? .error
        description = try c.decodeIfPresent(String.self, forKey: .description)
        let common: Set<CodingKeys> = [.code, .description, .kind, .severity]
        let accepted = common.union(kind.keys)
        if let stray = c.allKeys.first(where: { !accepted.contains($0) }) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [stray], debugDescription:
                "a \(kind.rawValue) rule does not take \"\(stray.stringValue)\"; it takes: \(accepted.subtracting(common).map(\.stringValue).sorted().joined(separator: ", "))"))
        }
        func required<T: Decodable>(_ type: T.Type, _ key: CodingKeys, _ what: String) throws -> T {
            guard let value = try c.decodeIfPresent(type, forKey: key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: c.codingPath, debugDescription: "a \(kind.rawValue) rule needs \"\(key.stringValue)\": \(what)"))
            }
            return value
        }
        func columns() throws -> [String] {
            if let single = try c.decodeIfPresent(String.self, forKey: .column) { return [single] }
            let columns = try c.decodeIfPresent([String].self, forKey: .columns) ?? []
            guard !columns.isEmpty else {
                throw DecodingError.keyNotFound(CodingKeys.columns, .init(codingPath: c.codingPath, debugDescription: "a \(kind.rawValue) rule needs \"column\" or \"columns\""))
            }
            return columns
        }
        switch kind {
        case .sql:
            check = .sql(query: try required(String.self, .sql, "a query returning the offending rows"),
                         message: try required(String.self, .message, "the finding's sentence, with {column} placeholders"))
        case .bounds:
            check = .bounds(table: try required(String.self, .table, "the table"), latitude: try required(String.self, .latitude, "the column name"),
                            longitude: try required(String.self, .longitude, "the column name"),
                            box: try required(BoxSpec.self, .box, "{minLatitude, maxLatitude, minLongitude, maxLongitude}"))
        default:
            let table = try required(String.self, .table, "the table")
            let columns = try columns()
            switch kind {
            case .unique: check = .unique(table: table, columns: columns)
            case .notNull: check = .notNull(table: table, columns: columns)
            case .references:
                let target = try required(ColumnReference.self, .references, "\"table.column\"")
                guard columns.count == 1 else {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.columns], debugDescription: "a references rule checks exactly one column"))
                }
                check = .references(table: table, key: ForeignKeySpec(columns: columns, table: target.table, referencedColumns: [target.column]))
            case .range: check = .range(table: table, columns: columns, range: try required(RangeSpec.self, .range, "{min, max}"))
            case .enum: check = .allowed(table: table, columns: columns, values: try required([EnumValue].self, .allowed, "[values]").map(\.text))
            default: check = .pattern(table: table, columns: columns, pattern: try required(String.self, .pattern, "a PCRE2 pattern"))
            }
        }
    }
}

extension RuleKind {
    /// The keys a rule of this kind takes besides `code`, `description`, `kind` and `severity`.
    package var keys: Set<RuleSpec.CodingKeys> {
        switch self {
        case .unique, .notNull: return [.table, .columns, .column]
        case .references: return [.table, .columns, .column, .references]
        case .range: return [.table, .columns, .column, .range]
        case .enum: return [.table, .columns, .column, .allowed]
        case .pattern: return [.table, .columns, .column, .pattern]
        case .bounds: return [.table, .latitude, .longitude, .box]
        case .sql: return [.sql, .message]
        }
    }
}

extension FixtureSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case source, input, expected, description }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        source = try c.decode(String.self, forKey: .source)
        input = try c.decode(String.self, forKey: .input)
        expected = try c.decode(String.self, forKey: .expected)
    }
}

extension ExportSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case name, description, files, archive, parameters, servicePeriod }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        files = try c.decode([ExportFileSpec].self, forKey: .files)
        archive = try c.decodeIfPresent(String.self, forKey: .archive)
        parameters = try c.decodeIfPresent([String: JSONValue].self, forKey: .parameters) ?? [:]
        servicePeriod = try c.decodeIfPresent(ServicePeriodSpec.self, forKey: .servicePeriod)
        if let reserved = parameters.keys.sorted().first(where: { $0.hasPrefix("kiln_") }) {
            throw DecodingError.dataCorruptedError(forKey: .parameters, in: c, debugDescription: "parameter names starting kiln_ are Kiln's own (:kiln_service_start, :kiln_service_end, :kiln_content_digest); rename \"\(reserved)\"")
        }
    }
}

extension ExportFileSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case path, format, options, query }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        path = try c.decode(String.self, forKey: .path)
        format = try c.decode(String.self, forKey: .format)
        options = try c.decodeIfPresent(JSONValue.self, forKey: .options) ?? .object([:])
        query = try c.decode(String.self, forKey: .query)
    }
}

extension RangeSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case min, max }

    /// Refuses a range whose `min` is above its `max`: no value could pass it.
    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        min = try c.decodeIfPresent(Double.self, forKey: .min)
        max = try c.decodeIfPresent(Double.self, forKey: .max)
        if let min, let max, min > max {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.min], debugDescription:
                "min \(sqlNumber(min)) is above max \(sqlNumber(max)): no value could pass this range"))
        }
        guard min != nil || max != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "a range needs \"min\", \"max\" or both"))
        }
    }
}

/// The manifest's `targets`: `{ ios: "15", android: "24" }` (a platform release, its framework SQLite) or
/// `{ android: { sqlite: "3.45" } }` (an app that ships its own SQLite), sorted by platform.
package struct TargetList: Decodable {
    package var targets: [SQLiteTarget]

    private struct OwnBuild: Decodable {
        package var sqlite: String
        package enum CodingKeys: String, CodingKey, CaseIterable { case sqlite }
        package init(from decoder: Decoder) throws {
            sqlite = try decoder.strictContainer(keyedBy: CodingKeys.self).decode(String.self, forKey: .sqlite)
        }
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        targets = []
        for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            let platform = key.stringValue
            func wrong(_ sentence: String) -> DecodingError {
                DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key], debugDescription: sentence))
            }
            guard SQLiteTargetTable.platforms.contains(platform) else {
                throw wrong("unknown target \"\(platform)\"; targets: \(SQLiteTargetTable.platforms.joined(separator: ", "))")
            }
            if let own = try? c.decode(OwnBuild.self, forKey: key) {
                guard let version = SQLiteVersion(own.sqlite) else {
                    throw wrong("\"\(own.sqlite)\" is not a SQLite version such as \"3.45\"")
                }
                targets.append(SQLiteTarget(platform: platform, release: nil, sqlite: version, options: SQLiteTargetTable.ownBuild))
                continue
            }
            let release: String
            if let number = try? c.decode(Int.self, forKey: key) {
                release = String(number)
            } else if let text = try? c.decode(String.self, forKey: key) {
                release = text
            } else {
                _ = try c.decode(OwnBuild.self, forKey: key)
                throw wrong("a target is a release (\"24\") or { sqlite: \"3.45\" }")
            }
            let first = SQLiteTargetTable.rows.filter { $0.platform == platform }.map(\.release).min() ?? 0
            guard let number = Int(release.split(separator: ".").first ?? ""), let row = SQLiteTargetTable.row(platform: platform, release: number) else {
                throw wrong("\"\(release)\" is not a \(platform) release Kiln knows the SQLite of (from \(first) on)")
            }
            targets.append(SQLiteTarget(platform: platform, release: release, sqlite: row.sqlite, options: row.options))
        }
    }
}
