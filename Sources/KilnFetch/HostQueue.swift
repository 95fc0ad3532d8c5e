import Foundation
import KilnCore
import KilnManifest

/// The URLs waiting to be fetched, and what each host allows: its robots.txt (fetched once, before any other request
/// to the host: requests waiting on it wait here), the least time between two requests' starts (the manifest's
/// `delay`, or robots.txt's `Crawl-delay` when longer) and the requests in flight at once (`concurrency`).
/// Workers take their next task from it and say when a request ended.
final class HostQueue: Sendable {
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

    /// What changes while workers fetch.
    private struct State {
        var hosts: [String: Host] = [:]
        var remaining: Int
        var running = 0
        var stopped = false
    }

    /// What `next` found under the lock: a request, nothing left, or a URL robots.txt refuses (handed to `refused`
    /// with the lock released).
    private enum Next {
        case task(Task)
        case end
        case refused(FetchJob)
    }

    private let state: ConditionLock<State>
    private let jobs: [FetchJob]
    /// The hosts in the order their first URL was listed.
    private let origins: [String]
    private let settings: FetchSettings

    /// A queue of `jobs`, robots.txt obeyed unless `settings.robots` says otherwise; the origins in `known` have their
    /// robots.txt read already (an earlier round's).
    init(jobs: [FetchJob], settings: FetchSettings, known: [String: RobotsRules] = [:]) {
        self.jobs = jobs
        self.settings = settings
        var state = State(remaining: jobs.count)
        var origins: [String] = []
        for (index, job) in jobs.enumerated() {
            if state.hosts[job.origin] == nil {
                state.hosts[job.origin] = Host(robots: settings.robots == .ignore ? .known(.allowAll) : known[job.origin].map { .known($0) } ?? .unknown)
                origins.append(job.origin)
            }
            state.hosts[job.origin]!.waiting.append(Waiting(job: index, attempt: 1, notBefore: .distantPast))
        }
        self.origins = origins
        self.state = ConditionLock(state)
    }

    /// The next request, waiting until one may start; `nil` once nothing is left (or `stop` was called). A URL
    /// robots.txt disallows is handed to `refused` instead, on the calling thread.
    func next(refused: (FetchJob) -> Void) -> Task? {
        while true {
            switch state.waitFor({ nextStep(&$0) }) {
            case .task(let task): return task
            case .end: return nil
            case .refused(let job): refused(job)
            }
        }
    }

    /// `next` with the lock held: the next request when one may start now, else when the queue must be looked at
    /// again (a change, or the earliest start of a host or a retry).
    private func nextStep(_ state: inout State) -> ConditionLock<State>.Step<Next> {
        guard !state.stopped else { return .ready(.end) }
        // Nothing left: every other waiting worker is woken to see it too.
        if state.remaining == 0 && state.running == 0 {
            self.state.broadcast()
            return .ready(.end)
        }
        let now = Date()
        var wake = Date.distantFuture
        for origin in origins {
            guard var host = state.hosts[origin], !host.isEmpty, host.inFlight < settings.concurrency else { continue }
            guard now >= host.nextStart else { wake = min(wake, host.nextStart); continue }
            let rules: RobotsRules
            switch host.robots {
            case .fetching:
                continue
            case .unknown:
                host.robots = .fetching
                host.inFlight += 1
                host.nextStart = now.addingTimeInterval(settings.delay)
                state.hosts[origin] = host
                state.running += 1
                return .ready(.task(.robots(origin)))
            case .known(let known):
                rules = known
            }
            // The first URL whose retry time has come; a disallowed one is taken out and handed to `refused`.
            var index = host.head
            while index < host.waiting.count {
                let entry = host.waiting[index]
                let job = jobs[entry.job]
                if !rules.allows(job.url) {
                    host.waiting.remove(at: index)
                    state.remaining -= 1
                    state.hosts[origin] = host
                    return .ready(.refused(job))
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
                state.hosts[origin] = host
                state.remaining -= 1
                state.running += 1
                return .ready(.task(.job(job, attempt: entry.attempt)))
            }
            state.hosts[origin] = host
        }
        if state.remaining == 0 && state.running == 0 {
            self.state.broadcast()
            return .ready(.end)
        }
        return wake == .distantFuture ? .wait : .waitUntil(wake)
    }

    /// The robots.txt of `origin` was read as `rules`: the URLs waiting on it may go.
    func learned(_ rules: RobotsRules, for origin: String) {
        state.withLock { $0.hosts[origin]?.robots = .known(rules) }
    }

    /// A request to `origin` ended; `retry` puts its URL back, to start no earlier than `notBefore`.
    func ended(_ origin: String, retry: (job: FetchJob, attempt: Int, notBefore: Date)? = nil) {
        let index = retry.flatMap { jobs.firstIndex(of: $0.job) }
        state.change { state in
            state.hosts[origin]?.inFlight -= 1
            state.running -= 1
            if let retry, let index {
                state.hosts[origin]?.waiting.append(Waiting(job: index, attempt: retry.attempt, notBefore: retry.notBefore))
                state.remaining += 1
            }
        }
    }

    /// Nothing more is started (an interruption): `next` returns `nil` to every worker.
    func stop() {
        state.change { $0.stopped = true }
    }
}
