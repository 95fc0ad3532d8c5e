import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `WikiHeading`, `SectionOutline` and `PageFacts`: the section tree of a page, its parent and coordinates.
final class WikitextSectionTests: KilnTestCase {
    private func outline(_ text: String) -> [String] {
        WikiPageScanner.scan(text).outline.sections.map { section in
            "\(section.number) L\(section.level) \(section.title ?? "∅") ^\(section.parent.map(String.init) ?? "-") @\(section.line)"
        }
    }

    func testHeadingsMakeATree() {
        let text = """
            Lead text.
            == See ==
            === Grand Palace ===
            ==== Throne hall ====
            === Wat Pho ===
            == Eat ==
            """
        XCTAssertEqual(outline(text), [
            "0 L0 ∅ ^- @1", "1 L2 See ^- @2", "2 L3 Grand Palace ^1 @3", "3 L4 Throne hall ^2 @4", "4 L3 Wat Pho ^1 @5",
            "5 L2 Eat ^- @6",
        ])
        XCTAssertEqual(WikiPageScanner.scan(text).outline.sections[3].path, ["See", "Grand Palace", "Throne hall"])
    }

    func testHeadingSyntaxAsMediaWikiReadsIt() {
        let text = """
            == Mobilität==
            ===Unbalanced ==
            == [[Link|Linked]] '''bold''' == <!-- a comment -->
            ==
            = Top =
             == Not a heading (leading space) ==
            text == not a heading ==
            {{quote|
            == Inside a template ==
            }}
            <!--
            == Inside a comment ==
            -->
            == After ==
            """
        XCTAssertEqual(outline(text), [
            "0 L0 ∅ ^- @1", "1 L2 Mobilität ^- @1", "2 L2 =Unbalanced ^- @2", "3 L2 Linked bold ^- @3", "4 L1 Top ^- @5",
            "5 L2 After ^4 @14",
        ])
    }

    func testChainWalksUpToTheLead() {
        let page = WikiPageScanner.scan("== A ==\n=== B ===\n== C ==")
        XCTAssertEqual(page.outline.chain(from: 2).map(\.number), [2, 1, 0])
        XCTAssertEqual(page.outline.chain(from: 3).map(\.number), [3, 0])
    }

    func testElementsKnowTheirSectionAndLine() {
        let page = WikiPageScanner.scan("{{pagebanner}}\n== See ==\n\n* {{see|name=A\n|lat=1}}\n* <see name=\"B\">b</see>\n== Eat ==\n{{eat|name=C}}")
        XCTAssertEqual(page.elements.map(\.section), [0, 1, 1, 2])
        XCTAssertEqual(page.elements.map(\.line), [1, 4, 6, 8])
    }

    // MARK: - Page facts

    private func facts(_ text: String, conventions: PageConventions = PageConventions()) -> (PageFacts, [WikiFinding]) {
        var findings: [WikiFinding] = []
        let facts = PageFacts(WikiPageScanner.scan(text, readTags: false), conventions: conventions, findings: &findings)
        return (facts, findings)
    }

    func testParentAndCoordinatesFromTheDefaultTemplates() {
        let (found, findings) = facts("{{geo|40.7870|-73.9754|zoom=14}}\nText.\n{{IsPartOf|Manhattan}}")
        XCTAssertEqual(found, PageFacts(parent: "Manhattan", latitude: "40.7870", longitude: "-73.9754"))
        XCTAssertEqual(findings, [])
        XCTAssertEqual(facts("{{isIn|new_york_city}}").0.parent, "New york city")
    }

    func testTemplatesTheManifestAdds() throws {
        var conventions = PageConventions()
        conventions.parentTemplates.insert("istin")
        conventions.geoTemplates["geodata"] = ("lat", "long")
        conventions.geoTemplates["info ville"] = ("latitude", "longitude")
        let german = try WikitextListingTests.fixture("sample-article-de.wikicode")
        XCTAssertEqual(facts(german, conventions: conventions).0, PageFacts(parent: "Alpen", latitude: "47.41139", longitude: "11.4375"))
        conventions.parentTemplates.insert("dans")
        let french = try WikitextListingTests.fixture("sample-article-fr.wikicode")
        XCTAssertEqual(facts(french, conventions: conventions).0, PageFacts(parent: "Deux-Sèvres", latitude: "46.9758", longitude: "-0.2142"))
    }

    func testBadPageCoordinatesAreLeftOut() {
        let (found, findings) = facts("{{geo|{{#invoke:Wikidata|lat}}|200}}")
        XCTAssertNil(found.latitude)
        XCTAssertNil(found.longitude)
        XCTAssertEqual(findings.map(\.code), ["wikitext.coordinates", "wikitext.coordinates-range"])
        XCTAssertEqual(findings.map(\.message), ["the page's latitude \"{{#invoke:Wikidata|lat}}\" is not a number of degrees; left out",
                                                 "the page's longitude 200 is outside -180…180; left out"])
        XCTAssertEqual(facts("{{geo|47.5.1|11}}").1.map(\.code), ["wikitext.coordinates"])
    }
}
