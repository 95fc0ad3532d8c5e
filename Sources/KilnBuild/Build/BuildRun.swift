import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// One build of a pipeline (`Builder.build`), its stages as methods called in order: `prepare` (the outputs, the lock
/// and the build cache), `stage` (read and shape every source), `check` (the rules), `writeBundle` and `commit` (the
/// bundle and the report put in place), then `end` whatever happened. Stages overlap where the run says so: each table
/// goes to the bundle's thread as soon as it is staged (`handOver`), its full-text index starts then, and the sources'
/// cache entries are written while the rules are checked; the run holds those threads and waits for them.
final class BuildRun {
    private let pipeline: CompiledPipeline
    private let options: BuildOptions
    private let manifest: Manifest
    private let output: URL
    private let reportURL: URL
    /// The rows each fetched file gave (`FetchedInputs.yields`), for the report.
    private var fetchedYields: [String: FetchedInputs.Yield] = [:]
    /// What the last build's report recorded of them: the yields of the last bundle built.
    private var previousYields: [String: FetchedInputs.Yield] = [:]
    /// The bundle's folder.
    let folder: URL
    private let files: BuildFiles
    private let cache: BuildCache
    private let cacheApplies: Bool
    private let log: DiagnosticLog
    /// The shipped tables.
    private let shipped: [TableSpec]
    /// The last source filling each table: a full-text table filled only by sources is complete after it.
    private let lastSource: [String: Int]

    // Set by `prepare`.
    private var lock: BuildLock?
    private var cacheReason: String?
    private var cachedInputs: BuildCache.Inputs?
    private var stamps: [String: FileStamp] = [:]
    /// True once the staging file is this run's (registered, removed by `end`).
    private var ownsStaging = false
    private var sourceCache: SourceCache?
    private var fullTextCache: FullTextCache?
    private var prefixCache: BundlePrefixCache?
    private var ruleCache: RuleFindingsCache?
    /// Full-text indexing, the longest step of writing a bundle, starts as soon as a full-text table's sources are
    /// staged, and runs while later sources are staged and the rules checked (`FullTextBuild`). Set by `prepare`.
    private var fullTextBuild: FullTextBuild!

    // Set by `stage` and `check`.
    private var staging: StagingArea?
    private var inputs: [String: String] = [:]
    private var counts: [TableCount] = []
    /// The key of each full-text index's rows (`FullTextCache.key`), by full-text table name: the index built
    /// under it is kept once the build succeeds.
    private var fullTextKeys: [String: String] = [:]
    /// The shipped tables whose staged rows need no sort (`StagedRowOrder`).
    private var inOrder: Set<String> = []
    /// The bundle's tables are written on a thread of their own, each as soon as it is staged (and those declared
    /// before it are written), the last ones while the rules run: staging is only read. Kept if the rules pass.
    private var bundleTables: BundleTables?
    /// The tables already handed to the bundle's thread.
    private var handedOut: Set<String> = []
    private var reused: [(source: String, files: Int, of: Int)] = []
    private var sourceEntryDamaged = false
    /// The sources' cache entries, written on a thread of their own once every source is staged; waited for before
    /// the staging file goes (`end`).
    private var storingSources: BackgroundThread<Void>?

    // Set by `writeBundle`.
    private var pending: PendingBundle?
    private var comparison: BundleDiff?
    private var stagedMaps: [StagedMap] = []
    private var bytes: BundleBytes?
    private var listing: BuildCache.InputListing?
    private var inputSizes: [String: Int]?
    private var earlyDigest: BuildCache.EarlyDigest?
    private var targetBundles: [PendingTargetBundle] = []
    private var targetOutputs: [TargetOutput] = []

    init(_ pipeline: CompiledPipeline, options: BuildOptions) {
        self.pipeline = pipeline
        self.options = options
        manifest = pipeline.manifest
        output = options.output ?? URL(fileURLWithPath: "build").appendingPathComponent("\(manifest.bundle).sqlite")
        reportURL = options.report ?? BuildOptions.defaultReport(for: output)
        folder = output.deletingLastPathComponent()
        files = BuildFiles(destination: output)
        cache = BuildCache(output: output)
        cacheApplies = BuildCache.applies(to: pipeline, options: options)
        log = DiagnosticLog(overrides: manifest.severity)
        shipped = manifest.tables.filter(\.ship)
        var lastSource: [String: Int] = [:]
        for (position, source) in pipeline.sources.enumerated() {
            for target in source.targets { lastSource[target.table.name] = position }
        }
        self.lastSource = lastSource
    }

