import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The wikitext conventions of issue 11 as units: magic words versus templates, inline formats with groups and values,
/// trailing descriptions per convention, unknown listing parameters, and the `wikitext` reader.
final class WikitextConventionTests: KilnTestCase {
    private static func real(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/Fixtures/real/\(path)"), encoding: .utf8)
    }

    private func listings(_ text: String, _ conventions: ListingConventions = ListingConventions()) throws -> [WikiListing] {
        var findings: [WikiFinding] = []
        return try ListingExtractor(conventions: conventions).listings(in: WikiPageScanner.scan(text), title: "Page", findings: &findings)
    }

    // MARK: - Magic words

    func testOnlyParserFunctionsAndMagicWordsAreMagic() {
        // MediaWiki's own: variables, `#` functions, `NAME:` parser functions (Help:Magic words).
        for name in ["PAGENAME", "CURRENTYEAR", "NUMBEROFARTICLES", "#invoke:Coordinates|lat", "#if:x", "DEFAULTSORT:Logan",
                     "DISPLAYTITLE:x", "lc:ABC", "formatnum:1234", "PAGESINCATEGORY:Hotels", "!"] {
            XCTAssertTrue(WikiMagicWords.contains(name), name)
        }
        // Templates, whatever their case: they are reported when not declared.
        for name in ["IATA", "USD", "UNESCO", "Horaire", "label", "IATA|BOS", "Template:IATA", ":Main Page", "Lang"] {
            XCTAssertFalse(WikiMagicWords.contains(name), name)
        }
    }

    func testAnAllCapitalsTemplateInAValueIsNamedAsWritten() throws {
        let found = try listings("* {{go | name=Logan International Airport | alt={{IATA|BOS}} | content=The airport{{PAGENAME}}.}}")
        XCTAssertEqual(found.first?.fields["alt"], nil)
        XCTAssertEqual(found.first?.fields["description"], "The airport.")
        XCTAssertEqual(found.first?.unknownTemplates, ["IATA"])
    }

    // MARK: - Inline formats

    func testHoraireWithGroupsAndValuesReadsAsTheIndependentConverterDoes() throws {
        let days = ["lu": "lun.", "ma": "mar.", "me": "mer.", "je": "jeu.", "ve": "ven.", "sa": "sam.", "di": "dim."]
        var conventions = ListingConventions()
        conventions.templates["faire"] = "do"
        conventions.parameters["nom"] = "name"
        conventions.parameters["horaire"] = "hours"
        conventions.inlineTemplates["horaire"] = try InlineTemplateFormat(
            "[{1}[ – {2}]][{1?}{3?} : ][{3} h[ {4}][ – {5} h[ {6}]]][ et {7} h[ {8}][ – {9} h[ {10}]]]", values: ["1": days, "2": days])
        let found = try listings(try Self.real("wikivoyage-fr-horaire/horaire-template.wikicode"), conventions)
        let expected = try Self.real("wikivoyage-fr-horaire/expected-hours.txt").split(separator: "\n").map(String.init)
        // That converter writes "-" for the dash and no space before the colon.
        XCTAssertEqual(found.map { ($0.fields["hours"] ?? "").replacingOccurrences(of: " – ", with: " - ").replacingOccurrences(of: " : ", with: ": ") },
                       expected)
        XCTAssertEqual(found.flatMap(\.unknownTemplates), [])
    }

    func testAGroupIsLeftOutWhenAnArgumentInItIsEmpty() throws {
        let format = try InlineTemplateFormat("{1}[ ({2})][ \\[{3}\\]]")
        let arguments: [String: String] = ["1": "Tour", "3": "x"]
        XCTAssertEqual(format.render { arguments[$0] }, "Tour [x]")
        XCTAssertEqual(format.render { ["1": "Tour", "2": "", "3": ""][$0] }, "Tour")
        // Outside groups an empty argument reads as nothing, as plain formats always did.
        XCTAssertEqual(try InlineTemplateFormat("{1} {2}").render { ["1": "13"][$0] }, "13 ")
    }

    func testFormatsThatDoNotParseAreRefused() {
        for bad in ["[{1}", "{1}]", "{1", "{}", "a\\", String(repeating: "[", count: 100_000) + "{1}" + String(repeating: "]", count: 100_000)] {
            XCTAssertThrowsError(try InlineTemplateFormat(bad), String(bad.prefix(20)))
        }
    }

    // MARK: - Trailing descriptions

    func testTrailingDescriptionsFollowTheLanguageOrTheTemplate() throws {
        let page = "* In the first floors of {{buy|name=Mori Tower|lat=35.66|long=139.72}} and the adjoining buildings, shops.\n"
            + "* {{vCard | name= Pleisenspitze }}: westlichster Gipfel.\n"
        let byTemplate = try listings(page)
        XCTAssertEqual(byTemplate.map { $0.fields["description"] }, [nil, "westlichster Gipfel."])
        var english = ListingConventions()
        english.language = "en"
        XCTAssertEqual(try listings(page, english).map { $0.fields["description"] }, [nil, nil])
        var german = ListingConventions()
        german.language = "de-AT"
        XCTAssertEqual(try listings(page, german).map { $0.fields["description"] }, ["and the adjoining buildings, shops.", "westlichster Gipfel."])
        var asked = english
        asked.trailingDescriptionOption = true
        XCTAssertEqual(try listings(page, asked).first?.fields["description"], "and the adjoining buildings, shops.")
    }

