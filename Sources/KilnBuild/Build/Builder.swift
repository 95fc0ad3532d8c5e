import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Where a build writes.
public struct BuildOptions: Sendable {
    /// The bundle file; `build/<bundle>.sqlite` under the current folder when `nil`.
    public var output: URL?
    /// The JSON report; beside the bundle when `nil` (`defaultReport(for:)`).
    public var report: URL?
    /// The bundle to compare the new one with before replacing anything (it must exist); the manifest's
    /// `baseline` when `nil`.
    public var baseline: URL?
    /// Limits that replace the manifest's `thresholds`, limit by limit.
    public var thresholds: Thresholds
    /// How long to wait for another build of the same bundle file to finish (seconds).
    public var lockTimeout: TimeInterval
    /// Told of each stage as it happens (the CLI shows it on a terminal); `nil` for none.
    public var progress: BuildProgress?
    /// True when an HTML page will be written beside the report (`kiln build --html`): its path is checked with the
    /// other outputs before anything is written.
    public var htmlReport = false
    /// False to build in full whatever the build cache holds (`kiln build --no-cache`); the build still records
    /// itself for the next one.
    public var useCache = true
    /// What messages call the bundle and the report (the command line: `--out`, `--report`).
    public var names = OutputNames(output: "the bundle file")
    /// The threads the build may use (the CLI maps its `KILN_*` variables to them); the same bytes whatever they are.
    public var threads = ThreadSettings()

    /// The report beside `bundle`: `x/a.report.json` for `x/a.sqlite`; for any other name, `.report.json` is
    /// appended (`x/a.db.report.json`), so that bundles differing only in their extension keep their own reports.
    public static func defaultReport(for bundle: URL) -> URL { KilnFileNames.report(for: bundle) }

    public init(output: URL? = nil, report: URL? = nil, baseline: URL? = nil, thresholds: Thresholds = Thresholds(),
                lockTimeout: TimeInterval = 600) {
        self.output = output
        self.report = report
        self.baseline = baseline
        self.thresholds = thresholds
        self.lockTimeout = lockTimeout
    }
}

/// Runs a pipeline: read every source into staging, fill query tables, run the rules, and write the bundle only
/// when no error remains. A failed build leaves any previous bundle untouched.
///
/// Builds of the same bundle file take turns (`BuildLock`), and each removes what killed builds of it left behind.
/// The report is written before the bundle is put in place, so that a build that fails with an I/O error (a full
/// disk, a folder that cannot be written) has changed neither.
public enum Builder {
    /// Builds `pipeline`. With a baseline, the finished bundle is compared with it before it replaces anything, and
    /// a difference beyond the thresholds (or a schema change without a new `user_version`) is an error.
    /// - Throws: `KilnError.io` when inputs, outputs or the `options.baseline` cannot be read or written, or another
    ///   build of the same bundle holds it longer than `options.lockTimeout`; `KilnError.manifest` when SQLite
    ///   refuses SQL the manifest wrote. Validation errors do not throw: they are in the outcome.
    public static func build(_ pipeline: CompiledPipeline, options: BuildOptions = BuildOptions()) throws -> BuildOutcome {
        let run = BuildRun(pipeline, options: options)
        defer { run.end() }
        if let reused = try run.prepare() { return reused }
        do {
            try run.stage()
            try run.check()
        } catch let error as SQLiteError {
            throw KilnError.io(TemporaryFolder.storageFailure(error, writing: "the staging database in \(run.folder.path)", in: run.folder))
        }
        try run.writeBundle()
        return try run.commit()
    }

    /// The outcome the cache recorded, for a build that changed nothing; the inputs' sizes are those of the stamps
    /// the lookup took (`inputs`), not stated again.
    static func reusedOutcome(_ record: BuildCacheRecord, inputs: BuildCache.Inputs, pipeline: CompiledPipeline, output: URL,
                                      report: URL) -> BuildOutcome {
        var outcome = BuildOutcome(bundle: pipeline.manifest.bundle, output: output, reportURL: report, built: true, tables: record.tables,
                                   inputs: Dictionary(record.inputs.map { ($0.path, $0.sha256) }) { first, _ in first },
                                   diagnostics: record.diagnostics)
        outcome.notStored = Dictionary(record.notStored.map { (DiagnosticTally.Key(code: $0.code, severity: $0.severity), $0.count) }) { $0 + $1 }
        outcome.reusedSources = pipeline.sources.map(\.spec.name)
        outcome.reusedBundle = true
        // What a full build says besides: the bundle's bytes (as the build measured them: the bundle is the one it
        // wrote) and the bundle each target opens (its own, when the record has one for its platform).
        outcome.bytes = record.bundleBytes
        outcome.targets = pipeline.manifest.targets.map { target in
            let own = record.targetBundles.first { $0.platform == target.platform }
            return TargetOutput(target: target, output: own.map { output.deletingLastPathComponent().appendingPathComponent($0.file) } ?? output)
        }
        outcome.describe(pipeline, inputSizes: inputs.sizes(of: outcome.inputs.keys))
        return outcome
    }

