import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `WikiTemplateParser` and `WikiPlainText`: templates with nesting, links and comments; markup to plain text.
final class WikitextTemplateTests: KilnTestCase {
    private func template(_ text: String) -> (WikiTemplate?, WikiSource) {
        let source = WikiSource(text)
        return (WikiTemplateParser.parse(source, at: 0), source)
    }

    private func arguments(_ text: String) -> [String] {
        let (parsed, source) = template(text)
        return parsed?.arguments.map { ($0.key.map { $0 + "=" } ?? "") + source.text($0.value) } ?? []
    }

    private func plain(_ text: String, inline: [String: String] = [:], mode: WikiPlainText.Mode = .text) -> (String, [String]) {
        let source = WikiSource(text)
        var unknown: [String] = []
        let formats = inline.compactMapValues { try? InlineTemplateFormat($0) }
        let result = WikiPlainText(inlineTemplates: formats).text(source, 0..<source.count, mode: mode, unknown: &unknown)
        return (result, unknown)
    }

    func testArgumentsSplitAtTheTemplatesOwnPipesAndFirstEquals() {
        XCTAssertEqual(arguments("{{see | name=A | url=http://x.org/?a=b|c}}"), ["name=A ", "url=http://x.org/?a=b", "c"])
        XCTAssertEqual(template("{{see | name=A}}").0?.key, "see")
    }

    func testNestedTemplatesAndLinksDoNotSplit() {
        XCTAssertEqual(arguments("{{see|name=[[Kostroma|Kostromy]]|price={{Prix|2|€}} à {{Prix|4|€}}|x=1}}"),
                       ["name=[[Kostroma|Kostromy]]", "price={{Prix|2|€}} à {{Prix|4|€}}", "x=1"])
    }

    func testCommentsAndNowikiHidePipesAndBraces() {
        XCTAssertEqual(arguments("{{see|name=A <!-- a | b }} --> B|alt=<nowiki>|}}</nowiki>}}"),
                       ["name=A <!-- a | b }} --> B", "alt=<nowiki>|}}</nowiki>"])
    }

    func testNamesAndKeysCompareAsMediaWikiDoes() {
        let (parsed, _) = template("{{ Se_loger <!-- fr -->\n| NaMe =x| Mise  à_jour=2015}}")
        XCTAssertEqual(parsed?.name, "Se loger")
        XCTAssertEqual(parsed?.key, "se loger")
        XCTAssertEqual(parsed?.arguments.compactMap(\.key), ["name", "mise à jour"])
        XCTAssertEqual(WikiName.key("VCard"), "vcard")
    }

    func testUnclosedTemplateIsNotATemplate() {
        XCTAssertNil(template("{{see | name=A {{b}} and more").0)
        XCTAssertNil(WikiTemplateParser.end(WikiSource("{{a|{{b}}"), from: 0))
        XCTAssertEqual(WikiTemplateParser.end(WikiSource("{{a|{{{1|x}}}}} tail"), from: 0), 15)
    }

    func testHostileNestingIsTreatedAsUnclosed() {
        let deep = String(repeating: "{{a|", count: 200) + String(repeating: "}}", count: 200)
        XCTAssertNil(template(deep).0)
    }

    func testPositionalAndNamedArguments() {
        let (parsed, source) = template("{{geo|40.78|-73.97|zoom=12}}")
        XCTAssertEqual(parsed?.positional(2).map(source.text), "-73.97")
        XCTAssertEqual(parsed?.argument("2").map(source.text), "-73.97")
        XCTAssertEqual(parsed?.argument("Zoom").map(source.text), "12")
        XCTAssertNil(parsed?.argument("3"))
    }

    func testLinksKeepTheirLabel() {
        XCTAssertEqual(plain("in der [[Kostroma|Костромы]] und [[Galich]]s, [[#Täler|Täler]], [[:Category:Parks]]").0,
                       "in der Костромы und Galichs, Täler, Category:Parks")
        XCTAssertEqual(plain("[[File:Amber House.jpg|thumb|300px|a [[Nelson]] villa]]Bed [[Kategorie:Hütte]]and").0, "Bed and")
        XCTAssertEqual(plain("[[Upper_West_Side]]").0, "Upper West Side")
    }

    func testExternalLinksBoldEntitiesAndTags() {
        XCTAssertEqual(plain("'''Bold''' and ''italic'' [http://a.org the site] [http://b.org] 35,000&nbsp;dong &amp; more").0,
                       "Bold and italic the site 35,000 dong & more")
        XCTAssertEqual(plain("a<br/>b <small>c</small><ref>note</ref> &#233;&#x00E8; &bogus;").0, "a b c éè &bogus;")
        XCTAssertEqual(plain("[http://x.org/a label]", mode: .url).0, "http://x.org/a")
    }

    func testCommentsAreLeftOutAndSpacesCollapsed() {
        XCTAssertEqual(plain("AMBER HOUSE - at the centre! <!-- the verbatim name --> ").0, "AMBER HOUSE - at the centre!")
        XCTAssertEqual(plain("  a \n\t b\u{00A0}\u{00A0}c  ").0, "a b c")
    }

    func testInlineTemplatesAreRenderedUnknownOnesNamed() {
        let (text, unknown) = plain("Menu à {{Prix|13|€}} le midi {{Horaire|||14||18|}}, {{dead link|2016}}{{#invoke:x|y}}{{PAGENAME}}",
                                    inline: ["prix": "{1} {2}", "dead link": ""])
        XCTAssertEqual(text, "Menu à 13 € le midi ,")
        XCTAssertEqual(unknown, ["Horaire"])
    }

    func testInlineTemplateArgumentsAreThemselvesPlainText() {
        XCTAssertEqual(plain("{{lang|de|'''[[Weißenburg]]'''}}", inline: ["lang": "{2}"]).0, "Weißenburg")
    }
}
