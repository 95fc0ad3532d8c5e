import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `CSSSelector`: the CSS subset translated to XPath, and what those XPaths select in a parsed page.
final class CSSSelectorTests: KilnTestCase {
    private let hasClass = "contains(concat(' ', normalize-space(@class), ' '), "

    // MARK: Translations

    func testTypeSelector() throws {
        XCTAssertEqual(try CSSSelector.xpath("td"), ".//td")
        XCTAssertEqual(try CSSSelector.xpath("*"), ".//*")
        XCTAssertEqual(try CSSSelector.xpath("h1"), ".//h1")
    }

    func testClassSelector() throws {
        XCTAssertEqual(try CSSSelector.xpath(".a"), ".//*[\(hasClass)' a ')]")
    }

    func testCommaInsideAnAttributeValueIsNotAListSeparator() throws {
        XCTAssertEqual(try CSSSelector.xpath("[data-sep=\",\"]"), ".//*[@data-sep=',']")
        XCTAssertEqual(try CSSSelector.xpath("td[title='a, b'], th"), ".//td[@title='a, b'] | .//th")
    }

    func testIDSelector() throws {
        XCTAssertEqual(try CSSSelector.xpath("#b"), ".//*[@id='b']")
    }

    func testCompoundSelector() throws {
        XCTAssertEqual(try CSSSelector.xpath("td.a.b"), ".//td[\(hasClass)' a ')][\(hasClass)' b ')]")
        XCTAssertEqual(try CSSSelector.xpath("div#main.wide"), ".//div[@id='main'][\(hasClass)' wide ')]")
        XCTAssertEqual(try CSSSelector.xpath("td.time[data-x=1]"), ".//td[\(hasClass)' time ')][@data-x='1']")
    }

    func testAttributeSelectors() throws {
        XCTAssertEqual(try CSSSelector.xpath("[x]"), ".//*[@x]")
        XCTAssertEqual(try CSSSelector.xpath("[x=y]"), ".//*[@x='y']")
        XCTAssertEqual(try CSSSelector.xpath("[x=\"y z\"]"), ".//*[@x='y z']")
        XCTAssertEqual(try CSSSelector.xpath("[x='y z']"), ".//*[@x='y z']")
        XCTAssertEqual(try CSSSelector.xpath("a[ href = \"/x\" ]"), ".//a[@href='/x']")
        XCTAssertEqual(try CSSSelector.xpath("[data-code]"), ".//*[@data-code]")
    }

    func testAttributeValuesWithQuotes() throws {
        XCTAssertEqual(try CSSSelector.xpath("[title=\"it's\"]"), ".//*[@title=\"it's\"]")
        XCTAssertEqual(CSSSelector.literal("a'b\"c"), "concat('a', \"'\", 'b\"c')")
        XCTAssertEqual(CSSSelector.literal("plain"), "'plain'")
    }

    func testCombinators() throws {
        XCTAssertEqual(try CSSSelector.xpath("a b"), ".//a//b")
        XCTAssertEqual(try CSSSelector.xpath("a > b"), ".//a/b")
        XCTAssertEqual(try CSSSelector.xpath("a>b"), ".//a/b")
        XCTAssertEqual(try CSSSelector.xpath("table.schedule  tr > td"), ".//table[\(hasClass)' schedule ')]//tr/td")
        XCTAssertEqual(try CSSSelector.xpath("> b"), "./b")
    }

    func testSelectorList() throws {
        XCTAssertEqual(try CSSSelector.xpath("a, b"), ".//a | .//b")
        XCTAssertEqual(try CSSSelector.xpath("h1,h2 , td.x"), ".//h1 | .//h2 | .//td[\(hasClass)' x ')]")
    }

    func testNodeSelectorTranslatesCSSOnly() throws {
        XCTAssertEqual(try NodeSelector.css("td.a").xpathText(), ".//td[\(hasClass)' a ')]")
        XCTAssertEqual(try NodeSelector.xpath("//td[@class='a']").xpathText(), "//td[@class='a']")
        XCTAssertEqual(try NodeSelector.css("td").compile().source, ".//td")
    }

    func testNodeSelectorDecoding() throws {
        XCTAssertEqual(try JSONValue.string("td[1]").decode(NodeSelector.self, codingPath: []), .xpath("td[1]"))
        XCTAssertEqual(try JSONValue.object(["xpath": .string("td[2]")]).decode(NodeSelector.self, codingPath: []), .xpath("td[2]"))
        XCTAssertEqual(try JSONValue.object(["css": .string("td.x")]).decode(NodeSelector.self, codingPath: []), .css("td.x"))
        XCTAssertThrowsError(try JSONValue.object(["jquery": .string("td")]).decode(NodeSelector.self, codingPath: []))
    }

    // MARK: Errors