    /// The bundles of the manifest's targets, which the bundle's thread wrote from the finished bundle
    /// (`TargetBundles`: a target the bundle does not open on gets its own, `<bundle>.<platform>.sqlite`, with what the
    /// target has instead), and what each target opens. Their findings are reported in target order; what a target
    /// still lacks is a `target.unsupported` error (nothing is committed then).
    static func takeTargetBundles(from tables: BundleTables, beside pending: PendingBundle, log: DiagnosticLog) throws -> ([PendingTargetBundle], [TargetOutput]) {
        let written: TargetBundles
        do {
            written = try tables.targets()
        } catch let error as SQLiteError {
            if error.isOutOfResources { throw KilnError.io("cannot write a target's bundle beside \(pending.destination.path): \(error.message)") }
            log.report(.bundle, "a target's bundle cannot be written: \(error.message)")
            return ([], [])
        }
        for target in written.targets {
            for note in target.notes { log.report(.targetFold, note) }
            for problem in target.problems { log.report(.targetUnsupported, problem.sentence) }
        }
        return (written.bundles, written.targets.map(\.output))
    }

    /// Refuses outputs that would replace something not Kiln's: anything but a regular file, an input, the manifest,
    /// the baseline (for the report), or each other.
    /// - Throws: `KilnError.usage` with one sentence.
    static func checkOutputs(_ pipeline: CompiledPipeline, output: URL, report: URL, baseline: URL?, names: OutputNames, htmlReport: Bool) throws {
        // The manifest and the inputs are in `ProtectedFiles` since the pipeline was loaded: one lookup by identity,
        // not a stat of each input for each output.
        var protected = [OutputPath.Protected(pipeline.manifest.file, "the manifest")]
        func checkFile(_ url: URL, named option: String) throws {
            try OutputPath.checkFile(url, named: option, protected: protected)
            if let role = ProtectedFiles.shared.role(of: url) {
                throw KilnError.usage("\(option) \(url.relativePath) is \(role); it would be overwritten")
            }
        }
        try checkFile(output, named: names.output)
        protected.append(OutputPath.Protected(output, names.bundleRole))
        if let baseline { protected.append(OutputPath.Protected(baseline, "the baseline")) }
        for target in pipeline.manifest.targets {
            let bundle = KilnFileNames.targetBundle(for: output, platform: target.platform)
            try checkFile(bundle, named: "the \(target.platform) bundle")
            protected.append(OutputPath.Protected(bundle, "the \(target.platform) bundle"))
        }
        try checkFile(report, named: names.report)
        if htmlReport {
            protected.append(OutputPath.Protected(report, "the JSON report"))
            try checkFile(KilnFileNames.htmlReport(for: report), named: "the HTML report")
        }
    }

    /// The rows staged so far in the tables `source` fills.
    static func rowCount(of source: CompiledSource, in database: Database) throws -> Int {
        try Set(source.targets.map(\.table.name)).reduce(0) { total, table in
            total + Int(try database.rows("SELECT count(*) FROM \(quoteIdentifier(table))").first?.values.first?.number ?? 0)
        }
    }

    /// Writes the JSON report through a temporary file.
    /// - Throws: `KilnError.io` naming the report.
    static func writeReport(_ outcome: BuildOutcome) throws {
        try AtomicFile.write(try BuildReport(outcome).json(), to: outcome.reportURL)
    }

    /// The bundle to compare with: `options.baseline`, else the manifest's `baseline` when that file exists yet
    /// (an info finding says so when it does not).
    static func baseline(_ options: BuildOptions, _ manifest: Manifest, _ log: DiagnosticLog) -> URL? {
        if let baseline = options.baseline { return baseline }
        guard let baseline = manifest.baselineURL else { return nil }
        if FileManager.default.fileExists(atPath: baseline.path) { return baseline }
        log.report(.diffNoBaseline, "the baseline \(displayPath(baseline)) does not exist yet: the new bundle was not compared")
        return nil
    }

    /// Compares the finished bundle with the baseline; its errors go to the log, so that the bundle is not committed.
    static func compare(_ pending: PendingBundle, with baseline: URL, thresholds: Thresholds, userFilled: Set<String>,
                                log: DiagnosticLog) throws -> BundleDiff? {
        do {
            let diff = try BundleDiff.compare(old: baseline, new: pending.temporary, oldName: displayPath(baseline),
                                              newName: pending.destination.relativePath, thresholds: thresholds, userFilled: userFilled)
            for var finding in diff.findings {
                finding.provenance = nil
                log.report(finding)
            }
            return diff
        } catch let error as KilnError {
            if BundleSideFiles.isLocked(error) { throw error }
            log.report(.diffBaseline, "the new bundle cannot be compared with the baseline: \(error.description)")
            return nil
        } catch {
            log.report(.diffBaseline, "the new bundle cannot be compared with the baseline: \(error)")
            return nil
        }
    }
}
