import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `RegexBlockExtractor` through the `text` format: headings carry fields, rows inherit them, candidate lines no
/// pattern captured are reported, catastrophic patterns are stopped, and pages are checked against expectations.
final class RegexBlockExtractorTests: KilnTestCase {
    private static let lineHeading = #"^Γραμμή\s+(?<line>[0-9]+(?:\.[0-9]+)?):\s*(?<name>.+)$"#
    private static let dayHeading = #"^(?<days>(?:Καθημερινές|Σάββατο|Κυριακή|Αργίες)(?:\s*[-,&/+]\s*(?:Καθημερινές|Σάββατο|Κυριακή|Αργίες))*)$"#
    private static let row = #"^(?<from>[0-9]{1,2}:[0-9]{2})\s+(?<until>[0-9]{1,2}:[0-9]{2})\s+(?<every>[0-9]{1,3})$"#

    private func reader(headings: [String] = [lineHeading, dayHeading], row: String = row, skip: [String] = [],
                        extra: [String: JSONValue] = [:], expect: [String: JSONValue]? = nil,
                        encoding: String? = nil) throws -> TextExtractReader {
        var extract: [String: JSONValue] = ["headings": .array(headings.map(JSONValue.string)), "row": .string(row)]
        if !skip.isEmpty { extract["skip"] = .array(skip.map(JSONValue.string)) }
        extract.merge(extra) { _, new in new }
        var options: [String: JSONValue] = ["extract": .object(extract)]
        if let expect { options["expect"] = .object(expect) }
        if let encoding { options["encoding"] = .string(encoding) }
        return try TextExtractReader(options: JSONValue.object(options).decode(TextExtractReader.Options.self, codingPath: []))
    }

