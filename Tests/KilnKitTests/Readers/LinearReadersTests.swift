import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Issue 31, item 10: every reader linear, every budget per file. Each test gives an input that was quadratic or
/// unbounded and asserts what comes out: the whole value, or a finding that names the file, the line and the limit,
/// with everything before it kept. None asserts a time.
final class LinearReadersTests: HostileTestCase {
    private func json(_ fields: String = "{ id: \"id\", v: \"v\" }") throws -> RecordReader {
        try reader("json", "{ records: \"*\", fields: \(fields) }")
    }

    // MARK: - JSON

    func testDeepNestingInsideAMappedFieldIsItsWholeJSON() throws {
        // 100 000 levels in the field: the capture copied its text at every event (320 000 levels took 90 s).
        let depth = 100_000
        let value = String(repeating: "[", count: depth) + "{\"k\":[1,2.5,\"x\"]}" + String(repeating: "]", count: depth)
        let (values, findings) = try run(json(), "[{\"id\":1,\"v\":\(value)},\n{\"id\":2,\"v\":3}]", name: "deep.json")
        XCTAssertEqual(findings, [])
        // The value is written compactly, so the JSON Kiln writes of it is its text as written.
        XCTAssertEqual(values.map { [$0[0], $0[1]?.count.description] }, [["1", String(value.count)], ["2", "1"]])
        XCTAssertEqual(values.first?[1], value)
    }

    func testAStringOrNumberLongerThanTheBoundStopsTheFileAndTheRecordsBeforeItAreKept() throws {
        for (what, filler, open, close) in [("a string", UInt8(ascii: "a"), "\"", "\""), ("a number or literal", UInt8(ascii: "7"), "", "")] {
            let url = try writeLarge("long.json", prefix: "[{\"id\":1,\"v\":\"kept\"},\n{\"id\":2,\"v\":\(open)",
                                     filler: filler, count: JSONStream.maximumTokenBytes + 1, suffix: "\(close)},\n{\"id\":3,\"v\":4}]")
            let (records, log) = try read(json(), url: url)
            XCTAssertEqual(records.map(\.declaredValues), [["1", "kept"]], what)
            XCTAssertEqual(findings(log), ["long.json:2: error: \(what) longer than 16 MiB starts here; Kiln keeps values up to 16 MiB: "
                                           + "the rest of this file is not read [json.too-long]"])
        }
    }

    func testAStringJustUnderTheBoundIsReadWhole() throws {
        let count = JSONStream.maximumTokenBytes - 16
        let url = try writeLarge("under.json", prefix: "[{\"id\":1,\"v\":\"", filler: UInt8(ascii: "b"), count: count, suffix: "\"},{\"id\":2,\"v\":5}]")
        let (records, log) = try read(json(), url: url)
        XCTAssertEqual(findings(log), [])
        XCTAssertEqual(records.map { $0.declaredValues[1]?.utf8.count }, [count, 1])
    }

    func testTheTokenScanFollowsAStringOverChunksWithEscapes() {
        var scan = JSONStream.TokenScan()
        scan.scan(Array("{\"a\":\"x\\\"y".utf8))
        XCTAssertTrue(scan.inString)
        XCTAssertEqual(scan.openLength, 5)  // "x\"y, the escaped quote inside
        scan.scan(Array("zzz".utf8))
        XCTAssertEqual(scan.openLength, 8)
        scan.scan(Array("\",\n\"b\":12".utf8))
        XCTAssertFalse(scan.inString)
        XCTAssertEqual(scan.openLength, 2)  // the number 12 may go on in the next chunk
        XCTAssertEqual(scan.openLine, 2)
        scan.scan(Array("}".utf8))
        XCTAssertEqual(scan.openLength, 0)
    }

    func testACapturedFieldOverTheBoundIsNullWithAFindingAndTheFileGoesOn() throws {
        // The field is an array of values each under the bound: 8 M numbers, or in the fast tier 16 K strings of 1 KiB
        // (the same bytes in fewer tokens).
        let element = TestTier.isFast ? "\"" + String(repeating: "1", count: 1_022) + "\"," : "1,"
        let count = JSONStream.maximumTokenBytes / element.utf8.count + 8
        let url = try writeLarge("capture.json", prefix: "[{\"id\":1,\"v\":[", filler: UInt8(ascii: "1"), count: 0,
                                 suffix: String(repeating: element, count: count) + "1]},\n{\"id\":2,\"v\":[2]}]")
        let (records, log) = try read(json(), url: url)
        XCTAssertEqual(records.map(\.declaredValues), [["1", nil], ["2", "[2]"]])
        XCTAssertEqual(findings(log), ["capture.json:1: error: the JSON of field \"v\" is longer than 16 MiB; the field is NULL in this record [json.too-long]"])
    }

    // MARK: - Regex budget

