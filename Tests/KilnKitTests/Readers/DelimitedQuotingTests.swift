import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The `delimited` reader with `quote` (RFC 4180) and `header: "names"`. Expected values come from Python's `csv`
/// module reading the same bytes, or are the values Kiln's own `csv` export was given.
final class DelimitedQuotingTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> DelimitedReader {
        try DelimitedReader(options: JSONValue.object(options).decode(DelimitedReader.Options.self, codingPath: []))
    }

    private func strings(_ names: [String]) -> JSONValue { .array(names.map { .string($0) }) }

    private func csvReader(_ fields: [String], header: JSONValue? = nil) throws -> DelimitedReader {
        var options: [String: JSONValue] = ["fields": strings(fields), "separator": .string(","), "quote": .string("\"")]
        if let header { options["header"] = header }
        return try reader(options)
    }

    /// Python's `csv.reader` over the file: each record's fields and the line it starts on.
    private func python(_ url: URL) throws -> [(fields: [String], line: Int)] {
        let data = try standardOutput(of: URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import csv, json, sys
            rows = []
            with open(sys.argv[1], newline="", encoding="utf-8") as f:
                reader = csv.reader(f)
                start = 1
                for row in reader:
                    rows.append({"fields": row, "line": start})
                    start = reader.line_num + 1
            print(json.dumps(rows))
            """, url.path])
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        return try rows.map { (try XCTUnwrap($0["fields"] as? [String]), try XCTUnwrap($0["line"] as? Int)) }
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    func testHostileQuotedFieldsMatchPythonsCSV() throws {
        let text = "1,\"Hospital\",plain\r\n"
            + "2,\"Main St, North\",\"say \"\"hi\"\"\"\n"
            + "3,\"two\nlines\",\"crlf\r\ninside\"\r\n"
            + "4,  leading and trailing  ,\"\"\n"
            + "5,\"Ακτή Δυμαίων; ,\",\" x \"\n"
            + "6,\"\"\"\",\n"
            + "7,\"para one\n\n   \npara two\",z\n"
        let url = try write(Data(text.utf8), to: "hostile.csv")
        let (records, log) = try read(csvReader(["id", "name", "note"]), url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        let expected = try python(url)
        XCTAssertEqual(expected.count, 7)
        XCTAssertEqual(records.map { $0.values.map { $0 ?? "NULL" } }, expected.map(\.fields))
        XCTAssertEqual(records.map(\.line), expected.map(\.line))
        XCTAssertEqual(records.map(\.line), [1, 2, 3, 6, 7, 8, 9])
    }

    /// csv-spectrum and old Mac OS exports end records with CR alone; Python's `csv` reads them (a CR inside a quoted
    /// field stays text), and so does Kiln, with or without `quote`, counting lines as Python does.
    func testRecordsEndedByCRAloneAreReadAsPythonReadsThem() throws {
        let text = "1,\"two\rlines\",x\r2,plain,y\r\r3,\"crlf\r\ninside\",z\n4,Ακτή,w\r5,\"\"\"\",v\r"
        let url = try write(Data(text.utf8), to: "cr.csv")
        let (records, log) = try read(csvReader(["id", "name", "note"]), url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        // Python gives the blank line as an empty record; Kiln skips blank lines between records.
        let expected = try python(url).filter { !$0.fields.isEmpty }
        XCTAssertEqual(expected.count, 5)
        XCTAssertEqual(records.map { $0.values.map { $0 ?? "NULL" } }, expected.map(\.fields))
        XCTAssertEqual(records.map(\.line), expected.map(\.line))
        XCTAssertEqual(records.map(\.line), [1, 3, 5, 7, 8])
        // Without quote: one record per line, whatever ends it.
        let plain = try write(Data("0101;A\r0102;B\r\n0103;C\n0104;D\r".utf8), to: "cr.txt")
        let (lines, plainLog) = try read(reader(["fields": strings(["code", "name"])]), url: plain)
        XCTAssertEqual(plainLog.diagnostics.count, 0, describe(plainLog))
        XCTAssertEqual(lines.map { $0.values.compactMap { $0 } }, [["0101", "A"], ["0102", "B"], ["0103", "C"], ["0104", "D"]])
        XCTAssertEqual(lines.map(\.line), [1, 2, 3, 4])
    }

    func testWithoutTheQuoteOptionQuotesStayText() throws {
        let (records, log) = try read(reader(["fields": strings(["id", "name"]), "separator": .string(",")]), "1,\"Hospital\"\n")
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.looks-quoted"], "kept as text, and said so")
        XCTAssertEqual(records.map(\.values), [["1", "\"Hospital\""]])
    }

    func testSemicolonFilesWithQuotesKeepTheGreekQuestionMarkAndTrailingSeparator() throws {
        let quoted = try reader(["fields": strings(["line", "name"]), "quote": .string("\"")])
        let (records, log) = try read(quoted, "6.2;\"Ερμού; Πλατεία\";\n6.3\u{037E}Παραλία\n")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map(\.values), [["6.2", "Ερμού; Πλατεία"], ["6.3", "Παραλία"]])
    }

    func testAnEmptyQuotedLastFieldIsAValueNotATrailingSeparator() throws {
        let (records, log) = try read(csvReader(["a", "b"]), "x,\"\"\n")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map(\.values), [["x", ""]])
    }

    func testUnclosedQuoteIsAnErrorAtTheLineWhereItOpened() throws {
        let text = "1,fine\n2,\"never closed\n3,more\n4,text\n"
        let (records, log) = try read(csvReader(["id", "name"]), text, name: "stops.csv")
        XCTAssertEqual(records.map(\.values), [["1", "fine"]])
        XCTAssertEqual(log.diagnostics.map(\.code), ["parse"])
        let finding = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(finding.severity, .error)
        XCTAssertEqual(finding.provenance, Provenance(file: "stops.csv", line: 2, column: 3))
        XCTAssertTrue(finding.message.contains("never closed"), finding.message)
        XCTAssertTrue(finding.message.contains("record of line 2 is left out"), finding.message)
    }

    func testALineInsideAQuotedFieldThatCannotBeReadLeavesTheRecordOutWithAnError() throws {
        let bytes = Array("1,\"opens\n".utf8) + [0xFF] + Array("\n2,next\n".utf8)
        let url = try write(Data(bytes), to: "gap.csv")
        let (records, log) = try read(csvReader(["id", "name"]), url: url)
        XCTAssertEqual(records.map(\.values), [["2", "next"]])
        XCTAssertEqual(log.diagnostics.map(\.code), ["encoding", "parse"])
        XCTAssertEqual(log.diagnostics.map(\.provenance?.line), [2, 1])
        XCTAssertEqual(log.diagnostics.last?.message,
                       "line 2 inside the quoted field opened at line 1 could not be read: the record of line 1 is left out")
    }

    func testAQuotedFieldStillOpenAfter16MiBStopsTheFileInBoundedMemory() throws {
        var bytes = Array("1,fine\n2,\"opens here\n".utf8)
        let line = Array(repeating: UInt8(ascii: "x"), count: 1023) + [0x0A]
        for _ in 0..<(17 << 10) { bytes += line }
        let url = try write(Data(bytes), to: "open.csv")
        let (records, log) = try read(csvReader(["id", "name"]), url: url)
        XCTAssertEqual(records.map(\.values), [["1", "fine"]])
        XCTAssertEqual(log.diagnostics.map(\.code), ["parse"])
        XCTAssertEqual(log.diagnostics.first?.provenance, Provenance(file: "open.csv", line: 2, column: 3))
        XCTAssertEqual(log.diagnostics.first?.message, "the quoted field opened at line 2 is not closed within 16 MiB: the rest of the file is not read")
    }

    func testStrayQuoteAndTextAfterTheClosingQuoteAreReportedAndKeptAsPythonReadsThem() throws {
        let text = "1,ab\"cd,x\n2,\"ab\"cd,y\n"
        let url = try write(Data(text.utf8), to: "stray.csv")
        let (records, log) = try read(csvReader(["id", "name", "tag"]), url: url)
        XCTAssertEqual(records.map { $0.values.map { $0 ?? "NULL" } }, try python(url).map(\.fields))
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.quote", "delimited.quote"])
        XCTAssertEqual(log.diagnostics.map(\.severity), [.warning, .warning])
        XCTAssertEqual(log.diagnostics.map(\.provenance), [Provenance(file: "stray.csv", line: 1, column: 5),
                                                           Provenance(file: "stray.csv", line: 2, column: 7)])
        XCTAssertTrue(log.diagnostics[0].message.hasPrefix("a quote inside a field that does not start with one"))
        XCTAssertTrue(log.diagnostics[1].message.hasPrefix("text after the closing quote"))
    }

    func testAWrongFieldCountInARecordOfSeveralLinesNamesItsLines() throws {
        let (records, log) = try read(csvReader(["a", "b"]), "1,\"x\ny\",extra\n2,z\n")
        XCTAssertEqual(records.map(\.values), [["2", "z"]])
        XCTAssertEqual(log.diagnostics.map(\.provenance?.line), [1])
        XCTAssertEqual(log.diagnostics.first?.message, "expected 2 fields (a, b), found 3 in the record of lines 1–2")
    }

    func testHeaderNamesReadFieldsByNameInAnyOrder() throws {
        let names = try csvReader(["stop_name", "stop_id"], header: .string("names"))
        let text = "stop_id,stop_code,stop_name\n2,52246,\"8th St:Portola Av\"\n3,57793,\"Main St, North\"\n"
        let (records, log) = try read(names, text, name: "stops.txt")
        XCTAssertEqual(records.map(\.values), [["8th St:Portola Av", "2"], ["Main St, North", "3"]])
        XCTAssertEqual(records.map(\.line), [2, 3])
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.unread-column"])
        XCTAssertEqual(log.diagnostics.first?.severity, .info)
        XCTAssertEqual(log.diagnostics.first?.provenance, Provenance(file: "stops.txt", line: 1))
        XCTAssertEqual(log.diagnostics.first?.message, "no field reads the column \"stop_code\": its values are not read")
    }

    func testAFieldTheHeaderLacksIsAnError() throws {
        let names = try csvReader(["stop_id", "stop_lat", "stop_lon"], header: .string("names"))
        let (records, log) = try read(names, "stop_id,stop_lat\n2,37.77\n", name: "stops.txt")
        XCTAssertEqual(records.map(\.values), [["2", "37.77", nil]])
        XCTAssertEqual(log.diagnostics.map(\.code), ["delimited.header"])
        XCTAssertEqual(log.diagnostics.first?.severity, .error)
        XCTAssertEqual(log.diagnostics.first?.message, "the header has no column for the field \"stop_lon\"; its columns: \"stop_id\", \"stop_lat\"")
    }

    func testHeaderNamesWorkForUnquotedSemicolonFilesToo() throws {
        let names = try reader(["fields": strings(["name", "code"]), "header": .string("names")])
        let (records, log) = try read(names, "code; name;\n0102; Ακτή Δυμαίων;\n")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map(\.values), [["Ακτή Δυμαίων", "0102"]])
    }

    func testKilnsCSVExportReadsBackToTheSameValues() throws {
        let values = ["plain", "comma, inside", "quote \" inside", "\"starts quoted\"", "line\nbreak", "crlf\r\nbreak",
                      "lone\rcr", "  leading spaces", "trailing  ", "", ";semicolon;", "Ερμού ; Πλατεία", "\"\"", ",", "\n"]
        var text = CSVWriter.field("id") + "," + CSVWriter.field("value") + "\n"
        for (index, value) in values.enumerated() { text += "\(index)," + CSVWriter.field(value) + "\n" }
        let (records, log) = try read(csvReader(["value", "id"], header: .string("names")), text)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map { $0.values[0] }, values)
        XCTAssertEqual(records.map { $0.values[1] }, values.indices.map(String.init))
    }

    func testOptionsAreChecked() throws {
        func refusal(_ options: [String: JSONValue]) -> String? {
            do {
                _ = try reader(options)
                return nil
            } catch DecodingError.dataCorrupted(let context) {
                return keyPathString(context.codingPath) + ": " + context.debugDescription
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(refusal(["fields": strings(["a"]), "quote": .string("''")]),
                       "quote: the quote must be one printable ASCII character, such as \"\\\"\"")
        XCTAssertEqual(refusal(["fields": strings(["a"]), "quote": .string(";")]), "quote: the quote must not be part of the separator")
        XCTAssertEqual(refusal(["fields": strings(["a"]), "header": .string("yes")]), "header: expected true, false or \"names\"; found \"yes\"")
        XCTAssertEqual(refusal(["fields": strings(["a"]), "tail": .string("b"), "header": .string("names")]),
                       "tail: a tail is read by position; with header: \"names\" every field is read by its column's name")
        XCTAssertEqual(refusal(["fields": strings(["a", "a"])]), "fields: the field \"a\" is named twice")
    }
}
