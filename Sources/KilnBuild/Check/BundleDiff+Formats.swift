import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

extension BundleDiff: RenderableReport {
    /// The human report: a line per table with its counts and examples, the schema differences, the thresholds,
    /// the errors and the verdict.
    public var text: String {
        var lines = ["diff \(old) \(new)"]
        let width = tables.map(\.name.count).max() ?? 0
        for table in tables {
            let rows = "\(table.oldRows) → \(table.newRows)"
            var line = "  " + table.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + rows.padding(toLength: max(12, rows.count), withPad: " ", startingAt: 0) + "  "
            if table.userFilled {
                line += "filled by the app: not compared"
            } else if table.isUnchanged {
                line += "unchanged"
            } else {
                line += "\(table.added) added, \(table.removed) removed (\(BundleDiff.percent(table.removed, of: table.oldRows))), "
                    + "\(table.changed) changed (\(BundleDiff.percent(table.changed, of: table.oldRows)))"
                if !table.changedColumns.isEmpty {
                    line += ": " + table.changedColumns.keys.sorted().map { "\($0) ×\(table.changedColumns[$0]!)" }.joined(separator: ", ")
                }
            }
            if table.derivedOnly > 0 {
                line += "; \(table.derivedOnly) row\(table.derivedOnly == 1 ? "" : "s") with only derived columns changed: "
                    + table.derivedColumns.keys.sorted().map { "\($0) ×\(table.derivedColumns[$0]!)" }.joined(separator: ", ")
            }
            lines.append(line)
            lines += examples("added", table.added, table.addedExamples.map(table.describe), table)
            lines += examples("removed", table.removed, table.removedExamples.map(table.describe), table)
            let changes = table.changedExamples.map { row in
                table.describe(row.key) + ": " + row.changes.map { "\($0.column) \(BundleDiff.show($0.old)) → \(BundleDiff.show($0.new))" }.joined(separator: ", ")
            }
            lines += examples("changed", table.changed, changes, table)
        }
        let versions = oldVersion == newVersion ? "user_version \(newVersion)" : "user_version \(oldVersion) → \(newVersion)"
        lines.append(schema.isEmpty ? "schema: unchanged, \(versions)"
                                    : "schema: \(schema.count) difference\(schema.count == 1 ? "" : "s"), \(versions)")
        lines += schema.map { "  " + $0.sentence(expected: "the old bundle", actual: "the new bundle") }
        lines.append("thresholds: " + thresholds.summary)
        lines += findings.map { "  " + $0.displayLine }
        let errors = findings.filter { $0.severity == .error }.count
        lines.append(passed ? "passed" : "failed: \(errors) error\(errors == 1 ? "" : "s")")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `    removed: timetable 1; timetable 2; timetable 3; … 36 more`, or nothing when there are none.
    private func examples(_ kind: String, _ count: Int, _ shown: [String], _ table: Table) -> [String] {
        guard count > 0 else { return [] }
        // No examples: a table only one bundle has, or --examples 0.
        if shown.isEmpty {
            return ["      \(kind): \(count) row\(count == 1 ? "" : "s")"]
        }
        let more = count > shown.count ? "; … \(count - shown.count) more" : ""
        return ["      \(kind): " + shown.joined(separator: "; ") + more]
    }

    /// A value as the text report shows it: text quoted, numbers bare, `NULL`.
    package static func show(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .text(let text): return "\"\(TerminalText.escape(excerpt(text, limit: 60)))\""
        case .blob: return "x'\(value.textValue ?? "")'"
        case .integer, .real: return value.textValue ?? ""
        }
    }

