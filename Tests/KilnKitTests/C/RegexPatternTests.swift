import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class RegexPatternTests: XCTestCase {
    func testNamedGroups() throws {
        let pattern = try RegexPattern(#"(?<from>\d{1,2}:\d{2})\s+(?<until>\d{1,2}:\d{2})\s+(?<every>\d+)"#)
        XCTAssertEqual(pattern.groupNames, ["from", "until", "every"])
        let match = try XCTUnwrap(pattern.firstMatch(in: "row: 06:20  07:00  20 end"))
        XCTAssertEqual(match["from"], "06:20")
        XCTAssertEqual(match["until"], "07:00")
        XCTAssertEqual(match["every"], "20")
        XCTAssertNil(match["missing"])
        XCTAssertEqual(match.groups, ["06:20  07:00  20", "06:20", "07:00", "20"])
        XCTAssertEqual(match.groupNumbers, ["from": 1, "until": 2, "every": 3])
    }

    func testNamedAndNumberedGroupsMixed() throws {
        let pattern = try RegexPattern(#"(\w+)-(?<code>\d+)(x)?"#)
        XCTAssertEqual(pattern.groupNames, ["code"])
        let match = try XCTUnwrap(pattern.firstMatch(in: "Πάτρα-0102"))
        XCTAssertEqual(match.groups.count, 4)
        XCTAssertEqual(match.groups[1], "Πάτρα")
        XCTAssertEqual(match["code"], "0102")
        XCTAssertNil(match.groups[3])
    }

    func testUnicodeMatching() throws {
        // UTF and UCP are on: \w matches Greek letters, and . is one character, not one byte.
        XCTAssertEqual(try RegexPattern(#"^\w+$"#).firstMatch(in: "Πανεπιστήμιο")?.groups[0], "Πανεπιστήμιο")
        XCTAssertEqual(try RegexPattern("^.{5}$").matches("Πάτρα"), true)
        XCTAssertEqual(try RegexPattern("^από$", options: .caseInsensitive).matches("ΑΠΌ"), true)
        XCTAssertEqual(try RegexPattern("^από$").matches("ΑΠΌ"), false)
    }

    func testMultilineOption() throws {
        XCTAssertFalse(try RegexPattern("^b$").matches("a\nb\nc"))
        XCTAssertTrue(try RegexPattern("^b$", options: .multiline).matches("a\nb\nc"))
    }

    func testNoMatchIsNil() throws {
        let pattern = try RegexPattern("^[0-9]{4}$")
        XCTAssertNil(try pattern.firstMatch(in: "0102a"))
        XCTAssertNil(try pattern.firstMatch(in: ""))
        XCTAssertFalse(try pattern.matches("abcd"))
        XCTAssertTrue(try pattern.matches("0102"))
    }

    func testEmptyMatch() throws {
        let match = try XCTUnwrap(RegexPattern("x*").firstMatch(in: "abc"))
        XCTAssertEqual(match.groups, [""])
    }

    func testCompileErrorHasOffsetAndMessage() {
        XCTAssertThrowsError(try RegexPattern("ab(c")) { error in
            guard let error = error as? RegexCompileError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.pattern, "ab(c")
            XCTAssertEqual(error.offset, 4)
            XCTAssertTrue(error.message.contains("missing closing parenthesis"), error.message)
            XCTAssertEqual(error.description, "invalid regular expression at offset 4: \(error.message) in /ab(c/")
        }
    }

    func testCompileErrorOffsetCountsCharactersNotBytes() {
        // "Από" is 3 characters but 6 bytes; the unmatched ")" is at character 3.
        XCTAssertThrowsError(try RegexPattern("Από)x")) { error in
            guard let error = error as? RegexCompileError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.offset, 3)
            XCTAssertTrue(error.message.contains("parenthesis"), error.message)
        }
    }

    func testCompileErrorInQuantifier() {
        XCTAssertThrowsError(try RegexPattern("a{2,1}")) { error in
            guard let error = error as? RegexCompileError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.offset, 5)
            XCTAssertTrue(error.message.contains("out of order"), error.message)
        }
    }

    func testCatastrophicBacktrackingHitsTheMatchLimit() throws {
        let pattern = try RegexPattern("^(a+)+$", matchLimit: 10_000)
        let subject = String(repeating: "a", count: 38) + "!"
        let started = Date()
        XCTAssertThrowsError(try pattern.firstMatch(in: subject)) { error in
            guard let error = error as? RegexMatchError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.pattern, "^(a+)+$")
            XCTAssertTrue(error.message.contains("limit"), error.message)
            XCTAssertEqual(error.description, "regular expression /^(a+)+$/ failed: \(error.message)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.0)
        // The same pattern still matches an easy subject afterwards.
        XCTAssertEqual(try pattern.firstMatch(in: "aaaa")?.groups.count, 2)
        XCTAssertThrowsError(try pattern.matches(subject))
        XCTAssertThrowsError(try pattern.split(subject))
    }

    func testDefaultMatchLimitAlsoStopsCatastrophicBacktracking() throws {
        let pattern = try RegexPattern("^(a+)+$")
        let started = Date()
        XCTAssertThrowsError(try pattern.firstMatch(in: String(repeating: "a", count: 60) + "!")) { error in
            XCTAssertTrue(error is RegexMatchError, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10.0)
    }

    func testSplit() throws {
        let separator = try RegexPattern(#"\s*(?:-|,|&|\+|/)\s*"#)
        XCTAssertEqual(try separator.split("Σάββατο - Κυριακή"), ["Σάββατο", "Κυριακή"])
        XCTAssertEqual(try separator.split("Σάββατο, Κυριακή & Αργίες"), ["Σάββατο", "Κυριακή", "Αργίες"])
        XCTAssertEqual(try separator.split("Καθημερινές"), ["Καθημερινές"])
        XCTAssertEqual(try separator.split(""), [""])
        XCTAssertEqual(try separator.split("-a-"), ["", "a", ""])
        XCTAssertEqual(try separator.split("a--b"), ["a", "", "b"])
    }

    func testSplitSkipsEmptyMatchesInASCII() throws {
        XCTAssertEqual(try RegexPattern(",*").split("a,b,,c"), ["a", "b", "c"])
    }
}
