import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders

/// HTML written as elements is rendered as KML descriptions' HTML is (`MarkupText`): an `html` field, an `html` page
/// field and a `webpage` title that select an element holding blocks, table cells or `<br>` give one block a line,
/// not their text nodes glued (`Open dailyClosed Mondays`); an element with only text and inline elements keeps its
/// string value as written.
final class MarkupBlockFieldsTests: KilnTestCase {
    private let page = """
        <html><head><title>Museum<br>of Art</title></head><body>
        <div class="place"><h1>City <br>Museum</h1>
        <div class="hours"><p>Open daily</p><p>Closed Mondays</p></div>
        <ul class="fees"><li>Adults 5 €</li><li>Children  free</li></ul>
        <p class="addr">Main Street 1<br>Patras</p>
        <table class="prices"><tr><td>Adults</td><td>5</td></tr><tr><td>Groups</td><td>3</td></tr></table>
        <span class="name">The  <b>Museum</b> </span>
        </div>
        </body></html>
        """

    func testHTMLFieldsOfBlockElementsAreOneBlockALine() throws {
        let options = JSONValue.object([
            "records": .object(["css": .string("div.place")]),
            "fields": .object(["hours": .object(["css": .string("div.hours")]), "fees": .string("ul"), "addr": .string("p[@class='addr']"),
                               "prices": .string("table"), "name": .string("span"), "id": .string("@class"), "count": .string("count(.//p)")]),
            "pageFields": .object(["pageHours": .string("//div[@class='hours']"), "pageName": .string("//span")]),
        ])
        let html = try HTMLReader(options: options.decode(HTMLReader.Options.self, codingPath: []))
        let (records, log) = try read(html, page, name: "museum.html")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        let record = try XCTUnwrap(records.first)
        XCTAssertEqual(record["hours"], "Open daily\nClosed Mondays")
        XCTAssertEqual(record["fees"], "Adults 5 €\nChildren free")
        XCTAssertEqual(record["addr"], "Main Street 1\nPatras")
        XCTAssertEqual(record["prices"], "Adults\t5\nGroups\t3")
        XCTAssertEqual(record["name"], "The  Museum ", "only inline elements: the string value, as written")
        XCTAssertEqual(record["id"], "place")
        XCTAssertEqual(record["count"], "3")
        XCTAssertEqual(record["pageHours"], "Open daily\nClosed Mondays")
        XCTAssertEqual(record["pageName"], "The Museum", "a page field's string value is collapsed, as before")
    }

    func testAWebPageTitleWithALineBreakIsNotGlued() throws {
        let options = JSONValue.object([:])
        let webpage = try WebPageReader(options: options.decode(WebPageReader.Options.self, codingPath: []))
        let (records, _) = try read(webpage, page, name: "museum.html")
        XCTAssertEqual(records.first { $0.kind.name == "page" }?["title"], "City\nMuseum")
    }

    func testTheRenderingIsKMLDescriptions() throws {
        // The same markup as a KML description's CDATA gives the same text.
        let document = try HTMLDocument(fragment: #"<div class="hours"><p>Open daily</p><p>Closed Mondays</p><br>Entry free</div>"#)
        let node = try XCTUnwrap(document.nodes(XPathExpression("//div")).first)
        XCTAssertEqual(MarkupText().textIfStructured(node), "Open daily\nClosed Mondays\nEntry free")
        let inline = try XCTUnwrap(HTMLDocument(fragment: "<span>a <b>b</b></span>").nodes(XPathExpression("//span")).first)
        XCTAssertNil(MarkupText().textIfStructured(inline))
    }
}
