import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `WikiPagePool`: pages processed on worker threads give the records, findings and file tally of pages processed
/// one after the other on the reading thread, in the same order, whatever the number of workers and the bounds.
final class WikiPagePoolTests: KilnTestCase {
    /// Pages of every shape the processor handles: listings with bad fields and unknown templates and parameters,
    /// templates written like listings, unclosed templates, redirects, empty pages, and a few large pages.
    private var pages: [WikiPageText] {
        (1...240).map { number in
            var text = "'''Town \(number)''' {{geo|4\(number % 10).1|1\(number % 7).2}}\n== See ==\n"
            for listing in 0..<(number % 9) {
                text += "* {{see|name=Sight \(listing)|url=\(listing % 3 == 0 ? "http://05 49 66" : "https://example.org/\(listing)")"
                    + "|lat=\(listing % 4 == 0 ? "123" : "40.\(listing)")|long=10.\(listing)|typr=go|hours={{Unknown\(listing % 5)}}}} Open daily.\n"
            }
            if number % 11 == 0 { text += "{{Infobox|a=1|b=2|c=3}}\n{{Infobox|a=1|b=2|c=3}}\n" }
            if number % 13 == 0 { text += "{{never closed|x=1\n" }
            if number % 17 == 0 { text += String(repeating: "Long prose about the old town. ", count: 400) + "\n" }
            text += "== Eat ==\n* <eat name=\"Café \(number)\" phone=\"+30 1\">Good.</eat>\n{{IsPartOf|Region \(number % 5)}}\n"
            if number % 23 == 0 { text = "#REDIRECT [[Town \(number - 1)]]" }
            if number % 29 == 0 { text = "" }
            return WikiPageText(title: "Town \(number)", id: String(number), namespace: "0", timestamp: "2024-01-01T00:00:00Z",
                                text: text, line: number * 10, textLine: number * 10 + 5, redirect: nil)
        }
    }

    private func processor() throws -> WikiPageProcessor {
        try WikiPageProcessor(conventions: JSONValue.object([:]).decode(MediaWikiReader.Options.self, codingPath: []).conventions)
    }

    /// What a file's pages gave: each record as text, every finding stored, and the tally's own findings.
    private func run(workers: Int?, maxPages: Int = WikiPagePool.defaultMaxPages, maxBytes: Int = WikiPagePool.defaultMaxBytes) throws
        -> (records: [String], findings: [Diagnostic], tally: [Diagnostic]) {
        let input = InputFile(url: URL(fileURLWithPath: "/pages.xml"), relativePath: "pages.xml")
        let log = DiagnosticLog()
        log.tally = DiagnosticTally(examplesPerCode: 2)
        var tally = WikiFileTally()
        var records: [String] = []
        let emit: (Record) -> Void = { record in
            records.append("\(record.kind.name)@\(record.line): " + record.values.map { $0 ?? "∅" }.joined(separator: "|"))
        }
        let processor = try processor()
        if let workers {
            let pool = try WikiPagePool(like: processor, workers: workers, kept: log.tally.examplesPerCode,
                                        maxPages: maxPages, maxBytes: maxBytes)
            defer { pool.close() }
            for page in pages { pool.submit(page) { try? $0.apply(input: input, tally: &tally, log: log, emit: emit) } }
            pool.drain { try? $0.apply(input: input, tally: &tally, log: log, emit: emit) }
        } else {
            for page in pages { try processor.process(page, input: input, tally: &tally, log: log, emit: emit) }
        }
        let tallyLog = DiagnosticLog()
        tally.report(in: input, log: tallyLog, listingsWanted: true)
        return (records, log.diagnostics, tallyLog.diagnostics)
    }

    func testWorkersGiveTheRecordsFindingsAndTallyOfASerialRun() throws {
        let serial = try run(workers: nil)
        XCTAssertGreaterThan(serial.records.count, 1000)
        let codes = Set(serial.findings.map(\.code))
        XCTAssertTrue(codes.contains(DiagnosticCode.wikitextTemplate.rawValue), "\(codes)")
        XCTAssertTrue(serial.findings.contains { $0.severity == .info || $0.severity == .warning })
        XCTAssertFalse(serial.tally.isEmpty)
        for (workers, maxPages, maxBytes) in [(1, 64, 16 << 20), (2, 64, 16 << 20), (3, 3, 2000), (2, 1, 1)] {
            let pooled = try run(workers: workers, maxPages: maxPages, maxBytes: maxBytes)
            let what = "\(workers) workers, \(maxPages) pages, \(maxBytes) bytes"
            XCTAssertEqual(pooled.records, serial.records, what)
            XCTAssertEqual(pooled.findings, serial.findings, what)
            XCTAssertEqual(pooled.tally, serial.tally, what)
        }
    }

    func testClosingMidwayStopsTheWorkers() throws {
        let pool = try WikiPagePool(like: try processor(), workers: 2, kept: 2, maxPages: 4)
        var applied = 0
        for page in pages.prefix(20) { pool.submit(page) { _ in applied += 1 } }
        pool.close()
        XCTAssertGreaterThan(applied, 0)
        XCTAssertLessThan(applied, 20)
    }
}
