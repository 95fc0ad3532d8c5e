import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class DelimitedReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> DelimitedReader {
        try DelimitedReader(options: JSONValue.object(options).decode(DelimitedReader.Options.self, codingPath: []))
    }

    private func strings(_ names: String...) -> JSONValue { .array(names.map { .string($0) }) }

    private var stopsReader: DelimitedReader {
        get throws { try reader(["fields": strings("name", "code", "longitude", "latitude")]) }
    }

    func testFieldNames() throws {
        XCTAssertEqual(try stopsReader.fieldNames, ["name", "code", "longitude", "latitude"])
        let tail = try reader(["fields": strings("stop"), "tail": .string("line")])
        XCTAssertEqual(tail.fieldNames, ["stop", "line", "position"])
        let renamed = try reader(["fields": strings("stop"), "tail": .string("line"), "tailPosition": .string("index")])
        XCTAssertEqual(renamed.fieldNames, ["stop", "line", "index"])
    }

    func testFieldsAreTrimmed() throws {
        let (records, log) = try read(stopsReader, "  Ακτή Δυμαίων ;0102;\t21.72433 ;  38.2336  \n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records[0].values, ["Ακτή Δυμαίων", "0102", "21.72433", "38.2336"])
        XCTAssertEqual(records[0].line, 1)
    }

    func testGreekQuestionMarkSeparatesLikeSemicolon() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let (records, log) = try read(lines, "6.2; Ερμού\n6.3\u{037E} Παραλία Προαστείου - Καστελλόκαμπος\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["6.2", "Ερμού"], ["6.3", "Παραλία Προαστείου - Καστελλόκαμπος"]])
        XCTAssertEqual(records.map(\.line), [1, 2])
    }

    func testGreekQuestionMarkIsNotASeparatorForOtherSeparators() throws {
        let pipes = try reader(["fields": strings("a", "b"), "separator": .string("|")])
        let (records, log) = try read(pipes, "x\u{037E} y | z\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["x\u{037E} y", "z"]])
    }

    /// Without `quote`, the first line whose values look quoted (a `"` at both ends, a doubled `""`) is one warning
    /// per file; the values keep their quotes, as the warning says. Lone quotes in text are no such value.
    func testValuesThatLookQuotedAreReportedOncePerFile() throws {
        let csv = try reader(["fields": strings("code", "name"), "separator": .string(",")])
        let (records, log) = try read(csv, "1,O'Brien 5\" pipe\n2,\"BSAM\"\n3,\"\"\n4,say \"\"hi\"\"\n")
        XCTAssertEqual(records.map { $0.values[1] }, ["O'Brien 5\" pipe", "\"BSAM\"", "\"\"", "say \"\"hi\"\""])
        XCTAssertEqual(log.diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code)" }, ["2 delimited.looks-quoted"])
        XCTAssertTrue(DelimitedReader.looksQuoted("say \"\"hi\"\""))
        XCTAssertFalse(DelimitedReader.looksQuoted("\""))
        XCTAssertFalse(DelimitedReader.looksQuoted("5\" pipe"))
    }

    /// A header passed over is compared with the fields, which are read by position: the same names in the same
    /// order, or titles that name no field, say nothing; a field the header puts elsewhere, or another number of
    /// columns, is a warning.
    func testAHeaderPassedOverThatDiffersFromTheFieldsIsAWarning() throws {
        let csv = try reader(["fields": strings("code", "name"), "separator": .string(","), "header": .bool(true)])
        for (header, warns) in [("code,name", false), ("\"code\",\"name\"", false), ("Κωδικός,Όνομα", false), ("name,code", true),
                                ("code,name,extra", true), ("code", true), ("Κωδικός", true)] {
            let (records, log) = try read(csv, header + "\n1,Ακτή\n")
            XCTAssertEqual(records.map(\.values), [["1", "Ακτή"]], header)
            XCTAssertEqual(log.diagnostics.map(\.code), warns ? ["delimited.header-fields"] : [], header)
        }
        let quoted = try reader(["fields": strings("code", "name"), "separator": .string(","), "header": .bool(true), "quote": .string("\"")])
        let (_, log) = try read(quoted, "\"name\",\"code\"\n1,\"Ακτή\"\n")
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.header-fields"], "with quote, the header is compared too")
    }

    func testTrailingSeparatorIsAllowed() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let (records, log) = try read(lines, "1.1; Τερψιθέα;\n1.2; Πλαζ\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["1.1", "Τερψιθέα"], ["1.2", "Πλαζ"]])
    }

    func testTailGivesOneRecordPerItemWithPositions() throws {
        let tail = try reader(["fields": strings("line"), "tail": .string("stop")])
        let (records, log) = try read(tail, "1.2; 0110; 0111; 0113;\n1.3; 0211\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [
            ["1.2", "0110", "0"], ["1.2", "0111", "1"], ["1.2", "0113", "2"],
            ["1.3", "0211", "0"],
        ])
        XCTAssertEqual(records.map(\.line), [1, 1, 1, 2])
    }

    func testTailWithNoItemsGivesNoRecordAndNoError() throws {
        let tail = try reader(["fields": strings("line"), "tail": .string("stop")])
        let (records, log) = try read(tail, "9.9;\n")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.count, 0)
    }

    func testTooFewFieldsIsAParseErrorAndReadingGoesOn() throws {
        let text = "Αγίου Ανδρέου; 0105; 21.72667; 38.2384\nΑγίου Σπυρίδωνος; 0130; 21.73512\nΝόρμαν; 0106; 21.7281; 38.2403\n"
        let (records, log) = try read(stopsReader, text, name: "StopsUTF8.txt")
        XCTAssertEqual(records.map { $0.values[1] }, ["0105", "0106"])
        XCTAssertEqual(records.map(\.line), [1, 3])
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "parse")
        XCTAssertEqual(diagnostic.severity, .error)
        XCTAssertEqual(diagnostic.provenance, Provenance(file: "StopsUTF8.txt", line: 2))
        XCTAssertEqual(diagnostic.message,
                       "expected 4 fields (name; code; longitude; latitude), found 3 in \"Αγίου Σπυρίδωνος; 0130; 21.73512\"")
    }

    func testTooManyFieldsIsAParseError() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let (records, log) = try read(lines, "1.1; a; b\n1.2; c\n")
        XCTAssertEqual(records.map(\.values), [["1.2", "c"]])
        XCTAssertEqual(log.diagnostics.map(\.code), ["parse"])
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 1)
        XCTAssertTrue(log.diagnostics.first?.message.contains("expected 2 fields (line; name), found 3") == true)
    }

    func testTailWithTooFewFixedFieldsSaysAtLeast() throws {
        let tail = try reader(["fields": strings("stop", "kind"), "tail": .string("line")])
        let (records, log) = try read(tail, "0102\n0104; bus; 3.2;\n")
        XCTAssertEqual(records.map(\.values), [["0104", "bus", "3.2", "0"]])
        XCTAssertEqual(log.diagnostics.count, 1)
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 1)
        XCTAssertEqual(log.diagnostics.first?.message, "expected at least 2 fields (stop; kind; line…), found 1 in \"0102\"")
    }

    func testBlankLinesAreSkipped() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let (records, log) = try read(lines, "\n1.1; a\n   \n\t\n\r\n1.2; b\n\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["1.1", "a"], ["1.2", "b"]])
        XCTAssertEqual(records.map(\.line), [2, 6])
    }

    func testHeaderSkipsTheFirstLine() throws {
        let lines = try reader(["fields": strings("line", "name"), "header": .bool(true)])
        let (records, log) = try read(lines, "\nline; name; extra\n1.1; a\n1.2; b\n")
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.header-fields"], "the header has a column more than the fields")
        XCTAssertEqual(records.map(\.values), [["1.1", "a"], ["1.2", "b"]])
        XCTAssertEqual(records.map(\.line), [3, 4])
    }

    func testWithoutHeaderTheFirstLineIsData() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let (records, _) = try read(lines, "line; name\n1.1; a\n")
        XCTAssertEqual(records.map(\.values), [["line", "name"], ["1.1", "a"]])
    }

    func testOtherSeparator() throws {
        let tabs = try reader(["fields": strings("a", "b", "c"), "separator": .string("\t")])
        let (records, log) = try read(tabs, "1\t 2 \t3\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["1", "2", "3"]])
    }

    func testSeveralByteSeparator() throws {
        let colons = try reader(["fields": strings("a", "b", "c"), "separator": .string("::")])
        let (records, log) = try read(colons, "x:: y:z ::\t::\nΚ::Λ::Μ:\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [["x", "y:z", ""], ["Κ", "Λ", "Μ:"]])
    }

    func testEmptySeparatorIsRefused() throws {
        XCTAssertThrowsError(try reader(["fields": strings("a"), "separator": .string("")])) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(keyPathString(context.codingPath), "separator")
            XCTAssertEqual(context.debugDescription, "the separator must not be empty")
        }
    }

    func testUnknownOptionIsRefused() throws {
        XCTAssertThrowsError(try reader(["fields": strings("a"), "seperator": .string(",")])) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(keyPathString(context.codingPath), "seperator")
            XCTAssertTrue(context.debugDescription.hasPrefix("unknown key \"seperator\"; expected one of: separator, fields"),
                          context.debugDescription)
        }
    }

    func testInvalidUTF8LineIsAnEncodingErrorAndOthersAreRead() throws {
        let lines = try reader(["fields": strings("line", "name")])
        let bytes = Array("5.1; Τσουκαλέικα\n5.2; Μον".utf8) + [0xFF] + Array("όδενδρι\n6.1; Πανεπιστήμιο Express\n".utf8)
        let url = try write(Data(bytes), to: "linesutf8.txt")
        let (records, log) = try read(lines, url: url)
        XCTAssertEqual(records.map { $0.values[0] }, ["5.1", "6.1"])
        XCTAssertEqual(records.map(\.line), [1, 3])
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "encoding")
        XCTAssertEqual(diagnostic.severity, .error)
        XCTAssertEqual(diagnostic.provenance?.file, "linesutf8.txt")
        XCTAssertEqual(diagnostic.provenance?.line, 2)
        // "5.2; Μον" is 8 characters, so the bad byte is the 9th.
        XCTAssertEqual(diagnostic.provenance?.column, 9)
        XCTAssertTrue(diagnostic.message.hasPrefix("line is not valid UTF-8 (byte 0xFF at column 9)"), diagnostic.message)
        XCTAssertTrue(diagnostic.message.contains("set the source's \"encoding\" option"), diagnostic.message)
        XCTAssertTrue(diagnostic.message.contains("\"windows-1253\""), diagnostic.message)
        XCTAssertEqual(diagnostic.formatted.hasPrefix("linesutf8.txt:2:9: error: line is not valid UTF-8"), true, diagnostic.formatted)
    }

    func testWindows1253FileWithEncodingOption() throws {
        let cp1253 = try reader(["fields": strings("name", "code"), "encoding": .string("windows-1253")])
        // "Αθήνα; 0101" and "Πάτρα; 0102" in windows-1253, CRLF.
        let bytes: [UInt8] = [0xC1, 0xE8, 0xDE, 0xED, 0xE1] + Array("; 0101\r\n".utf8) + [0xD0, 0xDC, 0xF4, 0xF1, 0xE1] + Array("; 0102\r\n".utf8)
        let url = try write(Data(bytes), to: "stops-1253.txt")
        let (records, log) = try read(cp1253, url: url)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(records[0].values[0].map { Array($0.unicodeScalars) }, Array("Αθήνα".unicodeScalars))
        XCTAssertEqual(records[1].values, ["Πάτρα", "0102"])
    }

    func testLineInvalidInTheCodePageIsAnEncodingError() throws {
        let cp1253 = try reader(["fields": strings("name", "code"), "encoding": .string("windows-1253")])
        let bytes: [UInt8] = [0xC1, 0xFF] + Array("; 0101\n".utf8) + [0xC1] + Array("; 0102\n".utf8)
        let url = try write(Data(bytes), to: "stops-1253.txt")
        let (records, log) = try read(cp1253, url: url)
        XCTAssertEqual(records.map(\.values), [["Α", "0102"]])
        XCTAssertEqual(log.diagnostics.count, 1)
        XCTAssertEqual(log.diagnostics.first?.code, "encoding")
        XCTAssertEqual(log.diagnostics.first?.provenance, Provenance(file: "stops-1253.txt", line: 1))
        XCTAssertEqual(log.diagnostics.first?.message, "line holds bytes that are not valid windows-1253")
    }

    func testUnknownEncodingIsRefusedWhenTheReaderIsMade() {
        XCTAssertThrowsError(try reader(["fields": strings("a"), "encoding": .string("no-such-encoding")])) { error in
            XCTAssertEqual((error as? EncodingError)?.message, "unknown encoding \"no-such-encoding\"")
        }
    }
}
