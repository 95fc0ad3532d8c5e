import Foundation

/// State shared between threads where one thread waits until another changes it (a queue with room, a table
/// staged, a thread's outcome): the one waiting lock of Kiln, beside `Mutex` (no waiting) and `Atomic` (one flag or
/// counter); docs/CONCURRENCY.md, rule 3. The state is reached only inside a closure that holds the lock, and a
/// wait releases the lock between two calls of such a closure, never inside one: what a closure reads of the state
/// it reads with the lock held.
///
/// Unchecked Sendable: the state is read and written only inside `withLock`, `change` and the waits, with `condition` locked.
package final class ConditionLock<State>: @unchecked Sendable {
    /// What a waiting closure found (`waitFor(_:)`): the value waited for, or that the thread must wait for a change
    /// (until `deadline`, if given) before the closure looks again.
    package enum Step<Value> {
        case ready(Value)
        case wait
        case waitUntil(Date)
    }

    @usableFromInline let condition = NSCondition()
    @usableFromInline var state: State

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the lock held; waits for nothing but the lock.
    @inlinable
    package func withLock<Value>(_ body: (inout State) throws -> Value) rethrows -> Value {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Runs `attempt` with the lock held until it returns `.ready`: after `.wait` (`.waitUntil`), the thread waits
    /// for a `broadcast` (or the deadline), then `attempt` looks again. `attempt` may change the state each time.
    @inlinable
    package func waitFor<Value>(_ attempt: (inout State) throws -> Step<Value>) rethrows -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch try attempt(&state) {
            case .ready(let value): return value
            case .wait: condition.wait()
            case .waitUntil(let deadline): _ = condition.wait(until: deadline)
            }
        }
    }

    /// Waits until `ready` holds, then runs `body` with the lock still held.
    @inlinable
    package func wait<Value>(until ready: (State) -> Bool, then body: (inout State) throws -> Value) rethrows -> Value {
        try waitFor { state in ready(state) ? .ready(try body(&state)) : .wait }
    }

    /// Waits until `ready` holds.
    @inlinable
    package func wait(until ready: (State) -> Bool) {
        wait(until: ready) { _ in }
    }

    /// Waits until `ready` holds or `deadline` passes; true when `ready` holds.
    @inlinable
    package func wait(until ready: (State) -> Bool, deadline: Date) -> Bool {
        waitFor { state in
            if ready(state) { return .ready(true) }
            return Date() >= deadline ? .ready(false) : .waitUntil(deadline)
        }
    }

    /// Wakes every thread waiting in `wait`, each to look at the state again; call it after a change they may wait
    /// for, with or without the lock held.
    @inlinable
    package func broadcast() {
        condition.broadcast()
    }

    /// Changes the state with the lock held, then wakes every waiting thread (`broadcast`).
    @inlinable
    package func change<Value>(_ body: (inout State) throws -> Value) rethrows -> Value {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }
}

extension ConditionLock {
    /// Waits until the state is set (not `nil`); returns it. For a value one thread sets once and others wait for.
    @inlinable
    package func waitForValue<Wrapped>() -> Wrapped where State == Wrapped? {
        waitFor { state in state.map { .ready($0) } ?? .wait }
    }
}
