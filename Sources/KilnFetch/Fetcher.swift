import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnBuild

/// How far a fetch has come, for a progress line.
public struct FetchProgress: Sendable {
    /// URLs finished (whatever their outcome), and URLs in all.
    public var done: Int
    public var total: Int
    /// URLs finished unchanged, and failed or disallowed.
    public var unchanged: Int
    public var failed: Int
    /// Body bytes transferred so far.
    public var transferredBytes: Int64
}

/// How `kiln fetch` runs beyond the manifest: a dry run, and who hears of its progress.
public struct FetchOptions: Sendable {
    /// List the requests that would be made; make none.
    public var dryRun = false
    /// Told after each URL finishes (on a worker thread).
    public var progress: (@Sendable (FetchProgress) -> Void)?
    /// URL prefixes requested from elsewhere (`--mirror FROM=TO`): a URL starting with `from` is requested with `to`
    /// in its place — a staging copy of a site, a local mirror, a test server — while the capture record keeps the
    /// manifest's URL.
    public var mirrors: [(from: String, to: String)] = []
    /// Where to archive every exchange as a WARC 1.1 file (`--warc FILE`; `.gz`: one gzip member per record).
    public var warc: URL?
    /// The archive of a fetch in rounds (`runInRounds`), which every round writes to; a single run opens its own.
    var archive: WARCArchive?
    /// What decides that a connection's address is non-public (a redirect from a public host may not go there): the
    /// standard rules, unless a test declares a loopback port public to see such a redirect refused end to end. Not a
    /// command-line option.
    package var isNonPublic: AddressClassifier = HTTPClient.standardClassifier
    /// The robots.txt rules read so far in this `kiln fetch`, which every round reuses (`runInRounds`); a single run
    /// keeps its own.
    var robots: RobotsMemo?

    public init(dryRun: Bool = false, progress: (@Sendable (FetchProgress) -> Void)? = nil) {
        self.dryRun = dryRun
        self.progress = progress
    }

    /// `url` as it is requested: with the first mirror whose prefix it starts with applied.
    func requested(_ url: String) -> String {
        guard let mirror = mirrors.first(where: { url.hasPrefix($0.from) }) else { return url }
        return mirror.to + url.dropFirst(mirror.from.count)
    }
}

