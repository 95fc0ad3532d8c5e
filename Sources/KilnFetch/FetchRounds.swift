import Foundation
import KilnCore
import KilnManifest

extension Fetcher {
    /// Runs `plan` round by round: the listed URLs first, then each round of sources whose URLs derive from files
    /// the rounds before saved (`FetchPlan.derivedSources`), their URLs made from those files as saved. Each round
    /// is a `run` of its own, which rewrites the capture record with the other sources' entries kept; a source that
    /// derives no URL keeps its earlier files and captures, and its `fetch.derivation` finding fails the fetch.
    /// Between two rounds a pause of `delay` keeps the spacing of requests to a host.
    /// - Throws: as `run`.
    public static func runInRounds(_ plan: FetchPlan, options: FetchOptions = FetchOptions()) throws -> FetchReport {
        guard !plan.derivedSources.isEmpty else { return try run(plan, options: options) }
        let derivedNames = Set(plan.derivedSources.map(\.source))
        var report = FetchReport(results: [], robots: [:], dryRun: options.dryRun)
        var ran = false
        func runRound(_ jobs: [FetchJob], _ sources: [String]) throws {
            if ran, !options.dryRun, plan.settings.delay > 0 { Thread.sleep(forTimeInterval: plan.settings.delay) }
            let round = try run(FetchPlan(round: plan, jobs: jobs, sources: sources), options: options)
            report.results = (report.results + round.results).sorted { ($0.source, $0.url) < ($1.source, $1.url) }
            report.robots.merge(round.robots) { first, _ in first }
            ran = true
        }
        if !plan.jobs.isEmpty { try runRound(plan.jobs, plan.sources.filter { !derivedNames.contains($0) }) }
        for number in Set(plan.derivedSources.map(\.round)).sorted() {
            let record = try CaptureRecord.read(CaptureRecord.url(besides: plan.manifestFile))
            var jobs: [FetchJob] = []
            var sources: [String] = []
            for entry in plan.derivedSources where entry.round == number {
                guard let spec = plan.manifest.sources.first(where: { $0.name == entry.source }) else { continue }
                let outcome = try URLDerivation.urls(entry.derived, of: entry.source, manifest: plan.manifest, captures: record)
                if options.dryRun {
                    let fetchedFirst = plan.sources.contains(entry.derived.from)
                    if outcome.unread {
                        report.derivations.append("\(entry.source): URLs derived as \(entry.derived.phrase); not known before \"\(entry.derived.from)\" is fetched")
                        continue
                    }
                    report.derivations.append("\(entry.source): \(outcome.urls.count) URLs derived as \(entry.derived.phrase), from its files as saved now"
                                              + (fetchedFirst ? "; kiln fetch derives them again once \"\(entry.derived.from)\" is fetched" : ""))
                }
                report.problems += outcome.problems
                guard !outcome.urls.isEmpty else { continue }
                jobs += FetchPlan.jobs(of: spec, FetchFileName.files(for: outcome.urls, inFolderOf: spec.path), manifest: plan.manifest)
                sources.append(entry.source)
            }
            if !jobs.isEmpty { try runRound(jobs, sources) }
        }
        return report
    }
}
