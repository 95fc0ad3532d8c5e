import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// An ASCII subject is matched by the pattern compiled without Unicode properties: it must match exactly what the
/// pattern with them matches. The oracle is the same pattern run with Unicode properties on the same characters
/// (a subject that does not claim to be ASCII), and, for text that is not ASCII, the Unicode character database
/// (U+00A0, U+2007, U+202F and U+3000 are space separators, U+0663 a decimal digit, Greek letters are letters).
final class RegexASCIIPathTests: XCTestCase {
    /// A subject that never claims to be ASCII, so that it is always matched with Unicode properties.
    private struct UnicodePathSubject: RegexSubject {
        let text: String
        var isKnownASCII: Bool { false }
        func withValidUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R { try text.withValidUTF8(body) }
    }

    /// Every group of a match as text, `nil` for no match; through the ASCII path when `subject` is ASCII.
    private func groups(_ pattern: RegexPattern, _ subject: some RegexSubject, count: Int) throws -> [String?]? {
        guard let groups = try pattern.match(subject) else { return nil }
        return (0...count).map { pattern.group($0, of: subject, in: groups) }
    }

    private static let asciiCharacters = (0..<128).map { String(UnicodeScalar(UInt8($0))) }

    func testSubjectsKnowWhetherTheyAreASCII() throws {
        XCTAssertTrue("06:00  08:00  20".isKnownASCII)
        XCTAssertFalse("06:00\u{00A0}08:00".isKnownASCII)
        XCTAssertTrue(try XCTUnwrap(ValidUTF8(Array("06:00\t08:00".utf8)[...])).isKnownASCII)
        XCTAssertFalse(try XCTUnwrap(ValidUTF8(Array("Σάββατο".utf8)[...])).isKnownASCII)
        XCTAssertFalse(ValidUTF8(text: "Κυριακή").isKnownASCII)
        XCTAssertTrue(ValidUTF8(text: "Sunday").isKnownASCII)
    }

