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

    /// What the build found of one fetched file, as its report records it for the next build's layout check.
    package struct Yield: Codable, Sendable, Equatable {
        package var url: String
        package var capturedAt: String
        /// The status of the response whose body the file is.
        package var status: Int?
        package var rows: Int
    }

    /// The rows each fetched file gave in `database` (the staging database: every staged row keeps its `_file`), by
    /// file; empty when nothing was fetched.
    package static func yields(_ pipeline: CompiledPipeline, database: Database) throws -> [String: Yield] {
        let byFile = pipeline.captures.byFile
        guard !byFile.isEmpty else { return [:] }
        var rows: [String: Int] = [:]
        let tables = Set(pipeline.sources.filter { $0.spec.fetch != nil }.flatMap { $0.targets.map(\.table.name) })
        for table in tables.sorted() {
            for row in try database.rows("SELECT _file, count(*) FROM \(quoteIdentifier(table)) GROUP BY _file") {
                guard let file = row.values.first?.textValue, byFile[file] != nil else { continue }
                rows[file, default: 0] += Int(row.values.last?.number ?? 0)
            }
        }
        var yields: [String: Yield] = [:]
        for source in pipeline.sources where source.spec.fetch != nil {
            for file in source.files {
                guard let capture = byFile[file.relativePath] else { continue }
                yields[file.relativePath] = Yield(url: capture.url, capturedAt: capture.capturedAt, status: capture.status,
                                                   rows: rows[file.relativePath] ?? 0)
            }
        }
        return yields
    }

    /// The yields the last build's report at `report` recorded (none when there is no such report, or it has none).
    package static func previousYields(in report: URL) -> [String: Yield] {
        struct Recorded: Decodable { var fetched: [String: Yield]? }
        guard let data = FileManager.default.contents(atPath: report.path) else { return [:] }
        return (try? JSONDecoder().decode(Recorded.self, from: data))?.fetched ?? [:]
    }

    /// The `kiln_metadata` entries a bundle records of its fetched files, for a later build that takes it as its
    /// baseline: `fetched.<file>` holding the yield as JSON (keys sorted; the capture time, never the verification
    /// time, so that a refresh that found nothing new builds the same bytes).
    package static func metadata(_ yields: [String: Yield]) -> [String: String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var entries: [String: String] = [:]
        for (file, yield) in yields {
            if let data = try? encoder.encode(yield) { entries["fetched." + file] = String(decoding: data, as: UTF8.self) }
        }
        return entries
    }

    /// The yields the bundle at `baseline` recorded (`metadata`); none when it records none or cannot be read (the
    /// baseline comparison says why it cannot).
    package static func baselineYields(in baseline: URL) -> [String: Yield] {
        guard let database = try? BundleFile.open(baseline), let entries = try? BundleFile.metadata(of: database) else { return [:] }
        var yields: [String: Yield] = [:]
        for (key, value) in entries where key.hasPrefix("fetched.") {
            if let yield = try? JSONDecoder().decode(Yield.self, from: Data(value.utf8)) { yields[String(key.dropFirst(8))] = yield }
        }
        return yields
    }

    /// A site's new layout, caught before it ships: a fetched page that gave rows in the last build (its report) or
    /// in the baseline bundle, and gives none now, is a `fetch.no-rows` finding naming its URL and both capture times.
    package static func checkLayout(_ yields: [String: Yield], previous: [String: Yield], baseline: (name: String, yields: [String: Yield])? = nil,
                                    log: DiagnosticLog) {
        for (file, now) in yields.sorted(by: { $0.key < $1.key }) where now.rows == 0 {
            let before: Yield
            let when: String
            if let last = previous[file], last.rows > 0 {
                (before, when) = (last, "in the last build")
            } else if let baseline, let shipped = baseline.yields[file], shipped.rows > 0 {
                (before, when) = (shipped, "in the baseline \(baseline.name)")
            } else {
                continue
            }
            log.report(.fetchNoRows, "\(now.url) gave \(before.rows) rows \(when) (bytes captured \(before.capturedAt)) and none now (bytes captured \(now.capturedAt)): has the site's layout changed?",
                       at: Provenance(file: file, url: now.url))
        }
    }
}