    /// The diff as pretty-printed JSON with sorted keys: every table's counts, changed columns and examples (keys
    /// as objects of column values), the schema differences, the thresholds and the findings.
    public var json: String {
        get throws {
            struct Change: Encodable {
                var old: JSONValue
                var new: JSONValue
            }
            struct ChangedRow: Encodable {
                var key: [String: JSONValue]
                var changes: [String: Change]
            }
            struct Examples: Encodable {
                var added: [[String: JSONValue]]
                var removed: [[String: JSONValue]]
                var changed: [ChangedRow]
            }
            struct TableEntry: Encodable {
                var name: String
                var key: [String]
                var oldRows, newRows, added, removed, changed: Int
                var userFilled: Bool
                var changedColumns: [String: Int]
                var derivedOnly: Int
                var derivedColumns: [String: Int]
                var examples: Examples
            }
            struct Schema: Encodable {
                var oldVersion: Int
                var newVersion: Int
                var differences: [String]
            }
            struct Document: Encodable {
                var old: String
                var new: String
                var passed: Bool
                var tables: [TableEntry]
                var schema: Schema
                var thresholds: JSONValue
                var findings: [BuildReport.Entry]
            }
            let entries = tables.map { table in
                func object(_ key: [SQLValue]) -> [String: JSONValue] {
                    Dictionary(uniqueKeysWithValues: zip(table.key, key.map(BundleDiff.jsonValue)))
                }
                let changed = table.changedExamples.map { row in
                    ChangedRow(key: object(row.key), changes: Dictionary(uniqueKeysWithValues: row.changes.map {
                        ($0.column, Change(old: BundleDiff.jsonValue($0.old), new: BundleDiff.jsonValue($0.new)))
                    }))
                }
                return TableEntry(name: table.name, key: table.key, oldRows: table.oldRows, newRows: table.newRows, added: table.added,
                                  removed: table.removed, changed: table.changed, userFilled: table.userFilled, changedColumns: table.changedColumns,
                                  derivedOnly: table.derivedOnly, derivedColumns: table.derivedColumns,
                                  examples: Examples(added: table.addedExamples.map(object), removed: table.removedExamples.map(object), changed: changed))
            }
            let schema = Schema(oldVersion: oldVersion, newVersion: newVersion,
                                differences: self.schema.map { $0.sentence(expected: "the old bundle", actual: "the new bundle") })
            return try encodeJSON(Document(old: old, new: new, passed: passed, tables: entries, schema: schema,
                                           thresholds: thresholds.jsonValue, findings: findings.map(BuildReport.Entry.init)))
        }
    }

    /// A value as JSON: numbers as numbers, blobs as hexadecimal text.
    package static func jsonValue(_ value: SQLValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .number(Double(number))
        case .real(let number): return .number(number)
        case .text(let text): return .string(text)
        case .blob: return .string(value.textValue ?? "")
        }
    }

    /// JUnit XML: a suite `tables` with a test case per table (failed over a threshold),
    /// and a suite `bundle` with one case for the schema and the bundles themselves.
    public var junit: String {
        let tableCases = tables.map { table in
            JUnitCase(classname: "kiln.diff.table", name: table.name, findings: table.findings)
        }
        let tableFindings = Set(tables.flatMap(\.findings))
        let bundleCase = JUnitCase(classname: "kiln.diff", name: "schema", findings: findings.filter { !tableFindings.contains($0) })
        return junitXML(name: "kiln diff \(old) \(new)",
                        suites: [JUnitSuite(name: "tables", cases: tableCases), JUnitSuite(name: "bundle", cases: [bundleCase])])
    }

    /// GitHub Actions annotations: one per finding (at the new bundle), then `summaryLine` as the verdict.
    public var github: String {
        (findings.map(githubAnnotation) + ["kiln diff: " + (passed ? "passed" : "failed") + "; " + summaryLine])
            .joined(separator: "\n") + "\n"
    }

    /// One line for a build that compared its bundle with a baseline, e.g.
    /// `compared with build/patras.sqlite: timetable 39 removed; stop 2 changed`.
    public var summaryLine: String {
        let changes = tables.filter { !$0.isUnchanged }.map { table in
            table.name + " " + [(table.added, "added"), (table.removed, "removed"), (table.changed, "changed")]
                .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        }
        var line = "compared with \(old): " + (changes.isEmpty ? "no row added, removed or changed" : changes.joined(separator: "; "))
        if !schema.isEmpty { line += "; \(schema.count) schema difference\(schema.count == 1 ? "" : "s")" }
        return line + (thresholds.isEmpty ? " (no thresholds declared)" : "")
    }
}

extension Thresholds {
    /// The thresholds as a manifest writes them: `{maxRemoved: "10%", tables: {timetable: {maxRemoved: "5%"}}}`.
    package var jsonValue: JSONValue {
        func object(_ limits: Limits) -> [String: JSONValue] {
            var entries: [String: JSONValue] = [:]
            if let limit = limits.maxRemoved { entries["maxRemoved"] = .string(limit.manifestText) }
            if let limit = limits.maxChanged { entries["maxChanged"] = .string(limit.manifestText) }
            if !limits.derived.isEmpty { entries["derived"] = .array(limits.derived.map { .string($0) }) }
            return entries
        }
        var entries = object(defaults)
        if !tables.isEmpty { entries["tables"] = .object(tables.mapValues { .object(object($0)) }) }
        return .object(entries)
    }
}

extension RowLimit {
    /// `10%` or `25`, as a manifest or an option writes it.
    package var manifestText: String {
        switch self {
        case .percent(let value): return sqlNumber(value) + "%"
        case .rows(let count): return String(count)
        }
    }
}
