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
        let manifest = pipeline.manifest
        if let baseline = options.baseline, !FileManager.default.fileExists(atPath: baseline.path) {
            throw KilnError.io("cannot read the baseline \(baseline.path): there is no such file")
        }
        let output = options.output ?? URL(fileURLWithPath: "build").appendingPathComponent("\(manifest.bundle).sqlite")
        let reportURL = options.report ?? BuildOptions.defaultReport(for: output)
        try checkOutputs(pipeline, output: output, report: reportURL, baseline: options.baseline ?? manifest.baselineURL, names: options.names,
                         htmlReport: options.htmlReport)
        let folder = output.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw KilnError.io("cannot create the output folder \(folder.path): \(error.localizedDescription)")
        }
        let files = BuildFiles(destination: output)
        let lock = try BuildLock(files.lock, timeout: options.lockTimeout) { options.progress?(.waitingForLock(output)) }
        TemporaryFiles.shared.register(files.lock)
        defer {
            lock.release()
            TemporaryFiles.shared.unregister(files.lock)
        }
        files.removeStale()
        files.removeStaleStagingDatabases()
        BuildFiles(destination: reportURL).removeStale()
        for target in manifest.targets {
            BuildFiles(destination: KilnFileNames.targetBundle(for: output, platform: target.platform)).removeStale()
        }
        // Nothing that decides the bundle changed since the build the cache recorded: leave it and its report. A build
        // compared with a baseline is not reused whole (the comparison is not recorded, and the baseline may change
        // alone), but takes its sources, full-text indexes, tables and rules' findings from the cache as any other.
        let cache = BuildCache(output: output)
        let cacheApplies = BuildCache.applies(to: pipeline, options: options)
        var cacheReason: String?
        var cachedInputs: BuildCache.Inputs?
        if cacheApplies, options.useCache {
            // A bundle another process holds may be changing under the digest the cache compares: refused (74), as
            // the rename of a full build would refuse it.
            try BundleSideFiles.refuseIfHeld(output)
            switch cache.lookup(pipeline, output: output, report: reportURL) {
            case .reuse(let record, let inputs):
                options.progress?(.reused(output))
                return reusedOutcome(record, inputs: inputs, pipeline: pipeline, output: output, report: reportURL)
            case .rebuild(let reason, let inputs):
                cacheReason = reason
                cachedInputs = inputs
            }
        }
        // The record no longer describes what will be in place once this build replaces anything.
        cache.forget()
        let stamps = cacheApplies ? cachedInputs?.stamps ?? BuildCache.stamps(of: pipeline) : [:]
        let stagingURL = files.staging
        TemporaryFiles.shared.register(stagingURL)
        defer {
            try? FileManager.default.removeItem(at: stagingURL)
            TemporaryFiles.shared.unregister(stagingURL)
        }

        let log = DiagnosticLog(overrides: manifest.severity)
        if let cacheReason { log.report(.buildCache, cacheReason) }
        // Sources whose key is unchanged take the rows of their unchanged files from the cache (`SourceCache`).
        let sourceCache: SourceCache? = SourceCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        // Full-text indexes of tables whose rows come from the same sources and files as a kept one's are copied from
        // the cache instead of built (`FullTextCache`).
        let fullTextCache: FullTextCache? = FullTextCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        // The bundle starts from the file an earlier build kept after its first tables, when they would hold the same
        // rows, and keeps its own for later builds (`BundlePrefixCache`).
        let prefixCache: BundlePrefixCache? = BundlePrefixCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        defer { prefixCache?.wait() }
        // Rules reading tables whose rows come from the same sources and files as before replay the findings they had
        // then instead of being checked again (`RuleFindingsCache`).
        let ruleCache: RuleFindingsCache? = RuleFindingsCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        defer { ruleCache?.wait() }
        var inputs: [String: String] = [:]
        var counts: [TableCount] = []
        // Full-text indexing, the longest step of writing a bundle, starts as soon as a full-text table's sources are
        // staged, and runs while later sources are staged and the rules checked (`FullTextBuild`).
        let shipped = manifest.tables.filter(\.ship)
        let fullTextBuild = FullTextBuild(tables: shipped, destination: output, targets: manifest.targets)
        defer { fullTextBuild.discard() }
        // The last source filling each table: a full-text table filled only by sources is complete after it.
        var lastSource: [String: Int] = [:]
        for (position, source) in pipeline.sources.enumerated() {
            for target in source.targets { lastSource[target.table.name] = position }
        }
        // The key of each full-text index's rows (`FullTextCache.key`), by full-text table name: the index built
        // under it is kept once the build succeeds.
        var fullTextKeys: [String: String] = [:]
        // The shipped tables whose staged rows need no sort (`StagedRowOrder`).
        var inOrder: Set<String> = []
        // The bundle's tables are written on a thread of their own, each as soon as it is staged (and those declared
        // before it are written), the last ones while the rules run: staging is only read. Kept if the rules pass.
        var bundleTables: BundleTables?
        defer { bundleTables?.discard() }
        func bundle(_ staging: StagingArea) -> BundleTables {
            if let bundleTables { return bundleTables }
            let started = BundleWriter(manifest: manifest).startTables(from: staging.file, to: output, fullTextBuild: fullTextBuild)
            bundleTables = started
            return started
        }
        // The tables already handed to the bundle's thread.
        var handedOut: Set<String> = []
        // Notes whether a complete staged table is in order, starts its full-text index if it has one, and lets the
        // bundle's thread write it.
        func tableStaged(_ table: TableSpec, _ staging: StagingArea) throws {
            // The staging writer compared the rows as it inserted them; SQL decides when it could not tell.
            let ordered = try staging.facts(of: table)?.inOrder ?? StagedRowOrder.isInOrder(table, in: staging.database)
            if ordered { inOrder.insert(table.name) }
            if let fullText = table.fullText {
                let key = fullTextCache?.key(fullText, of: table, digests: inputs)
                fullTextKeys[fullText.name] = key
                if options.useCache, let key, let kept = fullTextCache?.reusable(fullText.name, key: key, log: log) {
                    fullTextBuild.adopt(table.name, index: kept)
                } else {
                    fullTextBuild.start(table.name, staging: staging.file, inOrder: ordered)
                    staging.readersStepBack()
                }
            }
            handedOut.insert(table.name)
            for (name, prefix) in prefixCache?.staged(table, inOrder: ordered, digests: inputs, useCache: options.useCache, log: log) ?? [] {
                bundle(staging).prefix(name, prefix)
            }
            // A table only the seeded first source fills is read from its entry, which holds the same rows.
            let copy = lastSource[table.name] == 0 ? sourceCache?.seededEntry : nil
            bundle(staging).staged(table.name, inOrder: ordered, copy: copy)
        }
        // The sources' cache entries, written on a thread of their own once every source is staged; waited for before
        // the staging file goes (this `defer` runs before the one that removes it).
        var reused: [(source: String, files: Int, of: Int)] = []
        var sourceEntryDamaged = false
        var storingSources: BackgroundThread<Void>?
        defer { try? storingSources?.wait() }
        do {
            let digests = { cachedInputs?.digests ?? BuildCache.Inputs(of: pipeline, record: nil)?.digests }
            if options.useCache { sourceCache?.prepare(digests: digests, log: log) }
            // A first source whose files are all unchanged is in staging from the start: staging is a copy of its entry.
            let staging = try StagingArea(url: stagingURL, pipeline: pipeline, seed: sourceCache?.stagingSeed())
            staging.database.refuseOtherFiles()
            for (position, source) in pipeline.sources.enumerated() {
                sourceCache?.prepareToStage(position, in: staging, digests: digests, log: log)
                let started = Date()
                let cached = sourceCache?.plans[position]?.digests
                let records = try options.progress.map { progress in
                    let toRead = source.files.filter { cached?[$0.relativePath] == nil }
                    if let cached { progress(.cached(source: source.spec.name, files: cached.count, of: source.files.count)) }
                    progress(.reading(source: source.spec.name, files: toRead.count, bytes: toRead.reduce(0) { $0 + ($1.sizeOnDisk ?? 0) }))
                    return sourceCache?.seededSource == position ? 0 : try rowCount(of: source, in: staging.database)
                }
                if let sourceCache {
                    inputs.merge(try sourceCache.stage(source, at: position, in: staging, stagingURL: stagingURL, log: log)) { first, _ in first }
                } else {
                    inputs.merge(try staging.load(source, log: log)) { first, _ in first }
                }
                if let progress = options.progress, let before = records {
                    let added = try rowCount(of: source, in: staging.database) - before
                    progress(.read(source: source.spec.name, records: added, seconds: Date().timeIntervalSince(started)))
                }
                if !log.hasErrors {
                    for table in shipped where table.query == nil && lastSource[table.name] == position {
                        try tableStaged(table, staging)
                    }
                }
            }
            // What the staging threads freed stays in their malloc arenas: hand it back before the rules' sorts.
            ProcessHeap.releaseFreeMemory()
            // Query tables and the rules' lookup indexes are written in write phases of their own, each once the
            // full-text copies and the bundle's thread have returned their read leases (`StagingDatabase`).
            try staging.fillQueryTables()
            // What was read stays reusable, whatever becomes of the bundle (the next build, after a fix, reads only
            // what the fix changed): every source is staged, so their entries are written from here on, reading
            // staging under read leases, while the rules are checked and the bundle written. The cache is handed over.
            reused = sourceCache?.reused ?? []
            sourceEntryDamaged = sourceCache?.foundDamaged == true
            storingSources = sourceCache.map { SourceCache.storing($0, staging: staging.file, inputs: inputs) }
            if !log.hasErrors {
                for table in shipped where !handedOut.contains(table.name) {
                    try tableStaged(table, staging)
                }
                bundle(staging).allStaged(inOrder: inOrder, inputs: inputs)
            }
            var engine = RuleEngine(pipeline: pipeline, database: staging.database, log: log)
            engine.inOrder = inOrder
            // A table the bundle's thread sorted on its key without a refusal has no repeated key to search for.
            if let bundleTables { engine.keyKnownUnique = { bundleTables.keyIsUnique($0) == true } }
            // A second thread checks rules under a read lease of its own; the findings come out as a serial run's.
            // `KILN_RULE_THREADS=1` checks them on this thread alone (for comparing), as `KILN_STAGING_THREADS=1` does.
            let oneRuleThread = ProcessInfo.processInfo.environment["KILN_RULE_THREADS"] == "1"
            if !StagingArea.singleThreaded, !oneRuleThread, ProcessInfo.processInfo.activeProcessorCount > 1 { engine.parallel = staging.file }
            engine.facts = Dictionary(uniqueKeysWithValues: manifest.tables.compactMap { table in staging.facts(of: table).map { (table.name, $0) } })
            // Indexes are created as rules need them: a rule the staging writer's facts answer reads staging only,
            // while the bundle's thread writes the last tables.
            engine.lookupIndexes = LookupIndexes(manifest: manifest, database: staging.database) { create in
                try staging.file.write { _ in try create() }
            }
            let rules = engine.rules
            // Findings are kept and replayed only for rows staged without an error: an error may leave a table short.
            let ruleKeys = log.hasErrors ? [:] : ruleCache?.keys(of: rules, digests: inputs) ?? [:]
            if options.useCache { engine.known = ruleCache?.known(ruleKeys, log: log) ?? [:] }
            options.progress?(.checking(rules: rules.count))
            let found = try engine.run()
            ruleCache?.keep(known: engine.known, found: found, keys: ruleKeys)
            counts = try manifest.tables.filter(\.ship).map { table in
                let rows = try staging.database.rows("SELECT count(*) FROM \(quoteIdentifier(table.name))")
                return TableCount(name: table.name, rows: Int(rows.first?.values.first?.number ?? 0))
            }
            try staging.database.close()
        } catch let error as SQLiteError {
            throw KilnError.io(TemporaryFolder.storageFailure(error, writing: "the staging database in \(folder.path)", in: folder))
        }

        // The rules' connection is closed: hand its memory back before the bundle's caches fill.
        ProcessHeap.releaseFreeMemory()
        var pending: PendingBundle?
        defer { pending?.discard() }
        var comparison: BundleDiff?
        var bytes: BundleBytes?
        var listing: BuildCache.InputListing?
        var inputSizes: [String: Int]?
        var earlyDigest: BuildCache.EarlyDigest?
        if log.hasErrors {
            fullTextBuild.discard()
            bundleTables?.discard()
        } else if let bundleTables {
            options.progress?(.writing(output))
            // While the bundle's thread writes the last tables, this one states the inputs for the report and lists
            // them for the build record (now that they were read).
            inputSizes = BuildOutcome.sizes(of: inputs, in: pipeline)
            if cacheApplies { listing = BuildCache.listing(inputs, of: pipeline, stamps: stamps) }
            do {
                let prepared = try BundleWriter(manifest: manifest).finish(bundleTables, fullTextBuild: fullTextBuild)
                pending = prepared
                if cacheApplies { earlyDigest = BuildCache.EarlyDigest(prepared.temporary) }
                let measured = try BundleBytes.measure(prepared.temporary, tables: shipped)
                bytes = measured
                counts = prepared.counts.map { TableCount(name: $0.table, rows: $0.rows, bytes: measured.tables[$0.table]) }
                for finding in measured.exceeding(manifest.limits, bundle: output) { log.report(finding) }
                if let baseline = baseline(options, manifest, log) {
                    comparison = try compare(prepared, with: baseline, thresholds: manifest.thresholds.overridden(by: options.thresholds),
                                         userFilled: Set(manifest.tables.filter(\.userFilled).map(\.name)), log: log)
                }
            } catch KilnError.validation(let message) {
                log.report(.bundle, message)
            }
        }
        var targetBundles: [PendingTargetBundle] = []
        defer { for bundle in targetBundles { bundle.discard() } }
        var targetOutputs: [TargetOutput] = []
        if let pending, let bundleTables, !log.hasErrors {
            (targetBundles, targetOutputs) = try takeTargetBundles(from: bundleTables, beside: pending, log: log)
        }
        var outcome = BuildOutcome(bundle: manifest.bundle, output: output, reportURL: reportURL,
                                   built: pending != nil && !log.hasErrors, tables: counts, inputs: inputs, diagnostics: log.sorted)
        outcome.comparison = comparison
        outcome.bytes = bytes
        outcome.notStored = log.tally.notStored
        outcome.targets = targetOutputs
        outcome.reusedSources = reused.map(\.source)
        outcome.reusedFiles = Dictionary(uniqueKeysWithValues: reused.map { ($0.source, ReusedFiles(files: $0.files, of: $0.of)) })
        outcome.reusedIndexes = fullTextCache?.reused ?? []
        outcome.reusedTables = prefixCache?.reused ?? []
        outcome.reusedRules = ruleCache?.reused ?? 0
        outcome.describe(pipeline, inputSizes: inputSizes)
        guard outcome.built, let pending else {
            try writeReport(outcome)
            return outcome
        }
        // The report goes in place after its bundle: when the bundle cannot be (another process holds it), the
        // report in place still describes the bundle in place.
        let reportData = try BuildReport(outcome).json()
        let report = try AtomicFile.Prepared(reportData, for: outcome.reportURL)
        do {
            try pending.commit()
            for bundle in targetBundles { try bundle.commit() }
        } catch {
            report.discard()
            throw error
        }
        try report.install()
        // The sources' entries are in place before the record that would let a build reuse the whole bundle.
        try? storingSources?.wait()
        for (name, key) in fullTextKeys.sorted(by: { $0.key < $1.key }) {
            if let built = fullTextBuild.builtIndex(name) { fullTextCache?.keep(name, key: key, scratch: built) }
        }
        // A build that found the cache unusable says so in its report: that report is not one to reuse.
        if cacheApplies, cacheReason == nil, !sourceEntryDamaged, fullTextCache?.foundDamaged != true, prefixCache?.foundDamaged != true,
           ruleCache?.foundDamaged != true {
            if let listing { try? cache.store(outcome, of: pipeline, report: reportData, listing: listing, earlyDigest: earlyDigest) }
        }
        return outcome
    }

    /// The outcome the cache recorded, for a build that changed nothing; the inputs' sizes are those of the stamps
    /// the lookup took (`inputs`), not stated again.
    private static func reusedOutcome(_ record: BuildCacheRecord, inputs: BuildCache.Inputs, pipeline: CompiledPipeline, output: URL,
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
    private static func takeTargetBundles(from tables: BundleTables, beside pending: PendingBundle, log: DiagnosticLog) throws -> ([PendingTargetBundle], [TargetOutput]) {
        let written: TargetBundles
        do {
            written = try tables.targets()
        } catch let error as SQLiteError {
            if error.isStorageFailure { throw KilnError.io("cannot write a target's bundle beside \(pending.destination.path): \(error.message)") }
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
    private static func checkOutputs(_ pipeline: CompiledPipeline, output: URL, report: URL, baseline: URL?, names: OutputNames, htmlReport: Bool) throws {
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

    /// The rows of a staged table.
    /// The rows staged so far in the tables `source` fills.
    private static func rowCount(of source: CompiledSource, in database: Database) throws -> Int {
        try Set(source.targets.map(\.table.name)).reduce(0) { total, table in
            total + Int(try database.rows("SELECT count(*) FROM \(quoteIdentifier(table))").first?.values.first?.number ?? 0)
        }
    }

    /// Writes the JSON report through a temporary file.
    /// - Throws: `KilnError.io` naming the report.
    private static func writeReport(_ outcome: BuildOutcome) throws {
        try AtomicFile.write(try BuildReport(outcome).json(), to: outcome.reportURL)
    }

    /// The bundle to compare with: `options.baseline`, else the manifest's `baseline` when that file exists yet
    /// (an info finding says so when it does not).
    private static func baseline(_ options: BuildOptions, _ manifest: Manifest, _ log: DiagnosticLog) -> URL? {
        if let baseline = options.baseline { return baseline }
        guard let baseline = manifest.baselineURL else { return nil }
        if FileManager.default.fileExists(atPath: baseline.path) { return baseline }
        log.report(.diffNoBaseline, "the baseline \(displayPath(baseline)) does not exist yet: the new bundle was not compared")
        return nil
    }

    /// Compares the finished bundle with the baseline; its errors go to the log, so that the bundle is not committed.
    private static func compare(_ pending: PendingBundle, with baseline: URL, thresholds: Thresholds, userFilled: Set<String>,
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
