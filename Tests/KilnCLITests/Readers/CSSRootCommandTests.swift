import Foundation
import XCTest

/// `kiln extract` over an HTML pipeline whose text root is a CSS selector gives the rows the equivalent XPath root
/// gives.
final class CSSRootCommandTests: CLITestCase {
    private func pipeline(_ name: String, root: String) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "css", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "stop", type: "text" }, { name: "time", type: "text" }] }],
              sources: [{ name: "s", format: "html", path: "*.html",
                          options: { text: { root: \(root) }, extract: { row: "^(?<stop>[A-Za-z ]+)\\\\t(?<time>[0-9]{2}:[0-9]{2})$" } },
                          into: "t", columns: { stop: "stop", time: "time" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try """
            <html><body><table>
            <tr><td class="content">Agora\t08:10</td><td class="contents">Decoy\t09:00</td></tr>
            <tr><TD CLASS="wide\tcontent\nlast">Castle\t08:20</TD><td>Plain\t09:10</td></tr>
            <tr><td class="  content  content ">Harbour\t08:30</td><td class="Content">Upper\t09:20</td></tr>
            <tr><td class>Empty\t09:30</td><th class="content">Header\t09:40</th></tr>
            </table></body></html>
            """.write(to: folder.appendingPathComponent("page.html"), atomically: true, encoding: .utf8)
        return folder
    }

    func testCSSRootGivesTheRowsOfTheXPathRoot() throws {
        try pipeline("css", root: #"{ css: "td.content" }"#)
        try pipeline("xpath", root: #"{ xpath: ".//td[contains(concat(' ', normalize-space(@class), ' '), ' content ')]" }"#)
        let css = try kiln("extract", "s", "css/page.html", "--manifest", "css", "--format", "json")
        let xpath = try kiln("extract", "s", "xpath/page.html", "--manifest", "xpath", "--format", "json")
        XCTAssertEqual(css.status, 0, css.stderr)
        XCTAssertEqual(xpath.status, 0, xpath.stderr)
        XCTAssertEqual(css.stdout.replacingOccurrences(of: "css/", with: ""), xpath.stdout.replacingOccurrences(of: "xpath/", with: ""))
        for stop in ["Agora", "Castle", "Harbour"] { XCTAssertTrue(css.stdout.contains(stop), "\(stop) in \(css.stdout)") }
        for stop in ["Decoy", "Plain", "Upper", "Empty", "Header"] { XCTAssertFalse(css.stdout.contains(stop), "\(stop) in \(css.stdout)") }
    }
}