/// Fetches every URL of a plan into the pipeline folder and writes the capture record: robots.txt first for each
/// host, requests spaced and limited per host (`HostQueue`), conditional requests from the last capture, retries with
/// backoff and `Retry-After`, redirects followed by hand (http and https only, never from a public address to a
/// non-public one), and every body checked before it replaces a saved file (`URLFetch`). The only part of Kiln that
/// opens a socket.
public enum Fetcher {
    /// Runs `plan`; the capture record beside the manifest is rewritten with what arrived.
    /// - Throws: `KilnError.io` when the capture record cannot be read or written.
    public static func run(_ plan: FetchPlan, options: FetchOptions = FetchOptions()) throws -> FetchReport {
        let recordURL = CaptureRecord.url(besides: plan.manifestFile)
        let previous = try CaptureRecord.read(recordURL)
        let captures = Dictionary(previous.captures.map { ("\($0.source)\n\($0.url)", $0) }, uniquingKeysWith: { first, _ in first })
        if options.dryRun {
            let origins = Set(plan.jobs.map(\.origin))
            let results = plan.jobs.map { job -> URLResult in
                let capture = captures["\(job.source)\n\(job.url)"]
                let validators = URLFetch.validators(for: capture, in: plan.directory)
                let requested = options.requested(job.url)
                let notes = (requested == job.url ? [] : ["requested as \(requested)"]) + validators
                let reason = notes.isEmpty ? nil : notes.joined(separator: ", ")
                return URLResult(source: job.source, url: job.url, file: job.file, outcome: .planned, reason: reason)
            }
            let robots = plan.settings.robots == .obey ? Dictionary(uniqueKeysWithValues: origins.map { ($0 + "/robots.txt", 0) }) : [:]
            return FetchReport(results: sorted(results), robots: robots, dryRun: true)
        }
        try prepareFolders(for: plan)
        let ownArchive = options.archive == nil ? try options.warc.map { try WARCArchive(destination: $0, settings: plan.settings) } : nil
        let archive = options.archive ?? ownArchive
        let robots = options.robots ?? RobotsMemo()
        let queue = HostQueue(jobs: plan.jobs, settings: plan.settings, known: robots.known)
        let state = FetchState(total: plan.jobs.count, captures: captures, progress: options.progress)
        let origins = Set(plan.jobs.map(\.origin)).count
        let workerCount = max(1, min(plan.jobs.count, origins * plan.settings.concurrency, 16))
        let directory = plan.directory
        let settings = plan.settings
        let workers = (0..<workerCount).map { number in
            BackgroundThread(name: "kiln-fetch-\(number)") {
                let client = try HTTPClient()
                while let task = queue.next(refused: { job in state.finish(URLFetch.disallowed(job, capture: state.capture(of: job), in: directory)) }) {
                    switch task {
                    case .robots(let origin):
                        // Without `refusing`, nothing is thrown.
                        let (rules, status) = try RobotsFetch.read(options.requested(origin + "/robots.txt"), settings: settings, client: client, archive: archive)
                        state.noteRobots(origin + "/robots.txt", status: status)
                        robots.learned(rules, for: origin)
                        queue.learned(rules, for: origin)
                        queue.ended(origin)
                    case .job(let job, let attempt):
                        let fetch = URLFetch(job: job, requested: options.requested(job.url), mirrored: { options.requested($0) }, attempt: attempt, directory: directory,
                                             capture: state.capture(of: job), robots: robots, client: client, archive: archive,
                                             isNonPublic: options.isNonPublic)
                        switch fetch.run() {
                        case .finished(let result, let capture):
                            state.finish(result, capture: capture)
                            queue.ended(job.origin)
                        case .retry(let after, let result):
                            state.carry(result)
                            queue.ended(job.origin, retry: (job, attempt + 1, Date().addingTimeInterval(after)))
                        }
                    }
                }
            }
        }
        var failure: (any Error)?
        for worker in workers {
            do { try worker.wait() } catch { failure = failure ?? error; queue.stop() }
        }
        if let failure {
            ownArchive?.discard()
            throw KilnError.io("kiln fetch could not run: \(failure)")
        }
        // The files renamed into place reach the disk before the record that describes them.
        if state.results.contains(where: { $0.outcome == .fetched }) { try FileSync.syncFileSystem(containing: plan.directory) }
        var record = state.record(keeping: plan)
        record.robotsIgnored = plan.settings.robots == .ignore ? plan.settings.reason : nil
        try AtomicFile.write(try record.json(), to: recordURL)
        var report = FetchReport(results: sorted(state.results), robots: state.robots, dryRun: false)
        if let archive = ownArchive {
            // After the record: an archive that cannot be written fails the command, not the snapshot.
            report.warcRecords = archive.records
            try archive.finish()
            report.warc = archive.destination.path
        }
        return report
    }

    /// Makes every folder a file of `plan` goes to, once, rather than by each request.
    /// Also removes the temporary files a fetch killed earlier left beside the plan's files (`.<name>.<pid>.tmp` of a
    /// process no longer running); a dump's `.<name>.partial` stays, to be resumed.
    /// - Throws: `KilnError.io` naming the folder that cannot be made.
    static func prepareFolders(for plan: FetchPlan) throws {
        defer { BuildFiles.removeStale(of: plan.jobs.map { plan.directory.appendingFile($0.file) }) }
        for folder in Set(plan.jobs.map { plan.directory.appendingFile($0.file).deletingLastPathComponent().path }).sorted() {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw KilnError.io(.foundation("cannot create the folder \(folder)", path: folder, operation: .create, error))
            }
        }
    }

    private static func sorted(_ results: [URLResult]) -> [URLResult] {
        results.sorted { ($0.source, $0.url) < ($1.source, $1.url) }
    }
}

