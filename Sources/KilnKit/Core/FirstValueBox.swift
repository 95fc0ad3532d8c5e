import Foundation

/// The first value one thread sets (an error, a result), read by another.
final class FirstValueBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ value: Value) {
        lock.lock()
        if stored == nil { stored = value }
        lock.unlock()
    }
}