    func testEveryASCIICharacterIsClassedAsWithUnicodeProperties() throws {
        let classes = [
            #"\s"#, #"\S"#, #"\d"#, #"\D"#, #"\w"#, #"\W"#, #"\h"#, #"\v"#, #"\R"#, #"\X"#, ".", "[0-9]", "[^0-9]", #"[\s\d]"#,
            "[[:alpha:]]", "[[:alnum:]]", "[[:digit:]]", "[[:space:]]", "[[:punct:]]", "[[:graph:]]", "[[:print:]]",
            "[[:cntrl:]]", "[[:lower:]]", "[[:upper:]]", "[[:word:]]", "[[:xdigit:]]", "[[:blank:]]", "[[:^alpha:]]",
            "[[:ascii:]]", "[[:^lower:]]", "[[:^upper:]]", "[[:lower:][:digit:]]", #"\p{L}"#, #"\p{Lu}"#, #"\p{Ll}"#, #"\p{Nd}"#, #"\p{Zs}"#, "k", "S", "[a-z]", #"\x{212A}"#, #"\x{17F}"#,
        ]
        var checked = 0
        for options: RegexPattern.Options in [[], .caseInsensitive] {
            for characterClass in classes {
                let pattern = try RegexPattern("^(?:\(characterClass))$", options: options)
                for character in Self.asciiCharacters {
                    XCTAssertTrue(character.isKnownASCII)
                    XCTAssertEqual(try pattern.matches(character), try pattern.matches(UnicodePathSubject(text: character)),
                                   "/\(characterClass)/ on U+\(String(character.unicodeScalars.first!.value, radix: 16))")
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, 2 * classes.count * 128)
    }

    func testWordBoundariesBetweenEveryPairOfASCIICharacters() throws {
        let patterns = try [#"^.\b.$"#, #"^.\B.$"#, #"\b"#, #"^\w\W$"#].map { try RegexPattern($0) }
        for first in Self.asciiCharacters {
            for second in Self.asciiCharacters {
                let subject = first + second
                for pattern in patterns {
                    XCTAssertEqual(try pattern.matches(subject), try pattern.matches(UnicodePathSubject(text: subject)),
                                   "/\(pattern.pattern)/ on \(subject.unicodeScalars.map(\.value))")
                }
            }
        }
    }

    func testShippedPatternsFindTheSameGroupsOnRealLines() throws {
        let root = KilnTestCase.repositoryRoot
        let lines = try ["raw/patras/Timetables_UTF8.txt", "raw/patras/StopsUTF8.txt", "raw/patras/Routes_UTF8.txt"].flatMap {
            try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8).split(separator: "\n").map { String($0) }
        } + ["06:00  08:00  20", "6:00\t7:00\t5", "06:00 08:00 20 ", "1.1 Γραμμή 0", "12.3 Line 4", "Weekdays", "06:00\u{0B}08:00\u{0C}20"]
        XCTAssertTrue(lines.contains { $0.isKnownASCII } && lines.contains { !$0.isKnownASCII })
        let patterns = [
            (#"^(?<from>[0-9]{1,2}:[0-9]{2})\s+(?<until>[0-9]{1,2}:[0-9]{2})\s+(?<every>[0-9]{1,3})$"#, 3),
            (#"^\s*(?<from>\d{1,2}:\d{2})\s+(?<until>\d{1,2}:\d{2})\s+(?<every>\d{1,3})\s*$"#, 3),
            (#"^(?<line>[0-9]+\.[0-9]+) "#, 1), ("^(?<days>[^0-9]+)$", 1), (#"\d{1,2}[:.]\d{2}"#, 0), (#"^(\w+)\W+(\w*)\b(.*)$"#, 3),
        ]
        var asciiLines = 0
        for (source, count) in patterns {
            let pattern = try RegexPattern(source)
            for line in lines {
                let ascii = try groups(pattern, line, count: count)
                XCTAssertEqual(ascii, try groups(pattern, UnicodePathSubject(text: line), count: count), "/\(source)/ on \(line)")
                if line.isKnownASCII && ascii != nil { asciiLines += 1 }
            }
        }
        XCTAssertGreaterThan(asciiLines, 100)
    }

    func testUnicodeSpacesAndDigitsStillMatchOutsideASCII() throws {
        let row = try RegexPattern(#"^(?<from>[0-9]{1,2}:[0-9]{2})\s+(?<until>[0-9]{1,2}:[0-9]{2})\s+(?<every>[0-9]{1,3})$"#)
        for (line, expected) in [
            ("06:00\u{00A0}08:00\u{3000}20", ["06:00", "08:00", "20"]),
            ("06:00\u{2007}\u{202F}08:00 20", ["06:00", "08:00", "20"]),
            ("06:00 \t08:00  20", ["06:00", "08:00", "20"]),
        ] {
            let bytes = try XCTUnwrap(ValidUTF8(Array(line.utf8)[...]))
            XCTAssertEqual(try groups(row, bytes, count: 3)?.dropFirst().map { $0 }, expected, line)
            XCTAssertEqual(try groups(row, line, count: 3)?.dropFirst().map { $0 }, expected, line)
        }
        XCTAssertNil(try row.match("06:00\u{200B}08:00 20"), "a zero-width space is not a space")
        XCTAssertFalse(try RegexPattern("^[0-9]+$").matches("\u{0663}\u{0660}"), "[0-9] is ASCII digits only")
        XCTAssertTrue(try RegexPattern(#"^\d+$"#).matches("\u{0663}\u{0660}"), "\\d is every decimal digit")
        XCTAssertTrue(try RegexPattern(#"^\w+\s\w+$"#).matches("Σάββατο\u{00A0}Κυριακή"))
        XCTAssertEqual(try RegexPattern("^(?<days>[^0-9]+)$").firstMatch(in: "Κυριακή - Αργίες")?["days"], "Κυριακή - Αργίες")
        XCTAssertTrue(try RegexPattern("^σάββατο$", options: .caseInsensitive).matches("ΣΆΒΒΑΤΟ"))
    }
}
