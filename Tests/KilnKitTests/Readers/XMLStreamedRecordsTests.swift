import Foundation
import KilnTestSupport
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `XMLRecordReader` reads records from libxml2's SAX events (`StreamedRecords`) when every field is a simple path.
/// The oracle is the same reader building a tree and evaluating the fields with libxml2's XPath
/// (`readsWithoutTree = false`): every record, value, line and finding must be the same, on hand-made edge cases,
/// on real files and on random documents.
final class XMLStreamedRecordsTests: KilnTestCase {
    private struct Outcome: Equatable {
        /// Each record as its line and its values (declared fields, context, `_ordinal`, `_position`), quoted.
        var records: [String]
        var findings: [String]
        /// Values that are not nil, among the declared fields of all records.
        var declaredValues = 0
    }

    private func reader(_ options: String) throws -> XMLRecordReader {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let value = try decoder.decode(JSONValue.self, from: Data(options.utf8))
        return try XMLRecordReader(options: value.decode(XMLRecordReader.Options.self, codingPath: []))
    }

    private func read(_ reader: XMLRecordReader, _ url: URL, withoutTree: Bool) throws -> Outcome {
        var reader = reader
        reader.readsWithoutTree = withoutTree
        let log = DiagnosticLog()
        var outcome = Outcome(records: [], findings: [])
        try reader.read(InputFile(url: url, relativePath: url.lastPathComponent), log: log) { record in
            outcome.records.append("\(record.line): " + record.values.map { $0.map { "\"\($0)\"" } ?? "∅" }.joined(separator: " "))
            outcome.declaredValues += record.declaredValues.filter { $0 != nil }.count
        }
        outcome.findings = log.diagnostics.map(\.formatted)
        return outcome
    }

    /// Reads `url` both ways and checks that the two agree; returns what was read.
    @discardableResult
    private func assertSame(_ options: String, _ url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let reader = try reader(options)
        let streamed = try read(reader, url, withoutTree: true)
        let tree = try read(reader, url, withoutTree: false)
        XCTAssertEqual(streamed, tree, "\(options) on \(url.lastPathComponent):\n\(String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self).prefix(2000))",
                       file: file, line: line)
        return streamed
    }

    private func write(_ text: String, name: String = "in.xml") throws -> URL {
        try write(text, to: name)
    }

    private func write(_ bytes: [UInt8], name: String) throws -> URL {
        try write(Data(bytes), to: name)
    }

