import Foundation

/// One record bound for staging, with the index of the source's target (table and mappings) it goes into.
struct StagedRecord: Sendable {
    let target: Int
    let record: Record
}

/// What the reading thread hands the writing thread, in order: each input file's records inside one transaction.
/// (The files' digests are computed by the reading thread before it reads them: that pass keeps each file's first
/// bytes for the checks of its start, so a file is opened only twice.)
enum StagingMessage: Sendable {
    case begin(InputFile)
    case records([StagedRecord])
    case commit
}

/// A first-in first-out queue of bounded length between one producing and one consuming thread: the producer
/// waits while it is full, so memory stays flat however fast the reader is.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element?]
    private var head = 0
    private var count = 0
    private var finished = false
    private var cancelled = false

    /// - Parameter capacity: how many elements may wait at most.
    init(capacity: Int) {
        items = Array(repeating: nil, count: max(1, capacity))
    }

    /// Appends `element`, waiting for room. Returns `false` (dropping it) once the consumer has cancelled.
    func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count == items.count && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        items[(head + count) % items.count] = element
        count += 1
        condition.broadcast()
        return true
    }

    /// The oldest element, waiting for one; `nil` once the producer has finished and the queue is empty, or once
    /// the consumer has cancelled.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !finished && !cancelled { condition.wait() }
        guard count > 0, !cancelled else { return nil }
        let element = items[head]
        items[head] = nil
        head = (head + 1) % items.count
        count -= 1
        condition.broadcast()
        return element
    }

    /// The producer will push nothing more.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer takes nothing more: pending and later pushes are dropped and `push` returns `false`.
    func cancel() {
        condition.lock()
        cancelled = true
        items = items.map { _ in nil }
        count = 0
        condition.broadcast()
        condition.unlock()
    }
}

/// Shapes and inserts staged records on a thread of its own, through a connection of its own to the staging
/// database, while the calling thread parses the next records: parsing and
/// shaping with SQLite each get a core. Records are shaped and inserted in the order they are sent, so the staging
/// tables hold exactly what a single-threaded load puts there; the shaping findings are kept (as a `DiagnosticLog`
/// would keep them) and replayed into the build's log by `Outcome.replay(into:)`.
/// The calling thread must not use its connection to the staging database, nor the shaper, until `finish()`.
final class StagingWriter: Sendable {
    /// What the writing thread produced besides rows.
    struct Outcome: @unchecked Sendable {
        /// The shaping findings, in the order they were made, capped as the build's log caps them.
        let log: DiagnosticLog

        /// Reports the findings into `log` as if the shaping had reported them there: the stored ones in order,
        /// then those the cap left out, counted.
        func replay(into target: DiagnosticLog) {
            for diagnostic in log.diagnostics { target.report(diagnostic) }
            for (key, count) in log.tally.notStored.sorted(by: { $0.key < $1.key }) {
                let placeholder = Diagnostic(code: key.code, severity: key.severity, message: "", provenance: nil)
                for _ in 0..<count { target.report(placeholder) }
            }
        }
    }

    private let queue = BoundedQueue<StagingMessage>(capacity: 16)
    private let failure = FailureBox()
    private let result = OutcomeBox()
    private let done = DispatchSemaphore(value: 0)

    /// Starts the writing thread on the database at `path`, with one insert statement per target (`insertSQL`, in
    /// the order of `shaper.targets`). `shaper` is handed over: only the writing thread uses it from now on.
    /// - Parameter examplesPerCode: the build log's cap on stored findings per code.
    init(path: String, insertSQL: [String], shaper: RowShaper, examplesPerCode: Int) {
        let queue = queue, failure = failure, result = result, done = done
        let handedOver = HandedOver(shaper)
        let thread = Thread {
            defer { done.signal() }
            do {
                result.set(try StagingWriter.drain(queue, path: path, insertSQL: insertSQL, shaper: handedOver.value,
                                                   examplesPerCode: examplesPerCode))
            } catch {
                failure.set(error)
                queue.cancel()
            }
        }
        thread.name = "kiln staging writer"
        thread.start()
    }

    /// Hands `message` to the writing thread, waiting while the queue is full.
    /// - Throws: the writer's error when it has stopped (SQLite refused a row or the file).
    func send(_ message: StagingMessage) throws {
        guard queue.push(message) else { throw failure.error ?? CancellationError() }
    }

    /// Waits for the writing thread to finish everything sent and close its connection. A transaction left open
    /// (the reader threw before `.commit`) is rolled back. Calling it again returns (or throws) the same at once.
    /// - Throws: the writer's error, if it stopped on one.
    @discardableResult
    func finish() throws -> Outcome {
        queue.finish()
        done.wait()
        done.signal()  // a later call (after an error) returns at once
        if let error = failure.error { throw error }
        guard let outcome = result.value else { throw CancellationError() }
        return outcome
    }

    private static func drain(_ queue: BoundedQueue<StagingMessage>, path: String, insertSQL: [String], shaper: RowShaper,
                              examplesPerCode: Int) throws -> Outcome {
        let log = DiagnosticLog()
        log.tally = DiagnosticTally(examplesPerCode: examplesPerCode)
        let database = try Database(path: path, mode: .readWrite)
        var input: InputFile?
        do {
            // Rows are appended: a small page cache does, and keeps the second thread's memory small.
            try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
            let inserts = try insertSQL.map { try database.prepare($0) }
            while let message = queue.pop() {
                switch message {
                case .begin(let file):
                    try database.execute("BEGIN")
                    input = file
                case .records(let records):
                    guard let input else { continue }
                    for item in records {
                        try inserts[item.target].run(shaper.row(item.record, target: item.target, input: input, log: log))
                    }
                case .commit:
                    try database.execute("COMMIT")
                    input = nil
                }
            }
        } catch {
            if input != nil { try? database.execute("ROLLBACK") }
            try? database.close()
            throw error
        }
        if input != nil { try database.execute("ROLLBACK") }
        try database.close()
        return Outcome(log: log)
    }
}

/// A value handed from one thread to another that uses it alone from then on.
private struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The writing thread's outcome, read by the calling thread after it finished.
private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: StagingWriter.Outcome?

    var value: StagingWriter.Outcome? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ outcome: StagingWriter.Outcome) {
        lock.lock()
        stored = outcome
        lock.unlock()
    }
}

/// The first error of the writing thread, read by the calling thread.
private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Error?

    var error: Error? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ error: Error) {
        lock.lock()
        if stored == nil { stored = error }
        lock.unlock()
    }
}
