import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Simple field paths (`name`, `@code`, `s:location/@lat`) skip the XPath engine; they must give exactly what the
/// engine gives. `string(PATH)` is not a simple path, so it always goes through libxml2's XPath: the oracle.
final class XPathFastPathTests: KilnTestCase {
    private let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <root xmlns:s="urn:s">
          <rec code="1" s:kind="namespaced"><name>Α <b>bold</b> text</name><loc lat="38.1" lon="21.7"/></rec>
          <rec code="2"><loc/><loc lat="38.2"/><name>second</name><name>ignored</name></rec>
          <rec><s:name>in s</s:name><group><item v="a"/><item v="b"/></group><group><item v="c"/></group></rec>
          <rec xmlns="urn:default"><name>default namespace</name></rec>
        </root>

        """

    private func values(_ paths: [String], namespaces: [String: String] = ["s": "urn:s"]) throws -> [[String?]] {
        let url = try write(document, to: "doc.xml")
        let reader = try XMLStreamReader(path: url.path, namespaces: namespaces)
        let expressions = try paths.map { try XPathExpression($0) }
        var rows: [[String?]] = []
        while let element = reader.nextElement(localName: "rec", namespace: nil) {
            rows.append(expressions.map { element.string($0) })
        }
        return rows
    }

    func testSimplePathsAgreeWithTheXPathEngine() throws {
        let paths = ["name", "@code", "loc/@lat", "loc/@lon", "s:name", "@s:kind", "group/item/@v", "missing", "@missing", "loc/@missing"]
        XCTAssertNotNil(SimplePath("loc/@lat"))
        XCTAssertNil(SimplePath("string(loc/@lat)"))
        let fast = try values(paths)
        let engine = try values(paths.map { "string(\($0))" })
        // The engine's string() of an empty node-set is "" where the fast path says nil (nothing selected).
        XCTAssertEqual(fast.map { $0.map { $0 ?? "" } }, engine.map { $0.map { $0 ?? "" } })
        XCTAssertEqual(fast[0], ["Α bold text", "1", "38.1", "21.7", nil, "namespaced", nil, nil, nil, nil])
        XCTAssertEqual(fast[1], ["second", "2", "38.2", nil, nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(fast[2], [nil, nil, nil, nil, "in s", nil, "a", nil, nil, nil])
        // An unprefixed step matches only elements in no namespace, as in XPath 1.0.
        XCTAssertEqual(fast[3][0], nil)
    }

    func testUndeclaredPrefixIsLeftToTheEngine() throws {
        let rows = try values(["t:name"], namespaces: [:])
        XCTAssertEqual(rows.count, 4)
        XCTAssertTrue(rows.allSatisfy { $0 == [nil] })
    }
}