    /// Checks the outputs, takes the bundle's lock, removes what killed builds left, and asks the build cache: the
    /// outcome it recorded when nothing that decides the bundle changed (nothing else is done then), else `nil`
    /// with the caches the stages consult set up.
    func prepare() throws -> BuildOutcome? {
        try claimOutputs()
        if let reused = try lookUpCache() { return reused }
        // The record no longer describes what will be in place once this build replaces anything.
        cache.forget()
        stamps = cacheApplies ? cachedInputs?.stamps ?? BuildCache.stamps(of: pipeline) : [:]
        TemporaryFiles.shared.register(files.staging)
        ownsStaging = true
        setUpCaches()
        return nil
    }

    /// Refuses outputs that would replace something not Kiln's, creates the output folder, takes the lock, and
    /// removes what killed builds of the bundle, its report and its targets' bundles left behind.
    private func claimOutputs() throws {
        if let baseline = options.baseline, !FileManager.default.fileExists(atPath: baseline.path) {
            throw KilnError.io("cannot read the baseline \(baseline.path): there is no such file")
        }
        try Builder.checkOutputs(pipeline, output: output, report: reportURL, baseline: options.baseline ?? manifest.baselineURL, names: options.names,
                                 htmlReport: options.htmlReport)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw KilnError.io(.foundation("cannot create the output folder \(folder.path)", path: folder.path, operation: .create, error))
        }
        let options = options, output = output
        lock = try files.lock(timeout: options.lockTimeout) { options.progress?(.waitingForLock(output)) }
        files.removeStaleStagingDatabases()
        BuildFiles(destination: reportURL).removeStale()
        for target in manifest.targets {
            BuildFiles(destination: KilnFileNames.targetBundle(for: output, platform: target.platform)).removeStale()
        }
    }

    /// The outcome the cache recorded when nothing that decides the bundle changed since: the bundle and its report
    /// are left in place. Otherwise `nil`, keeping why the cache did not apply and the inputs it stated.
    private func lookUpCache() throws -> BuildOutcome? {
        guard cacheApplies, options.useCache else { return nil }
        // A bundle another process holds may be changing under the digest the cache compares: refused (74), as
        // the rename of a full build would refuse it.
        try BundleSideFiles.refuseIfHeld(output)
        switch cache.lookup(pipeline, output: output, report: reportURL) {
        case .reuse(let record, let inputs):
            options.progress?(.reused(output))
            return Builder.reusedOutcome(record, inputs: inputs, pipeline: pipeline, output: output, report: reportURL)
        case .rebuild(let reason, let inputs):
            cacheReason = reason
            cachedInputs = inputs
            return nil
        }
    }

    /// The caches the stages consult, and the full-text indexing that starts as tables are staged. A build compared
    /// with a baseline is not reused whole (`BuildCache.applies`), but takes its sources, full-text indexes, tables and
    /// rules' findings from the cache as any other.
    private func setUpCaches() {
        if let cacheReason { log.report(.buildCache, cacheReason) }
        pipeline.reportUnfilledColumns(to: log)
        // Sources whose key is unchanged take the rows of their unchanged files from the cache (`SourceCache`).
        sourceCache = SourceCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        // Full-text indexes of tables whose rows come from the same sources and files as a kept one's are copied from
        // the cache instead of built (`FullTextCache`).
        fullTextCache = FullTextCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        // The bundle starts from the file an earlier build kept after its first tables, when they would hold the same
        // rows, and keeps its own for later builds (`BundlePrefixCache`).
        prefixCache = BundlePrefixCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        // Rules reading tables whose rows come from the same sources and files as before replay the findings they had
        // then instead of being checked again (`RuleFindingsCache`).
        ruleCache = RuleFindingsCache(cache: cache, pipeline: pipeline, examplesPerCode: log.tally.examplesPerCode)
        fullTextBuild = FullTextBuild(tables: shipped, destination: output, targets: manifest.targets)
    }

    /// Reads and shapes every source into the staging database, handing each table to the bundle's thread once its
    /// sources are staged, then fills the query tables and starts writing the sources' cache entries.
    func stage() throws {
        if options.useCache {
            sourceCache?.prepare(digests: { [cachedInputs, pipeline] in cachedInputs?.digests ?? BuildCache.Inputs(of: pipeline, record: nil)?.digests },
                                 log: log)
        }
        // A first source whose files are all unchanged is in staging from the start: staging is a copy of its entry.
        // Staging asks the cache where each source's rows come from.
        let staging = try StagingArea(url: files.staging, pipeline: pipeline, seed: sourceCache?.stagingSeed(), cache: sourceCache,
                                      threads: options.threads)
        self.staging = staging
        staging.database.refuseOtherFiles()
        for (position, source) in pipeline.sources.enumerated() {
            try stageSource(source, at: position, in: staging)
        }
        // Fetched files are checked against their captures now that every input's digest is known, and a fetched page
        // that gave rows in the last build and none now is said (its report, about to be replaced, says what it gave).
        FetchedInputs.check(pipeline, digests: inputs, log: log)
        fetchedYields = try FetchedInputs.yields(pipeline, database: staging.database)
        previousYields = FetchedInputs.previousYields(in: reportURL)
        let baseline = fetchedYields.isEmpty ? nil : (options.baseline ?? manifest.baselineURL).flatMap { url -> (name: String, yields: [String: FetchedInputs.Yield])? in
            FileManager.default.fileExists(atPath: url.path) ? (displayPath(url), FetchedInputs.baselineYields(in: url)) : nil
        }
        FetchedInputs.checkLayout(fetchedYields, previous: previousYields, baseline: baseline, log: log)
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
                try handOver(table, staging)
            }
            bundle(staging).allStaged(inOrder: inOrder, inputs: inputs, metadata: FetchedInputs.metadata(fetchedYields))
        }
    }

    /// Stages one source (from its files, or from the cache's entry for those unchanged), tells the progress, and
    /// hands over the tables it was the last to fill.
    private func stageSource(_ source: CompiledSource, at position: Int, in staging: StagingArea) throws {
        let started = Date()
        let cached = staging.cachedRows(of: position)?.digests
        let records = try options.progress.map { progress in
            let toRead = source.files.filter { cached?[$0.relativePath] == nil }
            if let cached { progress(.cached(source: source.spec.name, files: cached.count, of: source.files.count)) }
            progress(.reading(source: source.spec.name, files: toRead.count, bytes: toRead.reduce(0) { $0 + ($1.sizeOnDisk ?? 0) }))
            return position == 0 && staging.seededEntry != nil ? 0 : try Builder.rowCount(of: source, in: staging.database)
        }
        let staged = try staging.stage(source, log: log)
        inputs.merge(staged.digests) { first, _ in first }
        sourceCache?.keep(staged, at: position)
        if let progress = options.progress, let before = records {
            let added = try Builder.rowCount(of: source, in: staging.database) - before
            progress(.read(source: source.spec.name, records: added, seconds: Date().timeIntervalSince(started)))
        }
        if !log.hasErrors {
            for table in shipped where table.query == nil && lastSource[table.name] == position {
                try handOver(table, staging)
            }
        }
    }

    /// The bundle's tables, started on their thread with the first table staged.
    private func bundle(_ staging: StagingArea) -> BundleTables {
        if let bundleTables { return bundleTables }
        let started = BundleWriter(manifest: manifest).startTables(from: staging.file, to: output, fullTextBuild: fullTextBuild)
        bundleTables = started
        return started
    }

    /// Notes whether a complete staged table is in order, starts its full-text index if it has one, and lets the
    /// bundle's thread write it.
    private func handOver(_ table: TableSpec, _ staging: StagingArea) throws {
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
        let copy = lastSource[table.name] == 0 ? staging.seededEntry : nil
        bundle(staging).staged(table.name, inOrder: ordered, copy: copy)
    }

    /// Checks the rules over staging (replaying what the rule cache kept), counts the shipped tables' rows, and closes
    /// staging.
    func check() throws {
        guard let staging else { return }
        var engine = RuleEngine(pipeline: pipeline, database: staging.database, log: log)
        engine.inOrder = inOrder
        // A table the bundle's thread sorted on its key without a refusal has no repeated key to search for.
        if let bundleTables { engine.keyKnownUnique = { bundleTables.keyIsUnique($0) == true } }
        // A second thread checks rules under a read lease of its own; the findings come out as a serial run's.
        // `ThreadSettings.rulesOnOneThread` (and `stagingOnOneThread`) checks them on this thread alone, for comparing.
        if options.threads.checksRulesInParallel { engine.parallel = staging.file }
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
        // No bundle will hold the rows: the report draws them from here, with the rows an error names in red.
        if log.hasErrors {
            let failed = Set(log.sorted.filter { $0.severity == .error }.compactMap { finding in
                finding.provenance.flatMap { place in place.line.map { "\(place.file):\($0)" } }
            })
            let maps = try? CoordinateMap.maps(in: staging.database, tables: manifest.tables.filter(\.ship).map(\.name),
                                               rules: BoundsRule.rules(of: manifest), failedRows: failed, limit: StagedMap.pointLimit)
            stagedMaps = (maps ?? []).map(StagedMap.init)
        }
        counts = try manifest.tables.filter(\.ship).map { table in
            let rows = try staging.database.rows("SELECT count(*) FROM \(quoteIdentifier(table.name))")
            return TableCount(name: table.name, rows: Int(rows.first?.values.first?.number ?? 0))
        }
        try staging.database.close()
        self.staging = nil
    }

    /// Finishes the bundle when no error was found (its last tables, the full-text indexes, the metadata), measures
    /// it against the manifest's limits, compares it with the baseline, and takes the targets' bundles; discards the
    /// bundle's work otherwise.
    func writeBundle() throws {
        // The rules' connection is closed: hand its memory back before the bundle's caches fill.
        ProcessHeap.releaseFreeMemory()
        if log.hasErrors {
            fullTextBuild.discard()
            bundleTables?.discard()
        } else if let bundleTables {
            try finish(bundleTables)
        }
        if let pending, let bundleTables, !log.hasErrors {
            (targetBundles, targetOutputs) = try Builder.takeTargetBundles(from: bundleTables, beside: pending, log: log)
        }
    }

    /// Waits for the bundle's last tables (stating and listing the inputs meanwhile), then measures the finished
    /// bundle and compares it with the baseline; a bundle the writer refuses is a finding.
    private func finish(_ bundleTables: BundleTables) throws {
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
            // A table without a primary key is written as a set: identical staged rows become one, which is said.
            let staged = Dictionary(counts.map { ($0.name, $0.rows) }, uniquingKeysWith: { first, _ in first })
            for written in prepared.counts {
                guard let table = manifest.tables.first(where: { $0.name == written.table }), table.primaryKey.isEmpty,
                      let rows = staged[written.table], rows > written.rows else { continue }
                log.report(.tableIdenticalRows, "table \(written.table) has no primary key and was given \(rows) rows, \(rows - written.rows) of them identical to another: the bundle holds \(written.rows), each once")
            }
            counts = prepared.counts.map { TableCount(name: $0.table, rows: $0.rows, bytes: measured.tables[$0.table]) }
            for finding in measured.exceeding(manifest.limits, bundle: output) { log.report(finding) }
            if let baseline = Builder.baseline(options, manifest, log) {
                comparison = try Builder.compare(prepared, with: baseline, thresholds: manifest.thresholds.overridden(by: options.thresholds),
                                                 userFilled: Set(manifest.tables.filter(\.userFilled).map(\.name)), log: log)
            }
        } catch KilnError.validation(let failure) {
            log.report(Diagnostic(code: .bundle, failure))
        }
    }

    /// Writes the report, and when the build succeeded puts the bundle, the targets' bundles and the report in place
    /// and records the build in the cache.
    func commit() throws -> BuildOutcome {
        let outcome = self.outcome()
        guard outcome.built, let pending else {
            try Builder.writeReport(outcome)
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
        record(outcome, report: reportData)
        return outcome
    }

    /// What the build did, for the report and the caller.
    private func outcome() -> BuildOutcome {
        var outcome = BuildOutcome(bundle: manifest.bundle, output: output, reportURL: reportURL,
                                   built: pending != nil && !log.hasErrors, tables: counts, inputs: inputs,
                                   diagnostics: FetchedInputs.traced(log.sorted, pipeline))
        outcome.comparison = comparison
        outcome.stagedMaps = outcome.built ? [] : stagedMaps
        outcome.bytes = bytes
        outcome.notStored = log.tally.notStored
        outcome.targets = targetOutputs
        outcome.reusedSources = reused.map(\.source)
        outcome.reusedFiles = Dictionary(uniqueKeysWithValues: reused.map { ($0.source, ReusedFiles(files: $0.files, of: $0.of)) })
        outcome.reusedIndexes = fullTextCache?.reused ?? []
        outcome.reusedTables = prefixCache?.reused ?? []
        outcome.reusedRules = ruleCache?.reused ?? 0
        outcome.describe(pipeline, inputSizes: inputSizes)
        // A build that writes no bundle passes on the yields of the last bundle built, so that the next build is
        // compared with that bundle, not with the failed attempt.
        outcome.fetchedYields = outcome.built || previousYields.isEmpty ? fetchedYields : previousYields
        return outcome
    }

    /// Keeps the committed build for the next one: the sources' entries, the full-text indexes built, then the
    /// record that lets a build reuse the whole bundle.
    private func record(_ outcome: BuildOutcome, report reportData: Data) {
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
    }

    /// Ends the run, whatever stage it reached: what each stage started is stopped or waited for in the reverse
    /// order, the staging file removed, and the lock released.
    func end() {
        staging = nil
        for bundle in targetBundles { bundle.discard() }
        pending?.discard()
        try? storingSources?.wait()
        bundleTables?.discard()
        fullTextBuild?.discard()
        ruleCache?.wait()
        prefixCache?.wait()
        if ownsStaging {
            try? FileManager.default.removeItem(at: files.staging)
            TemporaryFiles.shared.unregister(files.staging)
        }
        if let lock {
            files.unlock(lock)
        }
    }
}
