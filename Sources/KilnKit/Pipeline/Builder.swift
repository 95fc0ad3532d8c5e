import Foundation

/// Where a build writes.
public struct BuildOptions: Sendable {
    /// The bundle file; `build/<bundle>.sqlite` under the current folder when `nil`.
    public var output: URL?
    /// The JSON report; beside the bundle as `<bundle>.report.json` when `nil`.
    public var report: URL?
    /// The bundle to compare the new one with before replacing anything (it must exist); the manifest's
    /// `baseline` when `nil`.
    public var baseline: URL?
    /// Limits that replace the manifest's `thresholds`, limit by limit.
    public var thresholds: Thresholds

    public init(output: URL? = nil, report: URL? = nil, baseline: URL? = nil, thresholds: Thresholds = Thresholds()) {
        self.output = output
        self.report = report
        self.baseline = baseline
        self.thresholds = thresholds
    }
}

/// What a build did: whether the bundle was written, the tables' row counts and every finding.
public struct BuildOutcome: Sendable {
    public var bundle: String
    public var output: URL
    public var reportURL: URL
    /// True when the bundle was written (no error remained).
    public var built: Bool
    /// Rows per shipped table, in declaration order (staged rows when the build failed).
    public var tables: [TableCount]
    /// SHA-256 of every input, by path relative to the pipeline folder.
    public var inputs: [String: String]
    /// Every finding, in a stable order.
    public var diagnostics: [Diagnostic]
    /// The comparison of the new bundle with the baseline, when there was one to compare with.
    public var comparison: BundleDiff? = nil
}

/// A table's name and row count.
public struct TableCount: Codable, Sendable, Equatable {
    public var name: String
    public var rows: Int
}

/// Runs a pipeline: read every source into staging, fill query tables, run the rules, and write the bundle only
/// when no error remains. A failed build leaves any previous bundle untouched.
public enum Builder {
    /// Builds `pipeline`. With a baseline, the finished bundle is compared with it before it replaces anything, and
    /// a difference beyond the thresholds (or a schema change without a new `user_version`) is an error.
    /// - Throws: `KilnError.io` when inputs, outputs or the `options.baseline` cannot be read or written;
    ///   `KilnError.manifest` when SQLite refuses SQL the manifest wrote. Validation errors do not throw: they are
    ///   in the outcome.
    public static func build(_ pipeline: Pipeline, options: BuildOptions = BuildOptions()) throws -> BuildOutcome {
        let manifest = pipeline.manifest
        if let baseline = options.baseline, !FileManager.default.fileExists(atPath: baseline.path) {
            throw KilnError.io("cannot read the baseline \(baseline.path): there is no such file")
        }
        let output = options.output ?? URL(fileURLWithPath: "build").appendingPathComponent("\(manifest.bundle).sqlite")
        let reportURL = options.report ?? output.deletingPathExtension().appendingPathExtension("report.json")
        let folder = output.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw KilnError.io("cannot create the output folder \(folder.path): \(error.localizedDescription)")
        }
        let stagingURL = folder.appendingPathComponent(".\(manifest.bundle).staging.\(ProcessInfo.processInfo.processIdentifier).sqlite")
        defer { try? FileManager.default.removeItem(at: stagingURL) }

        let log = DiagnosticLog(overrides: manifest.severity)
        var inputs: [String: String] = [:]
        var counts: [TableCount] = []
        do {
            let staging = try StagingArea(url: stagingURL, pipeline: pipeline)
            for source in pipeline.sources {
                inputs.merge(try staging.load(source, log: log)) { first, _ in first }
            }
            try staging.fillQueryTables()
            try staging.indexLookupColumns()
            try RuleEngine(pipeline: pipeline, database: staging.database, log: log).run()
            counts = try manifest.tables.filter(\.ship).map { table in
                let rows = try staging.database.rows("SELECT count(*) FROM \(quoteIdentifier(table.name))")
                return TableCount(name: table.name, rows: Int(rows.first?.values.first?.number ?? 0))
            }
            try staging.database.close()
        } catch let error as SQLiteError {
            throw KilnError.io("staging failed in \(folder.path): \(error.message)")
        }

        var built = false
        var comparison: BundleDiff?
        if !log.hasErrors {
            do {
                let pending = try BundleWriter(manifest: manifest).prepare(from: stagingURL, to: output, inputs: inputs)
                defer { pending.discard() }
                counts = pending.counts.map { TableCount(name: $0.table, rows: $0.rows) }
                if let baseline = baseline(options, manifest, log) {
                    comparison = compare(pending, with: baseline, thresholds: manifest.thresholds.overridden(by: options.thresholds), log: log)
                }
                if !log.hasErrors {
                    try pending.commit()
                    built = true
                }
            } catch KilnError.validation(let message) {
                log.report("bundle", .error, message)
            }
        }
        var outcome = BuildOutcome(bundle: manifest.bundle, output: output, reportURL: reportURL, built: built,
                                   tables: counts, inputs: inputs, diagnostics: log.sorted)
        outcome.comparison = comparison
        try BuildReport(outcome).write(to: reportURL)
        return outcome
    }

    /// The bundle to compare with: `options.baseline`, else the manifest's `baseline` when that file exists yet
    /// (an info finding says so when it does not).
    private static func baseline(_ options: BuildOptions, _ manifest: Manifest, _ log: DiagnosticLog) -> URL? {
        if let baseline = options.baseline { return baseline }
        guard let baseline = manifest.baselineURL else { return nil }
        if FileManager.default.fileExists(atPath: baseline.path) { return baseline }
        log.report("diff.no-baseline", .info, "the baseline \(displayPath(baseline)) does not exist yet: the new bundle was not compared")
        return nil
    }

    /// Compares the finished bundle with the baseline; its errors go to the log, so that the bundle is not committed.
    private static func compare(_ pending: PendingBundle, with baseline: URL, thresholds: Thresholds, log: DiagnosticLog) -> BundleDiff? {
        do {
            let diff = try BundleDiff.compare(old: baseline, new: pending.temporary, oldName: displayPath(baseline),
                                              newName: pending.destination.relativePath, thresholds: thresholds)
            for var finding in diff.findings {
                finding.provenance = nil
                log.report(finding)
            }
            return diff
        } catch let error as KilnError {
            log.report("diff.baseline", .error, "the new bundle cannot be compared with the baseline: \(error.description)")
            return nil
        } catch {
            log.report("diff.baseline", .error, "the new bundle cannot be compared with the baseline: \(error)")
            return nil
        }
    }
}
