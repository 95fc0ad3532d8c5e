import Foundation
import Synchronization
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `BuildProgressDisplay` and `BuildMeter`: the live line's counts, rate and time left, the terminal's redraw, and
/// the JSON events.
final class BuildProgressDisplayTests: KilnTestCase {
    /// Collects what a display writes.
    final class Sink: Sendable {
        private let texts = Mutex<[String]>([])
        func write(_ text: String) { texts.withLock { $0.append(text) } }
        var all: [String] { texts.withLock { $0 } }
    }

    func testTheReadingLineShowsFilesBytesRecordsRateAndTimeLeft() {
        let started = Date(timeIntervalSince1970: 1000)
        let at = BuildMeter.Snapshot(bytesRead: 500, filesRead: 2, fileBytesRead: 0, records: 10)
        let now = BuildMeter.Snapshot(bytesRead: 500 + 4_000_000, filesRead: 3, fileBytesRead: 0, records: 10 + 52_000)
        let phase = BuildProgressDisplay.Phase.reading(source: "stops", files: 3, bytes: 10_000_000, since: started, at: at)
        // 4 MB of 10 MB in 2 s: 2 MB/s, 6 MB left, 3 s; the second of three files is being read.
        XCTAssertEqual(BuildProgressDisplay.liveLine(phase, snapshot: now, origin: at, now: started.addingTimeInterval(2)),
                       "  stops: file 2 of 3, 4.0 MB of 10.0 MB, 52000 records, 2.0 MB/s, 3 s left")
        // Files whose reader does not stream count by their size once read; never more than the source's bytes.
        let whole = BuildMeter.Snapshot(bytesRead: 500, filesRead: 5, fileBytesRead: 12_000_000, records: 10)
        XCTAssertEqual(BuildProgressDisplay.sourceBytes(whole, since: at, total: 10_000_000), 10_000_000)
        XCTAssertEqual(BuildProgressDisplay.liveLine(.checking(rules: 12, since: started, at: at),
                                                     snapshot: BuildMeter.Snapshot(rulesRun: 3, tablesWritten: 2, table: "listing"),
                                                     origin: BuildMeter.Snapshot(), now: started.addingTimeInterval(4)),
                       "  rules: 3 of 12 run, 4 s; bundle tables written: 2, writing listing")
    }

    func testATerminalLineReplacesTheLiveLine() {
        let sink = Sink(), meter = BuildMeter()
        let display = BuildProgressDisplay(style: .terminal, meter: meter) { sink.write($0) }
        display.tick()
        XCTAssertEqual(sink.all, [], "nothing to show before a stage")
        display.handle(.reading(source: "stops", files: 1, bytes: 2000))
        meter.readBytes(1000)
        meter.staged(7)
        display.tick()
        display.handle(.read(source: "stops", records: 7, seconds: 0.5))
        display.finish(built: true, reused: false)
        XCTAssertEqual(sink.all.count, 3)
        XCTAssertEqual(sink.all[0], "reading stops: 1 file, 2.0 KB\n")
        XCTAssertTrue(sink.all[1].hasPrefix("\r\u{1B}[K  stops: file 1 of 1, 1.0 KB of 2.0 KB, 7 records, "), sink.all[1])
        XCTAssertEqual(sink.all[2], "\r\u{1B}[K  stops: 7 records in 0.5 s\n", "the live line is cleared first")
        display.tick()
        XCTAssertEqual(sink.all.count, 3, "nothing after finish")
    }

    func testJSONEventsParseAndEndWithDone() throws {
        let sink = Sink(), meter = BuildMeter()
        let display = BuildProgressDisplay(style: .json, meter: meter) { sink.write($0) }
        display.handle(.reading(source: "s\u{2028}\"x", files: 2, bytes: 10))
        meter.readBytes(4)
        meter.readFile(at: try write("0123456789", to: "a.txt"))
        display.tick()
        display.handle(.checking(rules: 3))
        meter.ranRule()
        display.finish(built: true, reused: false)
        let events = try sink.all.map { line -> [String: Any] in
            XCTAssertTrue(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" }, "one line: \(line)")
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        XCTAssertEqual(events.map { $0["event"] as? String }, ["reading", "progress", "checking", "done"])
        XCTAssertEqual(events[0]["source"] as? String, "s\u{2028}\"x")
        XCTAssertEqual(events[1]["counts"] as? [String: Int], ["bytesRead": 10, "filesRead": 1, "records": 0, "rulesRun": 0, "tablesWritten": 0])
        XCTAssertEqual((events[3]["counts"] as? [String: Int])?["rulesRun"], 1)
        XCTAssertEqual(events[3]["built"] as? Bool, true)
    }

    func testTheTickerWritesWhileTheBuildIsSilent() {
        let sink = Sink()
        let display = BuildProgressDisplay(style: .json, interval: 0.05, meter: BuildMeter()) { sink.write($0) }
        display.start()
        display.handle(.checking(rules: 1))
        usleep(400_000)
        display.finish(built: false, reused: false)
        XCTAssertGreaterThanOrEqual(sink.all.filter { $0.contains("\"event\":\"progress\"") }.count, 3)
        XCTAssertTrue(sink.all.last?.contains("\"event\":\"done\"") == true)
    }
}
