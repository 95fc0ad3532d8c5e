import Foundation
import Synchronization
import XCTest
@testable import KilnCore

/// `ConditionLock`: a thread waits until another changes the state, or until a deadline; a closed `TemporaryFiles`
/// keeps a registering thread waiting.
final class ConditionLockTests: KilnTestCase {
    /// A waiting thread sees the change another thread makes, and not before: `waitFor` looks again after each
    /// `change`, and returns what it found ready.
    func testAWaitEndsWithTheChangeItWaitsFor() {
        let lock = ConditionLock(0)
        let seen = ConditionLock<Int?>(nil)
        DetachedThread.start(name: "kiln test waiter") {
            let value = lock.waitFor { number -> ConditionLock<Int>.Step<Int> in number >= 3 ? .ready(number) : .wait }
            seen.change { $0 = value }
        }
        for _ in 0..<2 { lock.change { $0 += 1 } }
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertNil(seen.withLock { $0 }, "2 is not what it waits for")
        lock.change { $0 += 1 }
        XCTAssertEqual(seen.waitForValue(), 3)
    }

    /// A wait with a deadline returns false once it has passed, true when the state is ready; `waitUntil` gives the
    /// closure another look at the deadline.
    func testAWaitWithADeadlineEndsAtTheDeadline() {
        let lock = ConditionLock(false)
        let start = Date()
        XCTAssertFalse(lock.wait(until: { $0 }, deadline: start.addingTimeInterval(0.1)))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.1)
        lock.change { $0 = true }
        XCTAssertTrue(lock.wait(until: { $0 }, deadline: Date().addingTimeInterval(10)))
        let looks = Mutex(0)
        let deadline = Date().addingTimeInterval(0.05)
        let ended: Bool = ConditionLock(0).waitFor { _ in
            looks.withLock { $0 += 1 }
            return Date() >= deadline ? .ready(true) : .waitUntil(deadline)
        }
        XCTAssertTrue(ended)
        XCTAssertGreaterThanOrEqual(looks.withLock { $0 }, 2)
    }

    /// `waitForValue` waits for the one value a thread sets, and gives it to every caller after.
    func testWaitForValueGivesTheValueSetToEveryCaller() {
        let value = ConditionLock<String?>(nil)
        DetachedThread.start(name: "kiln test setter") {
            Thread.sleep(forTimeInterval: 0.02)
            value.change { $0 = "set" }
        }
        XCTAssertEqual(value.waitForValue(), "set")
        XCTAssertEqual(value.waitForValue(), "set")
    }

    /// Once `removeAll` has begun, a thread that registers a file waits instead of going on to create it; the file
    /// registered before is removed.
    func testAClosedRegistryKeepsARegisteringThreadWaiting() throws {
        let files = TemporaryFiles()
        let first = try write("x", to: "first.tmp"), late = temporaryDirectory.appendingPathComponent("late.tmp")
        files.register(first)
        XCTAssertEqual(files.removeAll(), [first.path])
        XCTAssertFalse(FileManager.default.fileExists(atPath: first.path))
        let registered = Atomic<Bool>(false)
        DetachedThread.start(name: "kiln test late registration") {
            files.register(late)  // waits for good: the thread stays blocked until the test process exits
            registered.store(true, ordering: .relaxed)
        }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertFalse(registered.load(ordering: .relaxed))
    }
}
