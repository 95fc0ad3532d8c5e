import Foundation
import KilnCore
import KilnManifest
import KilnReaders

extension Fetcher {
    /// Runs `plan` round by round: the listed URLs first, then each round of sources whose URLs derive from files
    /// the rounds before saved (`FetchPlan.derivedSources`), their URLs made from those files as saved. Each round
    /// is a `run` of its own, which rewrites the capture record with the other sources' entries kept; a source that
    /// derives no URL keeps its earlier files and captures, and its `fetch.derivation` finding fails the fetch.
    /// Between two rounds a pause of `delay` keeps the spacing of requests to a host. With `--warc`, every round's
    /// exchanges go to the one archive, put in place at the end.
    /// - Parameter round: what fills one round's files instead of fetching them (`WARCImport.run` for
    ///   `--from-warc`).
    /// - Throws: as `run`.
    public static func runInRounds(_ plan: FetchPlan, options: FetchOptions = FetchOptions(),
                                   round filling: ((FetchPlan) throws -> FetchReport)? = nil) throws -> FetchReport {
        guard !plan.derivedSources.isEmpty else { return try filling?(plan) ?? run(plan, options: options) }
        var options = options
        let archive = options.dryRun || filling != nil ? nil : try options.warc.map { try WARCArchive(destination: $0, settings: plan.settings) }
        options.archive = archive
        options.robots = RobotsMemo()
        do {
            var report = try rounds(plan, options: options, filling: filling)
            if let archive {
                report.warcRecords = archive.records
                try archive.finish()
                report.warc = archive.destination.path
            }
            return report
        } catch {
            archive?.discard()
            throw error
        }
    }

