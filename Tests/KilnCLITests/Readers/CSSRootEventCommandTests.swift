import Foundation
import XCTest
import KilnC
import KilnKit

/// An HTML extract pipeline whose text root is a simple CSS selector, rendered from the parser's events, gives the
/// rows, lines and findings of the same pipeline with the equivalent XPath root, which reads the page's tree.
final class CSSRootEventCommandTests: CLITestCase {
    private func pipeline(_ name: String, root: String) throws {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "events", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "stop", type: "text" }, { name: "time", type: "text" }] }],
              sources: [{ name: "s", format: "html", path: "*.html",
                          options: { text: { root: \(root) }, extract: { row: "^(?<stop>[^\\\\t]+)\\\\t(?<time>[0-9]{2}:[0-9]{2})$" } },
                          into: "t", columns: { stop: "stop", time: "time" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try """
            <!DOCTYPE html>
            <html><head><script>var x = "<td class=content>Script\t01:00</td>";</script></head><body>
            <table><tr><td class="menu">Menu\t00:00</td><td class="content"><table>
            <tr><td>Agora</td><td>08:10</td></tr>
            <tr><td>Castle &amp; <b>Keep</b><!-- note -->
              Gate</td><td>08:20</td></tr>
            <tr><td class="content"><table><tr><td>Inner</td><td>08:40</td></tr></table>Outer\t08:30</td>
            <tr><td>Harbour&nbsp;Front<br>Pier</td><td>08:50
            </table>
            <p>Unclosed <td class="content">Late stop\t09:00</td>
            </td></tr></table></body></html>
            trailing <td class="content">After the end\t09:10</td>

            """.write(to: folder.appendingPathComponent("page.html"), atomically: true, encoding: .utf8)
        let latin1 = Array("<table><tr><td class=content>Caf".utf8) + [0xE9] + Array("</td><td>10:00</td></tr></table>".utf8)
        // Not UTF-8: an error that fails a build, so outside the source's pages.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("bad"), withIntermediateDirectories: true)
        try Data(latin1).write(to: folder.appendingPathComponent("bad/latin1.html"))
    }

    func testCSSRootGivesTheRowsLinesAndFindingsOfTheXPathRoot() throws {
        try pipeline("css", root: #"{ css: "td.content" }"#)
        try pipeline("xpath", root: #"{ xpath: ".//td[contains(concat(' ', normalize-space(@class), ' '), ' content ')]" }"#)
        for page in ["page.html", "bad/latin1.html"] {
            let css = try kiln("extract", "s", "css/\(page)", "--manifest", "css", "--format", "json")
            let xpath = try kiln("extract", "s", "xpath/\(page)", "--manifest", "xpath", "--format", "json")
            XCTAssertEqual(css.status, xpath.status, css.stderr)
            XCTAssertFalse(css.stdout.isEmpty && css.stderr.isEmpty, page)
            XCTAssertEqual(css.stdout.replacingOccurrences(of: "css/", with: ""), xpath.stdout.replacingOccurrences(of: "xpath/", with: ""), page)
            XCTAssertEqual(css.stderr.replacingOccurrences(of: "css/", with: ""), xpath.stderr.replacingOccurrences(of: "xpath/", with: ""), page)
        }
        let build = try kiln("build", "css", "--out", file("css.sqlite").path)
        let reference = try kiln("build", "xpath", "--out", file("xpath.sqlite").path)
        XCTAssertEqual(build.status, 0, build.stderr)
        XCTAssertEqual(reference.status, 0, reference.stderr)
        let query = "SELECT stop, time FROM t ORDER BY rowid"
        let rows = try Database(path: file("css.sqlite").path, mode: .readOnly).rows(query).map(\.values)
        XCTAssertEqual(rows, try Database(path: file("xpath.sqlite").path, mode: .readOnly).rows(query).map(\.values))
        XCTAssertGreaterThan(rows.count, 3)
    }
}
