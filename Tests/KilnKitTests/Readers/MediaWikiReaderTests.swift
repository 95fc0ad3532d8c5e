import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `MediaWikiReader`: pages, sections, listings and aliases streamed from MediaWiki exports.
final class MediaWikiReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> MediaWikiReader {
        try MediaWikiReader(options: JSONValue.object(options).decode(MediaWikiReader.Options.self, codingPath: []))
    }

    /// The reader emitting only `kind` (as a manifest mapping only that kind gets it).
    private func reader(emit kind: String, _ options: [String: JSONValue] = [:]) throws -> RecordReader {
        try reader(options).restricted(to: [kind])
    }

    /// Each record as `field=value` pairs (absent fields left out), in field order.
    private func describe(_ records: [Record], _ reader: RecordReader, fields: [String]? = nil) -> [String] {
        records.map { record in
            zip(record.kind.fieldNames, record.values).compactMap { name, value in
                guard let value, fields?.contains(name) ?? true else { return nil }
                return "\(name)=\(value)"
            }.joined(separator: " ")
        }
    }

    private func export(_ pages: String, siteinfo: String = "") -> String {
        """
        <mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">
        \(siteinfo)\(pages)</mediawiki>

        """
    }

    private func page(_ id: Int, _ title: String, _ text: String, ns: Int? = 0, redirect: String? = nil) -> String {
        let namespace = ns.map { "    <ns>\($0)</ns>\n" } ?? ""
        let redirectLine = redirect.map { "    <redirect title=\"\($0)\" />\n" } ?? ""
        let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        return """
              <page>
                <title>\(title)</title>
            \(namespace)    <id>\(id)</id>
            \(redirectLine)    <revision>
                  <id>\(id * 10)</id>
                  <timestamp>2024-01-0\(id % 9 + 1)T00:00:00Z</timestamp>
                  <text xml:space="preserve">\(escaped)</text>
                </revision>
              </page>

            """
    }

    private var sample: String {
        export(page(1, "New York City", "{{geo|40.71|-74.00}}\n== See ==\n* {{see|name=Statue of Liberty|lat=40.6892|long=-74.0445}}\n{{IsPartOf|North America}}")
               + page(2, "Manhattan", "Intro.\n== See ==\n=== Museums ===\n* {{see|name=MoMA|url=https://www.moma.org}}\n* <eat name=\"Katz's\">Pastrami.</eat>\n== Eat ==\n{{IsPartOf|New York City}}")
               + page(3, "NYC", "#REDIRECT [[New York City]]", redirect: "New York City")
               + page(4, "Big Apple", "#redirect [[New_York_City#History|the city]]")
               + page(5, "Talk:Manhattan", "== See ==\n* {{see|name=Talk}}", ns: 1))
    }

    func testFieldsOfEachKind() throws {
        XCTAssertEqual(try reader([:]).kinds.map(\.name), ["page", "section", "listing", "alias"])
        XCTAssertEqual(MediaWikiReader.pageKind.fieldNames, ["pageid", "title", "namespace", "parent", "lat", "long", "timestamp"])
        XCTAssertEqual(MediaWikiReader.sectionKind.fieldNames, ["pageid", "page", "number", "level", "title", "parent"])
        XCTAssertEqual(MediaWikiReader.aliasKind.fieldNames, ["pageid", "title", "namespace", "target"])
        XCTAssertEqual(MediaWikiReader.listingKind.fieldNames.prefix(10),
                       ["pageid", "page", "section", "id", "ordinal", "position", "template", "type", "category", "name"])
        XCTAssertEqual(MediaWikiReader.listingKind.fieldNames.suffix(4), ["pagelistings", "pageplaced", "pagecenterlat", "pagecenterlong"])
        XCTAssertEqual(MediaWikiReader.listingKind.fieldNames.count, 9 + 19 + 4)
    }

    func testOnePassEmitsEveryKindInPageOrder() throws {
        let all = try reader([:])
        let (records, log) = try read(all, sample, name: "export.xml")
        XCTAssertEqual(log.diagnostics, [])
        // Each kind alone gives the same records as the single pass filtered to that kind.
        for kind in ["page", "section", "listing", "alias"] {
            let alone = try read(reader(emit: kind), sample, name: "export.xml").records
            XCTAssertEqual(describe(records.filter { $0.kind.name == kind }, all), describe(alone, all), kind)
            XCTAssertFalse(alone.isEmpty, kind)
        }
        // Page 1's records come before page 2's: one front-to-back pass.
        let firstOfPage2 = try XCTUnwrap(records.firstIndex { $0.kind.name != "alias" && ($0["pageid"] == "2") })
        XCTAssertTrue(records[..<firstOfPage2].allSatisfy { $0["pageid"] == "1" })
    }

    func testPages() throws {
        let pages = try reader(emit: "page")
        let (records, log) = try read(pages, sample, name: "export.xml")
        XCTAssertEqual(log.diagnostics, [])
        XCTAssertEqual(describe(records, pages), [
            "pageid=1 title=New York City namespace=0 parent=North America lat=40.71 long=-74.00 timestamp=2024-01-02T00:00:00Z",
            "pageid=2 title=Manhattan namespace=0 parent=New York City timestamp=2024-01-03T00:00:00Z",
        ])
        XCTAssertEqual(records.map(\.line), [3, 16])
    }

    func testSections() throws {
        let sections = try reader(emit: "section")
        let (records, _) = try read(sections, sample, name: "export.xml")
        XCTAssertEqual(describe(records, sections, fields: ["page", "number", "level", "title", "parent"]), [
            "page=New York City number=0 level=0", "page=New York City number=1 level=2 title=See",
            "page=Manhattan number=0 level=0", "page=Manhattan number=1 level=2 title=See",
            "page=Manhattan number=2 level=3 title=Museums parent=1", "page=Manhattan number=3 level=2 title=Eat",
        ])
        // A heading's record is placed on its line in the export; the lead on the page's title.
        XCTAssertEqual(records.map(\.line), [3, 10, 16, 23, 24, 27])
    }

    func testListings() throws {
        let listings = try reader(emit: "listing")
        let (records, log) = try read(listings, sample, name: "export.xml")
        XCTAssertEqual(log.diagnostics, [])
        XCTAssertEqual(describe(records, listings, fields: ["pageid", "page", "section", "ordinal", "template", "category", "name", "url", "lat", "description"]), [
            "pageid=1 page=New York City section=1 ordinal=0 template=see category=see name=Statue of Liberty lat=40.6892",
            "pageid=2 page=Manhattan section=2 ordinal=0 template=see category=see name=MoMA url=https://www.moma.org",
            "pageid=2 page=Manhattan section=2 ordinal=0 template=eat category=eat name=Katz's description=Pastrami.",
        ])
        XCTAssertEqual(records.map(\.line), [11, 25, 26])
        XCTAssertEqual(describe(records, listings, fields: ["position", "pagelistings", "pageplaced", "pagecenterlat", "pagecenterlong"]), [
            "position=1 pagelistings=1 pageplaced=1 pagecenterlat=40.6892 pagecenterlong=-74.0445",
            "position=1 pagelistings=2 pageplaced=0", "position=2 pagelistings=2 pageplaced=0",
        ])
        let id = try XCTUnwrap(records[1].values[3])
        XCTAssertEqual(id, String(StableListingID.make(page: "Manhattan", path: ["See", "Museums"], name: "MoMA", ordinal: 0)))
    }

    func testAliasesFromRedirectElementsAndRedirectText() throws {
        let aliases = try reader(emit: "alias")
        let (records, _) = try read(aliases, sample, name: "export.xml")
        XCTAssertEqual(describe(records, aliases), [
            "pageid=3 title=NYC namespace=0 target=New York City",
            "pageid=4 title=Big Apple namespace=0 target=New York City",
        ])
        XCTAssertEqual(RedirectLine.target(in: "#WEITERLEITUNG [[München]]"), "München")
        XCTAssertEqual(RedirectLine.target(in: "  #REDIRECTION: [[paris|Paris]]"), "Paris")
        XCTAssertNil(RedirectLine.target(in: "# A list\n[[link]]"))
        XCTAssertNil(RedirectLine.target(in: "#invoke:x [[y]]"))
    }

    func testOtherNamespacesOnRequest() throws {
        let talk = try reader(emit: "listing", ["namespaces": .array([.number(1)])])
        let (records, _) = try read(talk, sample, name: "export.xml")
        XCTAssertEqual(describe(records, talk, fields: ["page", "name"]), ["page=Talk:Manhattan name=Talk"])
    }

    func testOldExportsWithoutNsUseTheSiteNamespaces() throws {
        let siteinfo = """
              <siteinfo><namespaces><namespace key="0" /><namespace key="1">Talk</namespace></namespaces></siteinfo>

            """
        let text = export(page(1, "Paris", "x", ns: nil) + page(2, "Talk:Paris", "x", ns: nil) + page(3, "Paris: the movie", "x", ns: nil), siteinfo: siteinfo)
        let pages = try reader(emit: "page")
        XCTAssertEqual(describe(try read(pages, text, name: "old.xml").records, pages, fields: ["title", "namespace"]),
                       ["title=Paris namespace=0", "title=Paris: the movie namespace=0"])
    }

    func testPageFindingsAreReportedOnTheirLineWithThePageTitle() throws {
        let text = export(page(7, "Thouars", "{{Info Ville|latitude=146.97|longitude=-0.2142}}\n{{Dans|Deux-Sèvres}}\n{{IsPartOf|France}}"))
        let pages = try reader(emit: "page", ["parentTemplates": .array([.string("Dans")]),
                                              "geoTemplates": .object(["Info Ville": .array([.string("latitude"), .string("longitude")])])])
        let (records, log) = try read(pages, text, name: "fr.xml")
        XCTAssertEqual(describe(records, pages, fields: ["title", "parent", "lat", "long"]), ["title=Thouars parent=Deux-Sèvres long=-0.2142"])
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "fr.xml:9: warning: Thouars: the page's latitude 146.97 is outside -90…90; left out [wikitext.coordinates-range]",
            "fr.xml:11: info: Thouars: the page names 2 parents (\"Deux-Sèvres\", \"France\"); the first is used [wikitext.parent]",
        ])
    }

    func testListingFindingsAndUnknownTemplatesPerFile() throws {
        let text = export(page(1, "A", "== See ==\n* {{see|name=One|lat=95|content={{foo}} and {{bar}}}}\n* {{see|name=Two|content={{foo}}}}\n* {{see|name=Three")
                          + page(2, "B", "* {{see|name=Four|content={{foo}}}}"))
        let (_, log) = try read(reader(emit: "listing"), text, name: "dump.xml")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "dump.xml:10: warning: A: listing \"One\": lat 95 is outside -90…90; the field is left empty [wikitext.coordinates-range]",
            "dump.xml:12: warning: A: {{see… is never closed with }}: MediaWiki shows it as text, so it is not read [wikitext.template]",
            "dump.xml:10: info: template {{bar}} is not known: left out of listing values once (first in A, listing \"One\"); declare it in inlineTemplates or ignoreTemplates [wikitext.unknown-template]",
            "dump.xml:10: info: template {{foo}} is not known: left out of listing values 3 times (first in A, listing \"One\"); declare it in inlineTemplates or ignoreTemplates [wikitext.unknown-template]",
        ])
    }

    func testMalformedXMLIsReportedOnceInTheSinglePass() throws {
        // libxml2 gives up on the whole chunk that holds an error, so the pages just before it are lost as well;
        // page C keeps page A out of that chunk.
        let padding = String(repeating: "A long paragraph that keeps the error out of libxml2's first chunks. ", count: 300)
        let pages = page(1, "A", "== See ==\n* {{see|name=One}}\n" + padding) + page(2, "C", padding)
        let text = export(pages).replacingOccurrences(of: "</mediawiki>", with: "<page><title>B</tit></page></mediawiki>")
        let url = try write(text, to: "broken.xml")
        let log = DiagnosticLog()
        var counts: [String: Int] = [:]
        try reader([:]).read(InputFile(url: url, relativePath: "broken.xml"), log: log) { counts[$0.kind.name, default: 0] += 1 }
        XCTAssertEqual(counts, ["page": 1, "section": 2, "listing": 1])
        XCTAssertEqual(log.diagnostics.filter { $0.code == "xml.malformed" }.count, 1, log.diagnostics.map(\.formatted).joined(separator: "\n"))
    }

    func testBadOptionsAreRefused() throws {
        XCTAssertThrowsError(try reader(["parameters": .object(["nom": .string("title")])])) { error in
            XCTAssertTrue("\(error)".contains("\"title\" is not a listing field"), "\(error)")
        }
        XCTAssertThrowsError(try reader(["geoTemplates": .object(["geo": .array([.string("1")])])]))
        XCTAssertThrowsError(try reader(["emit": .string("pages")])) { error in
            XCTAssertTrue("\(error)".contains("emit"), "the old per-kind option is refused, not ignored: \(error)")
        }
    }

    func testManifestErrorPointsAtTheOption() throws {
        let folder = temporaryDirectory.appendingPathComponent("wiki")
        try write(export(page(1, "A", "x")), to: "wiki/dump.xml")
        try write("""
            { bundle: "w", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }],
              sources: [{ name: "s", format: "mediawiki", path: "dump.xml", into: { alias: { table: "t", columns: { a: "title" } } },
                options: {
                  namespaces: [0],
                  sections: { See: 4 },
                } }] }
            """, to: "wiki/kiln.json5")
        XCTAssertThrowsError(try ManifestLoader.load(folder.path)) { error in
            XCTAssertTrue("\(error)".contains("kiln.json5:5: manifest error at sources[0].options.sections.See: wrong type: expected a string"), "\(error)")
        }
    }
}
