import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The tree walk that evaluates a simple CSS selector (`CSSSelector.descendantTest`) against libxml2's XPath engine
/// evaluating the same selector's XPath: the same nodes in the same order, on real pages and on generated ones.
final class CSSWalkTests: KilnTestCase {
    /// Each node's place in document order, computed by the XPath engine: the nodes before it that are not its
    /// ancestors, plus its ancestors.
    private let place = "count(preceding::node()) + count(ancestor::node())"

    /// The selected nodes through the walk and through XPath, as (line, position, place in the document).
    private func compare(_ selector: String, in document: HTMLDocument, page: String,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        let walked = try NodeSelector.css(selector).compile()
        XCTAssertNotNil(walked.descendantTest, "\(selector) should take the walk", file: file, line: line)
        let engine = try XPathExpression(CSSSelector.xpath(selector))
        XCTAssertNil(engine.descendantTest)
        let fields = [try XPathExpression(place)]
        let fast = document.records(walked, fields: fields).map { "\($0.line) \($0.position) \($0.values)" }
        let slow = document.records(engine, fields: fields).map { "\($0.line) \($0.position) \($0.values)" }
        XCTAssertEqual(fast, slow, "\(selector) on \(page)", file: file, line: line)
        XCTAssertEqual(document.nodes(walked).map(\.tree), document.nodes(engine).map(\.tree), "\(selector) on \(page)", file: file, line: line)
    }

    /// The selectors a page suggests: its element names, classes and ids, alone and combined.
    private func selectors(for document: HTMLDocument) throws -> [String] {
        var names: Set<String> = [], classes: Set<String> = [], ids: Set<String> = [], pairs: Set<String> = []
        for node in document.nodes(try XPathExpression("//*")) {
            guard case .element(let name, let attributes, _, _) = node.tree else { continue }
            names.insert(name)
            let tokens = (attributes["class"] ?? "").split(whereSeparator: { " \t\n\r".contains($0) }).map(String.init)
            tokens.forEach { classes.insert($0) }
            if let first = tokens.first { pairs.insert("\(name).\(first)") }
            if tokens.count > 1 { pairs.insert(".\(tokens[1]).\(tokens[0])") }
            if let id = attributes["id"], !id.isEmpty, !id.contains(where: { " .#[]>,'\"".contains($0) }) {
                ids.insert(id)
                pairs.insert("\(name)#\(id)")
            }
        }
        let cssName: (String) -> Bool = { !$0.isEmpty && !$0.contains(where: { " .#[]>,'\"\t\n\r".contains($0) }) }
        return ["*", "td.content", ".content", "div#main", "td.a.b"]
            + names.sorted().filter { $0.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" } }
            + classes.sorted().filter(cssName).map { ".\($0)" }
            + ids.sorted().map { "#\($0)" }
            + pairs.sorted().filter { !$0.contains(where: { " []>,'\"\t\n\r".contains($0) }) }
    }

    private func comparePages(in folder: String, encoding: String? = nil) throws {
        let directory = Self.repositoryRoot.appendingPathComponent(folder)
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".html") }.sorted()
        XCTAssertFalse(pages.isEmpty, folder)
        var compared = 0
        for page in pages {
            let document = try HTMLDocument(path: directory.appendingPathComponent(page).path, encoding: encoding)
            for selector in try selectors(for: document) {
                try compare(selector, in: document, page: page)
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, pages.count * 5)
    }

    func testRealPagesBielBusLatin1() throws { try comparePages(in: "Tests/Fixtures/real/html-biel-bus-latin1") }

    func testRealPagesPatrasWeb() throws { try comparePages(in: "raw/patras-web/timetables") }

    func testRealPagesMuseum() throws { try comparePages(in: "raw/museum/pages") }

    func testTheTimetableRootFindsItsCells() throws {
        let directory = Self.repositoryRoot.appendingPathComponent("raw/patras-web/timetables")
        let page = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".html") }.sorted()[0]
        let document = try HTMLDocument(path: directory.appendingPathComponent(page).path)
        XCTAssertFalse(document.nodes(try NodeSelector.css("td.content").compile()).isEmpty)
    }

    /// Random pages: classes split by tabs, line feeds, carriage returns and runs of spaces, repeated classes,
    /// nested matches, upper-case tags and attribute names, a class attribute without a value, missing classes,
    /// ids, and a class attribute given twice.
    func testGeneratedPages() throws {
        var random = SplitMix(seed: 0x6B696C6E)
        let tags = ["td", "div", "span", "p", "TD", "Div", "SPAN", "table", "tr", "b"]
        let tokens = ["a", "b", "content", "c-d", "A", "contents", "x_y"]
        let spaces = [" ", "\t", "\n", "\r\n", "  ", " \t ", "\r"]
        let selectors = ["*", "td", "div", "span", "p", "b", ".a", ".b", ".content", "td.content", "td.a.b", "td.b.a",
                         ".a.a", "div.c-d", "span.x_y", "#main", "div#main", "td#x.a", "#x#x", "*.a", "*#main", ".A",
                         "tr.content", "td.contents", "p.a.b.content"]
        func attributes() -> String {
            var text = ""
            switch random.next(7) {
            case 0: break
            case 1: text += " class"
            case 2: text += " class=\"\""
            default:
                let count = 1 + random.next(4)
                var value = random.next(3) == 0 ? spaces[random.next(spaces.count)] : ""
                for index in 0..<count {
                    if index > 0 { value += spaces[random.next(spaces.count)] }
                    value += tokens[random.next(tokens.count)]
                }
                if random.next(3) == 0 { value += spaces[random.next(spaces.count)] }
                text += " \(random.next(4) == 0 ? "CLASS" : "class")=\"\(value)\""
            }
            if random.next(4) == 0 { text += " \(random.next(3) == 0 ? "ID" : "id")=\"\(["main", "x", "y"][random.next(3)])\"" }
            if random.next(10) == 0 { text += " class=\"a\"" }
            return text
        }
        func element(depth: Int) -> String {
            let tag = tags[random.next(tags.count)]
            var inner = ""
            for _ in 0..<(depth > 3 ? 0 : random.next(4)) {
                inner += random.next(3) == 0 ? "text\n" : element(depth: depth + 1)
            }
            return "<\(tag)\(attributes())>\(inner)</\(tag)>\n"
        }
        var compared = 0
        for _ in 0..<60 {
            var body = ""
            for _ in 0..<(1 + random.next(5)) { body += element(depth: 0) }
            let document = try HTMLDocument(fragment: "<html><body>\n\(body)</body></html>")
            for selector in selectors {
                try compare(selector, in: document, page: body)
                compared += document.nodes(try NodeSelector.css(selector).compile()).count
            }
        }
        XCTAssertGreaterThan(compared, 500)
    }

    func testSelectorsBeyondOneCompoundKeepTheXPathEngine() throws {
        for selector in ["td span", "tr > td", "td, th", "td[class]", "[id=x]", "TD", "td.a\tb", "Td.content"] {
            XCTAssertNil(CSSSelector.descendantTest(selector), selector)
            XCTAssertNil(try NodeSelector.css(selector).compile().descendantTest, selector)
        }
        for selector in ["td.content", ".content", "div#main", "td.a.b", "*", " td.content "] {
            XCTAssertNotNil(CSSSelector.descendantTest(selector), selector)
        }
    }
}

/// A small seeded generator, so that a failing page can be made again.
private struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
