import Foundation
import Synchronization
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Every thread Kiln starts is started in `Core/BackgroundThread.swift` (`BackgroundThread`, `DetachedThread`,
/// `SerialThread`), every wait is a `ConditionLock`'s, and every `@unchecked Sendable` and `nonisolated(unsafe)`
/// says what guards it and is listed in docs/CONCURRENCY.md.
final class BackgroundThreadTests: KilnTestCase {
    /// Pieces given to a `SerialThread` run one at a time, in the order given, even when a later one is quicker; `drain`
    /// waits for all of them.
    func testSerialThreadRunsPiecesOneAtATimeInOrderAndDrainWaitsForThem() {
        let serial = SerialThread(name: "kiln test serial")
        serial.drain()  // nothing given yet: returns at once
        let log = Mutex<[String]>([])
        for piece in 0..<5 {
            serial.async {
                log.withLock { $0.append("start \(piece)") }
                Thread.sleep(forTimeInterval: Double(5 - piece) * 0.01)  // the first pieces are the slowest
                log.withLock { $0.append("end \(piece)") }
            }
        }
        serial.drain()
        XCTAssertEqual(log.withLock { $0 }, (0..<5).flatMap { ["start \($0)", "end \($0)"] })
    }

    /// A detached thread runs its work on a thread of its own, while the caller goes on.
    func testDetachedThreadRunsOnAThreadOfItsOwn() {
        XCTAssertTrue(Thread.isMainThread)  // XCTest runs each test on the main thread
        let ranElsewhere = Mutex<Bool?>(nil)
        let go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DetachedThread.start(name: "kiln test detached") {
            go.wait()  // the caller must get here first: start does not wait for the work
            ranElsewhere.withLock { $0 = !Thread.isMainThread }
            done.signal()
        }
        go.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ranElsewhere.withLock { $0 }, true)
    }

    /// No file but `Core/BackgroundThread.swift` starts a thread or a Dispatch queue.
    func testThreadsAreStartedInTheBackgroundThreadFileOnly() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(pattern: #"\bThread\s*(\{|\(block)|\bdetachNewThread\b|\bDispatchQueue\s*\(|\bDispatchQueue\.global\b|\bpthread_create\b|\bSystemThread\.start\b"#)
        var found: [String] = []
        // `pthread_create` itself is wrapped in KilnC (`SystemThread`), which only `DetachedThread` calls.
        for (relative, text) in try swiftFiles(under: sources) where relative != "KilnCore/BackgroundThread.swift" {
            if relative == "KilnC/Glibc.swift" {
                XCTAssertEqual(text.components(separatedBy: "pthread_create(").count, 2, "one pthread_create, in SystemThread")
                continue
            }
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                found.append("\(relative): \(text[Range(match.range, in: text)!])")
            }
        }
        XCTAssertEqual(found, [])
    }

    /// A thread that waits for a change waits in a `ConditionLock` (`Core/ConditionLock.swift`), the one file that
    /// holds a condition variable; other shared state is a `Mutex` or an `Atomic`. No other kind of lock or semaphore
    /// appears in Sources.
    func testConditionLockIsTheOnlyWaitingLock() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(pattern: #"\bNS(Recursive)?(Condition)?Lock\b|\bNSCondition\b|\bDispatch(Semaphore|Group|WorkItem)\b|\bOperationQueue\b|\bpthread_(mutex|cond|rwlock|spin)\w*|\bos_unfair_lock\w*|\bsem_(init|open|wait|post)\b"#)
        var found: [String] = []
        for (relative, text) in try swiftFiles(under: sources) {
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(match.range, in: text)!])
                if relative == "KilnCore/ConditionLock.swift" && name == "NSCondition" { continue }
                found.append("\(relative): \(name)")
            }
        }
        XCTAssertEqual(found, [])
    }

    /// Each `@unchecked Sendable` declaration says its invariant on the line above it (`/// Unchecked Sendable: …`),
    /// each `nonisolated(unsafe)` its own (`/// Nonisolated unsafe: …`), and docs/CONCURRENCY.md lists every such
    /// type and property, with their counts.
    func testEachUncheckedSendableSaysWhatGuardsItAndIsListed() throws {
        let root = KilnTestCase.repositoryRoot
        let concurrency = try String(contentsOf: root.appendingPathComponent("docs/CONCURRENCY.md"), encoding: .utf8)
        let list = try XCTUnwrap(concurrency.components(separatedBy: "## Where `@unchecked Sendable` remains").last)
        let declaration = try NSRegularExpression(pattern: #"(?:class|struct|enum)\s+(\w+)[^{\n]*@unchecked Sendable"#)
        let unsafeProperty = try NSRegularExpression(pattern: #"nonisolated\(unsafe\)[^=\n]*\b(?:let|var)\s+(\w+)"#)
        var types: [String] = [], properties: [String] = []
        for (relative, text) in try swiftFiles(under: root.appendingPathComponent("Sources")) {
            let lines = text.components(separatedBy: "\n")
            for (number, line) in lines.enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                if let match = declaration.firstMatch(in: line, range: range) {
                    let name = String(line[Range(match.range(at: 1), in: line)!])
                    types.append(name)
                    XCTAssertTrue(number > 0 && lines[number - 1].hasPrefix("/// Unchecked Sendable: "),
                                  "\(relative):\(number + 1): \(name) says what guards it on the line above")
                    XCTAssertTrue(list.contains("`\(name)"), "docs/CONCURRENCY.md lists \(name)")
                } else if line.contains("nonisolated(unsafe)") {
                    let name = unsafeProperty.firstMatch(in: line, range: range).map { String(line[Range($0.range(at: 1), in: line)!]) }
                    properties.append(name ?? line)
                    XCTAssertTrue(number > 0 && lines[number - 1].trimmingCharacters(in: .whitespaces).hasPrefix("/// Nonisolated unsafe: "),
                                  "\(relative):\(number + 1): \(name ?? line) says why it is safe on the line above")
                    XCTAssertTrue(list.contains("`\(name ?? line)`"), "docs/CONCURRENCY.md lists \(name ?? line)")
                }
            }
        }
        let count = try NSRegularExpression(pattern: #"`@unchecked Sendable` is\s+declared (\d+) times, and\s+`nonisolated\(unsafe\)` (\d+) times"#)
        let stated = count.firstMatch(in: list, range: NSRange(list.startIndex..., in: list)).map { match in
            (1...2).map { String(list[Range(match.range(at: $0), in: list)!]) }
        }
        XCTAssertEqual(stated, ["\(types.count)", "\(properties.count)"], "docs/CONCURRENCY.md counts the declarations")
        XCTAssertGreaterThan(types.count, 5)
    }

    /// The Swift files under `folder`, by path relative to it, with their text.
    private func swiftFiles(under folder: URL) throws -> [(String, String)] {
        var files: [(String, String)] = []
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            files.append((String(url.path.dropFirst(folder.path.count + 1)), try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }
}
