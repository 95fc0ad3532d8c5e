import Foundation
import XCTest
@testable import KilnKit

/// The hot text paths that avoid strings: a match keeping only some groups gives the same texts as a full match
/// for those groups, `matches` agrees with `firstMatch`, and delimited lines split on their bytes in UTF-8 and in a
/// legacy encoding alike.
final class BytePathTests: KilnTestCase {
    func testKeepingOnlySomeGroupsGivesTheFullMatchTextsForThem() throws {
        let pattern = try RegexPattern(#"^(?<from>[0-9]{1,2}:[0-9]{2})\s+(?<until>[0-9]{1,2}:[0-9]{2})(?:\s+(?<every>[0-9]+))?$"#)
        for line in ["06:00  08:30  20", "6:00 7:00", "Δευτέρα 06:00", "23:59\t00:10 5"] {
            let full = try pattern.firstMatch(in: line)
            let kept = try pattern.firstMatch(in: line, keeping: [false, true, false, true])
            XCTAssertEqual(full == nil, kept == nil, line)
            XCTAssertEqual(try pattern.matches(line), full != nil, line)
            guard let full, let kept else { continue }
            XCTAssertNil(kept.groups[0])
            XCTAssertNil(kept.groups[2])
            XCTAssertEqual(kept.groups[1], full.groups[1])
            XCTAssertEqual(kept.groups[3], full.groups[3])
            XCTAssertNotNil(full.groups[2])
        }
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
