import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class TimetableReaderTests: KilnTestCase {
    /// The options of the `timetables` source in raw/patras/kiln.json5.
    private func reader(extra: [String: JSONValue] = [:]) throws -> TimetableReader {
        func day(_ heading: String, _ code: String) -> JSONValue {
            .object(["heading": .string(heading), "code": .string(code)])
        }
        var options: [String: JSONValue] = [
            "days": .array([day("Καθημερινές", "weekdays"), day("Σάββατο", "saturday"),
                            day("Κυριακή", "sunday"), day("Αργίες", "holidays")]),
            "columnHeading": .string(#"^Από\s+(?:Εώς|Έως)\s+Συχνότητα$"#),
        ]
        options.merge(extra) { _, new in new }
        return try TimetableReader(options: JSONValue.object(options).decode(TimetableReader.Options.self, codingPath: []))
    }

    /// The fields of a record by name.
    private func fields(_ record: Record) throws -> [String: String] {
        let names = try reader().fieldNames
        var result: [String: String] = [:]
        for (name, value) in zip(names, record.values) { result[name] = value }
        return result
    }

    /// `days dayMask from until every` of each record, for compact comparisons.
    private func rows(_ records: [Record]) -> [String] {
        records.map { ($0.values[0] ?? "nil") + " " + $0.values[2...6].map { $0 ?? "nil" }.joined(separator: " ") }
    }

    private let basic = """
        1.1 Τερψιθέα - Εγλυκάδα
        Καθημερινές
        Από  Εώς  Συχνότητα
        06:00  07:00  20
        07:00  21:00  10

        """

    func testFieldNames() throws {
        XCTAssertEqual(try reader().fieldNames, ["line", "name", "days", "dayMask", "from", "until", "every", "heading"])
    }

    func testBasicBlock() throws {
        let (records, log) = try read(reader(), basic, name: "Timetables_UTF8.txt")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.count, 2)
        let first = try fields(records[0])
        XCTAssertEqual(first, ["line": "1.1", "name": "Τερψιθέα - Εγλυκάδα", "days": "weekdays", "dayMask": "1",
                               "from": "360", "until": "420", "every": "20", "heading": "Καθημερινές"])
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 360 420 20", "1.1 weekdays 1 420 1260 10"])
        XCTAssertEqual(records.map(\.line), [4, 5])
    }

    func testMultiDayHeadings() throws {
        let text = """
            1.2 Πλαζ - Ρωμανού
            Σάββατο - Κυριακή
            Από  Εώς  Συχνότητα
            08:00  20:00  60
            Σάββατο, Κυριακή & Αργίες
            Από  Εώς  Συχνότητα
            09:00  10:00  30
            Αργίες / Καθημερινές + Σάββατο
            Από  Εώς  Συχνότητα
            10:00  11:00  15

            """
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.2 saturday,sunday 6 480 1200 60",
                                       "1.2 saturday,sunday,holidays 14 540 600 30",
                                       // Codes come in the manifest's order, whatever the heading's order.
                                       "1.2 weekdays,saturday,holidays 11 600 660 15"])
        XCTAssertEqual(try fields(records[1])["heading"], "Σάββατο, Κυριακή & Αργίες")
    }

    func testRepeatedDayCountsOnce() throws {
        let text = "1.1 Α\nΣάββατο - Σάββατο\nΑπό  Εώς  Συχνότητα\n08:00  09:00  60\n"
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 saturday 2 480 540 60"])
    }

    func testHeadingInOtherCaseAndWithoutAccentsIsAccepted() throws {
        let text = """
            1.1 Α
            ΣΑΒΒΑΤΟ
            Από  Εώς  Συχνότητα
            08:00  09:00  60
            κυριακη - ΑΡΓΙΕΣ
            Από  Εώς  Συχνότητα
            08:00  09:00  30
            """
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 saturday 2 480 540 60", "1.1 sunday,holidays 12 480 540 30"])
    }

    func testAliasesAreAccepted() throws {
        let days: JSONValue = .array([
            .object(["heading": .string("Καθημερινές"), "code": .string("weekdays"), "aliases": .array([.string("Δευτέρα - Παρασκευή")])]),
            .object(["heading": .string("Σάββατο"), "code": .string("saturday")]),
        ])
        let aliased = try reader(extra: ["days": days, "daySeparator": .string(#"\s*[,&]\s*"#)])
        let (records, log) = try read(aliased, "1.1 Α\nΔευτέρα - Παρασκευή & Σάββατο\n07:00  08:00  10\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays,saturday 3 420 480 10"])
    }

    func testColumnHeadingWithΈως() throws {
        let text = "1.1 Α\nΚαθημερινές\nΑπό  Έως  Συχνότητα\n06:00  07:00  20\n\n2.1 Β\nΚαθημερινές\nΑπό\tΕώς Συχνότητα\n06:00  07:00  20\n"
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 360 420 20", "2.1 weekdays 1 360 420 20"])
    }

    func testOvernightRowRunsPastMidnight() throws {
        let text = "1.1 Α\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n22:00  01:00  30\n23:00  00:00  60\n"
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 1320 1500 30", "1.1 weekdays 1 1380 1440 60"])
    }

    func testEndNotAfterStartIsATimeOrderError() throws {
        let text = "2.2 Ταραμπούρα - Τ.Ε.Ι.\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n06:00  14:00  20\n14:00  12:00  20\n10:00  10:00  20\n15:00  16:00  20\n"
        let (records, log) = try read(reader(), text, name: "Timetables_UTF8.txt")
        XCTAssertEqual(rows(records), ["2.2 weekdays 1 360 840 20", "2.2 weekdays 1 900 960 20"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.time-order", "timetable.time-order"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance }, [Provenance(file: "Timetables_UTF8.txt", line: 5),
                                                               Provenance(file: "Timetables_UTF8.txt", line: 6)])
        XCTAssertEqual(log.diagnostics[0].message,
                       "line 2.2: the period ends at 12:00, not after it starts at 14:00; only an end before 04:00 may run past midnight")
    }

    func testOvernightLimitIsConfigurable() throws {
        let late = try reader(extra: ["overnightBefore": .string("01:00")])
        let (records, log) = try read(late, "1.1 Α\nΚαθημερινές\n22:00  00:30  30\n22:00  02:00  30\n")
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 1320 1470 30"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.time-order"])
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 4)
    }

    func testBadOvernightLimitIsRefused() throws {
        XCTAssertThrowsError(try reader(extra: ["overnightBefore": .string("4")])) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "overnightBefore must be a time like 04:00, not \"4\"")
        }
    }

    func testRowPatternNeedsNamedGroups() throws {
        XCTAssertThrowsError(try reader(extra: ["row": .string(#"^(?<from>\S+)\s+(?<until>\S+)\s+(\d+)$"#)])) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "the timetable row pattern needs a named group (?<every>…)")
        }
    }

    func testImpossibleTimeIsATimeError() throws {
        let text = "1.1 Α\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n25:99  26:00  20\n06:00  07:60  20\n07:00  08:00  20\n"
        let (records, log) = try read(reader(), text, name: "Timetables_UTF8.txt")
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 420 480 20"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.time", "timetable.time"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance?.line }, [4, 5])
        XCTAssertEqual(log.diagnostics[0].message, "line 1.1: \"25:99\" is not a time of day (hours 00–24, minutes 00–59)")
        XCTAssertEqual(log.diagnostics[1].message, "line 1.1: \"07:60\" is not a time of day (hours 00–24, minutes 00–59)")
    }

    func testUnknownDayHeadingSkipsItsRows() throws {
        let text = """
            1.4 Ρωμανού - Σύνορα
            Καθημερινές
            Από  Εώς  Συχνότητα
            06:00  22:00  30
            Τρίτη
            Από  Εώς  Συχνότητα
            10:00  12:00  30
            12:00  14:00  30

            2.1 Ταραμπούρα
            Σάββατο
            Από  Εώς  Συχνότητα
            07:00  08:00  40

            """
        let (records, log) = try read(reader(), text, name: "Timetables_UTF8.txt")
        XCTAssertEqual(rows(records), ["1.4 weekdays 1 360 1320 30", "2.1 saturday 2 420 480 40"])
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "timetable.unknown-day")
        XCTAssertEqual(diagnostic.severity, .error)
        XCTAssertEqual(diagnostic.provenance, Provenance(file: "Timetables_UTF8.txt", line: 5))
        XCTAssertEqual(diagnostic.message,
                       "line 1.4: unknown day heading \"Τρίτη\"; expected day names from: Καθημερινές, Σάββατο, Κυριακή, Αργίες (the rows under it are skipped)")
    }

    func testHeadingWithOneUnknownDayIsUnknown() throws {
        let (records, log) = try read(reader(), "1.1 Α\nΣάββατο - Τρίτη\n08:00  09:00  60\n")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.unknown-day"])
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 2)
    }

    func testUnparseableRowIsARowError() throws {
        let text = "8.1 Πάτρα - Καλλιθέα\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n06:00 - 08:00 every 20\n08:00  22:00  30\n"
        let (records, log) = try read(reader(), text, name: "Timetables_UTF8.txt")
        XCTAssertEqual(rows(records), ["8.1 weekdays 1 480 1320 30"])
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "timetable.row")
        XCTAssertEqual(diagnostic.provenance, Provenance(file: "Timetables_UTF8.txt", line: 4))
        XCTAssertEqual(diagnostic.message,
                       "line 8.1: cannot read the row \"06:00 - 08:00 every 20\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\"")
    }

    func testFourDigitFrequencyIsARowError() throws {
        let (records, log) = try read(reader(), "1.1 Α\nΚαθημερινές\n06:00  08:00  1000\n")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.row"])
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 3)
    }

    func testRowBeforeAnyDayHeading() throws {
        let (records, log) = try read(reader(), "1.1 Α\n06:00  08:00  20\n")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["timetable.no-heading"])
        XCTAssertEqual(log.diagnostics.first?.provenance?.line, 2)
        XCTAssertEqual(log.diagnostics.first?.message,
                       "row of line 1.1 before any day heading; expected a heading such as \"Καθημερινές\"")
    }

    func testSeveralBlocks() throws {
        let text = """
            1.1 Τερψιθέα - Εγλυκάδα
            Καθημερινές
            Από  Εώς  Συχνότητα
            06:20  07:00  20
            Κυριακή - Αργίες
            Από  Εώς  Συχνότητα
            07:00  15:00  30


            1.2 Πλαζ - Ρωμανού
            Καθημερινές
            Από  Εώς  Συχνότητα
            06:30  21:30  30

            18.1 Λιμάνι
            Σάββατο - Κυριακή - Αργίες
            Από  Εώς  Συχνότητα
            08:00  20:00  60

            """
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 380 420 20", "1.1 sunday,holidays 12 420 900 30",
                                       "1.2 weekdays 1 390 1290 30", "18.1 saturday,sunday,holidays 14 480 1200 60"])
        XCTAssertEqual(records.map(\.line), [4, 7, 13, 18])
        XCTAssertEqual(records.map { $0.values[1]! }, ["Τερψιθέα - Εγλυκάδα", "Τερψιθέα - Εγλυκάδα", "Πλαζ - Ρωμανού", "Λιμάνι"])
    }

    func testFileWithoutFinalBlankLineOrNewline() throws {
        let text = "1.1 Α\nΚαθημερινές\nΑπό  Εώς  Συχνότητα\n06:00  07:00  20\n07:00  08:00  30"
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 360 420 20", "1.1 weekdays 1 420 480 30"])
        XCTAssertEqual(records.map(\.line), [4, 5])
    }

    func testCRLF() throws {
        let text = basic.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n2.1 Β\r\nΣάββατο\r\nΑπό  Εώς  Συχνότητα\r\n22:00  01:00  30\r\n"
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 weekdays 1 360 420 20", "1.1 weekdays 1 420 1260 10", "2.1 saturday 2 1320 1500 30"])
        XCTAssertEqual(try fields(records[2])["name"], "Β")
        XCTAssertEqual(try fields(records[2])["heading"], "Σάββατο")
    }

    func testWindows1253Timetable() throws {
        // "1.1 Α", "Σάββατο", "08:00  09:00  60" in windows-1253.
        let bytes: [UInt8] = Array("1.1 ".utf8) + [0xC1, 0x0A, 0xD3, 0xDC, 0xE2, 0xE2, 0xE1, 0xF4, 0xEF, 0x0A] + Array("08:00  09:00  60\n".utf8)
        let url = try write(Data(bytes), to: "timetable-1253.txt")
        let (records, log) = try read(reader(extra: ["encoding": .string("windows-1253")]), url: url)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(rows(records), ["1.1 saturday 2 480 540 60"])
        XCTAssertEqual(records.first?.values[1], "Α")
    }
}
