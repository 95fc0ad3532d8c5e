import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The hot text paths that avoid strings: matching a line's checked bytes gives the groups a string match gives,
/// invalid UTF-8 is never handed to PCRE2 as text, and delimited lines split on their bytes in UTF-8 and in a legacy
/// encoding alike.
final class BytePathTests: KilnTestCase {
    func testMatchingBytesGivesTheGroupsOfAStringMatch() throws {
        let pattern = try RegexPattern(#"^(?<from>[0-9]{1,2}:[0-9]{2})\s+(?<until>[0-9]{1,2}:[0-9]{2})(?:\s+(?<every>[0-9]+))?$"#)
        for line in ["06:00  08:30  20", "6:00 7:00", "Δευτέρα 06:00", "23:59\t00:10 5", "06:00\u{00A0}08:30"] {
            let full = try pattern.firstMatch(in: line)
            let bytes = try XCTUnwrap(ValidUTF8(Array(line.utf8)[...]))
            let groups = try pattern.match(bytes)
            XCTAssertEqual(groups != nil, full != nil, line)
            XCTAssertEqual(try pattern.matches(bytes), full != nil, line)
            XCTAssertEqual(try pattern.matches(line), full != nil, line)
            guard let full, let groups else { continue }
            for group in 0...3 { XCTAssertEqual(pattern.group(group, of: bytes, in: groups), full.groups[group], "\(line) group \(group)") }
        }
    }

    func testInvalidUTF8IsNotMatched() {
        XCTAssertNil(ValidUTF8([0x31, 0xC3, 0x28][...]))
        XCTAssertNil(ValidUTF8([0xED, 0xA0, 0x80][...]))  // a surrogate's encoding
        XCTAssertNotNil(ValidUTF8(Array("Πάτρα".utf8)[...]))
    }

    func testDelimitedFieldsAreTheSameFromUTF8AndFromALegacyEncoding() throws {
        let text = "\u{FEFF}name; code; lon; lat\r\nΆγιος Ανδρέας ;12;21.7; 38.2\r\n  Πλατεία Γεωργίου;7 ;21.73;38.24;\n"
        let utf8 = try write(text.data(using: .utf8)!, to: "utf8.txt")
        let greek = try write(String(text.dropFirst()).data(using: .windowsCP1253)!, to: "greek.txt")
        func records(_ url: URL, _ encoding: String) throws -> [[String?]] {
            let options = try JSONDecoder().decode(DelimitedReader.Options.self, from: Data("""
                {"fields": ["name", "code", "lon", "lat"], "header": true, "encoding": "\(encoding)"}
                """.utf8))
            return try read(try DelimitedReader(options: options), url: url).records.map(\.values)
        }
        let expected: [[String?]] = [["Άγιος Ανδρέας", "12", "21.7", "38.2"], ["Πλατεία Γεωργίου", "7", "21.73", "38.24"]]
        XCTAssertEqual(try records(utf8, "utf-8"), expected)
        XCTAssertEqual(try records(greek, "windows-1253"), expected)
    }
}
