import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// An HTML page is parsed whole: pages over the source's `maxPageBytes` (default 16 MiB) are not read, so that the
/// memory one page takes stays bounded.
final class HostilePageSizeTests: HostileTestCase {
    func testAPageOverTheLimitIsAFindingAndIsNotParsed() throws {
        let page = "<p>" + String(repeating: "x", count: 2_000) + "</p>"
        let small = try reader("html", #"{ records: "//p", fields: { v: "." }, maxPageBytes: 1000 }"#)
        let over = try run(small, page, name: "page.html")
        XCTAssertEqual(over.values, [])
        XCTAssertEqual(over.findings, ["page.html: error: the page is \(page.utf8.count) bytes, over the limit of 1000 bytes per page (the source's maxPageBytes option); it is not read [html.too-large]"])
        let within = try run(try reader("html", #"{ records: "//p", fields: { v: "." }, maxPageBytes: 10000 }"#), page, name: "page.html")
        XCTAssertEqual(within.values.count, 1)
        XCTAssertEqual(within.findings, [])
    }

    func testTheDefaultLimitStopsA17MiBPage() throws {
        let url = try writeLarge("big.html", prefix: "<table><tr><td>", filler: UInt8(ascii: "x"), count: HTMLReader.defaultMaxPageBytes + (1 << 20), suffix: "</td></tr></table>")
        let (records, log) = try read(try reader("html", #"{ records: "//tr", fields: { v: "td" } }"#), url: url)
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["html.too-large"])
    }

    func testTheLimitMustBePositive() {
        XCTAssertThrowsError(try reader("html", #"{ records: "//p", fields: { v: "." }, maxPageBytes: 0 }"#))
    }
}