    /// Each record as `name=value` pairs in field order (`∅` for nil).
    private func rows(_ reader: TextExtractReader, _ records: [Record]) -> [String] {
        records.map { record in zip(reader.fieldNames, record.values).map { "\($0)=\($1 ?? "∅")" }.joined(separator: " ") }
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    private let page = """
        Γραμμή 1.1: Τερψιθέα - Εγλυκάδα
        Καθημερινές
        Από Έως Συχνότητα
        06:20 07:00 20
        07:00 21:00 10
        Σάββατο - Κυριακή
        Από Έως Συχνότητα
        08:00 20:00 30
        Γραμμή 2.1: Ταραμπούρα
        09:00 10:00 60
        Κυριακή
        10:00 11:00 15

        """

    // MARK: Blocks

    func testFieldNamesComeFromTheHeadingsThenTheRow() throws {
        XCTAssertEqual(try reader().fieldNames, ["line", "name", "days", "from", "until", "every"])
        // A name captured by both a heading and the row is listed once.
        XCTAssertEqual(try reader(headings: [#"^(?<day>\w+):$"#], row: #"^(?<day>\w+) (?<time>\d\d:\d\d)$"#).fieldNames, ["day", "time"])
    }

    func testRowsInheritCarriedFields() throws {
        let text = try reader()
        let (records, log) = try read(text, page, name: "page.txt")
        XCTAssertEqual(rows(text, records), [
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Καθημερινές from=06:20 until=07:00 every=20",
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Καθημερινές from=07:00 until=21:00 every=10",
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Σάββατο - Κυριακή from=08:00 until=20:00 every=30",
            // The second line heading clears the day of the first line's last block…
            "line=2.1 name=Ταραμπούρα days=∅ from=09:00 until=10:00 every=60",
            // …and a day heading under it does not clear the line.
            "line=2.1 name=Ταραμπούρα days=Κυριακή from=10:00 until=11:00 every=15",
        ])
        XCTAssertEqual(records.map(\.line), [4, 5, 8, 10, 12])
        // Column-heading lines have no time: they are not candidates and need no skip pattern.
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
    }

    func testRowsBeforeAnyHeadingHaveNoCarriedFields() throws {
        let text = try reader()
        let (records, _) = try read(text, "06:00 07:00 20\nΓραμμή 3: Λεύκα\n07:00 08:00 30\n", name: "early.txt")
        XCTAssertEqual(rows(text, records), ["line=∅ name=∅ days=∅ from=06:00 until=07:00 every=20",
                                             "line=3 name=Λεύκα days=∅ from=07:00 until=08:00 every=30"])
    }

    func testThreeHeadingLevels() throws {
        let text = try reader(headings: [#"^# (?<a>\w+)$"#, #"^## (?<b>\w+)$"#, #"^### (?<c>\w+)$"#], row: #"^- (?<v>\w+)$"#)
        let input = "# A\n## B\n### C\n- 1\n## D\n- 2\n### E\n- 3\n# F\n- 4\n"
        let (records, _) = try read(text, input, name: "levels.txt")
        XCTAssertEqual(rows(text, records), ["a=A b=B c=C v=1", "a=A b=D c=∅ v=2", "a=A b=D c=E v=3", "a=F b=∅ c=∅ v=4"])
    }

    func testRowGroupThatDoesNotTakePartIsNil() throws {
        let text = try reader(headings: [], row: #"^(?<from>\d\d:\d\d)(?:\s+(?<note>\*))?$"#)
        let (records, _) = try read(text, "06:00 *\n07:00\n", name: "optional.txt")
        XCTAssertEqual(rows(text, records), ["from=06:00 note=*", "from=07:00 note=∅"])
    }

    // MARK: Coverage

    func testUnmatchedCandidateIsAWarningWithLineAndText() throws {
        let input = page + "Τελευταίο δρομολόγιο στις 23:15\n6:10 7:00\n"
        let (records, log) = try read(try reader(), input, name: "page.txt")
        XCTAssertEqual(records.count, 5)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "page.txt:13: warning: no row pattern captured this line that looks like data: \"Τελευταίο δρομολόγιο στις 23:15\" [extract.unmatched]",
            "page.txt:14: warning: no row pattern captured this line that looks like data: \"6:10 7:00\" [extract.unmatched]",
        ])
    }

    func testLongUnmatchedLineIsShortened() throws {
        let long = "12:00 " + String(repeating: "x", count: 100)
        let (_, log) = try read(try reader(), long + "\n", name: "long.txt")
        XCTAssertEqual(log.diagnostics.first?.message,
                       "no row pattern captured this line that looks like data: \"\(long.prefix(80))…\"")
    }

    func testCustomCandidatePattern() throws {
        let text = try reader(extra: ["candidate": .string(#"^\d"#)])
        let (_, log) = try read(text, "Note at 12:00\n9 stops\n", name: "candidate.txt")
        XCTAssertEqual(log.diagnostics.map { $0.provenance?.line }, [2])
    }

    func testSkipPatternsPassOverLines() throws {
        let input = "Γραμμή 1.1: Α\nΑνανεώθηκε 12:30\n06:00 07:00 20\nΣημείωση: 14:00 μόνο τον Αύγουστο\n"
        let (_, unskippedLog) = try read(try reader(), input, name: "notes.txt")
        XCTAssertEqual(unskippedLog.diagnostics.map { $0.provenance?.line }, [2, 4])
        let text = try reader(skip: [#"^Ανανεώθηκε"#, #"^Σημείωση:"#])
        let (records, log) = try read(text, input, name: "notes.txt")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
    }

    func testHeadingsComeBeforeSkipAndRowsBeforeHeadings() throws {
        // A line both a heading and a skip pattern match is a heading; one the row matches is a row.
        let text = try reader(headings: [#"^(?<day>Σάββατο)$"#], row: #"^(?<t>\d\d:\d\d)$"#, skip: ["^Σάββατο$", "^\\d"])
        let (records, _) = try read(text, "Σάββατο\n06:00\n", name: "order.txt")
        XCTAssertEqual(rows(text, records), ["day=Σάββατο t=06:00"])
    }

    // MARK: Match limit

    func testCatastrophicPatternHitsTheMatchLimit() throws {
        let pattern = #"^(?<v>a+)+$"#
        let text = try reader(headings: [], row: pattern, extra: ["matchLimit": .number(10_000), "candidate": .string("a")])
        let input = String(repeating: "a", count: 32) + "!\naaa\nbbb\n"
        let start = Date()
        let (records, log) = try read(text, input, name: "redos.txt")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        // The later lines still extract.
        XCTAssertEqual(rows(text, records), ["v=aaa"])
        XCTAssertEqual(records.map(\.line), [2])
        let findings = log.diagnostics.filter { $0.code == "extract.match-limit" }
        XCTAssertEqual(findings.count, 1, describe(log))
        let finding = try XCTUnwrap(findings.first)
        XCTAssertEqual(finding.severity, .error)
        XCTAssertEqual(finding.provenance, Provenance(file: "redos.txt", line: 1))
        XCTAssertTrue(finding.message.hasPrefix("regular expression /\(pattern)/ failed: "), finding.message)
        XCTAssertTrue(finding.message.contains("limit"), finding.message)
        XCTAssertTrue(finding.message.hasSuffix(" on the line \"\(String(repeating: "a", count: 32))!\"; the line is passed over"), finding.message)
        // The line that hit the limit is not also reported as unmatched.
        XCTAssertEqual(log.diagnostics.count, 1, describe(log))
    }

    func testDefaultMatchLimitIsGenerous() throws {
        let text = try reader(headings: [], row: #"^(?<v>(?:\w+\s*)+)$"#)
        let (records, log) = try read(text, String(repeating: "word ", count: 200) + "\n", name: "long.txt")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
    }

    // MARK: Expectations

    private func expectations(_ expect: [String: JSONValue], _ input: String) throws -> [Diagnostic] {
        let (_, log) = try read(try reader(expect: expect), input, name: "page.txt")
        return log.diagnostics.filter { $0.code == "extract.expectation" }
    }

    private func requirement(_ field: String, _ pattern: String, per: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["field": .string(field), "pattern": .string(pattern)]
        if let per { object["per"] = .string(per) }
        return .object(object)
    }

    func testMinRows() throws {
        XCTAssertEqual(try expectations(["minRows": .number(5)], page).count, 0)
        let findings = try expectations(["minRows": .number(6)], page)
        XCTAssertEqual(findings.map(\.message), ["the page gave 5 rows; expected at least 6"])
        XCTAssertEqual(findings.first?.severity, .error)
        XCTAssertEqual(findings.first?.provenance, Provenance(file: "page.txt"))
        XCTAssertEqual(try expectations(["minRows": .number(1)], "nothing here\n").map(\.message),
                       ["the page gave 0 rows; expected at least 1"])
    }

    func testMaxUnmatched() throws {
        let input = page + "Note 23:15\nNote 23:45\n"
        XCTAssertEqual(try expectations(["maxUnmatched": .number(2)], input).count, 0)
        XCTAssertEqual(try expectations(["maxUnmatched": .number(1)], input).map(\.message),
                       ["the page has 2 lines no pattern captured; at most 1 allowed"])
        XCTAssertEqual(try expectations(["maxUnmatched": .number(0)], page).count, 0)
    }

    func testRequireBlocksWithoutPer() throws {
        XCTAssertEqual(try expectations(["requireBlocks": .array([requirement("days", "Καθημερινές")])], page).count, 0)
        let findings = try expectations(["requireBlocks": .array([requirement("days", "Αργίες")])], page)
        XCTAssertEqual(findings.map(\.message), ["no block whose days matches /Αργίες/"])
        XCTAssertEqual(findings.first?.provenance, Provenance(file: "page.txt"))
    }

    func testRequireBlocksPerField() throws {
        // Line 1.1 has a weekday block; line 2.1 has none.
        let findings = try expectations(["requireBlocks": .array([requirement("days", "Καθημερινές", per: "line")])], page)
        XCTAssertEqual(findings.map(\.message), ["no block whose days matches /Καθημερινές/ for line 2.1"])
        // Every line has a Sunday block (1.1 as part of "Σάββατο - Κυριακή").
        XCTAssertEqual(try expectations(["requireBlocks": .array([requirement("days", "Κυριακή", per: "line")])], page).count, 0)
        // One finding per line that misses it, in page order.
        XCTAssertEqual(try expectations(["requireBlocks": .array([requirement("days", "Αργίες", per: "line")])], page).map(\.message),
                       ["no block whose days matches /Αργίες/ for line 1.1", "no block whose days matches /Αργίες/ for line 2.1"])
    }

    func testAllExpectationsTogether() throws {
        let findings = try expectations(["minRows": .number(10), "maxUnmatched": .number(0),
                                         "requireBlocks": .array([requirement("every", "^5$")])], page + "Note 23:15\n")
        XCTAssertEqual(findings.map(\.message), ["the page gave 5 rows; expected at least 10",
                                                 "the page has 1 lines no pattern captured; at most 0 allowed",
                                                 "no block whose every matches /^5$/"])
    }

    // MARK: Construction errors

    func testInvalidPatternIsACompileError() throws {
        XCTAssertThrowsError(try reader(row: "^(?<from>\\d+")) { error in
            guard let error = error as? RegexCompileError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.pattern, "^(?<from>\\d+")
            XCTAssertEqual(error.offset, 12)
            XCTAssertTrue(error.description.hasPrefix("invalid regular expression at offset 12: "), error.description)
        }
        XCTAssertThrowsError(try reader(headings: ["^(?<x>[a-"])) { XCTAssertTrue($0 is RegexCompileError, "got \($0)") }
        XCTAssertThrowsError(try reader(skip: ["*"])) { XCTAssertTrue($0 is RegexCompileError, "got \($0)") }
        XCTAssertThrowsError(try reader(extra: ["candidate": .string("(")])) { XCTAssertTrue($0 is RegexCompileError, "got \($0)") }
        XCTAssertThrowsError(try reader(expect: ["requireBlocks": .array([requirement("days", "[")])])) {
            XCTAssertTrue($0 is RegexCompileError, "got \($0)")
        }
    }

    func testRowWithoutNamedGroupsIsRefused() throws {
        XCTAssertThrowsError(try reader(row: #"^(\d\d:\d\d)$"#)) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "the row pattern needs named groups (?<name>…): they become the fields")
        }
    }

    func testRequireBlocksNamingAnUnknownField() throws {
        XCTAssertThrowsError(try reader(expect: ["requireBlocks": .array([requirement("day", "Καθημερινές")])])) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "requireBlocks names the field \"day\", which no pattern captures; fields: line, name, days, from, until, every")
        }
        XCTAssertThrowsError(try reader(expect: ["requireBlocks": .array([requirement("days", "Καθημερινές", per: "route")])])) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertTrue(message.hasPrefix("requireBlocks names the field \"route\""), message)
        }
    }

    func testUnknownOptionsAreRefused() throws {
        XCTAssertThrowsError(try reader(extra: ["rows": .string("x")]))
        XCTAssertThrowsError(try reader(expect: ["minRow": .number(1)]))
    }

    // MARK: Text files

    func testLegacyEncoding() throws {
        let text = "Γραμμή 6.1: Πανεπιστήμιο Express\nΚαθημερινές\n06:00 07:00 20\n"
        let url = try write(try XCTUnwrap(text.data(using: .windowsCP1253)), to: "cp1253.txt")
        let extract = try reader(encoding: "windows-1253")
        let (records, log) = try read(extract, url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(extract, records), ["line=6.1 name=Πανεπιστήμιο Express days=Καθημερινές from=06:00 until=07:00 every=20"])
    }

    func testInvalidUTF8LineIsReportedAndSkipped() throws {
        var data = Data("Γραμμή 1.1: Α\n".utf8)
        data.append(contentsOf: [0x30, 0x36, 0x3A, 0x30, 0x30, 0x20, 0xFF, 0x0A])
        data.append(contentsOf: Array("07:00 08:00 20\n".utf8))
        let url = try write(data, to: "bad.txt")
        let (records, log) = try read(try reader(), url: url)
        XCTAssertEqual(records.map(\.line), [3])
        XCTAssertEqual(log.diagnostics.map(\.code), ["encoding"])
        XCTAssertEqual(log.diagnostics.first?.provenance, Provenance(file: "bad.txt", line: 2, column: 7))
    }
    // MARK: Records a consumer keeps or lets go

    func testRecordsKeepTheirValuesWhetherTheConsumerKeepsThemOrNot() throws {
        // The extractor writes a row's values into the last record's array when the consumer let that record go.
        // Whatever the consumer keeps must still hold the values it was given: compared with a copy made as each
        // record arrived, for a consumer that keeps every record, one that keeps none, and one that keeps every
        // other record (so both ways of filling the values alternate, across heading changes).
        let text = try reader()
        let url = try write(page, to: "page.txt")
        let all = try read(text, page).records
        XCTAssertEqual(all.count, 5)
        for keep in [{ (_: Int) in true }, { (_: Int) in false }, { (index: Int) in index % 2 == 0 }] {
            var kept: [Record] = [], copies: [String] = [], keptCopies: [String] = []
            try text.read(InputFile(url: url, relativePath: "page.txt"), log: DiagnosticLog()) { record in
                let copy = rows(text, [record])[0] + " @\(record.line)"
                copies.append(copy)
                if keep(copies.count - 1) {
                    kept.append(record)
                    keptCopies.append(copy)
                }
            }
            XCTAssertEqual(zip(rows(text, kept), kept).map { "\($0) @\($1.line)" }, keptCopies)
            // The same rows as a reader whose consumer keeps everything (`read`, checked above).
            XCTAssertEqual(copies, zip(rows(text, all), all).map { "\($0) @\($1.line)" })
        }
    }
}
