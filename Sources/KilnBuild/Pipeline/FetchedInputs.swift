import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What a build does with the capture record of its fetching sources (`kiln.fetch.json`): it checks every fetched
/// file against its capture (edited since: a warning; listed but gone: an error; read but never captured: an info, once per source)
/// and gives each finding about a fetched file the URL it came from. The build itself opens no socket.
package enum FetchedInputs {
    /// Checks the fetching sources' files, whose SHA-256 the build computed (`digests`, by path relative to the
    /// pipeline folder), against `pipeline.captures`.
    package static func check(_ pipeline: CompiledPipeline, digests: [String: String], log: DiagnosticLog) {
        let byFile = pipeline.captures.byFile
        for source in pipeline.sources where source.spec.fetch != nil {
            let read = Set(source.files.map(\.relativePath))
            var uncaptured: [String] = []
            for file in source.files {
                guard let capture = byFile[file.relativePath] else {
                    uncaptured.append(file.relativePath)
                    continue
                }
                if let digest = digests[file.relativePath], digest != capture.sha256 {
                    log.report(.fetchEdited, "\(file.relativePath) differs from the bytes captured from \(capture.url) at \(capture.capturedAt) (SHA-256 \(digest.prefix(12)), captured \(capture.sha256.prefix(12))): it was edited after kiln fetch saved it",
                               at: Provenance(file: file.relativePath, url: capture.url))
                }
            }
            // Before the first kiln fetch (no capture at all, as in the samples of raw/) nothing is said.
            if let first = uncaptured.first, !pipeline.captures.captures.isEmpty {
                let files = uncaptured.count == 1 ? "\(first): it was" : "\(uncaptured.count) of its files (the first here): they were"
                log.report(.fetchUncaptured, "source \"\(source.spec.name)\" fetches its files, but kiln.fetch.json lists no capture of \(files) not saved by kiln fetch, so no URL leads to their rows",
                           at: Provenance(file: first))
            }
            for capture in pipeline.captures.captures where capture.source == source.spec.name && !read.contains(capture.file) {
                log.report(.fetchMissing, "\(capture.file), captured from \(capture.url) at \(capture.capturedAt), is not there: fetch again, or restore it",
                           at: Provenance(file: capture.file, url: capture.url))
            }
        }
    }

    /// `diagnostics` with the URL of each finding's file, when kiln fetch captured it.
    package static func traced(_ diagnostics: [Diagnostic], _ pipeline: CompiledPipeline) -> [Diagnostic] {
        guard !pipeline.captures.captures.isEmpty else { return diagnostics }
        let byFile = pipeline.captures.byFile
        return diagnostics.map { diagnostic in
            guard let file = diagnostic.provenance?.file, diagnostic.provenance?.url == nil, let capture = byFile[file] else { return diagnostic }
            var traced = diagnostic
            traced.provenance?.url = capture.url
            return traced
        }
    }
}
