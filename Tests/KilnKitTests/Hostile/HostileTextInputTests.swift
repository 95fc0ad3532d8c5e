import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The hostile-input corpus for the line-based readers — `delimited`, `routes`, `timetable` and regex extraction in
/// block mode (`text`): empty files, a lone byte-order mark, bad bytes, NUL bytes, a 100 MB line, truncation, a
/// wrong encoding, mixed line endings, extra and missing fields, impossible times. Each case has its exact findings;
/// what can be read still is.
final class HostileTextInputTests: HostileTestCase {
    private func delimited() throws -> RecordReader { try reader("delimited", #"{ fields: ["name", "code", "longitude", "latitude"] }"#) }
    private func routes() throws -> RecordReader { try reader("routes") }
    private func timetable() throws -> RecordReader {
        try reader("timetable", #"""
            { days: [{ heading: "Καθημερινές", code: "weekdays" }, { heading: "Σάββατο", code: "saturday" }],
              columnHeading: "^Από\\s+(?:Εώς|Έως)\\s+Συχνότητα$" }
            """#)
    }
    private func text() throws -> RecordReader {
        try reader("text", #"""
            { extract: { headings: ["^(?<line>[0-9]+\\.[0-9]+)\\s+(?<name>.+)$", "^(?<days>Καθημερινές|Σάββατο)$"],
                         row: "^(?<from>\\d{1,2}:\\d{2})\\s+(?<until>\\d{1,2}:\\d{2})\\s+(?<every>\\d{1,3})$",
                         skip: ["^Από\\s+Εώς\\s+Συχνότητα$"] } }
            """#)
    }

    private let stops = "Ακτή Δυμαίων; 0102; 21.7312; 38.2466\nΆγιος Ανδρέας; 0104; 21.7298; 38.2421\n"
    private let route = "1.1 Τερψιθέα\n0 0101! 1 0102!\n"
    private let block = "1.1 Τερψιθέα\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n06:00  08:00  20\n"

    private let empty = "input.txt: warning: the file holds no data (it is empty, or only white space or a byte-order mark) [input.empty]"
    private let hint = "if the file is in a legacy code page, set the source's \"encoding\" option, e.g. \"windows-1253\" or \"iso-8859-7\""

    // MARK: Empty files

    func testEmptyFileIsNotedByEveryReader() throws {
        for make in [delimited, routes, timetable, text] {
            let reader = try make()
            for content in [[], [0xEF, 0xBB, 0xBF], Array(" \n\t\r\n\n".utf8)] as [[UInt8]] {
                let result = try run(reader, content)
                XCTAssertEqual(result.values, [], "\(type(of: reader)) \(content)")
                XCTAssertEqual(result.findings, [empty], "\(type(of: reader)) \(content)")
            }
        }
    }

    func testByteOrderMarkBeforeDataIsDropped() throws {
        let result = try run(delimited(), [0xEF, 0xBB, 0xBF] + Array(stops.utf8))
        XCTAssertEqual(result.findings, [])
        XCTAssertEqual(result.values.first?.first, "Ακτή Δυμαίων")
    }

    // MARK: Bad bytes

    func testInvalidUTF8InTheMiddleOfALine() throws {
        let bad = { (text: String, marker: String) -> [UInt8] in
            let parts = text.components(separatedBy: marker)
            return Array(parts[0].utf8) + Array(marker.utf8) + [0xFF] + Array(parts.dropFirst().joined(separator: marker).utf8)
        }
        let stopsResult = try run(delimited(), bad(stops, "Ακτή Δυμ"))
        XCTAssertEqual(stopsResult.findings, ["input.txt:1:9: error: line is not valid UTF-8 (byte 0xFF at column 9); \(hint) [encoding]"])
        XCTAssertEqual(stopsResult.values, [["Άγιος Ανδρέας", "0104", "21.7298", "38.2421"]])

        // The stop list cannot be read, so its route has none; the next route still reads.
        let routesResult = try run(routes(), bad(route + "2.1 Άλλη\n0 0103!\n", "0 01"))
        XCTAssertEqual(routesResult.findings, [
            "input.txt:2:5: error: line is not valid UTF-8 (byte 0xFF at column 5); \(hint) [encoding]",
            "input.txt:1: error: route 1.1 has no stop list; expected a line like \"0 CODE! 1 CODE!\" after its heading [parse]",
        ])
        XCTAssertEqual(routesResult.values, [["2.1", "Άλλη", "0", "0103"]])

        for make in [timetable, text] {
            let result = try run(make(), bad(block + "08:00  10:00  30\n", "06:00  08:"))
            XCTAssertEqual(result.findings, ["input.txt:4:11: error: line is not valid UTF-8 (byte 0xFF at column 11); \(hint) [encoding]"])
            XCTAssertEqual(result.values.count, 1, "the other row is read")
        }
    }

    func testNULBytes() throws {
        let withNUL = Array("Ακτή".utf8) + [0] + Array(" Δυμαίων; 0102; 21.7312; 38.2466\nΆγιος Ανδρέας; 0104; 21.7298; 38.2421\n".utf8)
        let result = try run(delimited(), withNUL)
        XCTAssertEqual(result.findings, ["input.txt:1:5: error: line holds a NUL byte (at column 5); is the file UTF-16, or not text at all? [encoding]"])
        XCTAssertEqual(result.values.map { $0[1] }, ["0104"])

        // A UTF-16 file (with its byte-order mark) is refused line by line; nothing garbled gets through.
        let utf16: [UInt8] = [0xFF, 0xFE] + block.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for make in [delimited, routes, timetable, text] {
            let found = try run(make(), utf16)
            XCTAssertEqual(found.values, [], "\(found)")
            XCTAssertFalse(found.findings.isEmpty)
            XCTAssertTrue(found.findings.allSatisfy { $0.hasSuffix("[encoding]") }, "\(found.findings)")
            XCTAssertEqual(found.findings.first, "input.txt:1:1: error: line is not valid UTF-8 (byte 0xFF at column 1); \(hint) [encoding]")
            XCTAssertEqual(found.findings.last, "input.txt:5:1: error: line holds a NUL byte (at column 1); is the file UTF-16, or not text at all? [encoding]")
        }
    }

    // MARK: A 100 MB line

    func testAHundredMegabyteLineIsSkippedWithItsLength() throws {
        // The fast tier's line is 17 MiB: still over the 16 MiB limit.
        let length = TestTier.size(100 << 20, fast: 17 << 20)
        let finding = { (line: Int) in
            "input.txt:\(line): error: line is \(length) bytes long, over the limit of 16777216 bytes for one line; it is skipped [line.too-long]"
        }
        // In the middle of a file, then at its end without a final newline.
        let middle = try writeLarge("input.txt", prefix: "Ακτή Δυμαίων; 0102; 21.7312; 38.2466\n", count: length,
                                    suffix: "\nΆγιος Ανδρέας; 0104; 21.7298; 38.2421\n")
        let (records, log) = try returnsPromptly { try read(delimited(), url: middle) }
        XCTAssertEqual(findings(log), [finding(2)])
        XCTAssertEqual(records.map(\.line), [1, 3])

        for (make, content, line) in [(routes, route, 3), (timetable, block, 5), (text, block, 5)] {
            let reader = try make()
            let end = try writeLarge("input.txt", prefix: content, count: length)
            let (records, log) = try returnsPromptly { try read(reader, url: end) }
            XCTAssertEqual(findings(log), [finding(line)], "\(type(of: reader))")
            XCTAssertEqual(records.count, reader is RoutesReader ? 2 : 1)
        }
    }

    func testLineLimitIsExactAndLinesUnderItAreRead() throws {
        let url = try write("12345678\n123456789\n1234567\n", to: "input.txt")
        let reader = try LineReader(url: url, chunkSize: 4, maximumLineLength: 8)
        var lines: [String] = []
        while let line = try reader.next() { lines.append(line.text ?? "overlong \(line.overlongLength ?? -1)") }
        XCTAssertEqual(lines, ["12345678", "overlong 9", "1234567"])
    }

    // MARK: Truncation

    func testTruncatedFiles() throws {
        let cut = try run(delimited(), "Ακτή Δυμαίων; 0102; 21.7312; 38.2466\nΆγιος Ανδρέας; 01")
        XCTAssertEqual(cut.findings, ["input.txt:2: error: expected 4 fields (name; code; longitude; latitude), found 2 in \"Άγιος Ανδρέας; 01\" [parse]"])
        XCTAssertEqual(cut.values.count, 1)

        // Cut inside a two-byte letter.
        let inLetter = try run(delimited(), Array("Ακτή Δυμαίων; 0102; 21.7312; 38.2466\nΆγιος Ανδρ".utf8) + [0xCE])
        XCTAssertEqual(inLetter.findings, ["input.txt:2:11: error: line is not valid UTF-8 (byte 0xCE at column 11); \(hint) [encoding]"])

        let heading = try run(routes(), route + "2.1 Άλλη\n")
        XCTAssertEqual(heading.findings, ["input.txt:3: error: route 2.1 has no stop list; the file ends after its heading [parse]"])
        XCTAssertEqual(heading.values.count, 2)

        let list = try run(routes(), route + "2.1 Άλλη\n0 0103! 1 01")
        XCTAssertEqual(list.findings, ["input.txt:4: warning: route 2.1: the stop list does not end with \"!\"; was the file cut short? [routes.unterminated]"])
        XCTAssertEqual(list.values.last, ["2.1", "Άλλη", "1", "01"])

        let row = try run(timetable(), block + "08:00  1")
        XCTAssertEqual(row.findings, ["input.txt:5: error: line 1.1: cannot read the row \"08:00  1\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\" [timetable.row]"])
        XCTAssertEqual(row.values.count, 1)

        let extracted = try run(text(), block + "08:00  1")
        XCTAssertEqual(extracted.findings, ["input.txt:5: warning: no row pattern captured this line that looks like data: \"08:00  1\" [extract.unmatched]"])
    }

    // MARK: Encodings and line endings

    func testLegacyFileReadAsUTF8() throws {
        // «Ακτή Δυμαίων» in windows-1253.
        let legacy: [UInt8] = [0xC1, 0xEA, 0xF4, 0xDE, 0x20, 0xC4, 0xF5, 0xEC, 0xE1, 0xDF, 0xF9, 0xED] + Array("; 0102; 21.7312; 38.2466\n".utf8)
        for make in [delimited, routes, timetable, text] {
            let result = try run(make(), legacy)
            XCTAssertEqual(result.findings, ["input.txt:1:1: error: line is not valid UTF-8 (byte 0xC1 at column 1); \(hint) [encoding]"])
            XCTAssertEqual(result.values, [])
        }
        let declared = try run(reader("delimited", #"{ fields: ["name", "code", "longitude", "latitude"], encoding: "windows-1253" }"#), legacy)
        XCTAssertEqual(declared.findings, [])
        XCTAssertEqual(declared.values, [["Ακτή Δυμαίων", "0102", "21.7312", "38.2466"]])
    }

    func testUTF8FileDeclaredAsALegacyCodePage() throws {
        let declared = try reader("delimited", #"{ fields: ["name", "code", "longitude", "latitude"], encoding: "iso-8859-7" }"#)
        let result = try run(declared, "code; 0100; 1; 2\n" + stops)
        XCTAssertEqual(result.findings, [
            "input.txt:2: warning: line is UTF-8, but the source declares \"iso-8859-7\": its text reads garbled; if the file is UTF-8, remove the \"encoding\" option [encoding.mismatch]",
            "input.txt:2: error: line holds bytes that are not valid iso-8859-7 [encoding]",
        ])
        XCTAssertEqual(result.values.count, 2, "the lines that decode are still read (the warning says how they read)")
        XCTAssertNotEqual(result.values[1][0], "Άγιος Ανδρέας")

        // A real ISO-8859-7 file is not UTF-8: no warning.
        let legacy: [UInt8] = [0xC1, 0xEA, 0xF4, 0xDE] + Array("; 0102; 21.7312; 38.2466\n".utf8)
        XCTAssertEqual(try run(declared, legacy).findings, [])
    }

    func testCRLFMixedWithLF() throws {
        let mixed = "Ακτή Δυμαίων; 0102; 21.7312; 38.2466\r\nΆγιος Ανδρέας; 0104; 21.7298; 38.2421\nΠλατεία; 0105; 21.7; 38.2\r\n"
        let result = try run(delimited(), mixed)
        XCTAssertEqual(result.findings, [])
        XCTAssertEqual(result.values.map { $0[3] }, ["38.2466", "38.2421", "38.2"])

        let crlf = { (text: String) in text.replacingOccurrences(of: "\n", with: "\r\n") }
        let routesResult = try run(routes(), crlf(route) + "2.1 Άλλη\n0 0103!\r\n")
        XCTAssertEqual(routesResult.findings, [])
        XCTAssertEqual(routesResult.values.map { $0[3] }, ["0101", "0102", "0103"])
        for make in [timetable, text] {
            let result = try run(make(), crlf(block) + "08:00  10:00  30\n09:00  10:00  5\r\n")
            XCTAssertEqual(result.findings, [])
            XCTAssertEqual(result.values.count, 3)
        }
    }

    // MARK: Fields

    func testExtraAndMissingFields() throws {
        let fields = try run(delimited(), "Ακτή; 0102; 21.73; 38.24; extra\nΆγιος; 0104; 21.72\nΠλατεία; 0105; 21.7; 38.2;\n")
        XCTAssertEqual(fields.findings, [
            "input.txt:1: error: expected 4 fields (name; code; longitude; latitude), found 5 in \"Ακτή; 0102; 21.73; 38.24; extra\" [parse]",
            "input.txt:2: error: expected 4 fields (name; code; longitude; latitude), found 3 in \"Άγιος; 0104; 21.72\" [parse]",
        ])
        XCTAssertEqual(fields.values, [["Πλατεία", "0105", "21.7", "38.2"]], "a trailing separator is allowed")

        let items = try run(routes(), "1.1 Τερψιθέα\n0 0101! 1! 2 0103 extra! 3 0104!\n")
        XCTAssertEqual(items.findings, [
            "input.txt:2: error: route 1.1: expected \"INDEX CODE\" (e.g. \"3 0123\"), found \"1\" [parse]",
            "input.txt:2: error: route 1.1: expected \"INDEX CODE\" (e.g. \"3 0123\"), found \"2 0103 extra\" [parse]",
        ])
        XCTAssertEqual(items.values.map { $0[3] }, ["0101", "0104"])

        let rows = try run(timetable(), block + "08:00  10:00\n10:00  12:00  30  5\n")
        XCTAssertEqual(rows.findings, [
            "input.txt:5: error: line 1.1: cannot read the row \"08:00  10:00\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\" [timetable.row]",
            "input.txt:6: error: line 1.1: cannot read the row \"10:00  12:00  30  5\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\" [timetable.row]",
        ])
        XCTAssertEqual(rows.values.count, 1)

        let extracted = try run(text(), block + "08:00  10:00\n")
        XCTAssertEqual(extracted.findings, ["input.txt:5: warning: no row pattern captured this line that looks like data: \"08:00  10:00\" [extract.unmatched]"])
    }

    // MARK: Times

    func testImpossibleTimesInATimetable() throws {
        let result = try run(timetable(), block + "23:00  24:00  30\n25:99  26:00  20\n7:5  08:00  20\n22:00  24:01  10\n")
        XCTAssertEqual(result.findings, [
            "input.txt:6: error: line 1.1: \"25:99\" is not a time of day (hours 00–24, minutes 00–59) [timetable.time]",
            "input.txt:7: error: line 1.1: cannot read the row \"7:5  08:00  20\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\" [timetable.row]",
            "input.txt:8: error: line 1.1: \"24:01\" is not a time of day (hours 00–24, minutes 00–59) [timetable.time]",
        ])
        XCTAssertEqual(result.values.map { "\($0[4]!)-\($0[5]!)" }, ["360-480", "1380-1440"], "24:00 is the end of the day")
    }

    // MARK: Regular expressions

    func testCatastrophicBacktrackingStopsAtTheMatchLimit() throws {
        // Every way of cutting 40 a's into a's and aa's is tried before the "!" fails the match.
        let crafted = String(repeating: "a", count: 40) + "!b"
        let extractor = try reader("text", #"{ extract: { row: "^(?<v>(a|aa)+)b$", matchLimit: 10000 } }"#)
        let extracted = try returnsPromptly { try run(extractor, "ab\n\(crafted)\naab\n") }
        XCTAssertEqual(extracted.findings, [
            "input.txt:2: error: regular expression /^(?<v>(a|aa)+)b$/ failed: match limit exceeded on the line \"\(crafted)\"; the line is passed over [extract.match-limit]",
        ])
        XCTAssertEqual(extracted.values, [["a"], ["aa"]])

        let slow = try reader("timetable", #"""
            { days: [{ heading: "Καθημερινές", code: "weekdays" }], columnHeading: "^Από\\s+Εώς\\s+Συχνότητα$",
              row: "^(?<from>\\d{1,2}:\\d{2})\\s+(?<until>\\d{1,2}:\\d{2})\\s+(?<every>(\\d|\\d\\d)+)$" }
            """#)
        let digits = String(repeating: "1", count: 60) + "x"
        let rows = try returnsPromptly { try run(slow, block + "08:00  10:00  \(digits)\n09:00  10:00  5\n") }
        XCTAssertEqual(rows.findings, [
            #"input.txt:5: error: regular expression /^(?<from>\d{1,2}:\d{2})\s+(?<until>\d{1,2}:\d{2})\s+(?<every>(\d|\d\d)+)$/ failed: match limit exceeded on the line "08:00  10:00  \#(digits)"; the line is passed over [timetable.match-limit]"#,
        ])
        XCTAssertEqual(rows.values.map { $0[6] }, ["20", "5"])
    }
}
