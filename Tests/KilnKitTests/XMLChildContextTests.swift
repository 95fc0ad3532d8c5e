import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders

/// Context fields of an `xml` source that read a child element of the enclosing element (SIRI's
/// `DatedVehicleJourneyRef`, TransXChange's `ServiceCode`), written before or after the records: the records wait
/// (`WaitingRecords`, shared with the `json` reader) until the value is known, in bounded memory, and both ways of
/// reading a file (without a tree and through one) give the same records and findings.
final class XMLChildContextTests: KilnTestCase {
    private func reader(_ options: String, waitingLimit: Int = WaitingRecords.defaultLimit) throws -> XMLRecordReader {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let value = try decoder.decode(JSONValue.self, from: Data(options.utf8))
        var reader = try XMLRecordReader(options: value.decode(XMLRecordReader.Options.self, codingPath: []))
        reader.waitingLimit = waitingLimit
        return reader
    }

    /// Reads `text` both without a tree and through one; checks the two agree and returns the records (each as
    /// `name=value` in field order, `∅` for nil, then its line) and the findings.
    private func readBothWays(_ options: String, _ text: String, waitingLimit: Int = WaitingRecords.defaultLimit,
                              file: StaticString = #filePath, line: UInt = #line) throws -> (rows: [String], findings: [String]) {
        var results: [(rows: [String], findings: [String])] = []
        for withoutTree in [true, false] {
            var xml = try reader(options, waitingLimit: waitingLimit)
            xml.readsWithoutTree = withoutTree
            let (records, log) = try read(xml, text, name: "in.xml")
            let rows = records.map { record in
                zip(xml.fieldNames, record.values).map { "\($0)=\($1 ?? "∅")" }.joined(separator: " ") + " @\(record.line)"
            }
            results.append((rows, log.diagnostics.map(\.formatted)))
        }
        XCTAssertEqual(results[0].rows, results[1].rows, "without a tree, and through one", file: file, line: line)
        XCTAssertEqual(results[0].findings, results[1].findings, "without a tree, and through one", file: file, line: line)
        return results[0]
    }

    /// A TransXChange-like file: the service code is a child written before the records, the operator after them.
    private let services = """
        <TransXChange xmlns="http://www.transxchange.org.uk/">
          <Services>
            <Service>
              <ServiceCode>PB0002032:467</ServiceCode>
              <JourneyPattern id="JP1"><Direction>outbound</Direction></JourneyPattern>
              <JourneyPattern id="JP2"><Direction>inbound</Direction></JourneyPattern>
              <RegisteredOperatorRef>O1</RegisteredOperatorRef>
              <Line><LineName>X1</LineName></Line>
            </Service>
            <Service>
              <JourneyPattern id="JP3"><Direction>outbound</Direction></JourneyPattern>
              <ServiceCode>PB0002032:468</ServiceCode>
              <Line><LineName>X2</LineName></Line>
              <RegisteredOperatorRef>O2</RegisteredOperatorRef>
            </Service>
          </Services>
        </TransXChange>
        """

