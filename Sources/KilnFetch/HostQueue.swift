import Foundation
import KilnCore
import KilnManifest

/// The URLs waiting to be fetched, and what each host allows: its robots.txt (fetched once, before any other request
/// to the host: requests waiting on it wait here), the least time between two requests' starts (the manifest's
/// `delay`, or robots.txt's `Crawl-delay` when longer) and the requests in flight at once (`concurrency`).
/// Workers take their next task from it and say when a request ended.
/// Unchecked Sendable: every stored property is read and written with `condition` locked.
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

    /// A URL waiting: its index in `jobs`, its attempt, and the earliest time it may start (a retry's).
    private struct Waiting {
        var job: Int
        var attempt: Int
        var notBefore: Date
    }

    /// One host's state and its URLs in the order they go (first in, first out; a retry goes last).
    private struct Host {
        var robots: RobotsState
        var inFlight = 0
        var nextStart = Date.distantPast
        var waiting: [Waiting] = []
        /// The first entry of `waiting` not yet taken.
        var head = 0

        var isEmpty: Bool { head == waiting.count }
    }

    private let condition = NSCondition()
    private let jobs: [FetchJob]
    private var hosts: [String: Host] = [:]
    /// The hosts in the order their first URL was listed.
    private let origins: [String]
    private var remaining: Int
    private var running = 0
    private var stopped = false
    private let settings: FetchSettings

    /// A queue of `jobs`, robots.txt obeyed unless `settings.robots` says otherwise; the origins in `known` have their
    /// robots.txt read already (an earlier round's).
    init(jobs: [FetchJob], settings: FetchSettings, known: [String: RobotsRules] = [:]) {
        self.jobs = jobs
        self.settings = settings
        remaining = jobs.count
        var origins: [String] = []
        for (index, job) in jobs.enumerated() {
            if hosts[job.origin] == nil {
                hosts[job.origin] = Host(robots: settings.robots == .ignore ? .known(.allowAll) : known[job.origin].map { .known($0) } ?? .unknown)
                origins.append(job.origin)
            }
            hosts[job.origin]!.waiting.append(Waiting(job: index, attempt: 1, notBefore: .distantPast))
        }
        self.origins = origins
    }

    /// The next request, waiting until one may start; `nil` once nothing is left (or `stop` was called). A URL
    /// robots.txt disallows is handed to `refused` instead, on the calling thread.
    func next(refused: (FetchJob) -> Void) -> Task? {
        condition.lock()
        defer { condition.unlock() }
        while !stopped {
            // Nothing left: every other waiting worker is woken to see it too.
            if remaining == 0 && running == 0 {
                condition.broadcast()
                return nil
            }
            let now = Date()
            var wake = Date.distantFuture
            for origin in origins {
                guard var host = hosts[origin], !host.isEmpty, host.inFlight < settings.concurrency else { continue }
                guard now >= host.nextStart else { wake = min(wake, host.nextStart); continue }
                let rules: RobotsRules
                switch host.robots {
                case .fetching:
                    continue
                case .unknown:
                    host.robots = .fetching
                    host.inFlight += 1
                    host.nextStart = now.addingTimeInterval(settings.delay)
                    hosts[origin] = host
                    running += 1
                    return .robots(origin)
                case .known(let known):
                    rules = known
                }
                // The first URL whose retry time has come; disallowed ones are taken out on the way.
                var index = host.head
                while index < host.waiting.count {
                    let entry = host.waiting[index]
                    let job = jobs[entry.job]
                    if !rules.allows(job.url) {
                        host.waiting.remove(at: index)
                        remaining -= 1
                        hosts[origin] = host
                        condition.unlock()
                        refused(job)
                        condition.lock()
                        host = hosts[origin]!
                        continue
                    }
                    if entry.notBefore > now {
                        wake = min(wake, entry.notBefore)
                        index += 1
                        continue
                    }
                    if index == host.head { host.head += 1 } else { host.waiting.remove(at: index) }
                    if host.head > 1024 && host.head * 2 > host.waiting.count {
                        host.waiting.removeFirst(host.head)
                        host.head = 0
                    }
                    host.inFlight += 1
                    host.nextStart = now.addingTimeInterval(max(settings.delay, rules.crawlDelay ?? 0))
                    hosts[origin] = host
                    remaining -= 1
                    running += 1
                    return .job(job, attempt: entry.attempt)
                }
                hosts[origin] = host
            }
            if remaining == 0 && running == 0 {
                condition.broadcast()
                return nil
            }
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
    /// queue has not read that host's robots.txt (the worker reads it then).
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
        if let retry, let index = jobs.firstIndex(of: retry.job) {
            hosts[origin]?.waiting.append(Waiting(job: index, attempt: retry.attempt, notBefore: retry.notBefore))
            remaining += 1
        }
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
