import Foundation
import KilnC
import KilnCore

/// How many rows of a table may go from one bundle to the next: a share of the old bundle's rows (`"10%"`) or a
/// number of rows (`"25"`, or the JSON number `25` in a manifest).
public enum RowLimit: Equatable, Sendable, CustomStringConvertible {
    /// At most this percentage (0…100) of the table's rows in the old bundle.
    case percent(Double)
    /// At most this many rows.
    case rows(Int)

    /// Reads `10%`, `2.5%` or `25`; `nil` for anything else.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix("%") {
            guard let value = Double(trimmed.dropLast().trimmingCharacters(in: .whitespaces)), (0...100).contains(value) else { return nil }
            self = .percent(value)
        } else {
            guard let value = Int(trimmed), value >= 0 else { return nil }
            self = .rows(value)
        }
    }

    /// `10%` or `25 rows`.
    public var description: String {
        switch self {
        case .percent(let value): return sqlNumber(value) + "%"
        case .rows(let count): return "\(count) row" + (count == 1 ? "" : "s")
        }
    }

    /// True when `count` rows out of `total` go beyond the limit.
    public func isExceeded(by count: Int, of total: Int) -> Bool {
        switch self {
        case .rows(let limit): return count > limit
        case .percent(let limit): return count > 0 && (total == 0 || Double(count) * 100 > limit * Double(total))
        }
    }
}

/// Limits on what may change between two bundles, for the whole bundle and per table. A run that goes beyond one
/// fails: `kiln diff` exits 1 and `kiln build` keeps the previous bundle.
public struct Thresholds: Equatable, Sendable {
    /// Which count a limit applies to.
    public enum Measure: String, Sendable, CaseIterable {
        case removed, changed
    }

    /// The limits of one table, or the defaults for every table.
    public struct Limits: Equatable, Sendable {
        /// The most rows that may be removed, or `nil` for no limit.
        public var maxRemoved: RowLimit?
        /// The most rows that may be changed, or `nil` for no limit.
        public var maxChanged: RowLimit?
        /// Derived columns: values computed from other rows (a listing's `position` on its page, a page's count of
        /// listings), which shift when a row elsewhere comes or goes. A row whose only changes are in them is not a
        /// changed row; `kiln diff` counts it apart.
        public var derived: [String]

        /// Limits on removed and changed rows, and the derived columns.
        public init(maxRemoved: RowLimit? = nil, maxChanged: RowLimit? = nil, derived: [String] = []) {
            self.maxRemoved = maxRemoved
            self.maxChanged = maxChanged
            self.derived = derived
        }

        /// The limit on `measure`.
        public subscript(measure: Measure) -> RowLimit? {
            get { measure == .removed ? maxRemoved : maxChanged }
            set { if measure == .removed { maxRemoved = newValue } else { maxChanged = newValue } }
        }
    }

    /// The limits of every table without its own.
    public var defaults: Limits
    /// Limits by table name; a table's own limit wins over the default.
    public var tables: [String: Limits]

    /// `defaults` for every table, `tables` for those with their own.
    public init(defaults: Limits = Limits(), tables: [String: Limits] = [:]) {
        self.defaults = defaults
        self.tables = tables
    }


    /// True when no limit is set.
    public var isEmpty: Bool {
        defaults == Limits() && tables.values.allSatisfy { $0 == Limits() }
    }

    /// The limit on `measure` for `table`: its own, else the default.
    public func limit(_ measure: Measure, for table: String) -> RowLimit? {
        tables[table]?[measure] ?? defaults[measure]
    }

    /// The derived columns of `table`: its own and those declared for every table.
    public func derivedColumns(of table: String) -> Set<String> {
        Set(defaults.derived + (tables[table]?.derived ?? []))
    }

    /// These thresholds with every limit `other` sets put in place of this one's (derived columns are added up).
    public func overridden(by other: Thresholds) -> Thresholds {
        var merged = self
        merged.defaults.derived = Array(Set(defaults.derived + other.defaults.derived)).sorted()
        for (table, limits) in other.tables where !limits.derived.isEmpty {
            merged.tables[table, default: Limits()].derived = Array(Set((tables[table]?.derived ?? []) + limits.derived)).sorted()
        }
        for measure in Measure.allCases {
            if let limit = other.defaults[measure] { merged.defaults[measure] = limit }
            for (table, limits) in other.tables {
                if let limit = limits[measure] { merged.tables[table, default: Limits()][measure] = limit }
            }
        }
        return merged
    }

    /// Adds the limits `text` sets on `measure`: a comma-separated list of `LIMIT` (every table) and `TABLE=LIMIT`,
    /// e.g. `10%,timetable=5%`; the text is called `name` in messages (the command line: `--max-removed`).
    /// - Throws: `KilnError.usage` naming `name` and the part that is not a limit.
    public mutating func add(_ measure: Measure, from text: String, named name: String) throws {
        for part in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let limit = RowLimit(pieces.last ?? ""), pieces.count == 1 || !pieces[0].isEmpty else {
                throw KilnError.usage("\(name) takes limits such as 10%, 25 or TABLE=5%, not \"\(part)\"")
            }
            if pieces.count == 2 {
                tables[pieces[0], default: Limits()][measure] = limit
            } else {
                defaults[measure] = limit
            }
        }
    }

    /// The limits as one line, e.g. `removed ≤ 10% (timetable ≤ 5%); changed ≤ 25%`, or `none`.
    public var summary: String {
        let parts = Measure.allCases.compactMap { measure -> String? in
            let own = tables.keys.sorted().compactMap { table in tables[table]?[measure].map { "\(table) ≤ \($0)" } }
            guard defaults[measure] != nil || !own.isEmpty else { return nil }
            var text = "\(measure.rawValue) ≤ " + (defaults[measure]?.description ?? "any")
            if !own.isEmpty { text += " (" + own.joined(separator: ", ") + ")" }
            return text
        }
        var all = parts
        let derived = ([defaults.derived.isEmpty ? nil : "every table: " + defaults.derived.joined(separator: ", ")]
            + tables.keys.sorted().map { table in tables[table]!.derived.isEmpty ? nil : "\(table): " + tables[table]!.derived.joined(separator: ", ") })
            .compactMap { $0 }
        if !derived.isEmpty { all.append("derived columns not counted as changes (" + derived.joined(separator: "; ") + ")") }
        return all.isEmpty ? "none" : all.joined(separator: "; ")
    }
}
