import Foundation

/// The JSON report of a build: every diagnostic with code, severity, message, file and line; row counts; inputs.
/// Keys are sorted and nothing depends on time, so equal builds give equal reports.
public struct BuildReport: Encodable {
    struct Entry: Encodable {
        var code: String
        var severity: Severity
        var message: String
        var file: String?
        var line: Int?
        var column: Int?
    }

    var bundle: String
    var built: Bool
    var output: String
    var tables: [TableCount]
    var summary: [String: Int]
    var inputs: [String: String]
    var diagnostics: [Entry]
    /// Findings counted in `summary` but not listed in `diagnostics`, by code and severity (omitted when none).
    var notStored: [NotStored]?

    struct NotStored: Encodable {
        var code: String
        var severity: Severity
        var count: Int
    }

    /// The new bundle's size in bytes, and the bytes no table owns (schema, `kiln_metadata`, free pages); each
    /// table's share is in `tables`. Absent when no bundle was written.
    var bundleBytes: Int?
    var otherBytes: Int?

    /// Per table, what changed since the baseline, when the build compared with one (absent otherwise).
    var baseline: [TableChange]?

    struct TableChange: Encodable {
        var name: String
        var oldRows: Int
        var newRows: Int
        var added: Int
        var removed: Int
        var changed: Int
    }

    /// The report of `outcome`.
    public init(_ outcome: BuildOutcome) {
        bundle = outcome.bundle
        built = outcome.built
        output = outcome.output.relativePath
        tables = outcome.tables
        bundleBytes = outcome.bytes?.total
        otherBytes = outcome.bytes?.other
        inputs = outcome.inputs
        var summary: [String: Int] = ["error": 0, "warning": 0, "info": 0]
        for diagnostic in outcome.diagnostics { summary[diagnostic.severity.rawValue, default: 0] += 1 }
        for (key, count) in outcome.notStored { summary[key.severity.rawValue, default: 0] += count }
        let omitted = outcome.notStored.sorted { $0.key < $1.key }.map { NotStored(code: $0.key.code, severity: $0.key.severity, count: $0.value) }
        notStored = omitted.isEmpty ? nil : omitted
        self.summary = summary
        baseline = outcome.comparison?.tables.map {
            TableChange(name: $0.name, oldRows: $0.oldRows, newRows: $0.newRows, added: $0.added, removed: $0.removed, changed: $0.changed)
        }
        diagnostics = outcome.diagnostics.map {
            Entry(code: $0.code, severity: $0.severity, message: $0.message,
                  file: $0.provenance?.file, line: $0.provenance?.line, column: $0.provenance?.column)
        }
    }

    /// The report as pretty-printed JSON with sorted keys.
    public func json() throws -> Data {
        try KilnJSON.encode(self)
    }
}
