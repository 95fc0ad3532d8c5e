import Foundation
import Synchronization
import KilnC

/// Work that runs on a thread of its own from the moment it is made (a digest, an fsync, the staging writer), and
/// its outcome for whoever waits: the one way Kiln starts a background thread and waits for it
/// (docs/CONCURRENCY.md). The outcome is kept behind a lock, so `wait()` may be called again, from any thread, and
/// gives the same value or error at once.
package final class BackgroundThread<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a new thread named `name` (as debuggers and `top -H` show it).
    package init(name: String, _ work: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let result = Result { try work() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Work already done: `wait()` returns `value` at once, and no thread is started.
    package init(finished value: Value) {
        outcome.withLock { $0 = .success(value) }
        done.signal()
    }

    /// Waits until the work is done; returns what it returned.
    /// - Throws: what the work threw.
    package func wait() throws -> Value {
        done.wait()
        done.signal()
        return try outcome.withLock { $0! }.get()
    }
}
