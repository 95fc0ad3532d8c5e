import Foundation
import KilnC
import KilnKit
import Synchronization

/// `kiln fetch`: acquires the files of every source that declares where they come from, the only command that touches
/// the network.
struct FetchCommand: KilnCommand {
    static let name = "fetch"
    static let abstract = "Fetches the web sources a manifest declares into the pipeline folder, politely and conditionally, with a capture record."
    static let arguments = "DIR|MANIFEST"
    static let details = """
        For every source with a fetch key, requests each URL over http or https (libcurl): robots.txt first on
        each host (obeyed as RFC 9309 says, Crawl-delay included), at most fetch.concurrency requests in flight per
        host and fetch.delay seconds between their starts, conditional requests (If-None-Match, If-Modified-Since)
        from the last capture, retries with backoff and Retry-After on 429 and 503, at most fetch.maxRedirects
        redirects. Each body streams to a temporary file and replaces the saved one only when it is whole, within
        fetch.maxBytes, of a content type that fits the source, and not much smaller than the saved copy
        (fetch.minSizeShare): a failed URL keeps its earlier copy. The capture record kiln.fetch.json beside the
        manifest lists each URL with its file, status, SHA-256, validators, and when its bytes were captured and last
        verified. A source whose URLs derive from another source's files (fetch.template with fetch.from, or
        fetch.links) or from a sitemap (fetch.sitemap, its index followed) is fetched in a round after that source
        or the sitemaps, its URLs made from those files as just saved; a
        derivation that makes no URL, or a value that makes no http(s) URL, is a fetch.derivation error. kiln build
        never opens a socket; it checks the fetched files against this record.

        Exit codes: 0 every URL fetched or unchanged, 1 any URL failed or disallowed by robots.txt (earlier copies
        are kept), 64 usage or manifest error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let only = CommandOption("--only", value: "SOURCE", repeatable: true, help: "Fetch only this source's URLs; the capture record keeps the other sources' entries.")
        static let dryRun = CommandOption("--dry-run", value: nil, help: "List the requests that would be made (with their validators), and make none; derived URLs are listed as the saved files give them, or said to be unknown before their source is fetched.")
        static let format = CommandOption("--format", value: "text|json|junit|github", help: "text (default): the totals, then each failed URL; json: every URL's result; junit: a test case per URL; github: an annotation per failed URL.")
        static let quiet = CommandOption("--quiet", value: nil, help: "No progress line on a terminal.")
        static let mirror = CommandOption("--mirror", value: "FROM=TO", repeatable: true, help: "Request URLs that start with FROM with TO in its place (a staging copy or a local mirror of the site); the capture record keeps the manifest's URLs. With --from-warc: the records of URLs that start with TO fill the URLs that start with FROM.")
        static let warc = CommandOption("--warc", value: "FILE", help: "Also archive every request and response (robots.txt and redirects included; a 304 as a revisit record) in a WARC 1.1 file; FILE.gz: one gzip member per record.")
        static let fromWarc = CommandOption("--from-warc", value: "FILE", repeatable: true, help: "Make no request: fill the sources' files from the WARC files of another crawl (wget's WARC output, a browser-based crawler, Heritrix), each URL from its newest record, through recorded redirects and revisits.")
    }

    static let commandOptions: [CommandOption] = [
        Options.only, Options.dryRun, Options.format, Options.quiet, Options.mirror, Options.warc, Options.fromWarc,
    ]

    let pipelinePath: String
    let only: [String]
    let dryRun: Bool
    let format: ReportFormat
    let quiet: Bool
    let mirrors: [(from: String, to: String)]
    let warc: String?
    let fromWARC: [String]

    init(_ arguments: inout ParsedArguments) throws {
        pipelinePath = try arguments.positional("the pipeline folder or manifest")
        try arguments.requireNoMore()
        only = arguments.values(Options.only) ?? []
        dryRun = arguments.flag(Options.dryRun)
        quiet = arguments.flag(Options.quiet)
        mirrors = try (arguments.values(Options.mirror) ?? []).map { text in
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, FetchURL.problem(parts[0]) == nil, FetchURL.problem(parts[1]) == nil else {
                throw KilnError.usage("\(Options.mirror.name) takes FROM=TO, two http or https URL prefixes (https://example.org/=http://127.0.0.1:8080/), found \"\(text)\"")
            }
            return (parts[0], parts[1])
        }
        warc = arguments.value(Options.warc)
        fromWARC = arguments.values(Options.fromWarc) ?? []
        if warc != nil, !fromWARC.isEmpty { throw KilnError.usage("\(Options.warc.name) and \(Options.fromWarc.name) do not go together: an import makes no request to archive") }
        format = ReportFormat(rawValue: try arguments.format(Options.format))!
    }

    func run() throws -> ExitStatus {
        let pipeline = try ManifestLoader.load(pipelinePath, resolvingInputs: false)
        let plan = try FetchPlan(manifest: pipeline.manifest, only: only)
        let line = quiet || format != .text ? nil : ProgressLine.onTerminal()
        var options = FetchOptions(dryRun: dryRun)
        options.mirrors = mirrors
        options.warc = warc.map { URL(fileURLWithPath: $0) }
        if let line { options.progress = { progress in line.show(progress) } }
        let files = fromWARC.map { URL(fileURLWithPath: $0) }
        var report = try Fetcher.runInRounds(plan, options: options, round: files.isEmpty ? nil : { round in try WARCImport.run(round, files: files, options: options) })
        line?.clear()
        report.filePrefix = pipelinePrefix(pipeline)
        if report.warc != nil { report.warc = warc }
        try printReport(try report.rendered(as: format), format)
        return ExitStatus(passed: report.succeeded)
    }
}

/// The one progress line `kiln fetch` keeps on a terminal's standard error: URLs done of all, unchanged, failed, bytes
/// and the rate, redrawn at most five times a second.
final class ProgressLine: Sendable {
    private let started = Date()
    private let last = Mutex(Date.distantPast)

    /// A line on standard error when it is a terminal; `nil` otherwise.
    static func onTerminal() -> ProgressLine? { Terminal.isTerminal(2) ? ProgressLine() : nil }

    func show(_ progress: FetchProgress) {
        let now = Date()
        let due = last.withLock { last in
            guard now.timeIntervalSince(last) >= 0.2 || progress.done == progress.total else { return false }
            last = now
            return true
        }
        guard due else { return }
        let seconds = max(0.001, now.timeIntervalSince(started))
        let rate = Double(progress.transferredBytes) / seconds / 1_000_000
        let text = String(format: "fetch: %d/%d URLs, %d unchanged, %d failed, %.1f MB, %.1f MB/s",
                          progress.done, progress.total, progress.unchanged, progress.failed, Double(progress.transferredBytes) / 1_000_000, rate)
        StandardError.write("\r\u{1B}[K" + text)
    }

    func clear() { StandardError.write("\r\u{1B}[K") }
}
