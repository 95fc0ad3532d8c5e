import Foundation
import KilnC

/// A first-in first-out queue of bounded length between one producing and one consuming thread: the producer
/// waits while it is full, so memory stays flat however fast the reader is.
package final class BoundedQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element?]
        var head = 0
        var count = 0
        var finished = false
        var cancelled = false
    }

    private let state: ConditionLock<State>

    /// - Parameter capacity: how many elements may wait at most.
    package init(capacity: Int) {
        state = ConditionLock(State(items: Array(repeating: nil, count: max(1, capacity))))
    }

    /// Appends `element`, waiting for room. Returns `false` (dropping it) once the consumer has cancelled.
    package func push(_ element: Element) -> Bool {
        state.wait(until: { $0.count < $0.items.count || $0.cancelled }) { state in
            guard !state.cancelled else { return false }
            state.items[(state.head + state.count) % state.items.count] = element
            state.count += 1
            self.state.broadcast()
            return true
        }
    }

    /// The oldest element, waiting for one; `nil` once the producer has finished and the queue is empty, or once
    /// the consumer has cancelled.
    package func pop() -> Element? {
        state.wait(until: { $0.count > 0 || $0.finished || $0.cancelled }) { state in
            guard state.count > 0, !state.cancelled else { return nil }
            let element = state.items[state.head]
            state.items[state.head] = nil
            state.head = (state.head + 1) % state.items.count
            state.count -= 1
            self.state.broadcast()
            return element
        }
    }

    /// The producer will push nothing more.
    package func finish() {
        state.change { $0.finished = true }
    }

    /// The consumer takes nothing more: pending and later pushes are dropped and `push` returns `false`.
    package func cancel() {
        state.change { state in
            state.cancelled = true
            state.items = state.items.map { _ in nil }
            state.count = 0
        }
    }
}
