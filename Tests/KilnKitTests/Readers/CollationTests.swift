import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// ICU collation through `Collator` and the `collationKey` normalizer: Czech order pinned on the hard cases, and
/// compared with ICU's own order (PyICU) for every name of the atlas sample.
final class CollationTests: KilnTestCase {
    private func czechOrder(_ names: [String]) throws -> [String] {
        let collator = try Collator(locale: "cs")
        return names.sorted { collator.hexSortKey($0) < collator.hexSortKey($1) }
    }

    private func assertBefore(_ first: String, _ second: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try czechOrder([second, first]), [first, second], file: file, line: line)
    }

    func testChComesAfterH() throws {
        try assertBefore("Hřib", "Chřapáč")
        try assertBefore("Hlíva", "Choroš")
        try assertBefore("Hřib žlučník", "Chřapáč kadeřavý")
        try assertBefore("Chřapáč", "Ivan")
    }

    func testHáčekLettersFollowTheirBaseLetter() throws {
        try assertBefore("Cihla", "Čirůvka")
        try assertBefore("Czech", "Čechratka")
        try assertBefore("Ryzec", "Řasnatka")
        try assertBefore("Sírovec", "Šťavnatka")
        try assertBefore("Zvonovec", "Žampion")
        try assertBefore("Čirůvka", "Dubák")
    }

    func testAccentsOnlyBreakTies() throws {
        // á, é, í, ů… are not letters of their own: they decide only between otherwise equal words.
        try assertBefore("jedla", "jedlá")
        try assertBefore("jedlá", "jedlab")
        try assertBefore("Muchomůrka", "Muchomurkb")
    }

    func testHexKeyIsICUsKeyAndTextOrderIsByteOrder() throws {
        let collator = try Collator(locale: "cs")
        let key = collator.sortKey("Hřib")
        XCTAssertFalse(key.isEmpty)
        XCTAssertFalse(key.contains(0), "the terminating zero byte is dropped")
        XCTAssertEqual(collator.hexSortKey("Hřib"), key.map { String(format: "%02x", $0) }.joined())
        XCTAssertLessThan(collator.hexSortKey(""), collator.hexSortKey("a"), "the empty text sorts first")
    }

    func testNormalizerGivesTheHexKey() throws {
        let normalizer = try Normalizer(.collationKey(locale: "cs"), fieldNames: [], vocabularies: [:])
        let value = try normalizer.apply("Chřapáč", record: Record(RecordKind(fields: []), line: 1))
        XCTAssertEqual(value, try Collator(locale: "cs").hexSortKey("Chřapáč"))
        XCTAssertNil(try normalizer.apply(nil, record: Record(RecordKind(fields: []), line: 1)))
    }

    func testUnknownLocaleIsRefused() {
        XCTAssertThrowsError(try Collator(locale: "xx_YY")) { error in
            XCTAssertTrue("\(error)".contains("ICU has no collation for locale \"xx_YY\""), "\(error)")
        }
        XCTAssertThrowsError(try Normalizer(.collationKey(locale: "qq"), fieldNames: [], vocabularies: [:])) { error in
            XCTAssertTrue((error as? ValueProblem)?.message.contains("\"qq\"") == true, "\(error)")
        }
        XCTAssertNoThrow(try Collator(locale: "root"))
        XCTAssertNoThrow(try Collator(locale: "cs_CZ"))
    }

    /// Every Czech name of the sample's pages, and the hard cases, sorted by Kiln's keys and by ICU's own collator
    /// (PyICU): the same order, and the same keys.
    func testOrderOfEverySampleNameMatchesICU() throws {
        let pages = try FileManager.default.contentsOfDirectory(
            at: KilnTestCase.repositoryRoot.appendingPathComponent("raw/atlas/pages"), includingPropertiesForKeys: nil)
        let reader = try HTMLReader(options: JSONValue.object(["records": .string("//h1[@class='cesky']"),
                                                                  "fields": .object(["name": .string(".")])])
            .decode(HTMLReader.Options.self, codingPath: []))
        var names: [String] = []
        for page in pages where page.pathExtension == "html" {
            names += try read(reader, url: page).records.compactMap { $0.values[0] }
        }
        XCTAssertGreaterThanOrEqual(names.count, 40)
        names += ["Hřib", "Chřapáč", "Cihla", "Čirůvka", "jedla", "jedlá", "Řasnatka", "Ryzec", "Šťavnatka", "Žampion"]
        let icu = try PythonOracle.text("icu_sort.py", ["cs"], input: names.joined(separator: "\n") + "\n")
            .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        XCTAssertEqual(try czechOrder(names), icu.map { $0[0] })
        let collator = try Collator(locale: "cs")
        for row in icu { XCTAssertEqual(collator.hexSortKey(row[0]), row[1], row[0]) }
    }
}
