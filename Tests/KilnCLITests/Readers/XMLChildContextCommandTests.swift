import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// Real transit XML whose records are identified by a child element of an enclosing element — SIRI's
/// `DatedVehicleJourneyRef` and `ItemIdentifier`, TransXChange's `ServiceCode`, NeTEx's `ServiceJourneyPatternRef/@ref`
/// — written before or after the records (Tests/Fixtures/real/, each with its provenance and licence), built through
/// the `kiln` binary with the manifest in its folder: every value of every row is what lxml's XPath gives for the
/// record and its nearest enclosing element, and a value that never comes is a finding at its element's line.
final class XMLChildContextCommandTests: CLITestCase {
    private func rows(_ bundle: String, _ sql: String) throws -> [String] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    /// For each element `record` (an XPath from the root) of `path`, the first node each of `columns` (XPaths from
    /// the record, `ancestor::…[1]/…` for its context) reaches, as lxml gives it: an element's string value, an
    /// attribute's value, a number's integer, `NULL` for nothing.
    private func lxml(_ path: URL, namespaces: [String: String], record: String, columns: [String]) throws -> [String] {
        let program = """
            import json, sys
            from lxml import etree
            namespaces, record, columns = json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
            def first(node, xpath):
                found = node.xpath(xpath, namespaces=namespaces)
                if isinstance(found, float): return str(int(found))
                if not found: return "NULL"
                return found[0] if isinstance(found[0], str) else found[0].xpath("string(.)")
            for node in etree.parse(sys.argv[1]).xpath(record, namespaces=namespaces):
                print("|".join(first(node, column) for column in columns))
            """
        let arguments = [path.path, String(decoding: try JSONSerialization.data(withJSONObject: namespaces), as: UTF8.self), record,
                         String(decoding: try JSONSerialization.data(withJSONObject: columns), as: UTF8.self)]
        let run = try CLITestCase.run(try PythonOracle.interpreter(), ["-c", program] + arguments, in: workingDirectory)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The findings of a build's report with `code`, as `file:line: message`.
    private func findings(_ report: String, code: String) throws -> [String] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return (object["diagnostics"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == code }.map { finding in
            "\(finding["file"] as? String ?? ""):\(finding["line"] as? Int ?? 0): \(finding["message"] as? String ?? "")"
        }
    }

    /// SIRI's estimated-timetable example: each call carries its journey's `DatedVehicleJourneyRef` and `LineRef`
    /// (before the calls) and `IsCompleteStopSequence` (after them). Its vehicle-monitoring example: each onward call
    /// carries its activity's `ItemIdentifier` (before), `VehicleActivityNote` (after; the second activity has none,
    /// a warning at that activity's line, as lxml numbers it) and the journey's `FramedVehicleJourneyRef/…`.
    func testSIRICallsCarryTheirJourneyFromChildElementsBeforeAndAfterThem() throws {
        let folder = try copy("Tests/Fixtures/real/siri-cen-examples", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let siri = ["s": "http://www.siri.org.uk/siri"]
        let estimated = try lxml(folder.appendingPathComponent("ext_estimatedTimetable_response.xml"), namespaces: siri, record: "//s:EstimatedCall", columns: [
            "ancestor::s:EstimatedVehicleJourney[1]/s:DatedVehicleJourneyRef", "ancestor::s:EstimatedVehicleJourney[1]/s:LineRef",
            "ancestor::s:EstimatedVehicleJourney[1]/s:IsCompleteStopSequence", "s:StopPointRef", "s:AimedDepartureTime",
            "count(preceding-sibling::s:EstimatedCall) + 1",
        ])
        XCTAssertEqual(estimated.count, 3)
        XCTAssertEqual(try rows("p.sqlite", "SELECT journey, line, complete, stop, aimed_departure, position FROM estimated_call ORDER BY journey, position"),
                       estimated)
        let vehicleMonitoring = folder.appendingPathComponent("exv_vehicleMonitoring_response.xml")
        let onward = try lxml(vehicleMonitoring, namespaces: siri, record: "//s:OnwardCall", columns: [
            "ancestor::s:VehicleActivity[1]/s:ItemIdentifier", "ancestor::s:MonitoredVehicleJourney[1]/s:FramedVehicleJourneyRef/s:DatedVehicleJourneyRef",
            "ancestor::s:VehicleActivity[1]/s:VehicleActivityNote", "s:StopPointRef", "s:AimedArrivalTime",
        ])
        XCTAssertEqual(onward.count, 2)
        XCTAssertEqual(try rows("p.sqlite", "SELECT item, journey, coalesce(note, 'NULL'), stop, coalesce(aimed_arrival, 'NULL') FROM onward_call ORDER BY item DESC"),
                       onward)
        let line = try XCTUnwrap(Int(try lxmlLine(vehicleMonitoring)), "one activity with onward calls and no note")
        XCTAssertEqual(try findings("p.report.json", code: "xml.context-missing"), [
            "exv_vehicleMonitoring_response.xml:\(line): context field \"note\" (\"s:VehicleActivityNote\" of \"s:VehicleActivity\"): an element "
                + "\"s:VehicleActivity\" (first at line \(line)) holds no \"s:VehicleActivityNote\"; its record has it NULL",
        ])
    }

    /// The line lxml gives the vehicle activity that holds onward calls but no note.
    private func lxmlLine(_ path: URL) throws -> String {
        let run = try CLITestCase.run(try PythonOracle.interpreter(), ["-c", """
            import sys
            from lxml import etree
            ns = {"s": "http://www.siri.org.uk/siri"}
            for node in etree.parse(sys.argv[1]).xpath("//s:VehicleActivity[.//s:OnwardCall and not(s:VehicleActivityNote)]", namespaces=ns):
                print(node.sourceline)
            """, path.path], in: workingDirectory)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A TransXChange 2.1 file (Yellow Buses' 1X, Poole – Bournemouth): each journey pattern carries its service's
    /// `ServiceCode`, `Lines/Line/LineName` and `RegisteredOperatorRef`, child elements of the `Service`.
    func testTransXChangePatternsCarryTheirServiceCode() throws {
        let folder = try copy("Tests/Fixtures/real/transxchange-poole-1x", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let expected = try lxml(folder.appendingPathComponent("services.xml"), namespaces: ["t": "http://www.transxchange.org.uk/"],
                                record: "//t:JourneyPattern", columns: [
            "@id", "ancestor::t:Service[1]/t:ServiceCode", "ancestor::t:Service[1]/t:Lines/t:Line/t:LineName",
            "ancestor::t:Service[1]/t:RegisteredOperatorRef", "t:Direction", "t:DestinationDisplay",
        ])
        XCTAssertEqual(expected.count, 2)
        XCTAssertEqual(try rows("p.sqlite", "SELECT id, service, line, operator, direction, destination FROM journey_pattern ORDER BY id"), expected.sorted())
        XCTAssertEqual(try findings("p.report.json", code: "xml.context-missing"), [])
    }

    /// NeTEx's simple bus timetable: each call carries its service journey's id, departure time, pattern and line
    /// (attributes of child elements before the calls), its facility set (a child after them), and its timetable
    /// frame's id and name.
    func testNeTExCallsCarryTheirJourneyAndFrame() throws {
        let folder = try copy("Tests/Fixtures/real/netex-cen-simple-timetable", to: "p")
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let journey = "ancestor::n:ServiceJourney[1]", frame = "ancestor::n:TimetableFrame[1]"
        let expected = try lxml(folder.appendingPathComponent("Netex_01.1_Bus_SimpleTimetable_JourneysOnly.xml"),
                                namespaces: ["n": "http://www.netex.org.uk/netex"], record: "//n:Call", columns: [
            "@id", "@order", "n:ScheduledStopPointRef/@ref", "n:Arrival/n:Time", "n:Departure/n:Time", "\(journey)/@id",
            "\(journey)/n:DepartureTime", "\(journey)/n:ServiceJourneyPatternRef/@ref", "\(journey)/n:LineRef/@ref",
            "\(journey)/n:facilities/n:ServiceFacilitySetRef/@ref", "\(frame)/@id", "\(frame)/n:Name",
        ])
        XCTAssertEqual(expected.count, 6)
        XCTAssertEqual(try rows("p.sqlite", """
            SELECT id, position, stop, coalesce(arrival, 'NULL'), coalesce(departure, 'NULL'), journey, journey_departure, pattern, line,
                   facilities, frame, frame_name FROM call ORDER BY id
            """), expected.sorted())
        XCTAssertEqual(try findings("p.report.json", code: "xml.context-missing"), [])
    }
}
