import Foundation
import Synchronization
import KilnC

/// Work that runs on a thread of its own from the moment it is made (a digest, an fsync, the staging writer), and
/// its outcome for whoever waits: the way Kiln starts a background thread and waits for it, beside its two siblings
/// below, `DetachedThread` and `SerialThread` (docs/CONCURRENCY.md). The outcome is kept behind a lock, so `wait()`
/// may be called again, from any thread, and gives the same value or error at once.
package final class BackgroundThread<Value: Sendable>: Sendable {
    /// The outcome, once the work is done.
    private let outcome = ConditionLock<Result<Value, any Error>?>(nil)

    /// Starts `work` on a new thread named `name` (as debuggers and `top -H` show it).
    package init(name: String, _ work: @escaping @Sendable () throws -> Value) {
        DetachedThread.start(name: name) { [self] in
            let result = Result { try work() }
            outcome.change { $0 = result }
        }
    }

    /// Work already done: `wait()` returns `value` at once, and no thread is started.
    package init(finished value: Value) {
        outcome.change { $0 = .success(value) }
    }

    /// Waits until the work is done; returns what it returned.
    /// - Throws: what the work threw.
    package func wait() throws -> Value {
        try outcome.waitForValue().get()
    }
}

/// The sibling of `BackgroundThread` for a thread whose owner waits for it through what the thread hands back (a
/// `BoundedQueue` it finishes, a `ConditionLock` of the owner's) rather than for one value: the decoder of
/// `InputBytes`, `ReadAhead`'s readers, `BundleTables`, `ExtractedItems` and `BuildProgressDisplay`'s ticker
/// (docs/CONCURRENCY.md names what each owner waits on). Every thread Kiln starts is started here.
package enum DetachedThread {
    /// Starts `work` on a new thread named `name` (as debuggers and `top -H` show it). When the system cannot start
    /// it (a memory cap), the process stops through `ResourceExhaustion`: the thread's owner would wait for it forever.
    package static func start(name: String, _ work: @escaping @Sendable () -> Void) {
        let result = SystemThread.start(name: name, work)
        if result != 0 { ResourceExhaustion.stop("cannot start a thread (\(name)): \(SystemError.message(result))") }
    }
}

/// What a process does when the machine refuses what Kiln cannot go on without (a thread): the command line installs
/// `stop`'s handler, which removes the run's temporary files and lock (`TemporaryFiles`), says so in one sentence and
/// exits with the I/O status (74). Without one (a library caller), the process aborts.
package enum ResourceExhaustion {
    private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Makes `stop` call `handle`, which must not return (it exits the process).
    package static func install(_ handle: @escaping @Sendable (String) -> Void) {
        handler.withLock { $0 = handle }
    }

    /// Stops the process: `message` says what the machine refused.
    package static func stop(_ message: String) -> Never {
        handler.withLock { $0 }?(message)
        fatalError(message)
    }
}

/// The sibling of `BackgroundThread` for work given piece by piece that must run one piece at a time, in the order
/// given (`FullTextBuild`'s indexes): each piece runs on a `BackgroundThread` of its own that first waits for the
/// piece before it. `drain()` waits for every piece given so far.
package final class SerialThread: Sendable {
    private let name: String
    /// The piece given last; it ends after every piece before it.
    private let last = Mutex<BackgroundThread<Void>?>(nil)

    /// Pieces will run on threads named `name`.
    package init(name: String) {
        self.name = name
    }

    /// Runs `work` once every piece given before it has run.
    package func async(_ work: @escaping @Sendable () -> Void) {
        let name = name
        last.withLock { last in
            let previous = last
            last = BackgroundThread(name: name) {
                try? previous?.wait()
                work()
            }
        }
    }

    /// Waits until every piece given so far has run.
    package func drain() {
        try? last.withLock { $0 }?.wait()
    }
}
