import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Other parsers' conformance suites, copied whole into Tests/Fixtures/conformance (its README says where from and
/// under which licence): JSONTestSuite's `y_` and `n_` files, csv-spectrum with its JSON expectations, libxml2's
/// error tests, icalendar's test calendars. What is expected comes from the suite itself (`y_` read, `n_` refused;
/// csv-spectrum's JSON; a libxml2 `.err` with a parser error refused) or from an oracle (Python's `json`, icalendar
/// with recurring-ical-events), never from Kiln.
/// By default each suite runs on a sample (`ConformanceSuite.files`); `KILN_CONFORMANCE=full` runs every file.
final class ConformanceSuiteTests: HostileTestCase {
    // MARK: JSONTestSuite

    func testJSONTestSuiteFilesToAcceptAreReadAndFilesToRefuseAreRefusedAtALine() throws {
        let accepted = try ConformanceSuite.files("jsontestsuite") { $0.hasPrefix("y_") }
        let refused = try ConformanceSuite.files("jsontestsuite") { $0.hasPrefix("n_") }
        XCTAssertGreaterThanOrEqual(accepted.count, ConformanceSuite.isFull ? 95 : 19)
        XCTAssertGreaterThanOrEqual(refused.count, ConformanceSuite.isFull ? 188 : 37)
        for url in accepted {
            let error = try JSONStream.parse(url) { _, _ in true }
            XCTAssertNil(error, url.lastPathComponent)
        }
        for url in refused {
            let error = try JSONStream.parse(url) { _, _ in true }
            XCTAssertNotNil(error, "\(url.lastPathComponent) is read")
            XCTAssertGreaterThanOrEqual(error?.line ?? 0, 1, url.lastPathComponent)
        }
    }