    // MARK: - Unknown parameters

    func testParametersWithAValueThatNoFieldTakesAreNamed() throws {
        var conventions = ListingConventions()
        conventions.ignoredParameters = ["map"]
        let found = try listings("{{listing | typr=go | name=Shuttle | Fax-Number= | map=3 | Wikipedia=Logan <!-- x --> }}", conventions)
        XCTAssertEqual(found.first?.unknownParameters, ["typr", "Wikipedia"])
    }

    func testUnknownAttributesOfWikitravelTagsAreNamed() throws {
        let found = try listings("== Eat ==\n<eat name=\"Pho 24\" stars=\"3\" hours=\"\" price=\" \" mobile='0903'>Noodles.</eat>\n")
        XCTAssertEqual(found.first?.fields["name"], "Pho 24")
        XCTAssertEqual(found.first?.unknownParameters, ["stars", "mobile"])
    }

    // MARK: - The wikitext reader

    private func wikitextReader(_ options: [String: JSONValue] = [:]) throws -> WikitextReader {
        try WikitextReader(options: JSONValue.object(options).decode(WikitextReader.Options.self, codingPath: []))
    }

    func testTitlesComeFromFileNames() throws {
        let reader = try wikitextReader()
        let url = try write("== See ==\n* {{see|name=A}}\n", to: "Tokyo%2FRoppongi_Hills.wikicode")
        let (records, _) = try self.read(reader, url: url)
        let page = try XCTUnwrap(records.first { $0.kind.name == "page" })
        XCTAssertEqual(page["title"], "Tokyo/Roppongi Hills")
        XCTAssertEqual(page["pageid"], String(StableListingID.make(page: "Tokyo/Roppongi Hills", path: [], name: nil, ordinal: 0)))
        XCTAssertEqual(records.filter { $0.kind.name == "listing" }.map { $0["page"] }, ["Tokyo/Roppongi Hills"])
    }

    func testAnUndecodableLineKeepsTheLinesAfterItInPlace() throws {
        let bytes = Array("== See ==\n".utf8) + [0xFF, 0x0A] + Array("* {{see|name=A|lat=x}}\n".utf8)
        let url = try write(Data(bytes), to: "Page.wikicode")
        let (records, log) = try self.read(try wikitextReader(), url: url)
        XCTAssertEqual(records.first { $0.kind.name == "listing" }?.line, 3)
        XCTAssertEqual(log.diagnostics.map(\.code).sorted(), ["encoding", "wikitext.coordinates"])
        XCTAssertEqual(log.diagnostics.first { $0.code == "wikitext.coordinates" }?.provenance?.line, 3)
    }
}

/// The two wikitext readers share their page processing: the same article read from a MediaWiki export and from a
/// bare file gives the same listings and sections.
final class WikitextReadersAgreeTests: KilnTestCase {
    func testKarwendelFromTheExportAndFromItsFileGiveTheSameRecords() throws {
        let options = JSONValue.object(["parentTemplates": .array([.string("IstIn")]),
                                        "geoTemplates": .object(["GeoData": .array([.string("lat"), .string("long")])])])
        let fromExport = try MediaWikiReader(options: options.decode(MediaWikiReader.Options.self, codingPath: []))
        let fromFile = try WikitextReader(options: options.decode(WikitextReader.Options.self, codingPath: []))
        let export = KilnTestCase.repositoryRoot.appendingPathComponent("raw/itravel/itravel-export.xml")
        let file = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/wikivoyage-de-karwendel/Karwendel.wikicode")
        let (exported, _) = try read(fromExport, url: export)
        let (bare, _) = try read(fromFile, url: file)
        func values(_ records: [Record], _ kind: String, page: String) -> [[String?]] {
            records.filter { $0.kind.name == kind && $0[kind == "page" ? "title" : "page"] == page }.map { record in
                record.kind.fieldNames.filter { $0 != "pageid" }.map { record[$0] }
            }
        }
        for kind in ["page", "section", "listing"] {
            let a = values(exported, kind, page: "Karwendel"), b = values(bare, kind, page: "Karwendel")
            XCTAssertFalse(a.isEmpty, kind)
            XCTAssertEqual(a.count, b.count, kind)
            // The timestamp is the export's; a bare file has none.
            XCTAssertEqual(a.map { kind == "page" ? Array($0.dropLast()) : $0 }, b.map { kind == "page" ? Array($0.dropLast()) : $0 }, kind)
        }
    }
}