/// The robots.txt rules of each origin as read in one `kiln fetch`: read once, then reused by every round after and
/// by every redirect to that origin.
final class RobotsMemo: Sendable {
    private let rules = Mutex<[String: RobotsRules]>([:])

    /// The rules known, by origin.
    var known: [String: RobotsRules] { rules.withLock { $0 } }

    /// The rules of `origin`, when read already.
    func rules(for origin: String) -> RobotsRules? { rules.withLock { $0[origin] } }

    /// The robots.txt of `origin` was read as `found`.
    func learned(_ found: RobotsRules, for origin: String) { rules.withLock { $0[origin] = found } }
}

/// What the workers of one fetch (or an import's one thread) share: the results so far and the captures, behind one
/// lock.
final class FetchState: Sendable {
    private struct Shared {
        var results: [URLResult] = []
        var captures: [String: CaptureRecord.Capture]
        /// What earlier attempts of a URL cost, carried into its final result.
        var carried: [String: (bytes: Int64, requests: Int)] = [:]
        var robots: [String: Int] = [:]
        var unchanged = 0
        var failed = 0
        var bytes: Int64 = 0
    }

    private let shared: Mutex<Shared>
    private let total: Int
    private let progress: (@Sendable (FetchProgress) -> Void)?

    init(total: Int, captures: [String: CaptureRecord.Capture], progress: (@Sendable (FetchProgress) -> Void)?) {
        shared = Mutex(Shared(captures: captures))
        self.total = total
        self.progress = progress
    }

    func capture(of job: FetchJob) -> CaptureRecord.Capture? {
        shared.withLock { $0.captures["\(job.source)\n\(job.url)"] }
    }

    func noteRobots(_ url: String, status: Int) {
        shared.withLock { $0.robots[url] = status }
    }

    func carry(_ result: URLResult) {
        shared.withLock { shared in
            let key = "\(result.source)\n\(result.url)"
            let earlier = shared.carried[key] ?? (0, 0)
            shared.carried[key] = (earlier.bytes + result.transferredBytes, earlier.requests + result.requests)
            shared.bytes += result.transferredBytes
        }
    }

    func finish(_ result: URLResult, capture: CaptureRecord.Capture? = nil) {
        let snapshot = shared.withLock { shared -> FetchProgress in
            var result = result
            shared.bytes += result.transferredBytes
            let key = "\(result.source)\n\(result.url)"
            if let earlier = shared.carried.removeValue(forKey: key) {
                result.transferredBytes += earlier.bytes
                result.requests += earlier.requests
            }
            if let capture { shared.captures[key] = capture }
            shared.results.append(result)
            if result.outcome == .unchanged { shared.unchanged += 1 }
            if result.outcome == .failed || result.outcome == .disallowed { shared.failed += 1 }
            return FetchProgress(done: shared.results.count, total: total, unchanged: shared.unchanged, failed: shared.failed, transferredBytes: shared.bytes)
        }
        progress?(snapshot)
    }

    var results: [URLResult] { shared.withLock { $0.results } }
    var robots: [String: Int] { shared.withLock { $0.robots } }

    /// The new capture record: this fetch's captures for its sources' URLs, the earlier record's entries for the
    /// fetching sources it did not fetch (`--only`), and nothing for URLs or sources the manifest no longer lists.
    func record(keeping plan: FetchPlan) -> CaptureRecord {
        let wanted = Set(plan.jobs.map { "\($0.source)\n\($0.url)" })
        let others = Set(plan.allFetchingSources).subtracting(plan.sources)
        return shared.withLock { shared in
            var record = CaptureRecord()
            record.captures = shared.captures.filter { key, capture in wanted.contains(key) || others.contains(capture.source) }.map(\.value)
            return record
        }
    }
}
