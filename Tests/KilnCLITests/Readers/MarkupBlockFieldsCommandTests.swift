import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// HTML written as elements, read by an `html` field or as a `webpage` title, is rendered one block a line as a KML
/// description's HTML is: the Biel/Bienne bus site's next departures (`9 min<br>24 min<br>39 min` in one cell, a
/// real page), opening hours written as paragraphs and list items, a title with `<br>`, each compared with
/// lxml.html's text of the same markup.
final class MarkupBlockFieldsCommandTests: CLITestCase {
    private func rows(_ bundle: String, _ sql: String) throws -> [String] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    /// For each element `xpath` selects in the page at `path` (lxml.html, which honours its `<meta>` charset): its text
    /// with a line break at each `<br>` and around each paragraph and list item, white space collapsed in each line,
    /// empty lines dropped, the lines joined by `/`.
    private func lxmlBlocks(_ path: URL, _ xpath: String) throws -> [String] {
        let run = try CLITestCase.run(try PythonOracle.interpreter(), ["-c", """
            import sys
            import lxml.html
            for element in lxml.html.parse(sys.argv[1]).xpath(sys.argv[2]):
                for br in element.iter("br"): br.tail = "\\n" + (br.tail or "")
                for block in element.iter("p", "li", "div"):
                    block.text = "\\n" + (block.text or "")
                    block.tail = "\\n" + (block.tail or "")
                lines = (" ".join(line.replace("\\xa0", " ").split()) for line in element.text_content().split("\\n"))
                print("/".join(line for line in lines if line))
            """, path.path, xpath], in: workingDirectory)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map(String.init)
    }

    func testACellWithLineBreaksIsOneLineEach() throws {
        let folder = try copy("Tests/Fixtures/real/html-biel-bus-latin1", to: "p")
        try """
            { bundle: "biel", schemaVersion: 1,
              tables: [ { name: "next_departures", columns: [ { name: "station", type: "text" }, { name: "next", type: "text" } ] } ],
              sources: [ { name: "next", format: "html", path: "timetable.html",
                           options: { records: "//table[.//td[@class='next']][1]", fields: { next: ".//td[@class='next']" },
                                      pageFields: { station: "//td[@class='TITELstation']" } },
                           into: "next_departures", columns: { station: "station", next: "next" } } ] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let expected = try lxmlBlocks(folder.appendingPathComponent("timetable.html"), "//td[@class='next']")
        XCTAssertEqual(expected, ["9 min/24 min/39 min"])
        XCTAssertEqual(try rows("p.sqlite", "SELECT station, replace(next, char(10), '/') FROM next_departures"), ["Bibliothek|" + expected[0]])
    }

    func testAWebPageTitleWithALineBreakIsTwoLines() throws {
        let folder = file("w")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            <html><head><meta charset="utf-8"><title>Site</title></head><body>
            <div id="content"><h1>Museum<br>of Science</h1><p>Open daily</p></div>
            </body></html>
            """.write(to: folder.appendingPathComponent("museum.html"), atomically: true, encoding: .utf8)
        try """
            { bundle: "w", schemaVersion: 1,
              tables: [ { name: "page", columns: [ { name: "slug", type: "text" }, { name: "title", type: "text" } ] } ],
              sources: [ { name: "pages", format: "webpage", path: "museum.html", options: { content: "//div[@id='content']" },
                           into: { page: { table: "page", columns: { slug: "slug", title: "title" } } } } ] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "w", "--out", "w.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let title = try lxmlBlocks(folder.appendingPathComponent("museum.html"), "//h1")
        XCTAssertEqual(title, ["Museum/of Science"])
        XCTAssertEqual(try rows("w.sqlite", "SELECT slug, replace(title, char(10), '/') FROM page"), ["museum|" + title[0]])
    }

    func testParagraphsAndListItemsAreOneLineEach() throws {
        let folder = file("h")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            <html><head><meta charset="utf-8"></head><body>
            <div class="place"><h2>Museum</h2>
            <div class="hours"><p>Open daily</p><p>Closed Mondays</p>Entry free</div>
            <ul class="fees"><li>Adults 5 €</li><li>Children  free</li></ul>
            </div>
            </body></html>
            """.write(to: folder.appendingPathComponent("museum.html"), atomically: true, encoding: .utf8)
        try """
            { bundle: "h", schemaVersion: 1,
              tables: [ { name: "place", columns: [ { name: "name", type: "text" }, { name: "hours", type: "text" }, { name: "fees", type: "text" } ] } ],
              sources: [ { name: "places", format: "html", path: "museum.html",
                           options: { records: { css: "div.place" }, fields: { name: "h2", hours: { css: "div.hours" }, fees: "ul" } },
                           into: "place", columns: { name: "name", hours: "hours", fees: "fees" } } ] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "h", "--out", "h.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let page = folder.appendingPathComponent("museum.html")
        let hours = try lxmlBlocks(page, "//div[@class='hours']"), fees = try lxmlBlocks(page, "//ul")
        XCTAssertEqual(hours, ["Open daily/Closed Mondays/Entry free"])
        XCTAssertEqual(try rows("h.sqlite", "SELECT name, replace(hours, char(10), '/'), replace(fees, char(10), '/') FROM place"),
                       ["Museum|\(hours[0])|\(fees[0])"])
    }
}
