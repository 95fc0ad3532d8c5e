import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `XMLRecordReader`: records, fields as XPath, namespaces, encodings, line numbers and large files.
final class XMLRecordReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> XMLRecordReader {
        try XMLRecordReader(options: JSONValue.object(options).decode(XMLRecordReader.Options.self, codingPath: []))
    }

    private func reader(record: String, fields: [String: String], namespaces: [String: String] = [:],
                        encoding: String? = nil) throws -> XMLRecordReader {
        var options: [String: JSONValue] = [
            "record": .string(record),
            "fields": .object(fields.mapValues(JSONValue.string)),
        ]
        if !namespaces.isEmpty { options["namespaces"] = .object(namespaces.mapValues(JSONValue.string)) }
        if let encoding { options["encoding"] = .string(encoding) }
        return try reader(options)
    }

    /// Each record as `name=value` pairs in field order (`∅` for a missing value).
    private func rows(_ reader: XMLRecordReader, _ records: [Record]) -> [String] {
        records.map { record in
            zip(reader.fieldNames, record.declaredValues).map { "\($0)=\($1 ?? "∅")" }.joined(separator: " ")
        }
    }

    private func describe(_ log: DiagnosticLog) -> String {
        log.diagnostics.map(\.formatted).joined(separator: "\n")
    }

    /// ISO-8859-7 bytes of ASCII and Greek text (U+0384…U+03CE map to 0xB4…0xFE).
    private func iso88597(_ text: String) -> Data {
        Data(text.unicodeScalars.map { scalar -> UInt8 in
            if scalar.value < 0x80 { return UInt8(scalar.value) }
            precondition((0x0384...0x03CE).contains(scalar.value), "not in ISO-8859-7: \(scalar)")
            return UInt8(scalar.value - 0x2D0)
        })
    }

    private let stops = """
        <?xml version="1.0" encoding="UTF-8"?>
        <stops>
          <stop code="0102">
            <name>Ακτή Δυμαίων</name>
            <location lat="38.2336" lon="21.72433"/>
            <lines><line ref="3.2"/><line ref="5.1"/></lines>
          </stop>
          <stop code="0104"><name>  Άγιος
              Ανδρέας </name><location lon="21.7259" lat="38.2361"/><lines/></stop>
          <stop code="0105"/>
        </stops>

        """

    // MARK: Fields

    func testFieldNamesAreSorted() throws {
        let xml = try reader(record: "stop", fields: ["name": "name", "code": "@code", "latitude": "location/@lat"])
        XCTAssertEqual(xml.fieldNames, ["code", "latitude", "name", "_ordinal", "_position"])
    }

    func testAttributeChildTextAndNestedPath() throws {
        let xml = try reader(record: "stop", fields: ["code": "@code", "name": "name", "lat": "location/@lat", "lon": "location/@lon"])
        let (records, log) = try read(xml, stops, name: "stops.xml")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            #"stops.xml:6: info: no field of this source reads the element "lines" (no namespace) of its records ("stop"); reported once for the source, at its first file and line [xml.unread]"#,
        ])
        XCTAssertEqual(rows(xml, records), [
            "code=0102 lat=38.2336 lon=21.72433 name=Ακτή Δυμαίων",
            // The reader keeps the text as written; normalizers collapse it.
            "code=0104 lat=38.2361 lon=21.7259 name=  Άγιος\n      Ανδρέας ",
            // An empty element: its missing children are nil, not "".
            "code=0105 lat=∅ lon=∅ name=∅",
        ])
    }

    /// Fields whose paths overlap (an element and a child of it, an element and its attribute) are each read: every
    /// field is evaluated on the record on its own, streamed or through a tree.
    func testOverlappingFieldPathsAreEachRead() throws {
        let text = #"<root><r><a>x<b>inner</b>y</a><c k="v"><d>D</d></c></r></root>"#
        for fields in [["a": "a", "b": "a/b", "c": "c", "d": "c/d", "k": "c/@k"], ["a": "a", "b": "a/b[1]", "c": "c", "d": "c/d", "k": "c/@k"]] {
            let xml = try reader(record: "r", fields: fields)
            let (records, log) = try read(xml, text, name: "a.xml")
            XCTAssertEqual(log.diagnostics.count, 0, describe(log))
            XCTAssertEqual(rows(xml, records), ["a=xinnery b=inner c=D d=D k=v"], "\(fields)")
        }
    }

    func testRecordLineNumbers() throws {
        let xml = try reader(record: "stop", fields: ["code": "@code"])
        let (records, _) = try read(xml, stops, name: "stops.xml")
        XCTAssertEqual(records.map(\.line), [3, 8, 10])
    }

    func testXPathFunctions() throws {
        let xml = try reader(record: "stop", fields: ["lines": "count(lines/line)", "name": "normalize-space(name)",
                                                      "first": "string(lines/line[1]/@ref)", "label": "concat(@code, ':', lines/line[last()]/@ref)"])
        let (records, log) = try read(xml, stops, name: "stops.xml")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(xml, records), [
            "first=3.2 label=0102:5.1 lines=2 name=Ακτή Δυμαίων",
            // Functions return values (a count of 0, empty strings), never nil.
            "first= label=0104: lines=0 name=Άγιος Ανδρέας",
            "first= label=0105: lines=0 name=",
        ])
    }

    func testMissingFieldIsNil() throws {
        let xml = try reader(record: "stop", fields: ["code": "@code", "zone": "@zone", "note": "note", "deep": "location/point/@x"])
        let (records, log) = try read(xml, stops, name: "stops.xml")
        // Each field that matched in no record of the file is named once; so is each element no field reads.
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            #"stops.xml:4: info: no field of this source reads the element "name" (no namespace) of its records ("stop"); reported once for the source, at its first file and line [xml.unread]"#,
            #"stops.xml:6: info: no field of this source reads the element "lines" (no namespace) of its records ("stop"); reported once for the source, at its first file and line [xml.unread]"#,
            #"stops.xml: info: field "deep" ("location/point/@x") matched nothing in any of the 3 records of this file: it is NULL in each [source.field-unmatched]"#,
            #"stops.xml: info: field "note" ("note") matched nothing in any of the 3 records of this file: it is NULL in each [source.field-unmatched]"#,
            #"stops.xml: info: field "zone" ("@zone") matched nothing in any of the 3 records of this file: it is NULL in each [source.field-unmatched]"#,
        ], describe(log))
        XCTAssertEqual(records.count, 3)
        for record in records {
            XCTAssertEqual(record.declaredValues.count, 4)
            let named = Dictionary(uniqueKeysWithValues: zip(xml.fieldNames, record.declaredValues))
            XCTAssertNotNil(named["code"] ?? nil)
            XCTAssertNil(named["zone"] ?? nil)
            XCTAssertNil(named["note"] ?? nil)
            XCTAssertNil(named["deep"] ?? nil)
        }
    }

    func testEmptyAttributeIsAnEmptyStringNotNil() throws {
        let xml = try reader(record: "r", fields: ["a": "@a", "t": "t"])
        let (records, _) = try read(xml, "<root><r a=\"\"><t></t></r></root>", name: "empty.xml")
        XCTAssertEqual(records.map(\.declaredValues), [["", ""]])
    }

    func testContextFieldsOfEnclosingElements() throws {
        let xml = try reader(["record": .string("line"), "fields": .object(["line": .string("@ref")]),
                              "context": .object(["stop": .object(["stop": .string("@code")]), "stops": .object(["page": .string("@page")])])])
        let text = """
            <stops page="2">
              <stop code="0102"><lines><line ref="3.2"/><line ref="5.1"/></lines></stop>
              <stop code="0104">
                <lines>
                  <line ref="6.3"/>
                </lines>
              </stop>
              <line ref="outside"/>
            </stops>
            """
        let (records, log) = try read(xml, text, name: "lines.xml")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(xml, records), ["line=3.2 stop=0102 page=2", "line=5.1 stop=0102 page=2", "line=6.3 stop=0104 page=2",
                                            "line=outside stop=∅ page=2"], "a context value ends with its element")
        XCTAssertEqual(records.map { $0["_ordinal"]! }, ["1", "2", "3", "4"])
        XCTAssertEqual(records.map { $0["_position"]! }, ["1", "2", "1", "1"])
        XCTAssertEqual(records.map(\.line), [2, 2, 5, 8])
    }

    func testOrdinalsAndContextOnOneLineXML() throws {
        // A NextBus routeConfig: every stop of every route on one line, so line numbers cannot order anything.
        let text = #"<body><route tag="N"><stop tag="a"/><stop tag="b"/><stop tag="c"/></route><route tag="J"><stop tag="x"/><stop tag="y"/></route></body>"#
        let xml = try reader(["record": .string("route/stop"), "fields": .object(["stop": .string("@tag")]),
                              "context": .object(["route": .object(["route": .string("@tag")])])])
        let (records, log) = try read(xml, text, name: "routeConfig.xml")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map { "\($0["route"]!) \($0["stop"]!) \($0["_position"]!) \($0["_ordinal"]!)" },
                       ["N a 1 1", "N b 2 2", "N c 3 3", "J x 1 4", "J y 2 5"])
        XCTAssertEqual(Set(records.map(\.line)), [1])
    }

    func testRecordPaths() throws {
        let text = "<body><route><stop id=\"1\"/><direction><stop id=\"d\"/></direction></route><stop id=\"top\"/></body>"
        let relative = try reader(record: "route/stop", fields: ["id": "@id"])
        XCTAssertEqual(rows(relative, try read(relative, text, name: "p.xml").records), ["id=1"])
        let anchored = try reader(record: "/body/stop", fields: ["id": "@id"])
        XCTAssertEqual(rows(anchored, try read(anchored, text, name: "p.xml").records), ["id=top"])
        let any = try reader(record: "stop", fields: ["id": "@id"])
        XCTAssertEqual(rows(any, try read(any, text, name: "p.xml").records), ["id=1", "id=d", "id=top"])
        XCTAssertThrowsError(try reader(record: "route/stop[1]", fields: ["id": "@id"]))
        XCTAssertThrowsError(try reader(record: "x:route/stop", fields: ["id": "@id"]))
    }

    func testXPathThatStreamingCannotEvaluateIsRefused() throws {
        let refused: [(String, String)] = [
            ("count(preceding-sibling::stop)", "use the field \"_position\""),
            ("following-sibling::stop[1]/@code", "use the field \"_position\""),
            ("ancestor::stop/@code", "\"context\" field"),
            ("../@code", "\"context\" field"),
            ("/stops/@page", "absolute path"),
            ("position()", "_position"),
            ("last()", "_position"),
            ("normalise-space(name)", "did you mean normalize-space()?"),
            ("q:name", "the namespace prefix \"q\" is not declared"),
        ]
        for (expression, expected) in refused {
            XCTAssertThrowsError(try reader(record: "stop", fields: ["value": expression]), expression) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(expression): \(error)")
                XCTAssertTrue("\(error)".contains("fields.value"), "names the field: \(error)")
            }
        }
        for allowed in ["count(line)", "line[position() = last()]/@ref", "normalize-space(name)", "s:name", "string-length(@code) > 3",
                        "concat(@a, '::', \"..\")"] {
            XCTAssertNoThrow(try reader(record: "stop", fields: ["value": allowed], namespaces: ["s": "urn:x"]), allowed)
        }
    }

    func testNestedRecordElementsAreNotRecordsTwice() throws {
        // A record's subtree is skipped after it is expanded: an element of the same name inside it is not a record.
        let xml = try reader(record: "item", fields: ["id": "@id", "inner": "count(item)"])
        let (records, _) = try read(xml, "<r><item id=\"1\"><item id=\"1a\"/></item><item id=\"2\"/></r>", name: "nested.xml")
        XCTAssertEqual(rows(xml, records), ["id=1 inner=1", "id=2 inner=0"])
    }

    // MARK: Namespaces

    private let namespaced = """
        <?xml version="1.0" encoding="UTF-8"?>
        <stops xmlns="urn:patras-bus:stops" xmlns:x="urn:extra">
          <stop code="0102" x:zone="A">
            <name>Ακτή Δυμαίων</name>
            <location lat="38.2336" lon="21.72433"/>
          </stop>
          <other:stop xmlns:other="urn:other" code="9999"><other:name>elsewhere</other:name></other:stop>
        </stops>
        """

    func testNamespacedDocumentWithDeclaredPrefix() throws {
        let xml = try reader(record: "s:stop", fields: ["code": "@code", "name": "s:name", "lat": "s:location/@lat", "zone": "@z:zone"],
                             namespaces: ["s": "urn:patras-bus:stops", "z": "urn:extra"])
        let (records, log) = try read(xml, namespaced, name: "ns.xml")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        // Only the stop in urn:patras-bus:stops; the one in urn:other is another element.
        XCTAssertEqual(rows(xml, records), ["code=0102 lat=38.2336 name=Ακτή Δυμαίων zone=A"])
        XCTAssertEqual(records.map(\.line), [3])
    }

    func testPrefixInTheManifestNeedNotMatchThePrefixInTheDocument() throws {
        let text = "<b:stops xmlns:b=\"urn:patras-bus:stops\"><b:stop code=\"1\"><b:name>one</b:name></b:stop></b:stops>"
        let xml = try reader(record: "s:stop", fields: ["name": "s:name"], namespaces: ["s": "urn:patras-bus:stops"])
        let (records, _) = try read(xml, text, name: "prefixed.xml")
        XCTAssertEqual(rows(xml, records), ["name=one"])
    }

    func testRecordWithoutPrefixMatchesInAnyNamespace() throws {
        let xml = try reader(record: "stop", fields: ["code": "@code", "name": "*[local-name()='name']",
                                                      // XPath 1.0 has no default namespace: an unprefixed name is in no namespace.
                                                      "unprefixed": "name"])
        let (records, log) = try read(xml, namespaced, name: "ns.xml")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            #"ns.xml: info: field "unprefixed" ("name") matched nothing in any of the 2 records of this file: it is NULL in each [source.field-unmatched]"#,
        ], describe(log))
        XCTAssertEqual(rows(xml, records), ["code=0102 name=Ακτή Δυμαίων unprefixed=∅", "code=9999 name=elsewhere unprefixed=∅"])
    }

    func testRecordInAnotherNamespaceDoesNotMatch() throws {
        let xml = try reader(record: "s:stop", fields: ["code": "@code"], namespaces: ["s": "urn:nothing-here"])
        let (records, log) = try read(xml, namespaced, name: "ns.xml")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "ns.xml: warning: the file gives no record: no element matches the record \"s:stop\" [source.empty]",
            #"ns.xml:3: warning: the record "s:stop" is in the namespace "urn:nothing-here", but this file's "stop" elements are in "urn:patras-bus:stops"; "#
                + #"declare that URI (a source of its own for these files) to read them [xml.namespace-mismatch]"#,
        ])
    }

    /// A field whose element is in another version of its namespace (GPX 1.0 for 1.1, `…/cache/1/0/1` for
    /// `…/cache/1/0`) is a warning naming both URIs, for every field under it; elements no field reads are each one
    /// info for the whole source, with their namespace URI, the first of a subtree only.
    func testElementsInAnotherVersionOfTheirNamespaceAreNamed() throws {
        let v10 = "http://www.topografix.com/GPX/1/0", v11 = "http://www.topografix.com/GPX/1/1"
        let gpx = { (uri: String) in
            "<gpx xmlns=\"\(uri)\">\n<wpt lat=\"1\">\n<name>A</name><desc>d</desc>\n<link><text>t</text></link>\n</wpt>\n<wpt lat=\"2\"><name>B</name></wpt></gpx>"
        }
        let xml = try reader(record: "wpt", fields: ["lat": "@lat", "name": "g:name", "text": "g:link/g:text"], namespaces: ["g": v10])
        let log = DiagnosticLog()
        log.readingSource = "points"
        var names: [String?] = []
        for (file, uri) in [("a.gpx", v10), ("b.gpx", v11), ("c.gpx", v10)] {
            let url = try write(gpx(uri), to: file)
            try xml.read(InputFile(url: url, relativePath: file), log: log) { names.append($0.declaredValues[1]) }
        }
        XCTAssertEqual(names, ["A", "B", nil, nil, "A", "B"])
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            #"a.gpx:3: info: no field of source "points" reads the element "desc" (namespace "http://www.topografix.com/GPX/1/0") of its records ("wpt"); reported once for the source, at its first file and line [xml.unread]"#,
            #"b.gpx:3: warning: field "name" reads "name" in the namespace "http://www.topografix.com/GPX/1/0", but this file's records have it in "http://www.topografix.com/GPX/1/1" (the same vocabulary, another version), which no field reads: it is NULL here; declare that URI (a source of its own for these files) to read them [xml.namespace-mismatch]"#,
            #"b.gpx:3: info: no field of source "points" reads the element "name" (namespace "http://www.topografix.com/GPX/1/1") of its records ("wpt"); reported once for the source, at its first file and line [xml.unread]"#,
            #"b.gpx:3: info: no field of source "points" reads the element "desc" (namespace "http://www.topografix.com/GPX/1/1") of its records ("wpt"); reported once for the source, at its first file and line [xml.unread]"#,
            #"b.gpx:4: warning: field "text" reads "link" in the namespace "http://www.topografix.com/GPX/1/0", but this file's records have it in "http://www.topografix.com/GPX/1/1" (the same vocabulary, another version), which no field reads: it is NULL here; declare that URI (a source of its own for these files) to read them [xml.namespace-mismatch]"#,
            #"b.gpx:4: info: no field of source "points" reads the element "link" (namespace "http://www.topografix.com/GPX/1/1") of its records ("wpt"); reported once for the source, at its first file and line [xml.unread]"#,
        ], describe(log))
    }

    func testNamespaceURIsThatDifferOnlyInAVersion() {
        for (a, b) in [("http://www.topografix.com/GPX/1/0", "http://www.topografix.com/GPX/1/1"),
                       ("http://www.groundspeak.com/cache/1/0", "http://www.groundspeak.com/cache/1/0/1"),
                       ("http://www.opengis.net/kml/2.2", "http://www.opengis.net/kml/2.3"),
                       ("http://www.netex.org.uk/netex/v1", "http://www.netex.org.uk/netex/v2")] {
            XCTAssertTrue(NamespaceVersion.differOnlyInVersion(a, b), "\(a) \(b)")
        }
        for (a, b) in [("http://earth.google.com/kml/2.1", "http://www.opengis.net/kml/2.2"), ("urn:a", "urn:a"),
                       ("http://www.topografix.com/GPX/1/0", "http://www.topografix.com/GPX/Extensions/1/0")] {
            XCTAssertFalse(NamespaceVersion.differOnlyInVersion(a, b), "\(a) \(b)")
        }
    }

    func testUndeclaredRecordPrefixIsAUsageError() throws {
        XCTAssertThrowsError(try reader(record: "q:stop", fields: ["code": "@code"], namespaces: ["s": "urn:x"])) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "the record \"q:stop\" uses the prefix \"q\", which namespaces does not declare")
        }
    }

    func testInvalidXPathIsAnErrorAtConstruction() throws {
        XCTAssertThrowsError(try reader(record: "stop", fields: ["code": "@code[", "name": "name"])) { error in
            guard let error = error as? XPathError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.expression, "@code[")
            XCTAssertTrue(error.description.hasPrefix("invalid XPath \"@code[\": "), error.description)
        }
    }

    func testUnknownOptionIsRefused() throws {
        XCTAssertThrowsError(try reader(["record": .string("r"), "fields": .object([:]), "recrod": .string("x")]))
    }

    func testCSSFieldSelector() throws {
        let xml = try reader(["record": .string("stop"), "fields": .object(["name": .object(["css": .string("name")])])])
        let (records, _) = try read(xml, stops, name: "stops.xml")
        XCTAssertEqual(records.first?.declaredValues, ["Ακτή Δυμαίων"])
    }

    // MARK: Encodings

    func testISO88597DeclaredInTheXMLDeclaration() throws {
        let text = "<?xml version=\"1.0\" encoding=\"ISO-8859-7\"?>\n<stops>\n<stop code=\"1\"><name>Άγιος Ανδρέας</name></stop>\n<stop code=\"2\"><name>Ακτή Δυμαίων</name></stop>\n</stops>\n"
        let url = try write(iso88597(text), to: "greek.xml")
        // The file is not UTF-8: Ά is the single byte 0xB6.
        XCTAssertTrue(try Data(contentsOf: url).contains(0xB6))
        let xml = try reader(record: "stop", fields: ["code": "@code", "name": "name"])
        let (records, log) = try read(xml, url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(xml, records), ["code=1 name=Άγιος Ανδρέας", "code=2 name=Ακτή Δυμαίων"])
        XCTAssertEqual(records.map(\.line), [3, 4])
    }

    func testUTF16WithByteOrderMark() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<stops>\n  <stop code=\"0602\"><name>Πανεπιστήμιο</name></stop>\n</stops>\n"
        var data = Data([0xFF, 0xFE])
        data.append(try XCTUnwrap(text.data(using: .utf16LittleEndian)))
        let url = try write(data, to: "utf16.xml")
        let xml = try reader(record: "stop", fields: ["code": "@code", "name": "name"])
        let (records, log) = try read(xml, url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(xml, records), ["code=0602 name=Πανεπιστήμιο"])
        XCTAssertEqual(records.map(\.line), [3])
    }

    func testEncodingOptionOverridesTheDocument() throws {
        // windows-1253 bytes in a document that declares nothing (so it would be read as UTF-8).
        let text = "<stops>\n<stop code=\"1\"><name>Καθημερινές</name></stop>\n</stops>\n"
        let data = try XCTUnwrap(text.data(using: .windowsCP1253))
        XCTAssertNil(String(data: data, encoding: .utf8))
        let url = try write(data, to: "cp1253.xml")

        let plain = try reader(record: "stop", fields: ["name": "name"])
        let (misread, misreadLog) = try read(plain, url: url)
        XCTAssertEqual(misread.count, 0)
        XCTAssertEqual(misreadLog.diagnostics.map(\.code), ["xml.malformed"], describe(misreadLog))
        XCTAssertEqual(misreadLog.diagnostics.first?.provenance?.line, 2)

        let overridden = try reader(record: "stop", fields: ["name": "name"], encoding: "windows-1253")
        let (records, log) = try read(overridden, url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.map(\.declaredValues), [["Καθημερινές"]])
    }

    func testUnknownEncodingOptionIsAnErrorAtConstruction() throws {
        XCTAssertThrowsError(try reader(record: "stop", fields: ["name": "name"], encoding: "klingon-8")) { error in
            guard let error = error as? EncodingError else { return XCTFail("got \(error)") }
            XCTAssertEqual(error.message, "unknown encoding \"klingon-8\"")
        }
    }

    // MARK: Size

    func testTwoHundredThousandRecords() throws {
        let count = 200_000
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records>\n"
        text.reserveCapacity(count * 60)
        for index in 1...count {
            text += "<rec id=\"\(index)\"><v>value \(index)</v></rec>\n"
        }
        text += "</records>\n"
        let url = try write(text, to: "large.xml")
        let xml = try reader(record: "rec", fields: ["id": "@id", "v": "v"])
        var seen = 0
        var first: Record?, last: Record?
        let log = DiagnosticLog()
        try xml.read(InputFile(url: url, relativePath: "large.xml"), log: log) { record in
            seen += 1
            if first == nil { first = record }
            last = record
        }
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(seen, count)
        XCTAssertEqual(first?.declaredValues, ["1", "value 1"])
        XCTAssertEqual(first?.line, 3)
        XCTAssertEqual(last?.declaredValues, ["200000", "value 200000"])
        XCTAssertEqual(last?.line, 200_002, "line numbers past 65 535")
    }
}
