import Foundation
import KilnCore
import KilnManifest
import KilnReaders

/// One URL to fetch: the source that wants it, where its bytes go, and the settings its requests follow.
public struct FetchJob: Sendable, Equatable {
    /// The source's name.
    public var source: String
    /// The URL as the manifest lists it.
    public var url: String
    /// Where its bytes are saved, relative to the pipeline folder.
    public var file: String
    /// The manifest's settings with the source's overrides.
    public var settings: FetchSettings
    /// The media types a response may have.
    public var contentTypes: [String]
    /// The scheme, host and port the request goes to (`FetchURL.origin`).
    public var origin: String
    /// The checksum file published beside the download, when the source names one.
    public var checksum: PublishedChecksum? = nil
}

/// A source whose URLs derive from another source's files: fetched in a later round than that source.
public struct DerivedFetch: Sendable {
    /// The source's name.
    public var source: String
    /// How its URLs are made.
    public var derived: DerivedURLs
    /// The round it is fetched in: one after the source it derives from when that is fetched too, else 1 (a
    /// sitemap's own fetches come first in that round).
    public var round: Int
}

/// What `kiln fetch` will fetch for a manifest: every URL of every fetching source (or of those `--only` names), in
/// the manifest's order. Listed URLs are fetched in the first round; a source whose URLs derive from another source's
/// files is fetched in a round after that source (`derivedSources`), once its URLs can be made.
public struct FetchPlan: Sendable {
    /// The pipeline folder.
    public let directory: URL
    /// The manifest file.
    public let manifestFile: URL
    /// The manifest's settings (the politeness every host gets).
    public let settings: FetchSettings
    /// The listed URLs, in the manifest's order (source by source).
    public let jobs: [FetchJob]
    /// The sources fetched, in the manifest's order.
    public let sources: [String]
    /// Every fetching source of the manifest, whether fetched this time or not.
    public let allFetchingSources: [String]
    /// The sources fetched whose URLs derive from other sources' files, by round.
    public let derivedSources: [DerivedFetch]
    /// The manifest, which the derived URLs are made with.
    let manifest: Manifest

    /// The plan for `manifest`, limited to the sources `only` names when it names any.
    /// - Throws: `KilnError.usage` when `only` names a source the manifest does not have or that fetches nothing, or
    ///   when the manifest has no fetching source; `KilnError.manifest` for a derivation that cannot work (a template
    ///   placeholder that is not a field of the source it reads, a selector that does not compile).
    public init(manifest: Manifest, only: [String] = []) throws {
        let fetching = manifest.sources.filter { $0.fetch != nil }
        guard !fetching.isEmpty else {
            throw KilnError.usage("no source of \(manifest.file.path) fetches anything: give a source a fetch key ({ url: \"https://…\" } or { urls: [...] })")
        }
        for name in only where !fetching.contains(where: { $0.name == name }) {
            let known = manifest.sources.contains { $0.name == name }
            throw KilnError.usage(known ? "source \"\(name)\" fetches nothing (it has no fetch key)"
                                       : "no source named \"\(name)\"; fetching sources: \(fetching.map(\.name).joined(separator: ", "))")
        }
        let chosen = only.isEmpty ? fetching : fetching.filter { only.contains($0.name) }
        directory = manifest.directory
        manifestFile = manifest.file
        settings = manifest.fetch
        sources = chosen.map(\.name)
        // A sitemap's own captures are kept under a name of their own per level (`SOURCE#sitemap1`…), apart from the
        // source's pages, which the build checks against the files it reads.
        allFetchingSources = fetching.flatMap { source -> [String] in
            guard case .sitemap = source.fetch?.derived else { return [source.name] }
            return [source.name] + (1...SitemapSelection.maxDepth).map { FetchPlan.sitemapSource(source.name, depth: $0) }
        }
        self.manifest = manifest
        jobs = chosen.filter { $0.fetch?.derived == nil }.flatMap { source in
            FetchPlan.jobs(of: source, FetchFileName.files(for: source.fetch!, path: source.path), manifest: manifest)
        }
        // A source's round: 0 for listed URLs, one more than the round of the source it derives from (the manifest
        // checker refused rings).
        var rounds: [String: Int] = [:]
        func round(_ name: String) -> Int {
            if let known = rounds[name] { return known }
            guard let source = chosen.first(where: { $0.name == name }) else { return 0 }
            guard let derived = source.fetch?.derived else { return 0 }
            let value = derived.from.map { round($0) + 1 } ?? 1
            rounds[name] = value
            return value
        }
        var derivedSources: [DerivedFetch] = []
        for source in chosen {
            guard let derived = source.fetch?.derived else { continue }
            try URLDerivation.check(derived, of: source.name, manifest: manifest)
            derivedSources.append(DerivedFetch(source: source.name, derived: derived, round: round(source.name)))
        }
        self.derivedSources = derivedSources.sorted { $0.round < $1.round }
    }

    /// A plan for one round: `jobs` of `sources`, with the rest of `plan` as it is.
    init(round plan: FetchPlan, jobs: [FetchJob], sources: [String]) {
        directory = plan.directory
        manifestFile = plan.manifestFile
        settings = plan.settings
        self.jobs = jobs
        self.sources = sources
        allFetchingSources = plan.allFetchingSources
        derivedSources = []
        manifest = plan.manifest
    }

    /// The name a source's sitemaps of one level are fetched and captured under.
    static func sitemapSource(_ source: String, depth: Int) -> String { "\(source)#sitemap\(depth)" }

    /// The jobs fetching `files` (URLs with the files they are saved as) for `source`.
    static func jobs(of source: SourceSpec, _ files: [(url: String, file: String)], manifest: Manifest) -> [FetchJob] {
        let fetch = source.fetch!
        return files.map { url, file in
            FetchJob(source: source.name, url: url, file: file, settings: fetch.settings(manifest.fetch),
                     contentTypes: fetch.contentTypes ?? ReaderRegistry.acceptedMediaTypes(for: source.format), origin: FetchURL.origin(url) ?? url,
                     checksum: fetch.checksum)
        }
    }
}