    func testTheRegexBudgetStopsExaminingLinesAndNamesThoseLeft() throws {
        let text = try reader("text", #"{ extract: { row: "^(?<a>(a+)+)$", candidate: "a" } }"#)
            .limited(by: ManifestLimits(regexSecondsPerFile: 0.05))
        let lines = 3000
        let line = String(repeating: "a", count: 28) + "b"
        let (records, log) = try read(text, String(repeating: line + "\n", count: lines), name: "slow.txt")
        XCTAssertEqual(records.count, 0)
        let budget = try XCTUnwrap(log.diagnostics.first { $0.code == "regex.budget" })
        let skipped = try XCTUnwrap(budget.message.firstMatch(of: /lines (\d+)–(\d+) \((\d+) lines\) were not examined/))
        let first = try XCTUnwrap(Int(skipped.1)), last = try XCTUnwrap(Int(skipped.2)), count = try XCTUnwrap(Int(skipped.3))
        XCTAssertEqual(budget.provenance, Provenance(file: "slow.txt", line: first))
        XCTAssertEqual(last, lines)
        XCTAssertEqual(count, lines - first + 1)
        XCTAssertGreaterThan(first, 1)
        XCTAssertLessThan(first, lines)
        // Nothing silent: every line before the cut is a match-limit finding, every line after is named.
        let limited = log.tally.notStored[DiagnosticTally.Key(code: "extract.match-limit", severity: .error)] ?? 0
            + log.diagnostics.filter { $0.code == "extract.match-limit" }.count
        XCTAssertEqual(limited + count, lines)
        XCTAssertTrue(budget.message.contains("more than 0.05 s of CPU time on this file (limits.regexSecondsPerFile)"), budget.message)
    }

    func testWithoutTheBudgetSpentEveryLineIsExamined() throws {
        let text = try reader("text", #"{ extract: { row: "^(?<a>[0-9]+)$", candidate: "x" } }"#)
            .limited(by: ManifestLimits(regexSecondsPerFile: 5))
        let (records, log) = try read(text, (1...500).map(String.init).joined(separator: "\n"), name: "fast.txt")
        XCTAssertEqual(records.count, 500)
        XCTAssertEqual(findings(log), [])
    }

    // MARK: - Messages

    func testALongMessageIsCutSayingItsLength() {
        let message = "rule says: " + String(repeating: "é", count: 5_000_000)
        let log = DiagnosticLog()
        log.report(ruleCode: "big", .error, message)
        let stored = log.diagnostics[0].message
        XCTAssertLessThanOrEqual(stored.count, Diagnostic.maximumMessageLength)
        XCTAssertTrue(stored.hasPrefix("rule says: éé"))
        XCTAssertTrue(stored.contains(" … (message cut: 1920 of its \(message.count) characters are shown) … "), String(stored.suffix(80)))
        XCTAssertTrue(stored.hasSuffix(String(message.suffix(Diagnostic.keptMessageEnd))), "the end is kept")
        // Replayed into another log (a file's findings into the build's), it stays as it is.
        let build = DiagnosticLog()
        log.replay(into: build)
        XCTAssertEqual(build.diagnostics[0].message, stored)
        let short = DiagnosticLog()
        short.report(ruleCode: "small", .error, String(repeating: "x", count: Diagnostic.maximumMessageLength))
        XCTAssertEqual(short.diagnostics[0].message.count, Diagnostic.maximumMessageLength)
    }

    // MARK: - Wikitext

    func testAPagesFindingsAreKeptAsTheLogKeepsThemWithTheRestCounted() {
        func finding(_ code: DiagnosticCode, _ line: Int) -> WikiFinding {
            WikiFinding(code: code, message: "at \(line)", line: line)
        }
        var all: [WikiFinding] = []
        for line in stride(from: 900, through: 1, by: -3) { all.append(finding(.wikitextTemplate, line)) }
        for line in [50, 7, 50, 3] { all.append(finding(.wikitextTrailingText, line)) }
        for line in 1...400 { all.append(finding(.wikitextTemplate, line)) }
        // As before: every finding, sorted by line (ties in the order made), reported to a log that keeps 10 per code.
        let expected = DiagnosticLog()
        expected.tally.examplesPerCode = 10
        for item in all.enumerated().sorted(by: { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }) {
            expected.report(item.element.code, item.element.message)
        }
        var bounded = WikiFindings(kept: 10)
        for item in all { bounded.append(item) }
        let (kept, dropped) = bounded.sorted()
        XCTAssertEqual(kept.count, 14)
        let actual = DiagnosticLog()
        actual.tally.examplesPerCode = 10
        for item in kept { actual.report(item.code, item.message) }
        for (key, count) in dropped {
            for _ in 0..<count { actual.report(Diagnostic(code: key.code, severity: key.severity, message: "")) }
        }
        XCTAssertEqual(actual.diagnostics, expected.diagnostics)
        XCTAssertEqual(actual.tally.notStored, expected.tally.notStored)
        XCTAssertEqual(Severity.allCases.map(actual.count).reduce(0, +), all.count)
    }

    func testUnknownNamesBeyondTheLimitAreCountedTogether() {
        var uses = WikiFileTally.Uses()
        for index in 0..<25 { uses.note("p\(index % 12)", page: "P", listing: "L\(index)", line: index + 1, limit: 5) }
        XCTAssertEqual(uses.byKey.count, 5)
        XCTAssertEqual(uses.sorted.map(\.count), [3, 2, 2, 2, 2])  // p0 at 1, 13, 25; p1…p4 twice
        XCTAssertEqual(uses.otherUses, 25 - 11)
        XCTAssertEqual(uses.firstOther?.name, "p5")
        XCTAssertEqual(uses.firstOther?.line, 6)
    }

    // MARK: - Markup attributes

    func testTheAttributeScanCountsOnlyAttributesOfStartTags() {
        func overfull(_ text: String, html: Bool = false, limit: Int = 3) -> MarkupAttributeScan.Overfull? {
            var scan = MarkupAttributeScan(html: html, limit: limit)
            for byte in text.utf8 { if let found = scan.scan([byte]) { return found } }  // one byte per chunk
            return nil
        }
        XCTAssertNil(overfull("<a x=\"1\" y='2' z=\"> w v u\"/>"))
        XCTAssertEqual(overfull("<r>\n<a x=\"1\" y='2' z=3 w>"), MarkupAttributeScan.Overfull(offset: 4, line: 2))
        XCTAssertNil(overfull("<!-- <a b c d e f> --><?pi a b c d e?><![CDATA[<a b c d e>]]><!DOCTYPE a b c d e>"))
        XCTAssertNil(overfull("<script>if (a <b c d e f g) {}</script>", html: true))
        XCTAssertEqual(overfull("<script>x</SCRIPT><p a b c d>", html: true)?.offset, 18)
        XCTAssertEqual(overfull("<p a b c d>", html: true)?.offset, 0)
        XCTAssertNil(overfull("<p a = \"1 2 3 4\" b='5 6 7'>", html: true))
    }

    func testTheAttributeScanFindsTheSameTagWhateverTheChunksAndCountsItsLineFromTheText() {
        // Documents of random markup pieces, each scanned whole, a byte at a time and in random chunks: the tag found
        // must not depend on where the chunks end, must start with "<", and its line is 1 + the line feeds before it.
        var generator = SeededGenerator(seed: 0x5CA7)
        let pieces = ["<", ">", "a", "bc", "=", "\"", "'", " ", "\n", "<!--", "-->", "<![CDATA[", "]]>", "<!", "<?", "?>",
                      "/", "<script>", "</script>", "<style ", "</STYLE>", "-", "]", "<p ", "x\ny", String(repeating: "t", count: 70)]
        var found = 0
        for _ in 0..<3000 {
            let text = Array((0..<Int.random(in: 1...80, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined().utf8)
            let html = Bool.random(using: &generator)
            let limit = Int.random(in: 0...4, using: &generator)
            func scan(_ chunkSize: () -> Int) -> MarkupAttributeScan.Overfull? {
                var scan = MarkupAttributeScan(html: html, limit: limit)
                var start = 0
                while start < text.count {
                    let end = min(text.count, start + chunkSize())
                    if let overfull = scan.scan(text[start..<end]) { return overfull }
                    start = end
                }
                return nil
            }
            let whole = scan { text.count }
            XCTAssertEqual(scan { 1 }, whole, String(decoding: text, as: UTF8.self))
            XCTAssertEqual(scan { Int.random(in: 1...100, using: &generator) }, whole, String(decoding: text, as: UTF8.self))
            guard let whole else { continue }
            found += 1
            XCTAssertEqual(text[whole.offset], UInt8(ascii: "<"))
            XCTAssertEqual(whole.line, 1 + text[..<whole.offset].filter { $0 == 0x0A }.count)
        }
        XCTAssertGreaterThan(found, 100)  // the limits are low enough for many documents to reach them
    }

    func testAnXMLElementWithTooManyAttributesStopsTheFileAfterTheRecordsBeforeIt() throws {
        let attributes = (0...MarkupAttributeScan.maximumAttributes).map { "a\($0)=\"v\"" }.joined(separator: " ")
        let text = "<root>\n<item id=\"1\"/>\n<item id=\"2\" \(attributes)/>\n<item id=\"3\"/>\n</root>\n"
        for options in [#"{ record: "item", fields: { id: "@id" } }"#, #"{ record: "item", fields: { id: "@id", n: "count(*)" } }"#] {
            let (values, found) = try run(try reader("xml", options), text, name: "many.xml")
            XCTAssertEqual(values.map { $0[0] }, ["1"], options)
            XCTAssertEqual(found.count, 1, "\(found)")
            XCTAssertTrue(found[0].hasPrefix("many.xml:3"), found[0])
            XCTAssertTrue(found[0].contains("malformed XML: an element has more than 1000 attributes (libxml2's check of them is quadratic); the rest of this file"), found[0])
        }
        // At the limit, the element is read.
        let fewer = (1...MarkupAttributeScan.maximumAttributes - 1).map { "a\($0)=\"v\"" }.joined(separator: " ")
        let (values, found) = try run(try reader("xml", #"{ record: "item", fields: { id: "@id" } }"#),
                                      "<root><item id=\"1\" \(fewer)/></root>", name: "limit.xml")
        XCTAssertEqual(values.map { $0[0] }, ["1"])
        XCTAssertEqual(found, [])
    }
}