    /// Each `y_` file's values as Python's `json` reads them: numbers as written, strings as `json.dumps` escapes
    /// them, an object's members in order (duplicates kept).
    func testJSONTestSuiteFilesToAcceptHoldWhatPythonReads() throws {
        let accepted = try ConformanceSuite.files("jsontestsuite") { $0.hasPrefix("y_") }
        let python = try PythonOracle.lines(ofProgram: #"""
            import json, sys
            class Number(str): pass
            class Members(list): pass
            def render(v):
                if v is None: return "null"
                if v is True: return "true"
                if v is False: return "false"
                if isinstance(v, Number): return str(v)
                if isinstance(v, str): return json.dumps(v)
                if isinstance(v, Members): return "{" + ",".join(json.dumps(k) + ":" + render(x) for k, x in v) + "}"
                return "[" + ",".join(render(x) for x in v) + "]"
            for path in sys.argv[1:]:
                value = json.loads(open(path, "rb").read(), parse_int=Number, parse_float=Number, object_pairs_hook=Members)
                print(render(value))
            """#, accepted.map(\.path))
        XCTAssertEqual(python.count, accepted.count)
        for (url, expected) in zip(accepted, python) {
            var events: [JSONEvent] = []
            XCTAssertNil(try JSONStream.parse(url) { event, _ in events.append(event); return true }, url.lastPathComponent)
            XCTAssertEqual(ConformanceSuiteTests.render(events), expected, url.lastPathComponent)
        }
    }

    /// The events as the oracle above renders the value: `json.dumps`'s escapes (ASCII only, UTF-16 `\uXXXX`).
    private static func render(_ events: [JSONEvent]) -> String {
        var out = "", first = [true], afterKey = false
        func quoted(_ text: String) -> String {
            var result = "\""
            for unit in text.utf16 {
                switch unit {
                case 0x22: result += "\\\""
                case 0x5C: result += "\\\\"
                case 0x0A: result += "\\n"
                case 0x0D: result += "\\r"
                case 0x09: result += "\\t"
                case 0x08: result += "\\b"
                case 0x0C: result += "\\f"
                case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
                default: result += String(format: "\\u%04x", unit)
                }
            }
            return result + "\""
        }
        func value(_ text: String) {
            if afterKey { afterKey = false } else if !first[first.count - 1] { out += "," }
            first[first.count - 1] = false
            out += text
        }
        for event in events {
            switch event {
            case .startObject: value("{"); first.append(true)
            case .startArray: value("["); first.append(true)
            case .endObject: first.removeLast(); out += "}"
            case .endArray: first.removeLast(); out += "]"
            case .key(let key):
                if !first[first.count - 1] { out += "," }
                first[first.count - 1] = false
                out += quoted(key) + ":"
                afterKey = true
            case .string(let text): value(quoted(text))
            case .number(let text): value(text)
            case .bool(let flag): value(flag ? "true" : "false")
            case .null: value("null")
            }
        }
        return out
    }

    // MARK: csv-spectrum

    /// Each csv-spectrum file (a header, then records; CRLF in `*_crlf.csv`) read with `quote` and `header: "names"`
    /// holds the records of its JSON file. Every file runs: the suite is 11 files.
    func testCSVSpectrumFilesHoldTheirJSONRecords() throws {
        let csvs = try ConformanceSuite.files("csv-spectrum/csvs", sampled: false) { $0.hasSuffix(".csv") }
        XCTAssertEqual(csvs.count, 11)
        for url in csvs {
            let json = ConformanceSuite.root.appendingPathComponent("csv-spectrum/json/" + url.deletingPathExtension().lastPathComponent + ".json")
            let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [[String: String]], json.lastPathComponent)
            let header = try String(contentsOf: url, encoding: .utf8).prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
            let fields = header.split(separator: ",").map(String.init)
            let options: JSONValue = .object(["fields": .array(fields.map { .string($0) }), "separator": .string(","), "quote": .string("\""),
                                              "header": .string("names")])
            let reader = try DelimitedReader(options: options.decode(DelimitedReader.Options.self, codingPath: []))
            let (records, log) = try read(reader, url: url)
            XCTAssertEqual(log.diagnostics.filter { $0.severity == .error }.map(\.message), [], url.lastPathComponent)
            XCTAssertEqual(records.map(\.declaredValues), expected.map { row in fields.map { row[$0] } }, url.lastPathComponent)
        }
    }

    // MARK: libxml2's error tests

    /// Each document of libxml2's error tests whose expected output (`.err`) holds a parser error or an I/O error
    /// (bytes its encoding cannot hold) is refused with an error finding at a line. `quadratic-defattr.xml` is the exception: well-formed, refused by libxml2 for the
    /// amplification of its DTD's default attributes, which Kiln never applies (no `XML_PARSE_DTDATTR`); it is read,
    /// its empty elements without a finding.
    func testLibxml2sNotWellFormedDocumentsAreRefusedAtALine() throws {
        let documents = try ConformanceSuite.files("libxml2-errors") { $0.hasSuffix(".xml") }
        XCTAssertGreaterThanOrEqual(documents.count, ConformanceSuite.isFull ? 39 : 8)
        let xml = try reader("xml", #"{ record: "doc", fields: { v: "." } }"#)
        for url in documents {
            let expected = try String(contentsOf: url.appendingPathExtension("err"), encoding: .utf8)
            XCTAssertTrue(expected.contains("parser error") || expected.contains("I/O error"), url.lastPathComponent)
            if expected.contains("Maximum entity amplification factor exceeded") {
                XCTAssertEqual(try run(xml, Array(Data(contentsOf: url)), name: url.lastPathComponent).findings, [], url.lastPathComponent)
                continue
            }
            let (_, log) = try read(xml, url: url)
            let errors = findings(log).filter { $0.contains(": error: ") }
            XCTAssertFalse(errors.isEmpty, "\(url.lastPathComponent) is read without an error: \(findings(log))")
            XCTAssertTrue(errors.allSatisfy { $0.hasPrefix(url.lastPathComponent + ":") && $0.dropFirst(url.lastPathComponent.count + 1).first?.isNumber == true },
                          "\(url.lastPathComponent): an error without a line: \(errors)")
        }
    }

    // MARK: icalendar's test calendars

    /// Each of icalendar's test calendars that the oracle reads gives the occurrences `icalendar` +
    /// `recurring-ical-events` expand from it (`scripts/oracles/ics-occurrences.py`, 2000–2030, events with a zone or
    /// all day; floating times are not compared, as in `ICalendarReaderTests`). Many of the calendars are broken on
    /// purpose and the oracle stops on them (no UID, a bad date); those are read too (no crash: reading all of them
    /// in one build corrupted the heap) and not compared.
    func testICalendarsTestCalendarsGiveTheOraclesOccurrences() throws {
        let calendars = try ConformanceSuite.files("icalendar") { $0.hasSuffix(".ics") }
        XCTAssertGreaterThanOrEqual(calendars.count, ConformanceSuite.isFull ? 116 : 23)
        let options: JSONValue = .object(["window": .object(["from": .string("2000-01-01"), "until": .string("2030-12-31")]), "timezone": .string("UTC")])
        let reader = try ICalendarReader(options: options.decode(ICalendarReader.Options.self, codingPath: []))
        var report: [String] = [], compared = 0
        for url in calendars {
            let name = url.lastPathComponent
            let expected: [String]
            do {
                expected = try PythonOracle.text("ics-occurrences.py", [url.path, "2000-01-01", "2030-12-31"]).split(separator: "\n").map(String.init).sorted()
            } catch let error as XCTSkip {
                throw error
            } catch {
                _ = try read(reader, url: url)
                continue
            }
            compared += 1
            let (records, log) = try read(reader, url: url)
            let actual = records.filter { $0.kind.name == "occurrence" }.map { record in
                let f = Dictionary(uniqueKeysWithValues: zip(record.kind.fieldNames, record.values).compactMap { n, v in v.map { (n, $0) } })
                return [f["event_uid"], f["start_utc"], f["end_utc"], f["start_local"], f["end_local"], f["all_day"]].map { $0 ?? "" }.joined(separator: "\t")
            }.sorted()
            let floating = Set(records.filter { $0.kind.name == "event" }.compactMap { r -> String? in
                let f = Dictionary(uniqueKeysWithValues: zip(r.kind.fieldNames, r.values).compactMap { n, v in v.map { (n, $0) } })
                return f["tzid"] == "UTC" && f["start"]?.hasSuffix("Z") == false ? f["uid"] : nil
            })
            let kept = actual.filter { !floating.contains(String($0.prefix { $0 != "\t" })) }
            let missing = Set(expected).subtracting(kept), extra = Set(kept).subtracting(expected)
            if !missing.isEmpty || !extra.isEmpty {
                report.append("\(name): missing \(missing.sorted().prefix(3)) (\(missing.count)), extra \(extra.sorted().prefix(3)) (\(extra.count)); \(log.diagnostics.map(\.formatted).prefix(3))")
            }
        }
        XCTAssertEqual(report, [], report.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(compared, ConformanceSuite.isFull ? 70 : 14)
    }

    /// Each of icalendar's test calendars that Python's icalendar parses gives the events it walks (`walk("VEVENT")`,
    /// those with a UID: Kiln ships no event without one, an error says so), each with its SUMMARY as written. An
    /// override (`RECURRENCE-ID`) of a series is an occurrence of the series in Kiln, so events are compared as sets.
    func testICalendarsTestCalendarsGiveTheEventsICalendarWalks() throws {
        let calendars = try ConformanceSuite.files("icalendar") { $0.hasSuffix(".ics") }
        let program = #"""
            import sys, warnings, icalendar
            warnings.simplefilter("ignore")
            for path in sys.argv[1:]:
                try:
                    parsed = icalendar.Calendar.from_ical(open(path, "rb").read())
                except Exception:
                    print(path + "\tunreadable")
                    continue
                for calendar in parsed if isinstance(parsed, list) else [parsed]:
                    for event in calendar.walk("VEVENT"):
                        if event.get("UID") is not None:
                            print(path + "\t" + str(event["UID"]) + "\t" + str(event.get("SUMMARY", "")).replace("\n", "\\n"))
            """#
        let process = Process()
        process.executableURL = try PythonOracle.interpreter()
        process.arguments = ["-c", program] + calendars.map(\.path)
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let options: JSONValue = .object(["window": .object(["from": .string("2000-01-01"), "until": .string("2030-12-31")]), "timezone": .string("UTC")])
        let reader = try ICalendarReader(options: options.decode(ICalendarReader.Options.self, codingPath: []))
        var compared = 0
        for url in calendars {
            let expected = lines.filter { $0.hasPrefix(url.path + "\t") }.map { String($0.dropFirst(url.path.count + 1)) }
            if expected == ["unreadable"] { continue }
            compared += 1
            let (records, _) = try read(reader, url: url)
            let events = records.filter { $0.kind.name == "event" }.map { record in
                let fields = Dictionary(uniqueKeysWithValues: zip(record.kind.fieldNames, record.values).compactMap { name, value in value.map { (name, $0) } })
                return (fields["uid"] ?? "") + "\t" + (fields["summary"] ?? "").replacingOccurrences(of: "\n", with: "\\n")
            }
            XCTAssertEqual(Set(events), Set(expected), url.lastPathComponent)
        }
        XCTAssertGreaterThanOrEqual(compared, ConformanceSuite.isFull ? 90 : 18)
    }

    // MARK: W3C XML conformance (James Clark's xmltest)

    /// Every not-well-formed standalone document of xmltest (`not-wf/sa`, 186 files) is refused with an error at a
    /// line. xmltest's licence lets it be redistributed only as the unmodified `xmltest.zip`, so it is not copied
    /// here: `KILN_XMLTEST=<the xmltest folder of that archive>` runs this test (Tests/Fixtures/conformance/README.md).
    func testXMLTestNotWellFormedDocumentsAreRefusedAtALine() throws {
        guard let folder = ProcessInfo.processInfo.environment["KILN_XMLTEST"] else {
            throw XCTSkip("KILN_XMLTEST is not set (the xmltest folder of xmltest.zip; Tests/Fixtures/conformance/README.md)")
        }
        let notWellFormed = URL(fileURLWithPath: folder).appendingPathComponent("not-wf/sa")
        let names = try FileManager.default.contentsOfDirectory(atPath: notWellFormed.path).filter { $0.hasSuffix(".xml") }.sorted()
        XCTAssertEqual(names.count, 186)
        let xml = try reader("xml", #"{ record: "doc", fields: { v: "." } }"#)
        for name in names {
            let (_, log) = try read(xml, url: notWellFormed.appendingPathComponent(name))
            let errors = findings(log).filter { $0.contains(": error: ") }
            XCTAssertFalse(errors.isEmpty, "\(name) is read without an error: \(findings(log))")
            XCTAssertTrue(errors.allSatisfy { $0.hasPrefix(name + ":") && $0.dropFirst(name.count + 1).first?.isNumber == true },
                          "\(name): an error without a line: \(errors)")
        }
    }
}

/// The conformance suites under Tests/Fixtures/conformance and which of their files a run reads.
enum ConformanceSuite {
    static let root = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/conformance")

    /// True when `KILN_CONFORMANCE=full`: every file of every suite.
    static var isFull: Bool { ProcessInfo.processInfo.environment["KILN_CONFORMANCE"] == "full" }

    /// The files of `folder` whose names pass `include`, sorted by name; unless `isFull` (or `sampled` is false), a
    /// deterministic sample of them: the first and every fifth after it.
    static func files(_ folder: String, sampled: Bool = true, include: (String) -> Bool) throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path).filter(include).sorted()
        let kept = sampled && !isFull ? names.enumerated().filter { $0.offset % 5 == 0 }.map(\.element) : names
        return kept.map { root.appendingPathComponent(folder).appendingPathComponent($0) }
    }
}
