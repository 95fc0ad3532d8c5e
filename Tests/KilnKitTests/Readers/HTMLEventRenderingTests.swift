import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Rendering a simple CSS text root, or the default `//body`, from the HTML parser's events (`HTMLParser.parseEvents`,
/// `MarkupText.PickedLines`) gives what the tree path gives (`MarkupText.lines` over `HTMLDocument.nodes`, the
/// oracle): the same lines with the same line numbers, the same problems, the same empty pages — on the repository's
/// real pages, the benchmark's pages, hostile markup and a few hundred generated pages.
final class HTMLEventRenderingTests: KilnTestCase {
    /// What a page gives one way or the other.
    private enum Rendering: Equatable {
        case lines([MarkupText.Line], problems: [HTMLParser.Problem])
        case empty
        case needsTree
    }

    private func throughTree(_ bytes: [UInt8], _ css: String, separator: String, encoding: String?) throws -> Rendering {
        guard let document = try? HTMLDocument(bytes: bytes, encoding: encoding, name: "page"), !document.isEmpty else { return .empty }
        let root = try (css == "//body" ? NodeSelector.xpath(css) : NodeSelector.css(css)).compile()
        XCTAssertEqual(root.descendantTest == nil, css == "//body", css)
        return .lines(document.nodes(root).flatMap(MarkupText(cellSeparator: separator).lines), problems: document.problems)
    }

    private func throughEvents(_ bytes: [UInt8], _ css: String, separator: String, encoding: String?) throws -> Rendering {
        let wholeDocument = css == "//body"
        let test = try XCTUnwrap(wholeDocument ? DescendantElementTest(name: "body", classes: [], ids: []) : CSSSelector.descendantTest(css), css)
        let picked = MarkupText.PickedLines(test: test, cellSeparator: separator)
        switch HTMLParser.parseEvents(bytes, encoding: encoding, wholeDocument: wholeDocument, handler: picked) {
        case .read(let problems): return .lines(picked.lines, problems: problems)
        case .empty: return .empty
        case .needsTree: return .needsTree
        }
    }

    /// Compares both ways for each selector; returns the number of lines compared.
    @discardableResult
    private func assertSame(_ bytes: [UInt8], _ name: String, selectors: [String] = ["td.content", ".content", "td", "p", "div#main", "*.content.x", "//body"],
                            separators: [String] = ["\t"], encoding: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        var compared = 0
        for css in selectors {
            for separator in separators {
                let expected = try throughTree(bytes, css, separator: separator, encoding: encoding)
                let actual = try throughEvents(bytes, css, separator: separator, encoding: encoding)
                if actual == .needsTree {
                    XCTAssertGreaterThanOrEqual(bytes.filter { $0 == 0x0A }.count, 65534, "\(name) \(css): only pages past line 65 534 need the tree",
                                                file: file, line: line)
                    continue
                }
                XCTAssertEqual(actual, expected, "\(name) \(css) separator \"\(separator)\"", file: file, line: line)
                if case .lines(let lines, _) = expected { compared += lines.count }
            }
        }
        return compared
    }

    // MARK: Real pages