    private func assertUnsupported(_ selector: String, mentions fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try CSSSelector.xpath(selector), file: file, line: line) { error in
            guard let problem = error as? ValueProblem else { return XCTFail("got \(error)", file: file, line: line) }
            XCTAssertTrue(problem.message.contains(fragment), problem.message, file: file, line: line)
            XCTAssertTrue(problem.message.contains("\"\(selector)\""), problem.message, file: file, line: line)
        }
    }

    func testPseudoClassIsRefused() {
        assertUnsupported("a:hover", mentions: "unsupported CSS \"a:hover\"")
        assertUnsupported("td:first-child", mentions: "unsupported CSS")
    }

    func testSiblingCombinatorsAreRefused() {
        assertUnsupported("a + b", mentions: "unsupported CSS \"+\"")
        assertUnsupported("a ~ b", mentions: "unsupported CSS \"~\"")
    }

    func testAttributeOperatorsAreRefused() {
        assertUnsupported("[x~=y]", mentions: "unsupported attribute selector [x~=y]")
        assertUnsupported("[x^=y]", mentions: "unsupported attribute selector [x^=y]")
        assertUnsupported("a[x*=\"y\"]", mentions: "unsupported attribute selector")
    }

    func testUnclosedBracketIsRefused() {
        assertUnsupported("td[x", mentions: "unclosed [")
        assertUnsupported("[x=y", mentions: "unclosed [")
    }

    func testEmptySelectorsAreRefused() {
        XCTAssertThrowsError(try CSSSelector.xpath("")) { XCTAssertTrue($0 is ValueProblem) }
        XCTAssertThrowsError(try CSSSelector.xpath("   ")) { XCTAssertTrue($0 is ValueProblem) }
        assertUnsupported("td.", mentions: "empty class or id")
        assertUnsupported("#", mentions: "empty class or id")
    }

    // MARK: Selection

    private let page = """
        <html><body>
        <div id="b" class="a">
          <table class="schedule wide"><tr><td class="a b" x="y">ab</td><td class="a" x="y z">a</td><td class="ab">none</td></tr></table>
          <p x>flag</p>
        </div>
        <a href="/1"><b>direct</b><span><b>nested</b></span></a>
        </body></html>
        """

    /// What `selector` selects in `page`; the form compiled for evaluation must select exactly the same nodes.
    private func select(_ selector: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let document = try HTMLDocument(fragment: page)
        let selected = document.select(try XPathExpression(try CSSSelector.xpath(selector)))
        XCTAssertEqual(document.select(try NodeSelector.css(selector).compile()), selected, selector, file: file, line: line)
        return selected.map(Self.describe)
    }

    func testTheFormCompiledForEvaluationSelectsTheSameNodesOnEveryRealPage() throws {
        let selectors = ["td.content", ".content", "td.menu a", "table.schedule td", "div.a.b", ".a > .b", "p.note, td.content",
                         "*.x", "[class]", "td[class=content]", "table.wide tr > td.a", "body .listing", "li.vcard .fn"]
        var pages = 0, selected = 0
        for folder in ["raw", "Tests/Fixtures"] {
            let walker = try XCTUnwrap(FileManager.default.enumerator(at: Self.repositoryRoot.appendingPathComponent(folder), includingPropertiesForKeys: nil))
            for case let url as URL in walker where url.pathExtension.lowercased().hasPrefix("htm") {
                guard let document = try? HTMLDocument(path: url.path) else { continue }
                pages += 1
                for selector in selectors {
                    let written = document.select(try XPathExpression(try CSSSelector.xpath(selector)))
                    XCTAssertEqual(document.select(try NodeSelector.css(selector).compile()), written, "\(selector) on \(url.lastPathComponent)")
                    selected += written.count
                }
            }
        }
        XCTAssertGreaterThan(pages, 80)
        XCTAssertGreaterThan(selected, 100, "the selectors should select something somewhere")
        XCTAssertEqual(try CSSSelector.xpath("td.a", forEvaluation: true), ".//td[@class and \(hasClass)' a ')]")
    }

    /// `name:text` of a node, text being its whole text content collapsed.
    private static func describe(_ node: MarkupNode) -> String {
        func content(_ node: MarkupNode) -> String {
            switch node {
            case .text(let text, _): return text
            case .element(_, _, _, let children): return children.map(content).joined()
            }
        }
        guard case .element(let name, _, _, _) = node else { return "text" }
        return name + ":" + TextFolding.collapseSpaces(content(node))
    }

    func testTranslationsSelectTheRightNodes() throws {
        XCTAssertEqual(try select("td"), ["td:ab", "td:a", "td:none"])
        // `.a` is the class word a, not part of ab.
        XCTAssertEqual(try select("td.a"), ["td:ab", "td:a"])
        XCTAssertEqual(try select(".a").map { $0.prefix(4) }, ["div:", "td:a", "td:a"])
        XCTAssertEqual(try select("td.a.b"), ["td:ab"])
        XCTAssertEqual(try select("#b").count, 1)
        XCTAssertEqual(try select("#b").first?.hasPrefix("div:"), true)
        XCTAssertEqual(try select("[x]"), ["td:ab", "td:a", "p:flag"])
        XCTAssertEqual(try select("[x=y]"), ["td:ab"])
        XCTAssertEqual(try select("[x=\"y z\"]"), ["td:a"])
        XCTAssertEqual(try select("table.wide td"), ["td:ab", "td:a", "td:none"])
        XCTAssertEqual(try select("a b"), ["b:direct", "b:nested"])
        XCTAssertEqual(try select("a > b"), ["b:direct"])
        XCTAssertEqual(try select("p, td.ab"), ["td:none", "p:flag"], "a list selects in document order")
        XCTAssertEqual(try select("span"), ["span:nested"])
        XCTAssertEqual(try select("tr.none"), [])
    }
}
