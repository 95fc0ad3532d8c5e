import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Shows a build's progress while it runs, from its stages (`BuildStage`, each a line) and, between them, every
/// `interval` seconds, the counts of `BuildMeter`: per source the files, bytes and records read with the rate and
/// the time left, the rules run, the bundle tables written. On a terminal the counts are one line redrawn in place
/// (`terminal`); for CI dashboards each stage and each tick is one JSON object per line (`json`), with counts that
/// only grow and a last `done` event.
package final class BuildProgressDisplay: Sendable {
    /// How progress is written.
    package enum Style: Sendable {
        /// Lines for people, the counts redrawn in place on the last line.
        case terminal
        /// One JSON object per line.
        case json
    }

    /// What the build is doing, as far as the stages told.
    package enum Phase: Sendable {
        case starting
        case waiting
        case reading(source: String, files: Int, bytes: Int, since: Date, at: BuildMeter.Snapshot)
        case checking(rules: Int, since: Date, at: BuildMeter.Snapshot)
        case writing(since: Date)
        case reused
    }

    private struct State: Sendable {
        package var phase = Phase.starting
        /// True while the terminal's last line is a live line (to be cleared before the next line).
        package var liveShown = false
        package var finished = false
    }

    private let style: Style
    private let interval: TimeInterval
    private let meter: BuildMeter
    private let origin: BuildMeter.Snapshot
    private let started = Date()
    private let write: @Sendable (String) -> Void
    private let state = Mutex(State())
    /// Where the ticker is: asked to stop (`finish`), and ended.
    private let ticker = ConditionLock((stop: false, ended: false))
    private let ticking = Atomic<Bool>(false)

    /// A display writing through `write` (stderr, in the CLI), which gets the text as it is to be written: names
    /// and messages made safe for a terminal, and the control sequences that redraw the live line.
    package init(style: Style, interval: TimeInterval = 0.5, meter: BuildMeter = .shared, write: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.interval = interval
        self.meter = meter
        self.write = write
        origin = meter.snapshot()
    }

    /// The callback to hand the build (`BuildOptions.progress`).
    package var progress: BuildProgress { { [self] stage in handle(stage) } }

    /// Starts redrawing the counts every `interval` seconds, until `finish`.
    package func start() {
        guard !ticking.exchange(true, ordering: .relaxed) else { return }
        DetachedThread.start(name: "kiln progress") { [self] in
            while !ticker.wait(until: { $0.stop }, deadline: Date().addingTimeInterval(interval)) { tick() }
            ticker.change { $0.ended = true }
        }
    }

    /// Stops the ticks; clears the live line on a terminal, writes the `done` event in JSON.
    package func finish(built: Bool, reused: Bool) {
        if ticking.load(ordering: .relaxed) {
            ticker.change { $0.stop = true }
            ticker.wait(until: { $0.ended })
        }
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            switch style {
            case .terminal:
                if state.liveShown { write("\r\u{1B}[K") }
                state.liveShown = false
            case .json:
                var event = Event(event: "done", seconds: seconds())
                event.built = built
                event.reused = reused
                event.counts = counts(now: meter.snapshot())
                write(event.line)
            }
        }
    }

    /// Takes one stage: a line (or event) now, and the phase the ticks describe.
    package func handle(_ stage: BuildStage) {
        let now = Date(), snapshot = meter.snapshot()
        state.withLock { state in
            guard !state.finished else { return }
            switch stage {
            case .waitingForLock: state.phase = .waiting
            case .reading(let source, let files, let bytes): state.phase = .reading(source: source, files: files, bytes: bytes, since: now, at: snapshot)
            case .read, .cached: break
            case .checking(let rules): state.phase = .checking(rules: rules, since: now, at: snapshot)
            case .writing: state.phase = .writing(since: now)
            case .reused: state.phase = .reused
            }
            switch style {
            case .terminal:
                write((state.liveShown ? "\r\u{1B}[K" : "") + TerminalText.sanitize(stage.line + "\n"))
                state.liveShown = false
            case .json:
                write(Event(stage, seconds: now.timeIntervalSince(started)).line)
            }
        }
    }

    /// Redraws the counts (terminal) or writes a `progress` event (JSON).
    package func tick() {
        let now = Date(), snapshot = meter.snapshot()
        state.withLock { state in
            guard !state.finished else { return }
            switch style {
            case .terminal:
                guard let line = BuildProgressDisplay.liveLine(state.phase, snapshot: snapshot, origin: origin, now: now) else { return }
                write("\r\u{1B}[K" + TerminalText.sanitize(line))
                state.liveShown = true
            case .json:
                var event = Event(event: "progress", seconds: now.timeIntervalSince(started))
                event.counts = counts(now: snapshot)
                if case .reading(let source, _, let bytes, let since, let at) = state.phase {
                    event.source = source
                    let rate = BuildProgressDisplay.rate(done: BuildProgressDisplay.sourceBytes(snapshot, since: at, total: bytes), since: since, now: now)
                    event.rate = rate.bytesPerSecond
                    event.eta = rate.eta(total: bytes)
                }
                write(event.line)
            }
        }
    }

    private func seconds() -> Double { Date().timeIntervalSince(started) }

    /// The meter's counts since the display started.
    private func counts(now snapshot: BuildMeter.Snapshot) -> Event.Counts {
        Event.Counts(bytesRead: BuildProgressDisplay.bytesRead(snapshot, since: origin), filesRead: snapshot.filesRead - origin.filesRead,
                     records: snapshot.records - origin.records, rulesRun: snapshot.rulesRun - origin.rulesRun,
                     tablesWritten: snapshot.tablesWritten - origin.tablesWritten)
    }

    /// Bytes read since `origin`: what readers streamed, or the sizes of the files read to their end, whichever is more.
    package static func bytesRead(_ snapshot: BuildMeter.Snapshot, since origin: BuildMeter.Snapshot) -> Int {
        max(snapshot.bytesRead - origin.bytesRead, snapshot.fileBytesRead - origin.fileBytesRead)
    }

    /// The bytes of a source of `total` bytes read since it started (`at`), at most `total`.
    package static func sourceBytes(_ snapshot: BuildMeter.Snapshot, since at: BuildMeter.Snapshot, total: Int) -> Int {
        min(total, bytesRead(snapshot, since: at))
    }

    /// A reading rate: bytes per second since `since`, and the seconds left at that rate.
    package struct Rate {
        package var done: Int
        package var bytesPerSecond: Double

        package func eta(total: Int) -> Double? {
            bytesPerSecond > 0 ? Double(max(0, total - done)) / bytesPerSecond : nil
        }
    }

    package static func rate(done: Int, since: Date, now: Date) -> Rate {
        let elapsed = now.timeIntervalSince(since)
        return Rate(done: done, bytesPerSecond: elapsed > 0 ? Double(done) / elapsed : 0)
    }

    /// The live line of `phase`, e.g. `  stops: file 2 of 3, 4.1 MB of 9.0 MB, 52000 records, 3.2 MB/s, 2 s left`;
    /// `nil` before anything started.
    package static func liveLine(_ phase: Phase, snapshot: BuildMeter.Snapshot, origin: BuildMeter.Snapshot, now: Date) -> String? {
        let tables = snapshot.tablesWritten - origin.tablesWritten
        let writing = snapshot.table.map { ", writing \(TerminalText.escape($0))" } ?? ""
        switch phase {
        case .starting, .reused:
            return nil
        case .waiting:
            return "  waiting for the lock"
        case .reading(let source, let files, let bytes, let since, let at):
            let done = sourceBytes(snapshot, since: at, total: bytes)
            let rate = rate(done: done, since: since, now: now)
            let file = min(files, snapshot.filesRead - at.filesRead + 1)
            var line = "  \(TerminalText.escape(source)): file \(max(1, file)) of \(files), \(BuildStage.size(done)) of \(BuildStage.size(bytes)), "
                + "\(snapshot.records - at.records) records"
            if rate.bytesPerSecond > 0 { line += ", \(BuildStage.size(Int(rate.bytesPerSecond)))/s" }
            if let eta = rate.eta(total: bytes) { line += ", \(Int(eta.rounded(.up))) s left" }
            return line
        case .checking(let rules, let since, let at):
            let run = min(rules, snapshot.rulesRun - at.rulesRun)
            return "  rules: \(run) of \(rules) run, \(Int(now.timeIntervalSince(since))) s; bundle tables written: \(tables)\(writing)"
        case .writing(let since):
            return "  bundle tables written: \(tables)\(writing), \(Int(now.timeIntervalSince(since))) s"
        }
    }

    /// One line of the JSON progress stream.
    package struct Event: Encodable {
        package struct Counts: Encodable {
            package var bytesRead: Int
            package var filesRead: Int
            package var records: Int
            package var rulesRun: Int
            package var tablesWritten: Int
        }

        package var event: String
        package var seconds: Double
        package var source: String?
        package var files: Int?
        /// The files of the source, when `files` counts those taken from the build cache.
        package var of: Int?
        package var bytes: Int?
        package var records: Int?
        package var rules: Int?
        package var output: String?
        package var counts: Counts?
        package var rate: Double?
        package var eta: Double?
        package var built: Bool?
        package var reused: Bool?

        package init(event: String, seconds: Double) {
            self.event = event
            self.seconds = (seconds * 1000).rounded() / 1000
        }

        package init(_ stage: BuildStage, seconds: Double) {
            switch stage {
            case .waitingForLock(let url):
                self.init(event: "waiting", seconds: seconds)
                output = url.relativePath
            case .reading(let source, let files, let bytes):
                self.init(event: "reading", seconds: seconds)
                self.source = source
                self.files = files
                self.bytes = bytes
            case .cached(let source, let files, let total):
                self.init(event: "cached", seconds: seconds)
                self.source = source
                self.files = files
                self.of = total
            case .read(let source, let records, _):
                self.init(event: "read", seconds: seconds)
                self.source = source
                self.records = records
            case .checking(let rules):
                self.init(event: "checking", seconds: seconds)
                self.rules = rules
            case .writing(let url):
                self.init(event: "writing", seconds: seconds)
                output = url.relativePath
            case .reused(let url):
                self.init(event: "reused", seconds: seconds)
                output = url.relativePath
            }
        }

        /// The event as one line of compact JSON with sorted keys.
        package var line: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(self)).map { JSONText.hardened($0) } ?? Data("{\"event\":\"\(event)\"}".utf8)
            return String(decoding: data, as: UTF8.self) + "\n"
        }
    }
}