    func testChildElementsBeforeAndAfterTheRecords() throws {
        let options = #"""
            { record: "t:JourneyPattern", namespaces: { t: "http://www.transxchange.org.uk/" },
              fields: { id: "@id", direction: "t:Direction" },
              context: { "t:Service": { service: "t:ServiceCode", operator: "t:RegisteredOperatorRef", line: "t:Line/t:LineName" } } }
            """#
        let (rows, findings) = try readBothWays(options, services)
        XCTAssertEqual(findings, [])
        XCTAssertEqual(rows, [
            "direction=outbound id=JP1 line=X1 operator=O1 service=PB0002032:467 _ordinal=1 _position=1 @5",
            "direction=inbound id=JP2 line=X1 operator=O1 service=PB0002032:467 _ordinal=2 _position=2 @6",
            "direction=outbound id=JP3 line=X2 operator=O2 service=PB0002032:468 _ordinal=3 _position=1 @11",
        ])
    }

    func testAttributeOfAChildElementAndNestedContextLevels() throws {
        // NeTEx-like: a journey's pattern is named by a child's attribute after its passing times; the frame's id is
        // an attribute, the frame's name a child written last.
        let text = """
            <Frame id="F1">
              <ServiceJourney id="SJ1">
                <passingTimes><TimetabledPassingTime><DepartureTime>07:00:00</DepartureTime></TimetabledPassingTime>
                  <TimetabledPassingTime><DepartureTime>07:05:00</DepartureTime></TimetabledPassingTime></passingTimes>
                <JourneyPatternRef ref="JP:1"/>
              </ServiceJourney>
              <ServiceJourney id="SJ2">
                <JourneyPatternRef ref="JP:2"/>
                <passingTimes><TimetabledPassingTime><DepartureTime>08:00:00</DepartureTime></TimetabledPassingTime></passingTimes>
              </ServiceJourney>
              <Name>Winter</Name>
            </Frame>
            """
        let options = #"""
            { record: "TimetabledPassingTime", fields: { departure: "DepartureTime" },
              context: { ServiceJourney: { journey: "@id", pattern: "JourneyPatternRef/@ref" }, Frame: { frame: "@id", frameName: "Name" } } }
            """#
        let (rows, findings) = try readBothWays(options, text)
        XCTAssertEqual(findings, [])
        XCTAssertEqual(rows, [
            "departure=07:00:00 frame=F1 frameName=Winter journey=SJ1 pattern=JP:1 _ordinal=1 _position=1 @3",
            "departure=07:05:00 frame=F1 frameName=Winter journey=SJ1 pattern=JP:1 _ordinal=2 _position=2 @4",
            "departure=08:00:00 frame=F1 frameName=Winter journey=SJ2 pattern=JP:2 _ordinal=3 _position=1 @9",
        ])
    }

    func testAContextElementWithoutTheChildIsAFinding() throws {
        let options = #"""
            { record: "t:JourneyPattern", namespaces: { t: "http://www.transxchange.org.uk/" },
              fields: { id: "@id" }, context: { "t:Service": { service: "t:ServiceCode", mode: "t:Mode" } } }
            """#
        let (rows, findings) = try readBothWays(options, services)
        XCTAssertEqual(rows.map { $0.components(separatedBy: " ").prefix(3).joined(separator: " ") },
                       ["id=JP1 mode=∅ service=PB0002032:467", "id=JP2 mode=∅ service=PB0002032:467", "id=JP3 mode=∅ service=PB0002032:468"])
        XCTAssertEqual(findings.filter { !$0.contains("[xml.unread]") }, [
            "in.xml:3: warning: context field \"mode\" (\"t:Mode\" of \"t:Service\"): 2 elements \"t:Service\" "
                + "(first at line 3) hold no \"t:Mode\"; their 3 records have it NULL [xml.context-missing]",
        ])
    }

    func testRecordsBeyondTheBoundGoOutWithAFinding() throws {
        var text = "<root><group>"
        for index in 1...40 { text += "<item n=\"\(index)\"/>" }
        text += "<name>late</name></group><group><name>early</name><item n=\"41\"/></group></root>"
        let options = #"{ record: "item", fields: { n: "@n" }, context: { group: { group: "name" } } }"#
        let bounded = try readBothWays(options, text, waitingLimit: 2000)
        XCTAssertEqual(bounded.rows.count, 41, "no record is lost")
        let groups = bounded.rows.map { $0.components(separatedBy: " ")[1] }
        let shipped = groups.filter { $0 == "group=∅" }.count
        XCTAssertGreaterThan(shipped, 0)
        XCTAssertEqual(shipped + groups.filter { $0 == "group=late" }.count, 40)
        XCTAssertTrue(bounded.findings.first?.contains("\(shipped) records from line 1 on went out without the context values still to come") == true,
                      bounded.findings.first ?? "")
        XCTAssertTrue(bounded.rows.last!.hasPrefix("n=41 group=early"), bounded.rows.last!)
        XCTAssertEqual(bounded.findings.count, 1)
        XCTAssertTrue(bounded.findings[0].hasPrefix("in.xml:1: warning: more than 2000 bytes of records waited for a context element written after them:"),
                      bounded.findings[0])
        XCTAssertTrue(bounded.findings[0].hasSuffix("[xml.late-context]"), bounded.findings[0])
        XCTAssertEqual(bounded.rows.map { $0.components(separatedBy: " ")[0] }, (1...41).map { "n=\($0)" }, "in document order")
        let unbounded = try readBothWays(options, text)
        XCTAssertEqual(unbounded.findings, [])
        XCTAssertEqual(Set(unbounded.rows.dropLast().map { $0.components(separatedBy: " ")[1] }), ["group=late"])
    }

    func testRecordsWaitingWhenTheFileBreaksGoOutWithWhatWasRead() throws {
        let text = "<root><group><item n=\"1\"/><item n=\"2\"/><broken></root>"
        let options = #"{ record: "item", fields: { n: "@n" }, context: { group: { group: "name" } } }"#
        let xml = try reader(options)
        let (records, log) = try read(xml, text, name: "in.xml")
        XCTAssertEqual(records.map { $0["n"] }, ["1", "2"])
        XCTAssertEqual(log.diagnostics.map(\.code), [DiagnosticCode.xmlMalformed.rawValue])
    }

    func testAContextElementThatHoldsRecordsGivesAllItsText() throws {
        // The element a context field takes holds records: they are read, and its text is all of its text.
        let text = "<root><group><label>G <em>big <em>x</em></em> <item n=\"1\">one</item> end</label><item n=\"2\">two</item></group></root>"
        let options = #"{ record: "item", fields: { n: "@n", text: "." }, context: { group: { label: "label" } } }"#
        let (rows, findings) = try readBothWays(options, text)
        XCTAssertEqual(findings, [])
        XCTAssertEqual(rows, ["n=1 text=one label=G big x one end _ordinal=1 _position=1 @1", "n=2 text=two label=G big x one end _ordinal=2 _position=1 @1"])
    }

    func testContextPathsAreCheckedWhenTheManifestLoads() throws {
        for (selector, message) in [
            ("count(a)", "a simple path below it"),
            ("a[1]", "a simple path below it"),
            ("../a", "a simple path below it"),
            ("@a/b", "a simple path below it"),
        ] {
            XCTAssertThrowsError(try reader(#"{ record: "item", fields: { n: "@n" }, context: { group: { g: "\#(selector)" } } }"#), selector) { error in
                XCTAssertTrue("\(error)".contains(message), "\(selector): \(error)")
            }
        }
        XCTAssertNoThrow(try reader(#"{ record: "item", fields: { n: "@n" }, namespaces: { s: "urn:s" }, context: { group: { g: "s:a/s:b", h: "a/@s:x" } } }"#))
    }
}
