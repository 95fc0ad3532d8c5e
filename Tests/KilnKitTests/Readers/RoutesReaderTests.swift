import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class RoutesReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue] = [:]) throws -> RoutesReader {
        try RoutesReader(options: JSONValue.object(options).decode(RoutesReader.Options.self, codingPath: []))
    }

    func testFieldNames() throws {
        XCTAssertEqual(try reader().fieldNames, ["line", "name", "position", "stop"])
    }

    func testTwoLineRecord() throws {
        let (records, log) = try read(reader(), "1.1 Τερψιθέα - Εγλυκάδα\n0 1008! 1 1007! 2 1006!\n", name: "Routes_UTF8.txt")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map(\.values), [
            ["1.1", "Τερψιθέα - Εγλυκάδα", "0", "1008"],
            ["1.1", "Τερψιθέα - Εγλυκάδα", "1", "1007"],
            ["1.1", "Τερψιθέα - Εγλυκάδα", "2", "1006"],
        ])
        // Records point at the stop list's line.
        XCTAssertEqual(records.map(\.line), [2, 2, 2])
    }

    func testMultipleRoutes() throws {
        let text = """
            1.2 Πλαζ - Ρωμανού
            0 0110! 1 0111!

            6.10 Πανεπιστήμιο - Νοσοκομείο - Ρίο - Αγ. Βασίλειος
              0 0602!   1 0605!2 0608!\r
            18.1 Λιμάνι
            0 0701!
            """
        let (records, log) = try read(reader(), text)
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map { $0.values[0]! }, ["1.2", "1.2", "6.10", "6.10", "6.10", "18.1"])
        XCTAssertEqual(records.map { $0.values[2]! }, ["0", "1", "0", "1", "2", "0"])
        XCTAssertEqual(records.map { $0.values[3]! }, ["0110", "0111", "0602", "0605", "0608", "0701"])
        XCTAssertEqual(records.map(\.line), [2, 2, 5, 5, 5, 7])
        XCTAssertEqual(records[2].values[1], "Πανεπιστήμιο - Νοσοκομείο - Ρίο - Αγ. Βασίλειος")
        XCTAssertEqual(records[5].values[1], "Λιμάνι")
    }

    func testBadItemIsAParseErrorAndTheOtherItemsAreKept() throws {
        let (records, log) = try read(reader(), "1.1 Τερψιθέα\n0 1008! x 0101! 2 1006! 5! 4 1004!\n", name: "Routes_UTF8.txt")
        XCTAssertEqual(records.map { $0.values[2]! + " " + $0.values[3]! }, ["0 1008", "2 1006", "4 1004"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["parse", "parse"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance }, [Provenance(file: "Routes_UTF8.txt", line: 2),
                                                               Provenance(file: "Routes_UTF8.txt", line: 2)])
        XCTAssertEqual(log.diagnostics[0].message, "route 1.1: expected \"INDEX CODE\" (e.g. \"3 0123\"), found \"x 0101\"")
        XCTAssertEqual(log.diagnostics[1].message, "route 1.1: expected \"INDEX CODE\" (e.g. \"3 0123\"), found \"5\"")
    }

    func testItemWithThreeWordsIsAParseError() throws {
        let (records, log) = try read(reader(), "1.1 Α\n0 1008 1009! 1 1007!\n")
        XCTAssertEqual(records.map { $0.values[3]! }, ["1007"])
        XCTAssertEqual(log.diagnostics.count, 1)
        XCTAssertTrue(log.diagnostics[0].message.hasSuffix("found \"0 1008 1009\""), log.diagnostics[0].message)
    }

    func testHeadingFollowedByAnotherHeadingIsAParseError() throws {
        let text = "1.1 Τερψιθέα\n1.2 Πλαζ - Ρωμανού\n0 0110! 1 0111!\n"
        let (records, log) = try read(reader(), text, name: "Routes_UTF8.txt")
        XCTAssertEqual(records.map { $0.values[0]! }, ["1.2", "1.2"])
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "parse")
        XCTAssertEqual(diagnostic.provenance, Provenance(file: "Routes_UTF8.txt", line: 1))
        XCTAssertTrue(diagnostic.message.hasPrefix("route 1.1 has no stop list"), diagnostic.message)
    }

    func testHeadingAtTheEndOfTheFileIsAParseError() throws {
        let text = "1.1 Τερψιθέα\n0 1008!\n\n8.3 Πάτρα - Δεμένικα\n\n"
        let (records, log) = try read(reader(), text, name: "Routes_UTF8.txt")
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(log.diagnostics.count, 1)
        let diagnostic = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(diagnostic.code, "parse")
        XCTAssertEqual(diagnostic.provenance, Provenance(file: "Routes_UTF8.txt", line: 4))
        XCTAssertEqual(diagnostic.message, "route 8.3 has no stop list; the file ends after its heading")
    }

    func testStopListWithoutHeadingIsAParseError() throws {
        let text = "0 1008! 1 1007!\n1.2 Πλαζ\n0 0110!\n1 0111!\n"
        let (records, log) = try read(reader(), text, name: "Routes_UTF8.txt")
        XCTAssertEqual(records.map { $0.values[3]! }, ["0110"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["parse", "parse"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance?.line }, [1, 4])
        XCTAssertTrue(log.diagnostics[0].message.hasPrefix("stop list without a route heading before it"), log.diagnostics[0].message)
        XCTAssertTrue(log.diagnostics[0].message.hasSuffix("\"0 1008! 1 1007!\""), log.diagnostics[0].message)
        XCTAssertTrue(log.diagnostics[1].message.hasSuffix("\"1 0111!\""), log.diagnostics[1].message)
    }

    func testOtherItemSeparator() throws {
        let (records, log) = try read(reader(["itemSeparator": .string("|")]), "1.1 Α\n0 1008| 1 1007|\n")
        XCTAssertEqual(log.diagnostics.count, 0)
        XCTAssertEqual(records.map { $0.values[3]! }, ["1008", "1007"])
    }

    func testItemSeparatorMustBeOneCharacter() throws {
        XCTAssertThrowsError(try reader(["itemSeparator": .string("!!")])) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(keyPathString(context.codingPath), "itemSeparator")
            XCTAssertEqual(context.debugDescription, "expected exactly one character")
        }
    }

    func testUndecodableLineIsReportedAndSkipped() throws {
        let bytes = Array("1.1 Α\n".utf8) + [0x30, 0x20, 0xC0, 0x21, 0x0A] + Array("2.1 Β\n0 0210!\n".utf8)
        let url = try write(Data(bytes), to: "Routes_UTF8.txt")
        let (records, log) = try read(reader(), url: url)
        // The stop list of 1.1 cannot be decoded, so 1.1 is left without one when 2.1 starts.
        XCTAssertEqual(log.diagnostics.map(\.code), ["encoding", "parse"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance?.line }, [2, 1])
        XCTAssertEqual(log.diagnostics[0].provenance?.column, 3)
        XCTAssertEqual(records.map { $0.values[0]! }, ["2.1"])
    }
}
