import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The hostile-input corpus for the markup readers (`xml`, `html`, `kml`), beyond what `XMLSafetyTests` covers:
/// empty pages, NUL bytes, a 100 MB line, huge attributes, 100 000-deep nesting, entities in HTML, wrong encodings,
/// mixed line endings. Each case has its exact findings, and returns promptly.
final class HostileMarkupTests: HostileTestCase {
    private func xml() throws -> RecordReader { try reader("xml", #"{ record: "rec", fields: { v: ".", a: "@a" } }"#) }
    // Pages here reach libxml2's own limits, beyond the default maxPageBytes (see HostilePageSizeTests).
    private func htmlFields() throws -> RecordReader { try reader("html", #"{ records: "//p", fields: { v: "." }, maxPageBytes: 1000000000 }"#) }
    private func htmlText() throws -> RecordReader { try reader("html", #"{ extract: { row: "^(?<v>.+)$" }, maxPageBytes: 1000000000 }"#) }
    private func kml() throws -> RecordReader { try reader("kml") }

    // MARK: Empty documents

    func testEmptyXMLDocuments() throws {
        for content in [[], [0xEF, 0xBB, 0xBF], Array(" \n\n".utf8)] as [[UInt8]] {
            for make in [xml, kml] {
                let result = try run(make(), content, name: "empty.xml")
                XCTAssertEqual(result.values, [])
                XCTAssertEqual(result.findings, [
                    "empty.xml:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]",
                ], "\(content)")
            }
        }
    }

    /// Not-well-formed documents of the W3C XML conformance suite (James Clark's xmltest, `not-wf/sa`) and libxml2's
    /// error tests that libxml2 lets through or reports without a line, each with its line: a DOCTYPE without white
    /// space before its name, an internal subset after the DOCTYPE has ended (libxml2 reads it as the subset), the
    /// empty document (`050.xml`); and what libxml2 already refuses at a line: an attribute named `:` (and its
    /// kin), a UTF-16 document cut short at any byte. A DOCTYPE with a real internal subset, or a `>[` inside its
    /// quoted system identifier, is read.
    func testConformanceSuitesNotWellFormedDocumentsAreRefusedAtALine() throws {
        let refused: [(String, [UInt8], String)] = [
            ("doctype-name.xml", Array("<!DOCTYPEdoc>\n<rec>v</rec>\n".utf8),
             "doctype-name.xml:1: error: malformed XML: white space must follow <!DOCTYPE, before the root element's name; the rest of this file is not read [xml.malformed]"),
            ("doctype-subset.xml", Array("<?xml version=\"1.0\"?>\n<!DOCTYPE rec>[]>\n<rec>v</rec>\n".utf8),
             "doctype-subset.xml:2: error: malformed XML: an internal subset ('[') after the DOCTYPE declaration has ended with '>'; the rest of this file is not read [xml.malformed]"),
            ("050.xml", [], "050.xml:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]"),
            ("colon.xml", Array("<rec :=\"v\">v</rec>\n".utf8), "colon.xml:1:7: error: malformed XML: Failed to parse QName ':'; the rest of this file is not read [xml.malformed]"),
            ("colon2.xml", Array("<rec\n  :=\"v\">v</rec>\n".utf8), "colon2.xml:2:4: error: malformed XML: Failed to parse QName ':'; the rest of this file is not read [xml.malformed]"),
        ]
        for (name, content, finding) in refused {
            let result = try run(xml(), content, name: name)
            XCTAssertEqual(result.findings, [finding], name)
        }
        // A UTF-16 document cut at every length: never read as if whole, always an error at a line.
        let whole: [UInt8] = [0xFF, 0xFE] + Array("<?xml version=\"1.0\" encoding=\"UTF-16\"?><rec>value</rec>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for length in 1..<(whole.count - 2) {
            let result = try run(xml(), Array(whole.prefix(length)), name: "cut.xml")
            XCTAssertEqual(result.values, [], "\(length) bytes")
            let errors = result.findings.filter { $0.contains(": error: ") }
            XCTAssertEqual(errors.count, 1, "\(length) bytes: \(result.findings)")
            XCTAssertTrue(errors.allSatisfy { $0.hasPrefix("cut.xml:1:") && $0.contains(": error: malformed XML: ") && $0.hasSuffix("[xml.malformed]") },
                          "\(length) bytes: \(result.findings)")
        }
        // The whole document and one byte more (libxml2's error tests: truncated-utf16.xml): libxml2 drops the odd
        // byte without a word; it is an error, after the record the document holds.
        let odd = try run(xml(), whole + [0x61], name: "odd.xml")
        XCTAssertEqual(odd.values, [[nil, "value"]])
        XCTAssertEqual(odd.findings, ["odd.xml:1:56: error: malformed XML: the file ends in the middle of a UTF-16 character (an odd number of bytes); the rest of this file is not read [xml.malformed]"])
        for (name, text) in [("subset.xml", "<!DOCTYPE rec [\n<!ELEMENT rec (#PCDATA)>\n]>\n<rec>v</rec>\n"),
                             ("system.xml", "<!DOCTYPE rec SYSTEM \"a>[b.dtd\">\n<rec>v</rec>\n")] {
            let result = try run(xml(), Array(text.utf8), name: name)
            XCTAssertEqual(result.values, [[nil, "v"]], name)
            XCTAssertFalse(result.findings.contains { $0.contains("malformed") }, "\(name): \(result.findings)")
        }
    }

    /// Every reader that refuses a blank file says so in its own format's words and code, not XML's.
    func testABlankFileIsReportedInItsOwnFormatsWords() throws {
        let readers: [(RecordReader, String)] = [
            (try xml(), "empty:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]"),
            (try kml(), "empty:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]"),
            (try reader("mediawiki", "{}").restricted(to: ["page"]), "empty:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]"),
            (try reader("json", #"{ records: "*", fields: { v: "v" } }"#), "empty:1: error: malformed JSON: the file holds no JSON (it is empty, or only white space or a byte-order mark) [json.malformed]"),
            (try reader("ics"), "empty:1: error: the file holds no iCalendar data (it is empty, or only white space or a byte-order mark) [ics.malformed]"),
        ]
        for content in [[], [0xEF, 0xBB, 0xBF], Array(" \n\t\r\n".utf8)] as [[UInt8]] {
            for (reader, finding) in readers {
                let result = try run(reader, content, name: "empty")
                XCTAssertEqual(result.values, [])
                XCTAssertEqual(result.findings, [finding], "\(content)")
            }
        }
    }

    func testEmptyHTMLPages() throws {
        for content in [[], [0xEF, 0xBB, 0xBF], Array(" \n\n".utf8), Array("<!-- nothing -->\n".utf8)] as [[UInt8]] {
            for make in [htmlFields, htmlText] {
                let result = try run(make(), content, name: "empty.html")
                XCTAssertEqual(result.values, [])
                XCTAssertEqual(result.findings, ["empty.html: error: empty.html holds no HTML that can be parsed (is it empty?); the page gives no records [html.unreadable]"],
                               "\(content)")
            }
        }
    }

    // MARK: Bad bytes

    func testNULBytes() throws {
        let xmlResult = try run(xml(), Array("<r>\n<rec>one</rec>\n<rec>t".utf8) + [0] + Array("wo</rec>\n</r>\n".utf8), name: "nul.xml")
        XCTAssertEqual(xmlResult.values, [[nil, "one"]])
        assertOneFinding(xmlResult.findings, at: "nul.xml:3", "error: malformed XML: Char 0x0 out of allowed range")

        // HTML parsers recover from a NUL as browsers do: the page is read, and the NUL is an error finding at its line
        // and column, in the text readers' words (libxml2 reads it as a space, which would go unnoticed).
        let page = Array("<p>one</p>\n<p>t".utf8) + [0] + Array("wo</p><p>three</p>\n<p>".utf8) + [0] + Array("</p>".utf8)
        for make in [htmlFields, htmlText] {
            let htmlResult = try run(make(), page, name: "nul.html")
            XCTAssertEqual(htmlResult.values.first, ["one"])
            XCTAssertEqual(htmlResult.findings, [
                "nul.html:2:5: error: line holds a NUL byte (at column 5); is the file UTF-16, or not text at all? [encoding]",
                "nul.html:3:4: error: line holds a NUL byte (at column 4); is the file UTF-16, or not text at all? [encoding]",
            ])
        }
        // The same NUL in a text reader's line.
        let text = try run(reader("text", #"{ extract: { row: "^(?<v>.+)$" } }"#), Array("one\nt".utf8) + [0] + Array("wo\n".utf8), name: "nul.txt")
        XCTAssertEqual(text.findings, ["nul.txt:2:2: error: line holds a NUL byte (at column 2); is the file UTF-16, or not text at all? [encoding]"])
    }

    // MARK: Size

    func testAHundredMegabyteLine() throws {
        // The fast tier's text is 17 MiB: still over libxml2's limit of 10 000 000 bytes for one text node.
        let length = TestTier.size(100 << 20, fast: 17 << 20)
        let xmlFile = try writeLarge("long.xml", prefix: "<r><rec>before</rec><rec>", count: length, suffix: "</rec><rec>after</rec></r>")
        let (records, log) = try returnsPromptly { try read(xml(), url: xmlFile) }
        XCTAssertEqual(records.map(\.declaredValues), [[nil, "before"]])
        assertOneFinding(findings(log), at: "long.xml:1",
                         ": error: malformed XML: xmlSAX2Characters: huge text node; the rest of this file is not read [xml.malformed]")

        let htmlFile = try writeLarge("long.html", prefix: "<html><body><p>before</p><p>", count: length, suffix: "</p><p>after</p></body></html>")
        for make in [htmlFields, htmlText] {
            let reader = try make()
            let (records, log) = try returnsPromptly { try read(reader, url: htmlFile) }
            XCTAssertEqual(records.first?.declaredValues.last, "before")
            XCTAssertFalse(records.contains { $0.declaredValues.last == "after" })
            assertOneFinding(findings(log), at: "long.html:1",
                             ": error: malformed HTML: xmlSAX2Characters: huge text node; the rest of this page is not read [html.malformed]")
        }
    }

    func testHugeAttributes() throws {
        let length = 20 << 20
        let xmlFile = try writeLarge("attribute.xml", prefix: "<r>\n<rec a=\"1\">before</rec>\n<rec a=\"", count: length, suffix: "\">x</rec>\n</r>\n")
        let (records, log) = try returnsPromptly { try read(xml(), url: xmlFile) }
        XCTAssertEqual(records.map(\.declaredValues), [["1", "before"]])
        assertOneFinding(findings(log), at: "attribute.xml:3", ": error: malformed XML: ")

        // libxml2's HTML parser has no limit on attributes: the page is read, the value kept whole.
        let htmlFile = try writeLarge("attribute.html", prefix: "<p title=\"", count: length, suffix: "\">x</p><p>after</p>")
        let page = try reader("html", #"{ records: "//p", fields: { title: "string-length(@title)", v: "." }, maxPageBytes: 1000000000 }"#)
        let (pages, pageLog) = try returnsPromptly { try read(page, url: htmlFile) }
        XCTAssertEqual(findings(pageLog), [])
        XCTAssertEqual(pages.map(\.declaredValues), [["\(length)", "x"], ["0", "after"]])
    }

    func testAHundredThousandDeepNesting() throws {
        let depth = 100_000
        let xmlFile = try writeLarge("deep.xml", prefix: "<r>\n<rec>before</rec>\n", filler: 0x20, count: 0,
                                     suffix: String(repeating: "<d>", count: depth) + String(repeating: "</d>", count: depth) + "\n<rec>after</rec></r>\n")
        let (records, log) = try returnsPromptly { try read(xml(), url: xmlFile) }
        XCTAssertEqual(records.map(\.declaredValues), [[nil, "before"]])
        assertOneFinding(findings(log), at: "deep.xml:3",
                         ": error: malformed XML: Excessive depth in document: 256 (libxml2's limit, which Kiln keeps); the rest of this file is not read [xml.malformed]")

        let page = "<html><body><p>before</p>\n" + String(repeating: "<div>", count: depth) + "x" + String(repeating: "</div>", count: depth) + "\n<p>after</p></body></html>\n"
        for make in [htmlFields, htmlText] {
            let reader = try make()
            let result = try returnsPromptly { try run(reader, page, name: "deep.html") }
            XCTAssertEqual(result.values.first?.last, "before")
            XCTAssertFalse(result.values.contains { $0.last == "after" })
            assertOneFinding(result.findings, at: "deep.html:2",
                             ": error: malformed HTML: Excessive depth in document: 256 (libxml2's limit, which Kiln keeps); the rest of this page is not read [html.malformed]")
        }

        // A nesting HTML parsers accept is read whole (and rendered without deep recursion trouble).
        let shallow = "<html><body>" + String(repeating: "<div>", count: 250) + "<p>x</p>" + String(repeating: "</div>", count: 250) + "<p>after</p></body></html>"
        XCTAssertEqual(try run(htmlFields(), shallow, name: "shallow.html").values, [["x"], ["after"]])
    }

    // MARK: Entities and DTDs in HTML

    func testHTMLNeverReadsEntitiesFromItsDoctype() throws {
        let secret = try write("TOPSECRET\n", to: "secret.txt")
        var bomb = ""
        for level in 1...9 { bomb += "<!ENTITY lol\(level) \"\(String(repeating: "&lol\(level - 1);", count: 10))\">" }
        let page = """
            <!DOCTYPE html [<!ENTITY x SYSTEM "file://\(secret.path)"><!ENTITY lol0 "lol">\(bomb)]>
            <html><body><p>a &x; b</p><p>&lol9;</p><p>after</p></body></html>

            """
        for make in [htmlFields, htmlText] {
            let result = try returnsPromptly { try run(make(), page, name: "entities.html") }
            let text = result.values.flatMap { $0 }.compactMap { $0 }.joined(separator: "|")
            XCTAssertFalse(text.contains("TOPSECRET"), text)
            XCTAssertFalse(text.contains("lollol"), text)
            XCTAssertTrue(text.contains("after"), text)
            XCTAssertFalse(result.findings.joined().contains("TOPSECRET"))
        }
    }

    func testKMLRefusesEntities() throws {
        let secret = try write("TOPSECRET\n", to: "secret.txt")
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE kml [<!ENTITY x SYSTEM "file://\(secret.path)">]>
            <kml><Document><Placemark><name>&x;</name><Point><coordinates>21.7,38.2</coordinates></Point></Placemark></Document></kml>

            """
        let result = try run(kml(), text, name: "xxe.kml")
        XCTAssertEqual(result.values, [])
        XCTAssertEqual(result.findings, [
            "xxe.kml:2: error: the document declares entities; Kiln does not expand entities (they can read local files or explode in size); the rest of this file is not read [xml.entity]",
        ])
    }

    // MARK: Encodings and line endings

    func testHTMLThatStopsBeingItsEncodingIsReported() throws {
        // Bytes windows-1253 does not have: libxml2 stops converting, and the rest of the page is missing.
        let legacy: [UInt8] = Array("<html><head><meta charset=\"windows-1253\"></head><body>\n<p>one</p>\n<p>bad ".utf8) + [0x81]
            + Array(" byte</p>\n".utf8) + Array(repeating: Array("<p>after</p>\n".utf8), count: 100).flatMap { $0 } + Array("</body></html>".utf8)
        let stopped = try run(htmlFields(), legacy, name: "legacy.html")
        XCTAssertEqual(stopped.values.first, ["one"])
        XCTAssertFalse(stopped.values.contains(["after"]))
        // libxml2 converts ahead in blocks, and places the failure where it switched to the page's encoding.
        assertOneFinding(stopped.findings, at: "legacy.html:1",
                         ": error: malformed HTML: input conversion failed due to input error, bytes 0x81 0x20 0x62 0x79; the rest of this page is not read [html.malformed]")

        // A byte that is not UTF-8 in a UTF-8 page: libxml2 reads the rest as ISO-8859-1.
        let mixed: [UInt8] = Array("<html><body>\n<p>Α</p>\n<p>bad ".utf8) + [0xFF] + Array(" byte</p>\n<p>Δ</p></body></html>".utf8)
        let garbled = try run(htmlFields(), mixed, name: "mixed.html")
        XCTAssertEqual(garbled.values.first, ["Α"])
        XCTAssertNotEqual(garbled.values.last, ["Δ"])
        assertOneFinding(garbled.findings, at: "mixed.html:3",
                         ": error: the page is not valid UTF-8 here (Bytes: 0xFF 0x20 0x62 0x79); the rest of it reads as ISO-8859-1, garbled: if the page is in a legacy code page, set the source's \"encoding\" option [encoding]")
    }

    func testWrongDeclaredXMLEncoding() throws {
        let utf16 = try run(xml(), "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<r><rec>Ακτή</rec></r>\n", name: "utf16.xml")
        XCTAssertEqual(utf16.values, [])
        assertOneFinding(utf16.findings, at: "utf16.xml:1", "error: malformed XML: Document labelled UTF-16 but has UTF-8 content")

        let unknown = try run(xml(), "<?xml version=\"1.0\" encoding=\"klingon-42\"?>\n<r><rec>x</rec></r>\n", name: "unknown.xml")
        XCTAssertEqual(unknown.values, [])
        XCTAssertTrue(unknown.findings.first?.contains("error: malformed XML: Unsupported encoding klingon-42") == true, "\(unknown.findings)")
    }

    func testUTF8MarkupDeclaredInALegacyEncodingIsNoted() throws {
        let declared = try run(xml(), "<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?>\n<r><rec>Ακτή</rec></r>\n", name: "greek.xml")
        XCTAssertEqual(declared.findings, [
            "greek.xml: warning: the file is UTF-8, but the file declares \"ISO-8859-7\": its text reads garbled; correct the declaration, or set the source's \"encoding\" option to \"UTF-8\" [encoding.mismatch]",
            // libxml2 stops where a byte does not convert, saying so only on stderr: Kiln says where.
            "greek.xml:2:9: error: malformed XML: input conversion failed: the bytes do not fit the document's encoding; the rest of this file is not read [xml.malformed]",
        ])
        XCTAssertEqual(declared.values, [])
        // Really ISO-8859-7: no finding, and the text reads right.
        let legacy = try run(xml(), Array("<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?>\n<r><rec>".utf8) + [0xC1, 0xEA, 0xF4, 0xDE] + Array("</rec></r>\n".utf8),
                             name: "legacy.xml")
        XCTAssertEqual(legacy.findings, [#"legacy.xml: info: field "a" ("@a") matched nothing in the record of this file: it is NULL in each [source.field-unmatched]"#])
        XCTAssertEqual(legacy.values.first?.last, "Ακτή")

        let page = "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1253\"></head><body><p>Ακτή</p></body></html>"
        XCTAssertEqual(try run(htmlFields(), page, name: "greek.html").findings, [
            "greek.html: warning: the file is UTF-8, but the file declares \"windows-1253\": its text reads garbled; correct the declaration, or set the source's \"encoding\" option to \"UTF-8\" [encoding.mismatch]",
        ])
        let forced = try reader("html", #"{ records: "//p", fields: { v: "." }, encoding: "iso-8859-7" }"#)
        // «ή» is CE AE in UTF-8, and AE is no ISO-8859-7 character: the conversion stops there too.
        XCTAssertEqual(try run(forced, "<p>Ακτή</p>", name: "forced.html").findings, [
            "forced.html: warning: the file is UTF-8, but the source's \"encoding\" option says \"iso-8859-7\": its text reads garbled; remove the \"encoding\" option [encoding.mismatch]",
            "forced.html: error: malformed HTML: input conversion failed due to input error, bytes 0xAE 0x3C 0x2F 0x70; the rest of this page is not read [html.malformed]",
        ])
        XCTAssertEqual(try run(htmlFields(), "<html><head><meta charset=\"utf-8\"></head><body><p>Ακτή</p></body></html>", name: "utf8.html").findings, [])
    }

    func testCRLFMixedWithLFKeepsLineNumbers() throws {
        let text = "<r>\r\n<rec a=\"1\">one</rec>\n<rec a=\"2\">t\r\nwo</rec>\r\n<rec a=\"3\">three</rec>\n</r>\r\n"
        let (records, log) = try read(xml(), url: try write(text, to: "crlf.xml"))
        XCTAssertEqual(findings(log), [])
        XCTAssertEqual(records.map(\.line), [2, 3, 5])
        XCTAssertEqual(records.map { $0.declaredValues[1] }, ["one", "t\nwo", "three"], "XML turns CRLF into LF")
        let page = try run(htmlFields(), "<html>\r\n<body><p>one</p>\n<p>two</p>\r\n</body></html>", name: "crlf.html")
        XCTAssertEqual(page.values, [["one"], ["two"]])
        XCTAssertEqual(page.findings, [])
    }

    func testMissingAndExtraFieldsInXML() throws {
        let reader = try reader("xml", #"{ record: "rec", fields: { code: "@code", name: "name", lat: "location/@lat" } }"#)
        let result = try run(reader, "<r><rec code=\"1\"><name>A</name><extra>x</extra><location lat=\"38\" lon=\"21\"/></rec><rec><name>B</name></rec></r>",
                             name: "fields.xml")
        XCTAssertEqual(result.findings, [
            #"fields.xml:1: info: no field of this source reads the element "extra" (no namespace) of its records ("rec"); reported once for the source, at its first file and line [xml.unread]"#,
        ])
        XCTAssertEqual(result.values, [["1", "38", "A"], [nil, nil, "B"]], "a missing field is NULL; the rules decide whether that is allowed")
    }
}

/// The `mediawiki` reader streams exports through the same XML reader: the same refusals hold for it.
final class HostileMediaWikiTests: HostileTestCase {
    private func pages() throws -> RecordReader { try reader("mediawiki", "{}").restricted(to: ["page"]) }
    private func listings() throws -> RecordReader { try reader("mediawiki", "{}").restricted(to: ["listing"]) }
    private let page = #"<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><page><title>A</title><ns>0</ns><id>1</id><revision><id>2</id><text xml:space="preserve">"#
    private let end = "</text></revision></page></mediawiki>\n"

    func testHostileExports() throws {
        let secret = try write("TOPSECRET\n", to: "secret.txt")
        for make in [pages, listings] {
            let reader = try make()
            XCTAssertEqual(try run(reader, [0xEF, 0xBB, 0xBF], name: "empty.xml").findings, [
                "empty.xml:1: error: malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark) [xml.malformed]",
            ])
            let entity = try run(reader, "<!DOCTYPE mediawiki [<!ENTITY x SYSTEM \"file://\(secret.path)\">]>\n\(page)&x;\(end)", name: "xxe.xml")
            XCTAssertEqual(entity.values, [])
            XCTAssertEqual(entity.findings, [
                "xxe.xml:1: error: the document declares entities; Kiln does not expand entities (they can read local files or explode in size); the rest of this file is not read [xml.entity]",
            ])
            let deep = try returnsPromptly {
                try run(reader, "<mediawiki>\n" + String(repeating: "<d>", count: 100_000) + String(repeating: "</d>", count: 100_000) + "</mediawiki>", name: "deep.xml")
            }
            assertOneFinding(deep.findings, at: "deep.xml:2", "Excessive depth in document: 256 (libxml2's limit, which Kiln keeps); the rest of this file is not read [xml.malformed]")
            let nul = try run(reader, Array((page + "a").utf8) + [0] + Array(("b" + end).utf8), name: "nul.xml")
            assertOneFinding(nul.findings, at: "nul.xml:1", "error: malformed XML: Char 0x0 out of allowed range")
        }
    }

    func testManyListingsOnOneLineStayLinear() throws {
        // Each unclosed tag and each template looked for the end of its line: 8 000 on one line took 11 s, 100 000 hours.
        let reader = try listings()
        let count = TestTier.size(50_000, fast: 8_000)
        for listing in ["&lt;see name=\"a\"&gt;", "{{see|name=a}}"] {
            let export = page + "== See ==\n" + String(repeating: listing, count: count) + "\n" + end
            let (records, _) = try returnsPromptly { try read(reader, url: try write(export, to: "many.xml")) }
            XCTAssertEqual(records.count, count, listing)
        }
    }
}
