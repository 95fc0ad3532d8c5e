import Foundation
import KilnTestSupport
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

    func testRecordsBeyondTheBoundAreReadAgainWithTheirContext() throws {
        var text = "<root><group>"
        for index in 1...40 { text += "<item n=\"\(index)\"/>" }
        text += "<name>late</name></group><group><name>early</name><item n=\"41\"/></group>"
        text += "<group><item n=\"42\"/><group><item n=\"43\"/><name>inner</name></group><item n=\"44\"/><name>outer</name></group></root>"
        let options = #"{ record: "item", fields: { n: "@n" }, context: { group: { group: "name" } } }"#
        let unbounded = try readBothWays(options, text)
        XCTAssertEqual(unbounded.findings, [])
        let expected = (1...40).map { "n=\($0) group=late" } + ["n=41 group=early", "n=42 group=outer", "n=43 group=inner", "n=44 group=outer"]
        XCTAssertEqual(unbounded.rows.map { $0.components(separatedBy: " ").prefix(2).joined(separator: " ") }, expected)
        // With room for a few records: the same rows, in the same order, from two passes.
        let bounded = try readBothWays(options, text, waitingLimit: 2000)
        XCTAssertEqual(bounded.rows, unbounded.rows, "no record lost, none without its context, in document order")
        XCTAssertEqual(bounded.findings.count, 1)
        XCTAssertTrue(bounded.findings[0].hasPrefix("in.xml:1: info: more than 2000 bytes of records waited for a context element written after them: "
                                                    + "the records from line 1 on (44 of 44) were read in a second pass over the file, with it"), bounded.findings[0])
        XCTAssertTrue(bounded.findings[0].hasSuffix("[xml.late-context]"), bounded.findings[0])
        // Bounded after the first records went out: the second pass gives only the rest.
        let later = "<root><group><name>first</name><item n=\"0\"/></group>" + text.dropFirst("<root>".count)
        let laterRows = try readBothWays(options, later, waitingLimit: 2000)
        XCTAssertEqual(laterRows.rows.map { $0.components(separatedBy: " ").prefix(2).joined(separator: " ") }, ["n=0 group=first"] + expected)
        XCTAssertTrue(laterRows.findings.first?.contains("(44 of 45)") == true, laterRows.findings.first ?? "")
    }

    /// A random document's content: items (records), groups (the context elements) and a group's name.
    private indirect enum Node {
        case item(Int), group([Node]), name(String)
    }

    func testRandomDocumentsGiveEachRecordItsNearestGroupsName() throws {
        // Groups nested in groups, their names (the context) before, between or after their items, or missing: each
        // item's group is the name of its nearest group (its first name child), read with room for a few records
        // (two passes) and with room for all, without a tree and through one.
        var random = SeededGenerator(seed: 0x5A5_0053)
        var items = 0
        func group(_ depth: Int) -> Node {
            var children: [Node] = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                if depth < 3, Int.random(in: 0...2, using: &random) == 2 { return group(depth + 1) }
                items += 1
                return .item(items)
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                children.insert(.name("g\(items)-\(depth)-\(children.count)"), at: Int.random(in: 0...children.count, using: &random))
            }
            return .group(children)
        }
        func xml(_ node: Node) -> String {
            switch node {
            case .item(let n): return "<item n=\"\(n)\"/>"
            case .name(let name): return "<name>\(name)</name>"
            case .group(let children): return "<g>" + children.map(xml).joined() + "</g>"
            }
        }
        func expected(_ node: Node, group: String?) -> [String] {
            switch node {
            case .item(let n): return ["n=\(n) group=\(group ?? "∅")"]
            case .name: return []
            case .group(let children):
                let name = children.lazy.compactMap { if case .name(let name) = $0 { return name } else { return nil } }.first
                return children.flatMap { expected($0, group: name) }
            }
        }
        let options = #"{ record: "item", fields: { n: "@n" }, context: { g: { group: "name" } } }"#
        var replayed = 0, missing = 0
        for _ in 0..<60 {
            items = 0
            let groups = (0..<Int.random(in: 1...4, using: &random)).map { _ in group(0) }
            let text = "<root>" + groups.map(xml).joined() + "</root>"
            let roomy = try readBothWays(options, text)
            XCTAssertEqual(roomy.rows.map { $0.components(separatedBy: " ").prefix(2).joined(separator: " ") },
                           groups.flatMap { expected($0, group: nil) }, text)
            let tight = try readBothWays(options, text, waitingLimit: 600)
            XCTAssertEqual(tight.rows, roomy.rows, text)
            XCTAssertEqual(tight.findings.filter { !$0.contains("[xml.late-context]") }, roomy.findings, text)
            if tight.findings.count > roomy.findings.count { replayed += 1 }
            if roomy.findings.contains(where: { $0.contains("[xml.context-missing]") }) { missing += 1 }
        }
        XCTAssertGreaterThan(replayed, 5, "files read twice")
        XCTAssertGreaterThan(missing, 5, "files with a group without a name")
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