    private static func rounds(_ plan: FetchPlan, options: FetchOptions, filling: ((FetchPlan) throws -> FetchReport)?) throws -> FetchReport {
        let derivedNames = Set(plan.derivedSources.map(\.source))
        var report = FetchReport(results: [], robots: [:], dryRun: options.dryRun)
        var ran = false
        func runRound(_ jobs: [FetchJob], _ sources: [String]) throws {
            if ran, !options.dryRun, filling == nil, plan.settings.delay > 0 { Thread.sleep(forTimeInterval: plan.settings.delay) }
            let roundPlan = FetchPlan(round: plan, jobs: jobs, sources: sources)
            let round = try filling?(roundPlan) ?? run(roundPlan, options: options)
            report.results = (report.results + round.results).sorted { ($0.source, $0.url) < ($1.source, $1.url) }
            report.robots.merge(round.robots) { first, _ in first }
            if let imported = round.imported { report.imported = report.imported.map { $0.merged(with: imported) } ?? imported }
            ran = true
        }
        // A sitemap and the sitemaps its index lists, level by level, each fetched (and captured) as `SOURCE#sitemapN`
        // in the folder `.sitemaps` beside the source's files; the locations they list are the source's URLs.
        func followSitemap(_ sitemap: SitemapSelection, of spec: SourceSpec) throws -> URLDerivation.Outcome {
            var outcome = URLDerivation.Outcome()
            let folder = spec.path.split(separator: "/").dropLast().joined(separator: "/")
            let place = (folder.isEmpty ? "" : folder + "/") + ".sitemaps/*"
            var pending = [sitemap.url]
            var seen: Set<String> = [sitemap.url]
            var locations = Set<String>()
            var read = 0
            for depth in 1...SitemapSelection.maxDepth where !pending.isEmpty {
                let pseudo = FetchPlan.sitemapSource(spec.name, depth: depth)
                let files = FetchFileName.files(for: pending, inFolderOf: place)
                let jobs = FetchPlan.jobs(of: spec, files, manifest: plan.manifest).map { job -> FetchJob in
                    var job = job
                    job.source = pseudo
                    job.contentTypes = XMLRecordReader.acceptedMediaTypes
                    job.checksum = nil
                    return job
                }
                try runRound(jobs, [pseudo])
                let byFile = try CaptureRecord.read(CaptureRecord.url(besides: plan.manifestFile)).byFile
                if depth == 1, !FileManager.default.fileExists(atPath: plan.directory.appendingPathComponent(files[0].file).path) { outcome.unread = true }
                pending = []
                read += files.count
                for (url, file) in files {
                    let page = byFile[file].map { $0.finalURL ?? $0.url } ?? url
                    let found = try URLDerivation.sitemapEntries(file, in: plan.directory, page: page, sitemap: sitemap, source: spec.name,
                                                                 maxBytes: jobs.first?.settings.maxBytes.bytes ?? plan.settings.maxBytes.bytes)
                    outcome.problems += found.problems
                    for location in found.locations where locations.insert(location).inserted { outcome.urls.append(location) }
                    for child in found.sitemaps where seen.count < SitemapSelection.maxSitemaps && seen.insert(child).inserted {
                        if depth == SitemapSelection.maxDepth {
                            outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "\(child), listed by a sitemap index \(depth) levels below \(sitemap.url), is not followed (at most \(SitemapSelection.maxDepth) levels)",
                                                               provenance: Provenance(file: file, url: page)))
                        } else {
                            pending.append(child)
                        }
                    }
                }
            }
            if outcome.urls.isEmpty {
                outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "source \"\(spec.name)\" derives no URL from the locations \(sitemap.phrase) (read: \(read) sitemap\(read == 1 ? "" : "s")): has the site changed? The earlier files of \"\(spec.name)\" are kept",
                                                   provenance: Provenance(file: place, url: sitemap.url)))
            }
            return outcome
        }
        // Which source saves each file: a derived URL saved where another source's URL is would overwrite its bytes.
        var owners = Dictionary(plan.jobs.map { ($0.file.lowercased(), $0.source) }, uniquingKeysWith: { first, _ in first })
        func claimed(_ files: [(url: String, file: String)], by source: String) throws -> [(url: String, file: String)] {
            let captured = try CaptureRecord.read(CaptureRecord.url(besides: plan.manifestFile)).captures
            for capture in captured where owners[capture.file.lowercased()] == nil { owners[capture.file.lowercased()] = capture.source }
            return files.filter { url, file in
                let owner = owners[file.lowercased()] ?? source
                guard owner == source else {
                    report.problems.append(Diagnostic(code: .fetchDerivation, message: "\(url), derived for source \"\(source)\", would be saved as \(file), where source \"\(owner)\" saves a URL: it is not fetched",
                                                      provenance: Provenance(file: file, url: url)))
                    return false
                }
                owners[file.lowercased()] = source
                return true
            }
        }
        if !plan.jobs.isEmpty { try runRound(plan.jobs, plan.sources.filter { !derivedNames.contains($0) }) }
        for number in Set(plan.derivedSources.map(\.round)).sorted() {
            let record = try CaptureRecord.read(CaptureRecord.url(besides: plan.manifestFile))
            var jobs: [FetchJob] = []
            var sources: [String] = []
            for entry in plan.derivedSources where entry.round == number {
                guard let spec = plan.manifest.sources.first(where: { $0.name == entry.source }) else { continue }
                guard let from = entry.derived.from else {
                    guard case .sitemap(let sitemap) = entry.derived else { continue }
                    // A dry run lists the sitemaps' requests, and the locations of those saved by an earlier fetch.
                    let outcome = try followSitemap(sitemap, of: spec)
                    if options.dryRun {
                        guard !outcome.unread else {
                            report.derivations.append("\(entry.source): URLs derived as \(entry.derived.phrase); not known before the sitemap is fetched")
                            continue
                        }
                        report.derivations.append("\(entry.source): \(outcome.urls.count) URLs derived as \(entry.derived.phrase), from the sitemaps as saved now; kiln fetch fetches them again first")
                    }
                    report.problems += outcome.problems
                    guard !outcome.urls.isEmpty else { continue }
                    jobs += FetchPlan.jobs(of: spec, try claimed(FetchFileName.files(for: outcome.urls, inFolderOf: spec.path), by: spec.name), manifest: plan.manifest)
                    sources.append(entry.source)
                    continue
                }
                let outcome = try URLDerivation.urls(entry.derived, of: entry.source, manifest: plan.manifest, captures: record)
                if options.dryRun {
                    let fetchedFirst = plan.sources.contains(from)
                    if outcome.unread {
                        report.derivations.append("\(entry.source): URLs derived as \(entry.derived.phrase); not known before \"\(from)\" is fetched")
                        continue
                    }
                    report.derivations.append("\(entry.source): \(outcome.urls.count) URLs derived as \(entry.derived.phrase), from its files as saved now"
                                              + (fetchedFirst ? "; kiln fetch derives them again once \"\(from)\" is fetched" : ""))
                }
                report.problems += outcome.problems
                guard !outcome.urls.isEmpty else { continue }
                jobs += FetchPlan.jobs(of: spec, try claimed(FetchFileName.files(for: outcome.urls, inFolderOf: spec.path), by: spec.name), manifest: plan.manifest)
                sources.append(entry.source)
            }
            if !jobs.isEmpty { try runRound(jobs, sources) }
        }
        return report
    }
}