    func testRealPagesGiveTheTreesLines() throws {
        var pages: [URL] = []
        for folder in ["raw", "Tests/Fixtures"] {
            let root = Self.repositoryRoot.appendingPathComponent(folder)
            let walker = try XCTUnwrap(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            for case let url as URL in walker where ["html", "htm"].contains(url.pathExtension.lowercased()) { pages.append(url) }
        }
        XCTAssertGreaterThan(pages.count, 80, "the repository's pages were not found")
        var lines = 0
        for page in pages.sorted(by: { $0.path < $1.path }) {
            let bytes = try [UInt8](Data(contentsOf: page))
            lines += try assertSame(bytes, page.path, selectors: ["td.content", ".content", "td", "table", "li", "p", "div", "span", "th", "a", "//body"],
                                    separators: ["\t", " | "])
        }
        XCTAssertGreaterThan(lines, 5_000)
    }

    /// The benchmark's page, and 200 pages the benchmark's generator writes (scripts/bench-data/generate.py e2e, a
    /// fixed seed, in this test's temporary folder).
    func testBenchmarkPagesGiveTheTreesLines() throws {
        let lines = try assertSame(Array(Self.benchmarkPage.utf8), "benchmark page", selectors: ["td.content"])
        XCTAssertGreaterThan(lines, 20)
        let generated = temporaryDirectory.appendingPathComponent("bench")
        _ = try standardOutput(of: URL(fileURLWithPath: "/usr/bin/env"),
                               ["python3", Self.repositoryRoot.appendingPathComponent("scripts/bench-data/generate.py").path, "e2e", generated.path, "200"])
        let folder = generated.appendingPathComponent("pages")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".html") }.sorted()
        XCTAssertEqual(names.count, 200, "the generator's pages")
        for name in names {
            let compared = try assertSame([UInt8](Data(contentsOf: folder.appendingPathComponent(name))), name, selectors: ["td.content"])
            XCTAssertGreaterThan(compared, 0, "\(name): its timetable's lines were compared")
        }
    }

    // MARK: Hostile markup

    func testHostileMarkupGivesTheTreesLines() throws {
        let deep = String(repeating: "<div>", count: 300) + "deep" + String(repeating: "</div>", count: 300)
        let pages: [(String, [UInt8])] = [
            ("empty", []), ("BOM only", [0xEF, 0xBB, 0xBF]), ("blanks", Array(" \n\n".utf8)), ("comment only", Array("<!-- nothing -->\n".utf8)),
            ("text only", Array("just text\nno tags".utf8)),
            ("NUL", Array("<table><tr><td class=content>t".utf8) + [0] + Array("wo</td></tr></table>".utf8)),
            ("deep", Array("<table><tr><td class=content>a<p>\(deep)</p>b</td></tr></table>".utf8)),
            ("deep root", Array("<p class=content>\(deep)</p><td class=content>after</td>".utf8)),
            ("latin-1 bytes", Array("<td class=content>caf".utf8) + [0xE9] + Array(" au lait</td><td class=content>cr".utf8) + [0xE8, 0x6D, 0x65] + Array("</td>".utf8)),
            ("declared latin-1", Array("<meta charset=iso-8859-1><td class=content>caf".utf8) + [0xE9] + Array("</td>".utf8)),
            ("BOM", [0xEF, 0xBB, 0xBF] + Array("<td class=content>bom</td>".utf8)),
            ("CR LF", Array("<td class=content>\r\n  one\r\n two\r\n</td>\r\n<td class=content>\r\r\nthree</td>".utf8)),
            ("unclosed", Array("<td class=content><p>one<p>two<li>three<td class=content>four".utf8)),
            ("uppercase", Array("<TABLE><TR><TD CLASS=content>Up</TD><TD Class=\"x content\">Mixed</TD></TR></TABLE>".utf8)),
            ("no value", Array("<td class>no class</td><td class=\"\">empty</td><td class=content id>x</td>".utf8)),
            ("root is html", Array("<html class=content><body><p class=content>inner</p></body></html>".utf8)),
            ("after html", Array("<html><body><td class=content>one</td></body></html>\ntrailing <td class=content>two</td>".utf8)),
            ("after html with doctype", Array("<!DOCTYPE html><html><body><td class=content>one</td></body></html>\n<td class=content>two</td>".utf8)),
            ("after html with comment", Array("<!-- c --><html><body><td class=content>one</td></body></html>x<td class=content>two</td>".utf8)),
            ("misplaced doctype", Array("<html><body><td class=content>one</td><!DOCTYPE html></body></html><td class=content>two</td>".utf8)),
            ("processing instruction", Array("<?php echo 1 ?><td class=content>a<?x y?>b</td>".utf8)),
            ("body after html with doctype", Array("<!DOCTYPE html><html><body>one</body></html>two<body>three".utf8)),
            ("body after html", Array("<html><body>one</body></html><p>two</p>".utf8)),
            ("strict doctype body blanks", Array("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><body>  <span class=content>a</span>  <img>  <span class=content>b</span></body>".utf8)),
        ]
        for (name, bytes) in pages {
            try assertSame(bytes, name, separators: ["\t", " | "])
        }
        try assertSame(Array("<td class=content>caf".utf8) + [0xE9] + Array("</td>".utf8), "encoding given", encoding: "ISO-8859-1")
        try assertSame(Array("<td class=content>caf".utf8) + [0xE9] + Array("</td>".utf8), "unknown encoding", encoding: "x-no-such")
    }

    /// A text node over libxml2's 10 MB: the tree builder drops the chunk that crosses it and says so; the
    /// events must drop the same chunk and give the same problem.
    func testHugeTextNodeGivesTheTreesLinesAndProblem() throws {
        let words = String(repeating: "word ", count: 2_100_000)
        let bytes = Array("<table><tr><td class=content>before</td><td class=content>\(words)</td></tr></table><p class=content>after</p>".utf8)
        let tree = try throughTree(bytes, "td.content", separator: "\t", encoding: nil)
        guard case .lines(let lines, let problems) = tree else { return XCTFail("\(tree)") }
        XCTAssertEqual(problems.map(\.kind), [.stopped], "the oracle no longer stops: the test needs a bigger text")
        XCTAssertEqual(lines.first?.text, "before")
        XCTAssertEqual(try throughEvents(bytes, "td.content", separator: "\t", encoding: nil), tree)
        XCTAssertEqual(try throughEvents(bytes, ".content", separator: "\t", encoding: nil), try throughTree(bytes, ".content", separator: "\t", encoding: nil))
    }

    /// Text past line 65 534 is numbered from the nodes around it in the tree: such a page is read through the tree,
    /// and `HTMLPage.lines` gives the tree's lines; text before that line still comes from the events.
    func testPagesPastLine65535AreReadThroughTheTree() throws {
        let early = Array("<td class=content>early</td>".utf8) + Array(repeating: 0x0A, count: 70_000) + Array("<p>late</p>".utf8)
        XCTAssertNotEqual(try throughEvents(early, "td.content", separator: "\t", encoding: nil), .needsTree)
        try assertSame(early, "early", selectors: ["td.content"])

        let late = Array(repeating: 0x0A, count: 70_000) + Array("<table><tr><td class=content>late\n\none</td><td class=content>two</td></tr></table>".utf8)
        XCTAssertEqual(try throughEvents(late, "td.content", separator: "\t", encoding: nil), .needsTree)
        let url = try write(Data(late), to: "late.html")
        let root = try NodeSelector.css("td.content").compile()
        let lines = try HTMLPage.lines(InputFile(url: url, relativePath: "late.html"), root: root, text: MarkupText(), encoding: nil,
                                       maxPageBytes: 1 << 20, consequence: "none", log: DiagnosticLog())
        XCTAssertEqual(lines.map { .lines($0, problems: []) }, try throughTree(late, "td.content", separator: "\t", encoding: nil))
    }

    // MARK: Generated pages

    func testGeneratedPagesGiveTheTreesLines() throws {
        var generator = PageGenerator(seed: 14)
        var lines = 0
        let pages = TestTier.size(400, fast: 40)
        for index in 0..<pages {
            let page = generator.page()
            lines += try assertSame(Array(page.utf8), "generated page \(index):\n\(page)", selectors: ["td.content", ".content", "td", "div#main", "//body"],
                                    separators: index % 2 == 0 ? ["\t"] : [" | "])
        }
        XCTAssertGreaterThan(lines, 10 * pages)
    }

    /// Adjacent characters callbacks are one text node, numbered by its first callback: libxml2 hands text over in
    /// chunks of 1 000 bytes, so a long text spanning lines tells both apart.
    func testLongTextSplitIntoCallbacksKeepsItsFirstLine() throws {
        let long = (1...300).map { "word\($0)" }.joined(separator: "\n")
        let page = "<table>\n<tr><td class=content>\n\(long)\n</td></tr>\n<tr><td class=content>x &amp; y\n&nbsp;z</td></tr></table>"
        XCTAssertGreaterThan(long.utf8.count, 2_000, "the text must take several callbacks")
        let expected = try throughTree(Array(page.utf8), "td.content", separator: "\t", encoding: nil)
        guard case .lines(let lines, _) = expected else { return XCTFail("\(expected)") }
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(try throughEvents(Array(page.utf8), "td.content", separator: "\t", encoding: nil), expected)
    }

    /// The page of scripts/bench-data/generate.py e2e (line-1.html of its 500-page set).
    static let benchmarkPage = """
    <html><head><meta charset="utf-8"><title>Γραμμή 1</title><script>var t = "06:00 08:00 20";</script></head><body><table class="layout"><tr><td class="menu"><a href="/">Αρχική</a><br></td><td class="content"><h1>Γραμμή 1.1: Πανεπιστήμιο - Ρίο</h1>
    <table class="schedule">
    <tr><th colspan="3">Κυριακή - Αργίες</th></tr>
    <tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr>
    <tr><td>07:14</td><td>09:14</td><td>22&nbsp;</td></tr>
    <tr><td>09:49</td><td>11:02</td><td>117&nbsp;</td></tr>
    <tr><td>11:47</td><td>14:11</td><td>23&nbsp;</td></tr>
    <tr><td>18:03</td><td>19:14</td><td>72&nbsp;</td></tr>
    <tr><td>18:26</td><td>20:36</td><td>88&nbsp;</td></tr>
    <tr><td>18:55</td><td>19:51</td><td>74&nbsp;</td></tr>
    <tr><th colspan="3">Καθημερινές</th></tr>
    <tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr>
    <tr><td>07:39</td><td>10:11</td><td>76&nbsp;</td></tr>
    <tr><td>12:29</td><td>13:50</td><td>99&nbsp;</td></tr>
    <tr><td>15:02</td><td>15:41</td><td>80&nbsp;</td></tr>
    <tr><td>18:20</td><td>19:19</td><td>103&nbsp;</td></tr>
    <tr><td>18:45</td><td>21:42</td><td>29&nbsp;</td></tr>
    <tr><th colspan="3">Σάββατο</th></tr>
    <tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr>
    <tr><td>11:59</td><td>13:38</td><td>94&nbsp;</td></tr>
    <tr><td>14:35</td><td>15:56</td><td>49&nbsp;</td></tr>
    <tr><td>17:35</td><td>20:42</td><td>10&nbsp;</td></tr>
    </table>
    <p>Τελευταίο δρομολόγιο στις 23:15</p></td></tr></table></body></html>

    """
}

