import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What changed from one bundle to the next: per table, the rows added, removed and changed (matched by primary
/// key), which columns changed with a few examples; the schema differences; and the thresholds it goes beyond.
/// A change in a derived column alone (`Thresholds.Limits.derived`: a position that shifts when a row before it goes)
/// does not make a row changed; such rows are counted apart.
///
///     let diff = try BundleDiff.compare(old: URL(fileURLWithPath: "old.sqlite"), new: URL(fileURLWithPath: "new.sqlite"),
///                                       thresholds: Thresholds(defaults: .init(maxRemoved: .percent(10))))
///     if !diff.passed { … }
public struct BundleDiff: Sendable {
    /// One changed row: its key and, for each changed column, the old and the new value.
    public struct ChangedRow: Sendable, Equatable {
        /// The key values, in the order of the table's key columns.
        package var key: [SQLValue]
        /// The columns that changed, in column order, with the old and the new value.
        package var changes: [(column: String, old: SQLValue, new: SQLValue)]

        /// Equal keys and equal changes.
        public static func == (lhs: ChangedRow, rhs: ChangedRow) -> Bool {
            lhs.key == rhs.key && lhs.changes.elementsEqual(rhs.changes) { $0.column == $1.column && $0.old == $1.old && $0.new == $1.new }
        }
    }

    /// The differences of one table.
    public struct Table: Sendable, Equatable {
        /// The table's name.
        public var name: String
        /// The columns rows are matched by: the primary key, or every shared column when there is none.
        public var key: [String]
        /// The row counts in the old and the new bundle (0 where the table is missing).
        public var oldRows: Int
        public var newRows: Int
        /// Rows whose key is only in the new bundle, only in the old one, and in both with other values.
        public var added = 0
        public var removed = 0
        public var changed = 0
        /// How many rows changed in each column, by column name.
        public var changedColumns: [String: Int] = [:]
        /// The derived columns (`Thresholds.Limits.derived`) present in both bundles; rows whose only changes are in
        /// them, and how many rows changed in each.
        public var derived: [String] = []
        public var derivedOnly = 0
        public var derivedColumns: [String: Int] = [:]
        /// Derived columns the thresholds name for this table that it does not have (a typo shows).
        public var unknownDerived: [String] = []
        /// The first added and removed keys, in key order.
        package var addedExamples: [[SQLValue]] = []
        package var removedExamples: [[SQLValue]] = []
        /// The first changed rows, in key order.
        public var changedExamples: [ChangedRow] = []
        /// True for a table the app fills (the manifest's `userFilled`): its rows are counted, not compared.
        public var userFilled = false
        /// The findings about this table (thresholds exceeded, derived columns it lacks), also in `findings`.
        public var findings: [Diagnostic] = []

        /// True when nothing was added, removed or changed.
        public var isUnchanged: Bool { added == 0 && removed == 0 && changed == 0 }

        /// A key as messages show it: `route_stop 1.1 0`.
        package func describe(_ key: [SQLValue]) -> String {
            ([name] + key.map { $0.textValue ?? "NULL" }).joined(separator: " ")
        }
    }

    /// The old and the new bundle, as paths are shown.
    public var old: String
    public var new: String
    /// Every table of either bundle, in name order (full-text tables and `kiln_metadata` left out).
    public var tables: [Table]
    /// How the new schema differs from the old.
    public var schema: [SchemaDifference]
    /// The `user_version` of the old and the new bundle.
    public var oldVersion: Int
    public var newVersion: Int
    /// The thresholds the diff was held to.
    public var thresholds: Thresholds
    /// Errors: thresholds exceeded (`diff.threshold`), a schema change without a new `user_version`
    /// (`diff.user-version`), bundles of two different pipelines (`diff.bundle`).
    public var findings: [Diagnostic]

    /// True when no finding is an error.
    public var passed: Bool { !findings.contains { $0.severity == .error } }

    /// How many examples of each kind a table keeps.
    public static let defaultExamples = 3

    /// Compares the bundle at `old` with the one at `new`.
    /// - Parameters:
    ///   - oldName, newName: how the two are named in messages (their paths by default).
    ///   - examples: how many added, removed and changed rows each table keeps as examples.
    ///   - severity: overrides by diagnostic code, as a manifest's `severity` (e.g. `diff.threshold: warning`).
    ///   - userFilled: tables the app fills (the manifest's `userFilled`): the user's rows in an app's copy are not
    ///     counted as removed (nor as added or changed), so no threshold can fail on them.
    /// - Throws: `KilnError.io` when a file cannot be read; `KilnError.validation` with one sentence when one is
    ///   not an SQLite database (empty, foreign, truncated or damaged).
    public static func compare(old: URL, new: URL, oldName: String? = nil, newName: String? = nil,
                               thresholds: Thresholds = Thresholds(), examples: Int = defaultExamples,
                               severity: [String: Severity] = [:], userFilled: Set<String> = []) throws -> BundleDiff {
        let oldLabel = oldName ?? old.relativePath, newLabel = newName ?? new.relativePath
        let database = try BundleFile.open(old, attaching: new, as: "new")
        do {
            let before = try SchemaSnapshot(database, schema: "main", excluding: [BundleWriter.metadataTable])
            let after = try SchemaSnapshot(database, schema: "new", excluding: [BundleWriter.metadataTable])
            var tables: [Table] = []
            for name in Set(before.tables.keys).union(after.tables.keys).sorted() {
                if userFilled.contains(name) {
                    let rows = { (schema: String, present: Bool) throws -> Int in
                        present ? Int(try database.rows("SELECT count(*) FROM \(schema).\(quoteIdentifier(name))").first?.values.first?.number ?? 0) : 0
                    }
                    tables.append(Table(name: name, key: (after.tables[name] ?? before.tables[name])?.primaryKey ?? [],
                                        oldRows: try rows("main", before.tables[name] != nil), newRows: try rows("new", after.tables[name] != nil),
                                        userFilled: true))
                    continue
                }
                var table = try compareTable(name, before.tables[name], after.tables[name], in: database, examples: examples,
                                             derived: thresholds.derivedColumns(of: name))
                let columns = Set((before.tables[name]?.columns ?? []).map(\.name) + (after.tables[name]?.columns ?? []).map(\.name))
                table.unknownDerived = (thresholds.tables[name]?.derived ?? []).filter { !columns.contains($0) }
                tables.append(table)
            }
            var diff = BundleDiff(old: oldLabel, new: newLabel, tables: tables, schema: before.differences(to: after),
                                  oldVersion: before.userVersion, newVersion: after.userVersion, thresholds: thresholds, findings: [])
            let log = DiagnosticLog(overrides: severity)
            for (table, finding) in diff.judge(oldBundle: try BundleFile.metadata(of: database)?["bundle.name"],
                                               newBundle: try BundleFile.metadata(of: database, schema: "new")?["bundle.name"]) {
                let stored = log.diagnostics.count
                log.report(finding)
                if let table, log.diagnostics.count > stored, let index = diff.tables.firstIndex(where: { $0.name == table }) {
                    diff.tables[index].findings.append(log.diagnostics[stored])
                }
            }
            diff.findings = log.diagnostics
            return diff
        } catch let error as SQLiteError {
            if let stopped = BundleReadLimit.current.stopped(error, reading: [old, new]) { throw stopped }
            throw KilnError.validation("\(oldLabel) and \(newLabel) cannot be compared: SQLite cannot read them (\(error.message))")
        }
    }

    private static func compareTable(_ name: String, _ before: SchemaSnapshot.Table?, _ after: SchemaSnapshot.Table?,
                                     in database: Database, examples: Int, derived: Set<String>) throws -> Table {
        let quoted = quoteIdentifier(name)
        func count(_ schema: String) throws -> Int {
            Int(try database.rows("SELECT count(*) FROM \(schema).\(quoted)").first?.values.first?.number ?? 0)
        }
        guard let before, let after else {
            let key = (before ?? after)?.primaryKey ?? []
            let rows = try count(before == nil ? "new" : "main")
            return Table(name: name, key: key, oldRows: before == nil ? 0 : rows, newRows: before == nil ? rows : 0,
                         added: before == nil ? rows : 0, removed: before == nil ? 0 : rows)
        }
        let oldNames = before.columns.map(\.name)
        let shared = after.columns.map(\.name).filter { oldNames.contains($0) }
        let candidates = [after.primaryKey, before.primaryKey].filter { !$0.isEmpty && $0.allSatisfy(shared.contains) }
        let key = candidates.first ?? shared
        var table = Table(name: name, key: key, oldRows: try count("main"), newRows: try count("new"))
        table.derived = shared.filter { derived.contains($0) && !key.contains($0) }
        guard !key.isEmpty else { return table }

        let keyList = key.map(quoteIdentifier).joined(separator: ", ")
        let match = key.map { "o.\(quoteIdentifier($0)) IS n.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        func missing(from other: String, in schema: String, alias: String) throws -> (count: Int, examples: [[SQLValue]]) {
            let otherAlias = alias == "n" ? "o" : "n"
            let statement = try database.prepare("SELECT \(key.map { "\(alias).\(quoteIdentifier($0))" }.joined(separator: ", ")) FROM \(schema).\(quoted) AS \(alias) WHERE NOT EXISTS (SELECT 1 FROM \(other).\(quoted) AS \(otherAlias) WHERE \(match)) ORDER BY \(keyList)")
            var total = 0, firsts: [[SQLValue]] = []
            while let row = try statement.step() {
                total += 1
                if firsts.count < examples { firsts.append(row.values) }
            }
            return (total, firsts)
        }
        (table.added, table.addedExamples) = try missing(from: "main", in: "new", alias: "n")
        (table.removed, table.removedExamples) = try missing(from: "new", in: "main", alias: "o")

        let compared = shared.filter { !key.contains($0) }
        guard !compared.isEmpty else { return table }
        let selected = key.map { "n.\(quoteIdentifier($0))" } + compared.flatMap { ["o.\(quoteIdentifier($0))", "n.\(quoteIdentifier($0))"] }
        let differs = compared.map { "o.\(quoteIdentifier($0)) IS NOT n.\(quoteIdentifier($0))" }.joined(separator: " OR ")
        let statement = try database.prepare("SELECT \(selected.joined(separator: ", ")) FROM main.\(quoted) AS o JOIN new.\(quoted) AS n ON \(match) WHERE \(differs) ORDER BY \(key.map { "n.\(quoteIdentifier($0))" }.joined(separator: ", "))")
        while let row = try statement.step() {
            var changes: [(String, SQLValue, SQLValue)] = []
            var derivedChanges: [String] = []
            for (index, column) in compared.enumerated() {
                let oldValue = row.values[key.count + 2 * index], newValue = row.values[key.count + 2 * index + 1]
                guard !BundleDiff.same(oldValue, newValue) else { continue }
                if table.derived.contains(column) {
                    derivedChanges.append(column)
                } else {
                    changes.append((column, oldValue, newValue))
                }
            }
            for column in derivedChanges { table.derivedColumns[column, default: 0] += 1 }
            guard !changes.isEmpty else {
                table.derivedOnly += 1
                continue
            }
            table.changed += 1
            for change in changes { table.changedColumns[change.0, default: 0] += 1 }
            if table.changedExamples.count < examples {
                table.changedExamples.append(ChangedRow(key: Array(row.values.prefix(key.count)), changes: changes))
            }
        }
        return table
    }

    /// Values SQLite's `IS` holds equal: the same, or the same number stored as integer and as real.
    private static func same(_ left: SQLValue, _ right: SQLValue) -> Bool {
        if left == right { return true }
        if let a = left.number, let b = right.number { return a == b }
        return false
    }

    /// The errors of this diff under its thresholds, each with the table it is about (nil for the whole bundle).
    private func judge(oldBundle: String?, newBundle: String?) -> [(table: String?, finding: Diagnostic)] {
        var found: [(table: String?, finding: Diagnostic)] = []
        func error(_ code: DiagnosticCode, _ message: String, table: String? = nil) {
            found.append((table, Diagnostic(code: code, message: message, provenance: Provenance(file: new))))
        }
        if let oldBundle, let newBundle, oldBundle != newBundle {
            error(.diffBundle, "\(old) is a bundle of \"\(oldBundle)\" but \(new) of \"\(newBundle)\": they are not versions of one bundle")
        }
        let appTables = Set(tables.filter(\.userFilled).map(\.name))
        let others = schema.filter { $0.kind != .userVersion && !($0.table.map(appTables.contains) ?? false) }
        if !others.isEmpty, oldVersion == newVersion {
            error(.diffUserVersion, "the schema changed (\(others.count) difference\(others.count == 1 ? "" : "s")) but user_version is still \(newVersion): raise the manifest's schemaVersion so that apps notice")
        }
        if var finding = BundleDiff.userFilledSchemaChange(schema, userFilled: appTables, oldVersion: oldVersion, newVersion: newVersion, old: old) {
            finding.provenance = Provenance(file: new)
            found.append((nil, finding))
        }
        for table in tables where !table.unknownDerived.isEmpty {
            found.append((table.name, Diagnostic(code: .diffDerived, message: "\(table.name) has no column \(table.unknownDerived.map { "\"\($0)\"" }.joined(separator: ", ")) for the thresholds' derived columns; changes in the others count",
                                                 provenance: Provenance(file: new))))
        }
        for table in tables {
            for (measure, count) in [(Thresholds.Measure.removed, table.removed), (.changed, table.changed)] {
                guard let limit = thresholds.limit(measure, for: table.name), limit.isExceeded(by: count, of: table.oldRows) else { continue }
                error(.diffThreshold, "\(table.name): \(count) of \(table.oldRows) rows \(measure.rawValue) since \(old) (\(BundleDiff.percent(count, of: table.oldRows))), more than the \(limit) allowed", table: table.name)
            }
        }
        return found
    }

    /// The `diff.user-filled-schema` error when a table the app fills changed its schema (`differences`, old to new)
    /// while the schema version stayed: an app carrying its users' rows into the new bundle would copy them into a
    /// table it does not expect. `nil` when nothing such changed or the version was raised.
    package static func userFilledSchemaChange(_ differences: [SchemaDifference], userFilled: Set<String>, oldVersion: Int, newVersion: Int,
                                       old: String) -> Diagnostic? {
        guard oldVersion == newVersion else { return nil }
        let changed = differences.filter { $0.kind != .userVersion && ($0.table.map(userFilled.contains) ?? false) }
        guard !changed.isEmpty else { return nil }
        let tables = Set(changed.compactMap(\.table)).sorted()
        return Diagnostic(code: .diffUserFilledSchema,
                          message: "the schema of \(tables.joined(separator: ", ")), which the app fills (userFilled), changed since \(old) ("
                            + changed.map { $0.sentence(expected: "the old bundle", actual: "the new bundle") }.joined(separator: "; ")
                            + ") but the schema version is still \(newVersion): an app copying its users' rows into the new bundle would put them in a table it does not expect; raise the manifest's schemaVersion")
    }

    /// `81.3%`, with one decimal at most.
    package static func percent(_ count: Int, of total: Int) -> String {
        guard total > 0 else { return count == 0 ? "0%" : "100%" }
        let value = (Double(count) * 1000 / Double(total)).rounded() / 10
        return sqlNumber(value) + "%"
    }
}
