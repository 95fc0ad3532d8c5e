import Foundation
import KilnCore
import KilnManifest

/// The URLs waiting to be fetched, and what each host allows: its robots.txt (fetched once, before any other request
/// to the host: requests waiting on it wait here), the least time between two requests' starts (the manifest's
/// `delay`, or robots.txt's `Crawl-delay` when longer) and the requests in flight at once (`concurrency`).
/// Workers take their next task from it and say when a request ended.
/// `@unchecked Sendable`: every member is read and written with `condition` locked.
final class HostQueue: @unchecked Sendable {
    /// A request to make.
    enum Task {
        /// Fetch the robots.txt of an origin.
        case robots(String)
        /// Fetch a URL (its attempt, counted from 1).
        case job(FetchJob, attempt: Int)
    }

    private enum RobotsState {
        case unknown, fetching, known(RobotsRules)
    }

    private struct Host {
        var robots: RobotsState
        var inFlight = 0
        var nextStart = Date.distantPast
    }

    private struct Waiting {
        var job: FetchJob
        var attempt: Int
        var notBefore: Date
    }

    private let condition = NSCondition()
    private var hosts: [String: Host] = [:]
    private var waiting: [Waiting]
    private var running = 0
    private var stopped = false
    private let settings: FetchSettings
    /// URLs robots.txt disallows, taken out of the queue without a request.
    private var disallowed: [FetchJob] = []

    /// A queue of `jobs`, robots.txt obeyed unless `settings.robots` says otherwise.
    init(jobs: [FetchJob], settings: FetchSettings) {
        self.settings = settings
        waiting = jobs.map { Waiting(job: $0, attempt: 1, notBefore: .distantPast) }
        for job in jobs where hosts[job.origin] == nil {
            hosts[job.origin] = Host(robots: settings.robots == .ignore ? .known(.allowAll) : .unknown)
        }
    }

    /// The next request, waiting until one may start; `nil` once nothing is left (or `stop` was called). A URL
    /// robots.txt disallows is handed to `refused` instead, on the calling thread.
    func next(refused: (FetchJob) -> Void) -> Task? {
        condition.lock()
        defer { condition.unlock() }
        while !stopped {
            if waiting.isEmpty && running == 0 { return nil }
            let now = Date()
            var wake = Date.distantFuture
            var index = 0
            while index < waiting.count {
                let entry = waiting[index]
                let origin = entry.job.origin
                var host = hosts[origin]!
                defer { index += 1 }
                switch host.robots {
                case .fetching:
                    continue
                case .unknown:
                    guard host.inFlight < settings.concurrency else { continue }
                    guard now >= host.nextStart else { wake = min(wake, host.nextStart); continue }
                    host.robots = .fetching
                    host.inFlight += 1
                    host.nextStart = now.addingTimeInterval(settings.delay)
                    hosts[origin] = host
                    running += 1
                    return .robots(origin)
                case .known(let rules):
                    if !rules.allows(entry.job.url) {
                        waiting.remove(at: index)
                        index -= 1
                        condition.unlock()
                        refused(entry.job)
                        condition.lock()
                        continue
                    }
                    guard now >= entry.notBefore else { wake = min(wake, entry.notBefore); continue }
                    guard host.inFlight < settings.concurrency else { continue }
                    guard now >= host.nextStart else { wake = min(wake, host.nextStart); continue }
                    host.inFlight += 1
                    host.nextStart = now.addingTimeInterval(max(settings.delay, rules.crawlDelay ?? 0))
                    hosts[origin] = host
                    waiting.remove(at: index)
                    running += 1
                    return .job(entry.job, attempt: entry.attempt)
                }
            }
            if waiting.isEmpty && running == 0 { return nil }
            if wake == .distantFuture { condition.wait() } else { _ = condition.wait(until: wake) }
        }
        return nil
    }

    /// The robots.txt of `origin` was read as `rules`: the URLs waiting on it may go.
    func learned(_ rules: RobotsRules, for origin: String) {
        condition.lock()
        hosts[origin]?.robots = .known(rules)
        condition.unlock()
    }

    /// Whether `url`, a redirect's target, may be fetched: its host's robots.txt as known here; `nil` when this
    /// queue has not read that host's robots.txt (the worker reads it then, `learned`).
    func allows(_ url: String) -> Bool? {
        guard settings.robots == .obey else { return true }
        guard let origin = FetchURL.origin(url) else { return false }
        condition.lock()
        defer { condition.unlock() }
        if case .known(let rules)? = hosts[origin]?.robots { return rules.allows(url) }
        return nil
    }

    /// A request to `origin` ended; `retry` puts its URL back, to start no earlier than `notBefore`.
    func ended(_ origin: String, retry: (job: FetchJob, attempt: Int, notBefore: Date)? = nil) {
        condition.lock()
        hosts[origin]?.inFlight -= 1
        running -= 1
        if let retry { waiting.append(Waiting(job: retry.job, attempt: retry.attempt, notBefore: retry.notBefore)) }
        condition.broadcast()
        condition.unlock()
    }

    /// Nothing more is started (an interruption): `next` returns `nil` to every worker.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
