import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Seasons as Czech pages write them, through `MonthText` and the `month`, `monthFrom`, `monthTo` normalizers.
final class MonthTextTests: XCTestCase {
    private func apply(_ name: String, _ value: String) throws -> String? {
        try Normalizer(.named(name), fieldNames: [], vocabularies: [:]).apply(value, record: Record(RecordKind(fields: []), line: 1))
    }

    func testJuneIsNotReadOutOfJuly() throws {
        // červen (June) is a prefix of červenec (July), and their cases overlap in the first letters.
        let june = ["červen", "června", "červnu", "červnem", "Červen", "ČERVNA", "cerven"]
        let july = ["červenec", "července", "červenci", "červencem", "Červenec"]
        for text in june { XCTAssertEqual(try MonthText.month(text), 6, text) }
        for text in july { XCTAssertEqual(try MonthText.month(text), 7, text) }
    }

    func testEveryMonthInEveryCase() throws {
        let forms: [[String]] = [
            ["leden", "ledna", "lednu", "lednem"], ["únor", "února", "únoru", "únorem"],
            ["březen", "března", "březnu", "březnem"], ["duben", "dubna", "dubnu", "dubnem"],
            ["květen", "května", "květnu", "květnem"], ["červen", "června", "červnu", "červnem"],
            ["červenec", "července", "červenci", "červencem"], ["srpen", "srpna", "srpnu", "srpnem"],
            ["září", "zářím"], ["říjen", "října", "říjnu", "říjnem"], ["listopad", "listopadu", "listopadem"],
            ["prosinec", "prosince", "prosinci", "prosincem"],
        ]
        for (index, words) in forms.enumerated() {
            for word in words { XCTAssertEqual(try MonthText.month(word), index + 1, word) }
        }
    }

    func testRomanNumeralsAndNumbers() throws {
        for (index, numeral) in ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"].enumerated() {
            XCTAssertEqual(try MonthText.month(numeral), index + 1)
            XCTAssertEqual(try MonthText.month(numeral + "."), index + 1)
        }
        XCTAssertEqual(try MonthText.month("10"), 10)
    }

    func testRanges() throws {
        XCTAssertEqual(try MonthText.season("VI–X"), .init(from: 6, to: 10))
        XCTAssertEqual(try MonthText.season("VI.-X."), .init(from: 6, to: 10))
        XCTAssertEqual(try MonthText.season("od června do září"), .init(from: 6, to: 9))
        XCTAssertEqual(try MonthText.season("červenec až říjen"), .init(from: 7, to: 10))
        XCTAssertEqual(try MonthText.season("červen – červenec"), .init(from: 6, to: 7))
        XCTAssertEqual(try MonthText.season("V červnu"), .init(from: 6, to: 6))
        XCTAssertEqual(try MonthText.season("V–VI"), .init(from: 5, to: 6))
        XCTAssertEqual(try MonthText.season("celoročně"), .init(from: 1, to: 12))
    }

    func testRangesThatWrapTheYear() throws {
        XCTAssertEqual(try MonthText.season("XI–II"), .init(from: 11, to: 2))
        XCTAssertEqual(try apply("monthFrom", "XI–II"), "11")
        XCTAssertEqual(try apply("monthTo", "XI–II"), "2")
        XCTAssertEqual(try apply("monthFrom", "od listopadu do března"), "11")
        XCTAssertEqual(try apply("monthTo", "od listopadu do března"), "3")
        XCTAssertEqual(try apply("month", "v září"), "9")
    }

    func testAnythingElseIsAFindingWithTheText() {
        for text in ["léto", "jaro a podzim", "VI–X, místy XII", "", "13", "vi–x"] {
            XCTAssertThrowsError(try MonthText.season(text), text) { error in
                let problem = error as? ValueProblem
                XCTAssertEqual(problem?.code, "value.month", text)
                XCTAssertTrue(problem?.message.contains("\"\(text)\"") == true, problem?.message ?? "")
            }
        }
        XCTAssertThrowsError(try apply("month", "VI–X")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "\"VI–X\" names 2 months; expected one")
        }
    }
}