/// Random pages of the markup libxml2 recovers from: unclosed tags, implied tbody and tr, nested tables, td.content
/// inside td.content, scripts, styles, comments, CDATA, entities, no-break spaces, long texts over libxml2's 1 000-byte
/// chunks, texts spanning lines, CR LF. Deterministic for a seed.
struct PageGenerator {
    private var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    private mutating func next() -> UInt64 { random.next() }

    private mutating func below(_ count: Int) -> Int { Int(next() % UInt64(count)) }
    private mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    private mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func page() -> String {
        var page = pick(["", "<!DOCTYPE html>\n", "<!-- head comment -->", "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">\n", "\u{FEFF}"])
        if chance(60) { page += "<html><head><title>t</title>" + (chance(50) ? "<style>td { x: 1 }</style>" : "") + "</head><body>\n" }
        page += content(depth: 0)
        if chance(60) { page += "</body></html>" }
        if chance(20) { page += pick(["\ntrailing text", "<td class=content>after the end</td>", "<!-- end -->", "\n"]) }
        return page
    }

    private mutating func content(depth: Int) -> String {
        var out = ""
        for _ in 0..<(1 + below(depth == 0 ? 6 : 4)) { out += node(depth: depth) }
        return out
    }

    private mutating func text() -> String {
        switch below(14) {
        case 0: return (0..<(60 + below(300))).map { _ in pick(["alpha", "beta", "γάμμα", "δ", "12:30", "x"]) }.joined(separator: pick([" ", "\n", "  \n ", "\t"]))
        case 1: return pick(["&amp;", "&nbsp;", "&#32;", "&#x41;", "&bogus;", "&lt;b&gt;", "&#10;", "&nbsp;&nbsp;"])
        case 2: return pick(["\n", "  ", "\n\n  \n", "\r\n", " \t "])
        case 3: return "line one\nline two\n\nline three"
        case 4: return "<![CDATA[cdata text]]>"
        case 5: return "\u{00A0}no-break\u{00A0}"
        case 6: return "café\u{0301} ΣΊΣΥΦΟΣ"
        default: return pick(["one", "two words", " padded ", "07:14", "Γραμμή 1.1", "a < b", "x & y", "end."])
        }
    }

    private mutating func cellClass() -> String {
        pick(["", " class=content", " class=\"content\"", " class=\"x content\"", " class=\"content x\"", " class=other", " id=main", " class=content id=main", " CLASS=content"])
    }

    private mutating func node(depth: Int) -> String {
        if depth > 5 { return text() }
        switch below(16) {
        case 0, 1, 2: return text()
        case 3:
            var table = "<table\(chance(30) ? " class=content" : "")>" + (chance(30) ? "<tbody>" : "")
            for _ in 0..<(1 + below(3)) {
                table += chance(80) ? "<tr>" : ""
                for _ in 0..<(1 + below(3)) {
                    table += "<\(pick(["td", "td", "th"]))\(cellClass())>" + content(depth: depth + 1)
                    if chance(60) { table += "</td>" }
                    if chance(30) { table += "\n" }
                }
                if chance(60) { table += "</tr>" }
            }
            return table + (chance(80) ? "</table>" : "")
        case 4: return "<td\(cellClass())>" + content(depth: depth + 1) + (chance(50) ? "</td>" : "")
        case 5: return "<p\(cellClass())>" + content(depth: depth + 1) + (chance(50) ? "</p>" : "")
        case 6: return "<div\(cellClass())>" + content(depth: depth + 1) + (chance(80) ? "</div>" : "")
        case 7: return "<span\(cellClass())>" + content(depth: depth + 1) + "</span>"
        case 8: return pick(["<br>", "<br/>", "<hr>", "<img src=x>", "<wbr>"])
        case 9: return "<script>var s = '</td><td class=content>not a cell';</script>"
        case 10: return pick(["<!-- comment -->", "<!-- <td class=content>hidden</td> -->", "<?pi data?>"])
        case 11: return "<ul><li>" + content(depth: depth + 1) + "<li>" + text() + "</ul>"
        case 12: return "<noscript class=content>" + content(depth: depth + 1) + "</noscript>"
        case 13: return "<b>" + text() + "</b>" + text() + "<i>" + text() + "</i>"
        case 14: return "<h1\(cellClass())>" + text() + "</h1>"
        default: return "<td class=content><table><tr><td class=content>" + content(depth: depth + 1) + "</td></tr></table>" + text() + "</td>"
        }
    }
}
