import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The groups of checks `kiln check` runs, in order.
public enum CheckCategory: String, Sendable, CaseIterable {
    /// The file is a whole SQLite database and a bundle of the manifest.
    case file
    /// `PRAGMA integrity_check`, `PRAGMA foreign_key_check`, full-text row counts.
    case integrity
    /// Tables, columns, keys, indexes, full-text tables and `user_version` against the manifest.
    case schema
    /// The `kiln_metadata` table and its row counts.
    case metadata
    /// The manifest's rules run again on the bundle.
    case rules
}

/// One check and what it found; a check that could not run on a bundle says why instead.
public struct CheckResult: Sendable {
    /// The group it belongs to.
    public var category: CheckCategory
    /// What was checked, e.g. `table stop` or `duplicate-key on stop.code (tables[0].primaryKey)`.
    public var name: String
    /// The findings, in a stable order: the first `DiagnosticTally.examplesPerCode` of each code and severity.
    public var findings: [Diagnostic]
    /// The findings counted but not stored, by severity.
    public var notStored: [Severity: Int] = [:]
    /// Why the check was not run (e.g. `table line_entry is not shipped`), or `nil` when it ran.
    public var notRun: String?

    /// A check that ran with `findings`, or that was not run for the reason `notRun`.
    public init(category: CheckCategory, name: String, findings: [Diagnostic] = [], notRun: String? = nil) {
        self.category = category
        self.name = name
        self.findings = findings
        self.notRun = notRun
    }

    /// True when a finding is an error.
    public var failed: Bool { findings.contains { $0.severity == .error } }

    /// `passed`, `failed` or `not run`.
    public var status: String { failed ? "failed" : notRun != nil ? "not run" : "passed" }
}

/// What `kiln check` found in a bundle, check by check.
public struct CheckReport: Sendable {
    /// The bundle, as the path was given.
    public var bundle: String
    /// The manifest it was checked against, when one was found.
    public var manifest: String?
    /// Every check, in the order it ran.
    public var results: [CheckResult]

    /// The report of the checks `results` on `bundle`.
    public init(bundle: String, manifest: String?, results: [CheckResult]) {
        self.bundle = bundle
        self.manifest = manifest
        self.results = results
    }

    /// Every finding, check by check.
    public var diagnostics: [Diagnostic] { results.flatMap(\.findings) }

    /// True when no finding is an error: the exit code is 0.
    public var passed: Bool { !results.contains { $0.failed } }

    /// The number of findings at `severity`.
    public func count(_ severity: Severity) -> Int {
        diagnostics.filter { $0.severity == severity }.count + results.reduce(0) { $0 + $1.notStored[severity, default: 0] }
    }

    /// The findings counted but not stored, over every check.
    public var notStoredTotal: Int { results.reduce(0) { $0 + $1.notStored.values.reduce(0, +) } }

    /// The checks that were not run, grouped by reason, e.g. `table line_entry is not shipped (9 checks)`.
    public var notRunSummary: [String] {
        var reasons: [String: Int] = [:]
        for result in results { if let reason = result.notRun { reasons[reason, default: 0] += 1 } }
        return reasons.keys.sorted().map { "\($0) (\(reasons[$0]!) check\(reasons[$0]! == 1 ? "" : "s"))" }
    }

    /// `0 errors, 1 warning, 0 info` for the findings.
    public var counts: String { severityCounts(count) }
}

/// `2 errors, 1 warning, 0 info`, from a count per severity.
package func severityCounts(_ count: (Severity) -> Int) -> String {
    [Severity.error, .warning, .info].map { severity in
        let number = count(severity)
        return "\(number) \(severity.rawValue)\(number == 1 || severity == .info ? "" : "s")"
    }.joined(separator: ", ")
}

