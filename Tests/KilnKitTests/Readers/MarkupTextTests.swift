import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `MarkupText`: how HTML becomes lines of text, with the source line of each.
final class MarkupTextTests: KilnTestCase {
    /// The lines as the `html` reader renders them, from libxml2's tree; they must be those of the Swift tree too.
    private func lines(_ html: String, cellSeparator: String = "\t") throws -> [MarkupText.Line] {
        let document = try HTMLDocument(fragment: html)
        let lines = try XCTUnwrap(document.rootNode.map(MarkupText(cellSeparator: cellSeparator).lines))
        XCTAssertEqual(lines, MarkupText(cellSeparator: cellSeparator).lines(document.root))
        return lines
    }

    private func texts(_ html: String, cellSeparator: String = "\t") throws -> [String] {
        try lines(html, cellSeparator: cellSeparator).map(\.text)
    }

    private func text(_ string: String, _ line: Int = 1) -> MarkupNode { .text(string, line: line) }

    private func element(_ name: String, _ line: Int = 1, _ children: [MarkupNode]) -> MarkupNode {
        .element(name: name, attributes: [:], line: line, children: children)
    }

    func testBlockElementsEndLines() throws {
        XCTAssertEqual(try texts("<div>one</div><p>two</p>three<h2>four</h2><ul><li>five</li><li>six</li></ul>"),
                       ["one", "two", "three", "four", "five", "six"])
    }

    func testInlineElementsDoNotEndLines() throws {
        XCTAssertEqual(try texts("<p>Κτίριο <b>Β</b>, <i>δίπλα</i> στη <a href=\"/x\">Βιβλιοθήκη</a><span>!</span></p>"),
                       ["Κτίριο Β, δίπλα στη Βιβλιοθήκη!"])
    }

    func testBreakEndsALine() throws {
        XCTAssertEqual(try texts("<p>one<br>two<br/>three</p>"), ["one", "two", "three"])
        // Several breaks in a row give no empty line.
        XCTAssertEqual(try texts("<p>one<br><br><br>two</p>"), ["one", "two"])
    }

    func testCellsAreSeparatedByATab() throws {
        XCTAssertEqual(try texts("<table><tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr><tr><td>06:20</td><td>07:00</td><td>20</td></tr></table>"),
                       ["Από\tΈως\tΣυχνότητα", "06:20\t07:00\t20"])
    }

    func testCellSeparatorIsConfigurable() throws {
        XCTAssertEqual(try texts("<table><tr><td>a</td><td>b</td></tr></table>", cellSeparator: ";"), ["a;b"])
    }

    func testEmptyCellsKeepTheirPlaceButTrailingSeparatorsGo() throws {
        XCTAssertEqual(try texts("<table><tr><td>a</td><td></td><td>c</td></tr></table>"), ["a\t\tc"])
        XCTAssertEqual(try texts("<table><tr><td>a</td><td>b</td><td> </td><td></td></tr></table>"), ["a\tb"])
    }

    func testUnclosedCellsAndRows() throws {
        XCTAssertEqual(try texts("<table><tr><td>07:00<td>21:00<td>10\n<tr><td>21:00</td><td>22:40</td><td>15\n</table>"),
                       ["07:00\t21:00\t10", "21:00\t22:40\t15"])
    }

    func testWhiteSpaceIsCollapsed() throws {
        XCTAssertEqual(try texts("<p>  Πλατεία \n\t  Γεωργίου  </p><table><tr><td>\n   22:40\n  </td><td> 15 </td></tr></table>"),
                       ["Πλατεία Γεωργίου", "22:40\t15"])
    }

    func testNoBreakSpacesBecomeSpaces() throws {
        XCTAssertEqual(try texts("<p>Τερψιθέα&nbsp;-&nbsp;Εγλυκάδα</p><table><tr><td>&nbsp;07:00</td><td>20&nbsp;</td></tr></table>"),
                       ["Τερψιθέα - Εγλυκάδα", "07:00\t20"])
        XCTAssertFalse(try texts("<p>a&nbsp;&nbsp;b&nbsp;</p>").contains { $0.contains("\u{00A0}") })
        XCTAssertEqual(try texts("<p>a&nbsp;&nbsp;b&nbsp;</p>"), ["a b"])
    }

    func testScriptsStylesAndCommentsAreDropped() throws {
        let html = "<div><script>var x = \"06:00 08:00 20\";</script><style>p { color: red }</style>"
            + "<!-- 09:00 -->text<noscript>enable 10:00</noscript><template>11:00</template></div>"
        XCTAssertEqual(try texts(html), ["text"])
    }

    func testEmptyLinesAreDropped() throws {
        XCTAssertEqual(try texts("<p></p><p>   </p><div><p>\n</p></div><p>&nbsp;</p><p>only</p><br><br>"), ["only"])
    }

    func testTextSpanningLinesKeepsTheLineWhereItStarts() throws {
        XCTAssertEqual(try lines("<html><body><p>\nΣημείωση 23:15\n</p>\n<div>\n  first\n\n</div></body></html>"), [
            MarkupText.Line(text: "Σημείωση 23:15", line: 2),
            MarkupText.Line(text: "first", line: 5),
        ])
    }

    func testBreakInsideACellKeepsTheCellSeparator() throws {
        XCTAssertEqual(try texts("<table><tr><td>a<br>b</td><td>c</td></tr></table>"), ["a", "b\tc"])
    }

    func testLineNumbersOfEachLine() throws {
        let html = """
            <div><b>before</b>
              first</div>

            <p>second<br>third</p>

            <table>
              <tr><td>
                06:20</td><td>07:00</td></tr>
            </table>
            """
        XCTAssertEqual(try lines(html), [
            MarkupText.Line(text: "before first", line: 1),
            MarkupText.Line(text: "second", line: 4),
            MarkupText.Line(text: "third", line: 4),
            // A line keeps the line of its first text, not of its element.
            MarkupText.Line(text: "06:20\t07:00", line: 8),
        ])
    }

    func testRenderingSwiftTrees() {
        let tree = element("body", 1, [
            element("h1", 2, [text("Γραμμή 1.1", 2)]),
            element("table", 3, [
                element("tr", 4, [element("td", 4, [text(" 06:20 ", 4)]), element("td", 5, [text("07:00", 5)])]),
                element("tr", 6, [element("th", 6, [text("Από", 6)])]),
            ]),
            element("script", 7, [text("06:00 08:00 20", 7)]),
            text("tail", 9),
        ])
        XCTAssertEqual(MarkupText().lines(tree), [
            MarkupText.Line(text: "Γραμμή 1.1", line: 2),
            MarkupText.Line(text: "06:20\t07:00", line: 4),
            MarkupText.Line(text: "Από", line: 6),
            MarkupText.Line(text: "tail", line: 9),
        ])
    }

    func testHeadIsNotRendered() throws {
        let document = try HTMLDocument(fragment: "<html><head><title>Τίτλος</title></head><body><p>σώμα</p></body></html>")
        XCTAssertEqual(MarkupText().lines(document.root).map(\.text), ["σώμα"])
    }
}
