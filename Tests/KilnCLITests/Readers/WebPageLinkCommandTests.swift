import Foundation
import XCTest
import KilnC
import KilnKit

/// A saved MediaWiki page through the `webpage` reader and the `kiln` binary: script links
/// (`/w/index.php?title=X&action=edit`) target their title's page, not `index`; a query link whose page cannot be
/// told is a warning and loses its `href`, its text kept.
final class WebPageLinkCommandTests: CLITestCase {
    func testMediaWikiScriptLinksTargetTheirTitle() throws {
        let folder = file("wiki")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("pages"), withIntermediateDirectories: true)
        try """
            <html><head><title>Patras – Travel guide at Wikivoyage</title></head><body><div id="content">
            <h1>Patras</h1>
            <p><a href="/wiki/Ancient_Olympia" title="Ancient Olympia">Ancient Olympia</a> and
            <a href="/w/index.php?title=Rio_(Greece)&amp;action=edit&amp;redlink=1" class="new">Rio</a>.</p>
            <h2>Get in<span class="mw-editsection">[<a href="/w/index.php?title=Patras&amp;action=edit&amp;section=1">edit</a>]</span></h2>
            <p><a href="/w/index.php?action=history">history</a></p>
            </div></body></html>
            """.write(to: folder.appendingPathComponent("pages/Patras.html"), atomically: true, encoding: .utf8)
        try """
            { bundle: "wiki", schemaVersion: 1,
              tables: [
                { name: "page", columns: [{ name: "slug", type: "text" }, { name: "html", type: "text" }] },
                { name: "page_link", columns: [{ name: "href", type: "text" }, { name: "kind", type: "text" }, { name: "target", type: "text" }] },
              ],
              sources: [{ name: "pages", format: "webpage", path: "pages/*.html", options: { content: "//div[@id='content']" },
                          into: { page: { table: "page", columns: { slug: "slug", html: "html" } },
                                  link: { table: "page_link", columns: { href: "href", kind: "kind", target: "target" } } } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "wiki", "--out", "wiki.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let database = try Database(path: file("wiki.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try database.rows("SELECT href, kind, target FROM page_link ORDER BY target").map { $0.values.map { $0.textValue ?? "NULL" } }, [
            ["/wiki/Ancient_Olympia", "page", "ancient_olympia"],
            ["/w/index.php?title=Patras&action=edit&section=1", "page", "patras"],
            ["/w/index.php?title=Rio_(Greece)&action=edit&redlink=1", "page", "rio_(greece)"],
        ])
        let html = try XCTUnwrap(try database.rows("SELECT html FROM page").first?.values.first?.textValue)
        XCTAssertTrue(html.contains("<p>history</p>"), html)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("wiki.report.json"))) as? [String: Any])
        let warnings = (report["diagnostics"] as? [[String: Any]] ?? []).filter { $0["severity"] as? String == "warning" }
        XCTAssertEqual(warnings.map { "\($0["file"] ?? ""):\($0["line"] ?? "") \($0["code"] ?? ""): \($0["message"] ?? "")" }, [
            "pages/Patras.html:6 html.content-removed: a link whose page cannot be told from its address (/w/index.php?action=history: "
                + "a query without a title) removed; its text is kept"])
    }
}
