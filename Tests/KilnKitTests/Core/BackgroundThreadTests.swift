import Foundation
import Synchronization
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Every thread Kiln starts is started in `Core/BackgroundThread.swift` (`BackgroundThread`, `DetachedThread`,
/// `SerialThread`), and every `@unchecked Sendable` says what guards it and is listed in docs/CONCURRENCY.md.
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

    /// Each `@unchecked Sendable` declaration says its invariant on the line above it (`/// Unchecked Sendable: …`),
    /// and docs/CONCURRENCY.md lists every such type.
    func testEachUncheckedSendableSaysWhatGuardsItAndIsListed() throws {
        let root = KilnTestCase.repositoryRoot
        let concurrency = try String(contentsOf: root.appendingPathComponent("docs/CONCURRENCY.md"), encoding: .utf8)
        let list = try XCTUnwrap(concurrency.components(separatedBy: "## Where `@unchecked Sendable` remains").last)
        let declaration = try NSRegularExpression(pattern: #"(?:class|struct|enum)\s+(\w+)[^{\n]*@unchecked Sendable"#)
        var types: [String] = []
        for (relative, text) in try swiftFiles(under: root.appendingPathComponent("Sources")) {
            let lines = text.components(separatedBy: "\n")
            for (number, line) in lines.enumerated() {
                guard let match = declaration.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) else { continue }
                let name = String(line[Range(match.range(at: 1), in: line)!])
                types.append(name)
                XCTAssertTrue(number > 0 && lines[number - 1].hasPrefix("/// Unchecked Sendable: "),
                              "\(relative):\(number + 1): \(name) says what guards it on the line above")
                XCTAssertTrue(list.contains("`\(name)"), "docs/CONCURRENCY.md lists \(name)")
            }
        }
        let count = try NSRegularExpression(pattern: #"`@unchecked Sendable` is\s+declared (\d+) times"#)
        let stated = count.firstMatch(in: list, range: NSRange(list.startIndex..., in: list)).map { String(list[Range($0.range(at: 1), in: list)!]) }
        XCTAssertEqual(stated, "\(types.count)", "docs/CONCURRENCY.md counts the declarations")
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