    func testTheFieldsOfTheBenchmarkAndThePatrasStops() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <stops>
            <stop code="0000001"><name>Εγλυκάδα 1</name><location lat="38.205486" lon="21.760302"/><lines><line ref="29.4"/></lines></stop>
            <stop code="0000002"><name>  Ακτή
               Δυμαίων </name><location lon="21.7" lat="38.2"/><lines/><note>x</note></stop>
            <stop code="3"/>
            <stop><location/><location lat="1"/><name/><name>second</name></stop>
            </stops>
            """
        let outcome = try assertSame(#"{ record: "stop", fields: { code: "@code", name: "name", lat: "location/@lat", lon: "location/@lon" } }"#, write(xml))
        XCTAssertEqual(outcome.records.count, 4)
        XCTAssertEqual(outcome.records.last, #"7: ∅ "1" ∅ "" "4" "4""#)
    }

    func testTextEscapesAndMarkupInsideFields() throws {
        let xml = """
            <r>
            <rec a="x &amp; y &lt; z &#38; &#x26; &#65; &quot;q&quot;" b="tab\there
            newline" c="">mixed <b>bold <i>deep</i></b> tail<!-- not text --><?pi not text?><![CDATA[ <cdata> & ]]>&#x263A;&amp;</rec>
            <rec a="&amp;&amp;">  <b/>  </rec>
            <rec><b>one</b><b>two</b></rec>
            </r>
            """
        let outcome = try assertSame(#"{ record: "rec", fields: { a: "@a", b: "@b", c: "@c", all: ".", bold: "b", deep: "b/i" } }"#, write(xml))
        XCTAssertEqual(outcome.records.count, 3)
    }

    func testNamespaces() throws {
        let xml = """
            <s:stops xmlns:s="urn:stops" xmlns:g="urn:geo" xmlns="urn:default">
              <s:stop s:code="1" code="plain"><s:name>one</s:name><name>default ns</name><g:at g:lat="1" lat="2"/></s:stop>
              <stop code="2"><name>default</name></stop>
              <s:stop><n:name xmlns:n="urn:stops">declared here</n:name></s:stop>
            </s:stops>
            """
        let namespaces = #"namespaces: { s: "urn:stops", g: "urn:geo", d: "urn:default" }"#
        try assertSame(#"{ record: "s:stop", \#(namespaces), fields: { code: "@s:code", plain: "@code", name: "s:name", lat: "g:at/@g:lat", bare: "g:at/@lat", none: "name" } }"#, write(xml))
        try assertSame(#"{ record: "stop", \#(namespaces), fields: { name: "d:name", code: "@code" } }"#, write(xml))
        try assertSame(#"{ record: "d:stop", \#(namespaces), fields: { name: "d:name" } }"#, write(xml))
    }

    func testRecordPathsContextAndPositions() throws {
        let xml = """
            <body>
              <route tag="A" title="First"><stop id="1"/><stop id="2"><stop id="nested"/></stop><path><stop id="deeper"/></path></route>
              <route tag="B"><stop id="3"/></route>
              <stop id="top"/>
              <other><route tag="C"><stop id="4"/></route></other>
            </body>
            """
        let url = try write(xml)
        for record in ["stop", "route/stop", "/body/route/stop", "path/stop"] {
            try assertSame(#"{ record: "\#(record)", fields: { id: "@id", inner: "stop/@id" }, context: { route: { route: "@tag", title: "@title" } } }"#, url)
        }
    }

    /// Documents with a DTD go to the tree reader (it checks the declarations); the same findings either way.
    func testDocumentTypesAreReadByTheTreeReader() throws {
        let fields = #"{ record: "rec", fields: { v: ".", a: "@a" } }"#
        let cases = [
            "<?xml version='1.0'?>\n<!DOCTYPE r [<!ENTITY e 'boom'>]>\n<r><rec>&e;</rec></r>",
            "<!DOCTYPE r SYSTEM 'http://example.com/r.dtd'>\n<r><rec a='1'>x</rec></r>",
            "<!DOCTYPE r>\n<r><rec>x</rec></r>",
            "<r><rec>&undefined;</rec></r>",
            "not xml at all",
        ]
        for (index, text) in cases.enumerated() {
            try assertSame(fields, write(text, name: "refused\(index).xml"))
        }
    }

    /// In a malformed document every record that ends before the error is kept, with its context and position. The
    /// tree reader is no full oracle here: it gives up the whole 512-byte chunk that holds the error and salvages from
    /// its tree what it can, without `_position`, and misses a complete record that is the last child of an element
    /// still open. What it does give must come out the same; the findings must be the same.
    func testMalformedDocumentsKeepEveryRecordThatEnded() throws {
        let reader = try reader(#"{ record: "rec", fields: { v: ".", a: "@a" } }"#)
        let cases: [(xml: String, values: [String])] = [
            ("<r><rec a='1'>one</rec><rec>two</rec>", ["one", "two"]),
            ("<r><rec a='1'>one</rec><rec>two</wrong></r>", ["one"]),
            ("<r><rec>x</rec></r><r/>", ["x"]),
            ("<r>\n<rec a='1'>ok</rec>\n<rec a='2'>\u{0}</rec></r>", ["ok"]),
            ("<r><rec>one</rec><rec>two</rec><rec>thr", ["one", "two"]),
        ]
        for (index, example) in cases.enumerated() {
            let url = try write(example.xml, name: "broken\(index).xml")
            let streamed = try read(reader, url, withoutTree: true)
            let tree = try read(reader, url, withoutTree: false)
            XCTAssertEqual(streamed.findings, tree.findings, example.xml)
            XCTAssertEqual(streamed.findings.count, 1, example.xml)
            XCTAssertEqual(streamed.records.map { $0.split(separator: " ")[2] }, example.values.map { "\"\($0)\"" }, example.xml)
            // The positions are all there.
            XCTAssertFalse(streamed.records.contains { $0.hasSuffix("∅") }, "\(streamed.records)")
            // The tree reader's records, without their position, start the same list.
            let withoutPosition = { (records: [String]) in records.map { $0.split(separator: " ").dropLast().joined(separator: " ") } }
            XCTAssertEqual(Array(withoutPosition(streamed.records).prefix(tree.records.count)), withoutPosition(tree.records), example.xml)
        }
    }

    /// UTF-8 text declared ISO-8859-7 stops libxml2 where a byte does not convert, with a message only on stderr:
    /// the tree reader then said only that the file gave no record; the SAX reader says where and why it stopped.
    func testAConversionFailureIsAnError() throws {
        let reader = try reader(#"{ record: "rec", fields: { v: ".", a: "@a" } }"#)
        let url = try write("<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?>\n<r><rec>ok</rec><rec>Ακτή</rec></r>\n", name: "mislabelled.xml")
        let streamed = try read(reader, url, withoutTree: true)
        XCTAssertEqual(streamed.records.count, 1, "\(streamed.records)")
        XCTAssertEqual(streamed.findings.count, 2, "\(streamed.findings)")
        XCTAssertTrue(streamed.findings.contains { $0.contains("[encoding.mismatch]") }, "\(streamed.findings)")
        XCTAssertTrue(streamed.findings.contains {
            $0.hasPrefix("mislabelled.xml:2:") && $0.contains("error: malformed XML: input conversion failed")
        }, "\(streamed.findings)")
        let tree = try read(reader, url, withoutTree: false)
        XCTAssertFalse(tree.findings.contains { $0.contains("error") }, "\(tree.findings)")
    }

    func testEncodings() throws {
        let greek: [UInt8] = [0xC1, 0xEA, 0xF4, 0xDE]
        let legacy = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?>\n<r><rec a=\"".utf8) + greek + Array("\">".utf8) + greek + Array("</rec></r>\n".utf8)
        let fields = #"{ record: "rec", fields: { v: ".", a: "@a" } }"#
        try assertSame(fields, write(legacy, name: "legacy.xml"))
        try assertSame(#"{ record: "rec", encoding: "ISO-8859-7", fields: { v: ".", a: "@a" } }"#,
                       write(Array("<r><rec a=\"".utf8) + greek + Array("\">".utf8) + greek + Array("</rec></r>".utf8), name: "override.xml"))
        let utf16: [UInt8] = [0xFF, 0xFE] + "<r><rec a=\"ά\">Ακτή</rec></r>".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        try assertSame(fields, write(utf16, name: "utf16.xml"))
        try assertSame(fields, write([0xEF, 0xBB, 0xBF] + Array("<r><rec>bom</rec></r>".utf8), name: "bom.xml"))
    }

    func testRealFiles() throws {
        let nextbus = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/nextbus-actransit-22/routeConfig.xml")
        let stops = try assertSame(#"{ record: "route/stop", fields: { tag: "@tag", title: "@title", lat: "@lat", lon: "@lon", stopId: "@stopId" }, context: { route: { route: "@tag" } } }"#, nextbus)
        XCTAssertEqual(stops.records.count, 68)
        try assertSame(#"{ record: "route/path/point", fields: { lat: "@lat", lon: "@lon" } }"#, nextbus)
        try assertSame(#"{ record: "direction/stop", fields: { stop: "@tag" }, context: { direction: { direction: "@tag", directionTitle: "@title" } } }"#, nextbus)
    }

    /// Random documents: nested elements from a few names, attributes, text with escapes, CDATA, comments; random
    /// simple-path fields and record paths.
    func testRandomDocuments() throws {
        var random = SeededGenerator(seed: 0x5A5_0001)
        let names = ["a", "b", "rec", "c"]
        let texts = ["x", " ", "\n  ", "&amp;", "&lt;&gt;", "Ακτή", "&#x1F68C;", "<![CDATA[c&d]]>", "<!-- c -->", "<?p i?>"]
        func element(_ depth: Int, into xml: inout String) {
            let name = names.randomElement(using: &random)!
            xml += "<\(name)"
            for attribute in ["a", "b"] where Bool.random(using: &random) {
                xml += " \(attribute)=\"\(["1", "", "x &amp; y", "t\tn", "&#38;"].randomElement(using: &random)!)\""
            }
            xml += ">"
            for _ in 0..<Int.random(in: 0...(depth < 4 ? 4 : 0), using: &random) {
                if Bool.random(using: &random) { xml += texts.randomElement(using: &random)! } else { element(depth + 1, into: &xml) }
            }
            xml += "</\(name)>"
        }
        let fieldPaths = [".", "@a", "@b", "a", "b/@a", "rec", "a/b", "c/@b", "a/rec/@a", "b/b"]
        var records = 0
        var values = 0
        for round in 0..<300 {
            var xml = "<root>\n"
            for _ in 0..<Int.random(in: 2...12, using: &random) {
                element(0, into: &xml)
                xml += "\n"
            }
            xml += "</root>\n"
            let record = ["rec", "a", "b", "b/rec", "/root/a", "rec/a"].randomElement(using: &random)!
            let chosen = Set((0..<3).map { _ in fieldPaths.randomElement(using: &random)! }).sorted()
            let fields = chosen.enumerated().map { "f\($0.offset): \"\($0.element)\"" }.joined(separator: ", ")
            // Every other round, context from child elements too (before, after or around the records).
            let context = round % 2 == 0 ? #"{ a: { ctx: "@a" } }"# : #"{ a: { ctx: "@a", child: "b", deep: "c/@b", text: "rec" } }"#
            let options = #"{ record: "\#(record)", fields: { \#(fields) }, context: \#(context) }"#
            let outcome = try assertSame(options, write(xml, name: "random\(round).xml"))
            records += outcome.records.count
            values += outcome.declaredValues
        }
        // The documents hold records, and fields that reach something.
        XCTAssertGreaterThan(records, 100)
        XCTAssertGreaterThan(values, 100)
    }
}
