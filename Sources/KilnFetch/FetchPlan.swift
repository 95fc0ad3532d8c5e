import Foundation
import KilnCore
import KilnManifest

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

/// What `kiln fetch` will fetch for a manifest: every URL of every fetching source (or of those `--only` names), in
/// the manifest's order.
public struct FetchPlan: Sendable {
    /// The pipeline folder.
    public let directory: URL
    /// The manifest file.
    public let manifestFile: URL
    /// The manifest's settings (the politeness every host gets).
    public let settings: FetchSettings
    /// The URLs, in the manifest's order (source by source).
    public let jobs: [FetchJob]
    /// The sources fetched, in the manifest's order.
    public let sources: [String]
    /// Every fetching source of the manifest, whether fetched this time or not.
    public let allFetchingSources: [String]

    /// The plan for `manifest`, limited to the sources `only` names when it names any.
    /// - Throws: `KilnError.usage` when `only` names a source the manifest does not have or that fetches nothing, or
    ///   when the manifest has no fetching source.
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
        allFetchingSources = fetching.map(\.name)
        jobs = chosen.flatMap { source -> [FetchJob] in
            let fetch = source.fetch!
            return FetchFileName.files(for: fetch, path: source.path).map { url, file in
                FetchJob(source: source.name, url: url, file: file, settings: fetch.settings(manifest.fetch),
                         contentTypes: fetch.contentTypes ?? FetchSettings.mediaTypes(for: source.format), origin: FetchURL.origin(url) ?? url,
                         checksum: fetch.checksum)
            }
        }
    }
}
