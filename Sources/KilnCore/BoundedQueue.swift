import Foundation
import KilnC

/// A first-in first-out queue of bounded length between one producing and one consuming thread: the producer
/// waits while it is full, so memory stays flat however fast the reader is.
///
/// Unchecked Sendable: every stored property is read and written under `condition` only.
package final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element?]
    private var head = 0
    private var count = 0
    private var finished = false
    private var cancelled = false

    /// - Parameter capacity: how many elements may wait at most.
    package init(capacity: Int) {
        items = Array(repeating: nil, count: max(1, capacity))
    }

    /// Appends `element`, waiting for room. Returns `false` (dropping it) once the consumer has cancelled.
    package func push(_ element: Element) -> Bool {
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
    package func pop() -> Element? {
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
    package func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer takes nothing more: pending and later pushes are dropped and `push` returns `false`.
    package func cancel() {
        condition.lock()
        cancelled = true
        items = items.map { _ in nil }
        count = 0
        condition.broadcast()
        condition.unlock()
    }
}
