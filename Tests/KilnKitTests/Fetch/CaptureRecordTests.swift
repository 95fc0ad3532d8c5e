import Foundation
import XCTest
import KilnTestSupport
@testable import KilnManifest

/// The capture record's times and bytes: ISO 8601 in UTC as Foundation's formatter writes them, and the same bytes for
/// the same captures in any order.
final class CaptureRecordTests: KilnTestCase {
    func testTimestampsAreWhatISO8601DateFormatterWrites() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        var random = SeededGenerator(seed: 8601)
        let instants = [0.0, 59.9, 86_399, 951_782_400, 4_107_542_399] + (0..<2000).map { _ in Double.random(in: 0..<4_102_444_800, using: &random) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(CaptureRecord.timestamp(date), formatter.string(from: date), "\(seconds)")
        }
    }

    func testTheRecordsBytesDoNotDependOnTheOrderOfItsCaptures() throws {
        var captures: [CaptureRecord.Capture] = []
        for number in 0..<50 {
            var capture = CaptureRecord.Capture(source: number % 2 == 0 ? "pages" : "stops", url: "https://example.org/\(number).html",
                                                file: "site/\(number).html", status: 200, sha256: String(repeating: "a", count: 64),
                                                bytes: number, capturedAt: "2026-12-07T06:50:49Z", verifiedAt: "2026-12-07T06:50:49Z")
            capture.etag = "\"\(number)\""
            captures.append(capture)
        }
        var record = CaptureRecord()
        record.captures = captures
        var shuffled = record
        var random = SeededGenerator(seed: 54)
        shuffled.captures.shuffle(using: &random)
        XCTAssertEqual(try record.json(), try shuffled.json())
        let url = temporaryDirectory.appendingPathComponent("kiln.fetch.json")
        try record.json().write(to: url)
        let read = try CaptureRecord.read(url)
        XCTAssertEqual(Set(read.captures.map(\.url)), Set(captures.map(\.url)))
        XCTAssertEqual(read.sources["pages"]?.urls, 25)
        // A damaged record is an I/O error naming the file, not a crash.
        try Data("{\"version\": 1, \"captures\": [{\"url\": 3}]}".utf8).write(to: url)
        XCTAssertThrowsError(try CaptureRecord.read(url)) { XCTAssertTrue("\($0)".contains("kiln.fetch.json is damaged"), "\($0)") }
    }
}
