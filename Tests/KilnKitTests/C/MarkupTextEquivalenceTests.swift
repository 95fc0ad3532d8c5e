import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Rendering straight from libxml2's tree, on bytes, gives what the former rendering of a `MarkupNode` copy of the
/// tree, on Swift characters, gave: the same lines with the same line numbers, on every real page of the repository
/// and on text made to trip byte-level white space handling.
final class MarkupTextEquivalenceTests: KilnTestCase {
    /// Every HTML page under raw/ and Tests/Fixtures.
    private func realPages() throws -> [URL] {
        var pages: [URL] = []
        for folder in ["raw", "Tests/Fixtures"] {
            let root = Self.repositoryRoot.appendingPathComponent(folder)
            let walker = try XCTUnwrap(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            for case let url as URL in walker where ["html", "htm"].contains(url.pathExtension.lowercased()) { pages.append(url) }
        }
        return pages.sorted { $0.path < $1.path }
    }

    /// What each selector gives on `document`, both ways, with each separator.
    private func assertSameLines(_ document: HTMLDocument, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        var compared = 0
        let selectors = ["/html", "//body", "//td", "//table", "//li | //p", "//td[@class='content']", "//body//text()", "/"]
        for separator in ["\t", " | ", "", ";"] {
            let text = MarkupText(cellSeparator: separator)
            for selector in selectors {
                let expression = try XPathExpression(selector)
                let nodes = document.nodes(expression)
                let new = nodes.map(text.lines)
                let former = nodes.map { FormerMarkupText(cellSeparator: separator).lines($0.tree) }
                XCTAssertEqual(new.count, former.count, "\(name) \(selector)", file: file, line: line)
                for (newLines, formerLines) in zip(new, former) {
                    XCTAssertEqual(newLines, formerLines, "\(name) \(selector) separator \"\(separator)\"", file: file, line: line)
                    compared += formerLines.count
                }
            }
        }
        if let root = document.rootNode {
            XCTAssertEqual(MarkupText().lines(root), FormerMarkupText().lines(document.root), name, file: file, line: line)
        }
        return compared
    }

    func testRealPagesRenderTheSameLinesAsTheSwiftTree() throws {
        let pages = try realPages()
        XCTAssertGreaterThan(pages.count, 80, "the repository's pages were not found")
        var lines = 0
        for page in pages {
            guard let document = try? HTMLDocument(path: page.path) else { continue }
            lines += try assertSameLines(document, page.lastPathComponent)
            // The pages in their legacy code page too, read as such.
            if page.path.contains("latin1"), let legacy = try? HTMLDocument(path: page.path, encoding: "ISO-8859-1") {
                lines += try assertSameLines(legacy, page.lastPathComponent + " as ISO-8859-1")
            }
        }
        XCTAssertGreaterThan(lines, 10_000, "too few lines compared to mean anything")
    }

    /// Scalars that join a white space into one character, white space of every kind, CR LF, and plain text.
    func testTextThatTripsByteLevelWhiteSpaceRendersTheSame() throws {
        let atoms = ["a", "Ω", "ή", " ", "  ", "\t", "\n", "\r\n", "\r", "&nbsp;", "\u{2009}", "\u{3000}", "\u{1680}", "\u{0301}",
                     "\u{0600}", "\u{200D}", "\u{200C}", "\u{0085}", "\u{2028}", "\u{202F}", "\u{205F}", "e\u{0301}", "\u{037E}",
                     ";", "€", "—", "\u{1F600}", "\u{00AD}", "<b>x</b>", "<br>", "</td><td>", "<!-- c -->", "&#x200D;", "&#x301;"]
        var generator = SeededGenerator(seed: 14)
        var lines = 0
        for _ in 0..<400 {
            var cells: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                cells.append((0..<Int.random(in: 0...8, using: &generator)).map { _ in atoms.randomElement(using: &generator)! }.joined())
            }
            let html = "<html><body><p>" + cells.joined(separator: "</p>\n<p>") + "</p><table><tr><td>"
                + cells.joined(separator: "</td><td>") + "</td></tr></table></body></html>"
            lines += try assertSameLines(try HTMLDocument(fragment: html), html)
        }
        XCTAssertGreaterThan(lines, 1_000)
    }

