import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The shortcuts of the loading path give exactly what the general code gives: short decimals as `Double(String)`
/// parses them, trimming as Unicode's White_Space property says, texts bound in place as SQLite stores copies.
final class LoadingFastPathTests: KilnTestCase {
    private func randomDecimal(_ generator: inout SeededGenerator) -> String {
        let digits = Array("0123456789")
        let sign = ["", "", "-", "+"].randomElement(using: &generator)!
        let whole = String((0..<Int.random(in: 1...9, using: &generator)).map { _ in digits.randomElement(using: &generator)! })
        let fractionCount = Int.random(in: 0...10, using: &generator)
        let fraction = String((0..<fractionCount).map { _ in digits.randomElement(using: &generator)! })
        return sign + whole + (fractionCount == 0 ? "" : "." + fraction)
    }

    func testShortDecimalsParseBitForBitAsDouble() throws {
        var generator = SeededGenerator(seed: 14)
        var taken = 0
        let rounds = TestTier.size(200_000, fast: 50_000)
        for _ in 0..<rounds {
            let text = randomDecimal(&generator)
            let oracle = try XCTUnwrap(Double(text), text)
            let significant = text.filter(\.isNumber).count
            guard let fast = ValueConversion.shortDecimal(text) else {
                XCTAssertGreaterThan(significant, 15, "\(text) was left to Double()")
                continue
            }
            taken += 1
            XCTAssertEqual(fast.bitPattern, oracle.bitPattern, text)
        }
        XCTAssertGreaterThan(taken, rounds / 2)
    }

    func testShortDecimalHardCases() {
        for text in ["0.1", "0.2", "0.3", "21.738338", "38.313675", "-0.5", "+7.25", "0.00000000000001", "123456789012345",
                     "999999999999999", "1.00000000000001", "4.35", "0", "-0", "00012.50"] {
            XCTAssertEqual(ValueConversion.shortDecimal(text)?.bitPattern, Double(text)?.bitPattern, text)
        }
        XCTAssertEqual(ValueConversion.shortDecimal("-0")?.sign, .minus)
        // Not short plain decimals: left to the general path.
        for text in ["", "-", "+", ".", "1.", ".5", "1e5", "1E5", "1.5.2", "--1", "1-", " 1", "1 ", "1234567890123456",
                     "0.1234567890123456", "0.000000000000001", "1.000000000000001", "nan", "inf", "0x10", "١٢", "1,5"] {
            XCTAssertNil(ValueConversion.shortDecimal(text), text)
        }
    }

    func testRealConversionOfDecimalsMatchesDouble() {
        var generator = SeededGenerator(seed: 15)
        for _ in 0..<20_000 {
            let text = randomDecimal(&generator)
            let expected = Double(text)!
            guard case .success(.real(let value)) = ValueConversion.convert(" \(text)\u{00A0}", to: .real) else {
                XCTFail("\(text) was refused")
                continue
            }
            XCTAssertEqual(value.bitPattern, (expected == 0 ? 0 : expected).bitPattern, text)
        }
    }

    func testEveryWhiteSpaceScalarStartsWithALeadByteTheTrimLooksAt() {
        var found = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.isWhitespace else { continue }
            found += 1
            let lead = String(Character(scalar)).utf8.first!
            XCTAssertTrue(TextFolding.mayLeadWhiteSpace(lead), "U+\(String(value, radix: 16, uppercase: true))")
        }
        XCTAssertEqual(found, 25)
    }

    /// Trimming as the White_Space property defines it, scalar by scalar.
    private func trimmedByProperty(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[start...end])
        return String(result)
    }

    func testTrimAgreesWithTheWhiteSpaceProperty() {
        let pieces = ["a", "Κορίνθου", "1", " ", "\t", "\n", "\u{00A0}", "\u{0085}", "\u{2003}", "\u{3000}", "\u{202F}",
                      "\u{1680}", "\u{200B}", "é", "e\u{0301}", "\u{1F600}", "\u{00C2}", "\u{E000}", "\u{2060}", "\u{FEFF}",
                      "\u{001F}", "\u{180E}", ".", "\u{10FFFF}"]
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            XCTAssertEqual(TextFolding.trim(text), trimmedByProperty(text), text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
        }
    }

    func testRunStoresTextsAsWritten() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (a TEXT, b TEXT, c REAL, d TEXT, e INTEGER, f BLOB)")
        let insert = try database.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
        let rows: [[SQLValue]] = [
            [.text("Κορίνθου 1"), .text("0000001"), .real(21.738338), .text("stops.txt"), .integer(1), .blob([1, 2])],
            [.text(""), .text("a longer text that is not a small string"), .null, .text(""), .integer(2), .blob([0])],
            [.null, .text("x"), .real(0), .null, .null, .null],
            [.text("tab\tinside"), .text("e\u{0301}"), .real(-1.5), .text("😀"), .integer(-3), .null],
        ]
        for row in rows { try insert.run(row) }
        // Fewer values than parameters: the rest are NULL, not the previous row's.
        try insert.run([.text("only")])
        let stored = try database.rows("SELECT a, b, c, d, e, f FROM t ORDER BY rowid").map(\.values)
        XCTAssertEqual(stored, rows + [[.text("only"), .null, .null, .null, .null, .null]])
        let empties = try database.rows("SELECT count(*) FROM t WHERE a = '' AND typeof(a) = 'text'")
        XCTAssertEqual(empties.first?.values, [.integer(1)])
    }

    func testRunAfterAFailedRowStoresTheNextRow() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (a TEXT UNIQUE, b TEXT)")
        let insert = try database.prepare("INSERT INTO t VALUES (?, ?)")
        try insert.run([.text("same"), .text("first")])
        XCTAssertThrowsError(try insert.run([.text("same"), .text("second")]))
        try insert.run([.text("other"), .text("third")])
        let stored = try database.rows("SELECT a, b FROM t ORDER BY rowid").map(\.values)
        XCTAssertEqual(stored, [[.text("same"), .text("first")], [.text("other"), .text("third")]])
    }
}
