import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// A reader thread steps back for a full-text index (`ThreadPriority.stepBack`): its nice value, as the kernel reports
/// it in /proc, goes up, and only for that thread.
final class ThreadPriorityTests: XCTestCase {
    /// The nice value of thread `task` of this process (field 19 of /proc/self/task/<task>/stat), if readable.
    private static func nice(ofTask task: String) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
              let close = stat.range(of: ")", options: .backwards) else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces: fields 3… follow the last one.
        let fields = stat[close.upperBound...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    func testSteppingBackRaisesTheNiceValueOfTheCallingThreadOnly() throws {
        let processTask = String(ProcessInfo.processInfo.processIdentifier)
        let before = try XCTUnwrap(ThreadPriorityTests.nice(ofTask: processTask))
        final class Outcome: @unchecked Sendable {
            var stepped = false
            var task = ""
            var niceAfter: Int?
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            // /proc/thread-self names this thread's own task.
            outcome.task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init) ?? ""
            outcome.stepped = ThreadPriority.stepBack()
            outcome.niceAfter = ThreadPriorityTests.nice(ofTask: outcome.task)
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(outcome.stepped)
        XCTAssertNotEqual(outcome.task, processTask)
        XCTAssertEqual(outcome.niceAfter, Int(ThreadPriority.steppedBack))
        XCTAssertEqual(ThreadPriorityTests.nice(ofTask: processTask), before, "the main thread keeps its priority")
    }
}