    func testPlainTextCollapsesAsSwiftCharactersDo() {
        let atoms = ["a", "Ω", "ή", "ж", "é", " ", "\t", "\n", "\r\n", "\u{00A0}", "\u{2009}", "\u{2028}", "\u{0085}", "\u{000B}",
                     "€", "—", "\u{200B}", "\u{00AD}", "\u{001F}"]
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in atoms.randomElement(using: &generator)! }.joined()
            let bytes = Array(text.utf8)
            XCTAssertTrue(UTF8Whitespace.isPlain(bytes), text.debugDescription)
            var collapsed: [UInt8] = []
            UTF8Whitespace.appendCollapsed(bytes, 0..<bytes.count, to: &collapsed)
            XCTAssertEqual(String(decoding: collapsed, as: UTF8.self), text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " "),
                           text.debugDescription)
            let visible = UTF8Whitespace.firstVisible(bytes, 0..<bytes.count)
            let expected = text.firstIndex { !$0.isWhitespace }.map { text.utf8.distance(from: text.utf8.startIndex, to: $0) } ?? bytes.count
            XCTAssertEqual(visible, expected, text.debugDescription)
        }
        for joining in ["a \u{0301}", "\u{0600} b", "a\u{200D} ", "\u{3000}", "\u{1680}", "\u{1F600}"] {
            XCTAssertFalse(UTF8Whitespace.isPlain(Array(joining.utf8)), joining.debugDescription)
        }
    }
}


/// The rendering as it was before it read libxml2's tree directly (commit 4434342), kept as the reference: a
/// `MarkupNode` tree, Swift strings and characters.
private struct FormerMarkupText {
    var cellSeparator = "\t"

    func lines(_ node: MarkupNode) -> [MarkupText.Line] {
        var state = State(cellSeparator: cellSeparator)
        state.render(node)
        state.endLine()
        return state.lines
    }

    private struct State {
        let cellSeparator: String
        var lines: [MarkupText.Line] = []
        var pieces: [String] = []
        var current = ""
        var firstLine: Int?
        var cellsInRow = 0

        init(cellSeparator: String) { self.cellSeparator = cellSeparator }

        mutating func render(_ node: MarkupNode) {
            switch node {
            case .text(let text, let line):
                if firstLine == nil, text.contains(where: { !$0.isWhitespace }) { firstLine = line }
                current += text
            case .element(let name, _, _, let children):
                if MarkupText.ignoredElements.contains(name) { return }
                if name == "br" { endLine(); return }
                let block = MarkupText.blockElements.contains(name)
                if block { endLine() }
                if name == "tr" { cellsInRow = 0 }
                if name == "td" || name == "th" {
                    flushPiece()
                    if cellsInRow > 0 { pieces.append(cellSeparator) }
                    cellsInRow += 1
                }
                for child in children { render(child) }
                if name == "td" || name == "th" { flushPiece() }
                if block { endLine() }
            }
        }

        mutating func flushPiece() {
            let collapsed = TextFolding.collapseSpaces(current)
            if !collapsed.isEmpty {
                if let last = pieces.last, last != cellSeparator, !pieces.isEmpty { pieces.append(" ") }
                pieces.append(collapsed)
            }
            current = ""
        }

        mutating func endLine() {
            flushPiece()
            while pieces.last == cellSeparator || pieces.last == " " { pieces.removeLast() }
            let text = pieces.joined()
            if !text.isEmpty { lines.append(MarkupText.Line(text: text, line: firstLine ?? 0)) }
            pieces = []
            firstLine = nil
        }
    }
}
