import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `KMLReader`: placemarks with their folders, descriptions as plain text and coordinates.
final class KMLReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue] = [:]) throws -> KMLReader {
        try KMLReader(options: JSONValue.object(options).decode(KMLReader.Options.self, codingPath: []))
    }

    /// The record's fields by name (absent for nil).
    private func fields(_ record: Record) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in zip(record.kind.fieldNames, record.values) {
            result[name] = value
        }
        return result
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    private func kml(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Πανεπιστήμιο Πατρών</name>
        \(body)
        </Document></kml>

        """
    }

    func testFieldNames() throws {
        XCTAssertEqual(try reader().fieldNames, ["name", "description", "longitude", "latitude", "altitude", "folder", "id", "styleUrl",
                                                 "geometryType", "geometry", "timestamps", "_ordinal", "_position"])
        XCTAssertEqual(try reader(["extendedData": .array([.string("capacity")])]).fieldNames.suffix(3), ["capacity", "_ordinal", "_position"])
        XCTAssertThrowsError(try reader(["extendedData": .array([.string("name")])])) { error in
            XCTAssertTrue("\(error)".contains("\"name\" is a built-in field"), "\(error)")
        }
    }

    func testNestedFoldersAreJoined() throws {
        let text = kml("""
            <Placemark><name>Πρυτανεία</name><Point><coordinates>21.78,38.28</coordinates></Point></Placemark>
            <Folder><name>Σχολές</name>
              <Folder><name>Θετικών Επιστημών</name>
                <Placemark><name>Τμήμα Μαθηματικών</name><Point><coordinates>21.7893,38.2906,0</coordinates></Point></Placemark>
                <Folder>
                  <name>
                    Εργαστήρια
                  </name>
                  <Placemark><name>Εργαστήριο Η/Υ</name></Placemark>
                </Folder>
              </Folder>
              <Placemark><name>Κοσμητεία</name></Placemark>
            </Folder>
            <Folder><name>Υγεία</name><Placemark><name>Φοιτητικό Ιατρείο</name></Placemark></Folder>
            """)
        let (records, log) = try read(reader(), text, name: "places.kml")
        XCTAssertEqual(log.diagnostics.map(\.code), Array(repeating: "kml.geometry", count: 3), "placemarks without geometry: \(describe(log))")
        XCTAssertEqual(records.map { fields($0)["_position"] ?? "∅" }, ["1", "1", "1", "1", "1"], "each is its folder's first placemark")
        XCTAssertEqual(records.map { fields($0)["_ordinal"] ?? "∅" }, ["1", "2", "3", "4", "5"])
        XCTAssertEqual(records.map { fields($0)["name"] ?? "∅" },
                       ["Πρυτανεία", "Τμήμα Μαθηματικών", "Εργαστήριο Η/Υ", "Κοσμητεία", "Φοιτητικό Ιατρείο"])
        XCTAssertEqual(records.map { fields($0)["folder"] ?? "∅" },
                       ["∅", "Σχολές / Θετικών Επιστημών", "Σχολές / Θετικών Επιστημών / Εργαστήρια", "Σχολές", "Υγεία"], "no folder is NULL, not an empty text")
        XCTAssertEqual(records.map(\.line), [3, 6, 11, 14, 16])
    }

    func testFolderSeparatorOption() throws {
        let text = kml("<Folder><name>A</name><Folder><name>B</name><Placemark><name>p</name></Placemark></Folder></Folder>")
        let (records, _) = try read(reader(["folderSeparator": .string(" › ")]), text, name: "sep.kml")
        XCTAssertEqual(records.map { fields($0)["folder"] }, ["A › B"])
    }

    func testDescriptionHTMLBecomesPlainText() throws {
        let text = kml("""
            <Folder><name>Τμήματα</name>
            <Placemark><name>Τμήμα Φυσικής</name><description><![CDATA[<p>Κτίριο <b>Φυσικής</b><br/><a href="http://www.physics.upatras.gr/">physics.upatras.gr</a></p>]]></description><Point><coordinates>21.7906,38.2899,0</coordinates></Point></Placemark>
            <Placemark><name>Βιβλιοθήκη &amp; Κέντρο</name><description><![CDATA[
              <p>Κεντρική   Βιβλιοθήκη<br/>Δανεισμός στο <b>ισόγειο</b></p><p>Τηλ.&nbsp;2610 996 000</p>
            ]]></description></Placemark>
            <Placemark><name>Κυλικείο</name><description>  Καφές,
               σάντουιτς  </description></Placemark>
            <Placemark><name>Escaped</name><description>&lt;p&gt;one&lt;br/&gt;two&lt;/p&gt;</description></Placemark>
            <Placemark><name>Empty</name><description></description></Placemark>
            <Placemark><name>None</name></Placemark>
            </Folder>
            """)
        let (records, log) = try read(reader(), text, name: "places.kml")
        XCTAssertEqual(log.diagnostics.map(\.code), Array(repeating: "kml.geometry", count: 5), describe(log))
        XCTAssertEqual(records.map { fields($0)["_position"] ?? "∅" }, ["1", "2", "3", "4", "5", "6"])
        XCTAssertEqual(records.map { fields($0)["name"] ?? "∅" },
                       ["Τμήμα Φυσικής", "Βιβλιοθήκη & Κέντρο", "Κυλικείο", "Escaped", "Empty", "None"])
        XCTAssertEqual(records.map { fields($0)["description"] ?? "∅" }, [
            // Blocks and <br> become lines joined by "\n"; a link keeps its label.
            "Κτίριο Φυσικής\nphysics.upatras.gr",
            "Κεντρική Βιβλιοθήκη\nΔανεισμός στο ισόγειο\nΤηλ. 2610 996 000",
            // Plain text is only collapsed.
            "Καφές, σάντουιτς",
            "one\ntwo",
            // A description that renders to nothing is no description (as Google My Maps' image-only ones).
            "∅",
            "∅",
        ])
    }

    /// HTML given as child elements of `description` (plain or in the XHTML namespace, with character references
    /// and white space around) renders exactly as the same HTML in CDATA or escaped as text: one line per block, never the
    /// text nodes glued together.
    func testDescriptionHTMLAsElementsRendersAsInCDATA() throws {
        let html = "<p>Open daily</p><p>Closed <i>Mondays</i></p><div>Entry free<br/>&amp; guided tours</div><table><tr><td>Adults</td><td>5</td></tr></table>"
        let escaped = html.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let text = kml("""
            <Placemark><name>cdata</name><description><![CDATA[\(html)]]></description></Placemark>
            <Placemark><name>escaped</name><description>\(escaped)</description></Placemark>
            <Placemark><name>elements</name><description>\(html)</description></Placemark>
            <Placemark><name>xhtml</name><description><div xmlns="http://www.w3.org/1999/xhtml">\(html)</div></description></Placemark>
            <Placemark><name>mixed</name><description>
              <p>Open daily</p><p>Closed <i>Mon&#x64;ays</i></p><div>Entry free<br/>&amp; guided tours</div><table><tr><td>Adults</td><td>5</td></tr></table>
            </description></Placemark>
            """)
        let (records, _) = try read(reader(), text, name: "hours.kml")
        let descriptions = records.map { fields($0)["description"] ?? "∅" }
        XCTAssertEqual(descriptions[0], "Open daily\nClosed Mondays\nEntry free\n& guided tours\nAdults\t5")
        XCTAssertEqual(descriptions, Array(repeating: descriptions[0], count: 5), "every way of writing the HTML renders the same")
    }

    func testCoordinatesWithAndWithoutAltitude() throws {
        let text = kml("""
            <Placemark><name>with</name><Point><coordinates>21.7893,38.2906,0</coordinates></Point></Placemark>
            <Placemark><name>high</name><Point><coordinates>21.7893,38.2906,112.5</coordinates></Point></Placemark>
            <Placemark><name>without</name><Point><coordinates>21.7836,38.2857</coordinates></Point></Placemark>
            <Placemark><name>spaced</name><Point><coordinates>
                  21.7836 , 38.2857 ,  4
               </coordinates></Point></Placemark>
            <Placemark><name>no point</name><description>x</description></Placemark>
            """)
        let (records, log) = try read(reader(), text, name: "coordinates.kml")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "coordinates.kml:9: warning: placemark \"no point\": has no Point, LineString, Polygon, gx:Track or MultiGeometry with coordinates; it has no place on the map [kml.geometry]",
        ])
        let values = records.map { record in
            [2, 3, 4].map { record.values[$0] ?? "∅" }.joined(separator: " ")
        }
        XCTAssertEqual(values, ["21.7893 38.2906 0", "21.7893 38.2906 112.5", "21.7836 38.2857 ∅", "21.7836 38.2857 4", "∅ ∅ ∅"])
    }

    func testBadCoordinatesAreAnErrorNamingThePlacemark() throws {
        let text = kml("""
            <Placemark><name>Μουσείο</name><Point><coordinates>21.7836</coordinates></Point></Placemark>
            <Placemark><name>Λέσχη</name><Point><coordinates>1,2,3,4</coordinates></Point></Placemark>
            <Placemark><name>Ιατρείο</name><Point><coordinates>21.79,38.29,0</coordinates></Point></Placemark>
            """)
        let (records, log) = try read(reader(), text, name: "bad.kml")
        // The placemarks are still records, without coordinates; the next one is read as usual.
        XCTAssertEqual(records.map { fields($0)["name"] ?? "∅" }, ["Μουσείο", "Λέσχη", "Ιατρείο"])
        XCTAssertEqual(records.map { $0.values[2] ?? "∅" }, ["∅", "∅", "21.79"])
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "bad.kml:3: error: placemark \"Μουσείο\": coordinates \"21.7836\" are not lon,lat[,alt] [kml.coordinates]",
            "bad.kml:4: error: placemark \"Λέσχη\": coordinates \"1,2,3,4\" are not lon,lat[,alt] [kml.coordinates]",
        ])
    }

    func testPlacemarkNameIsCollapsed() throws {
        let text = kml("<Placemark><name>\n   Τμήμα   Χημείας\n </name></Placemark><Placemark></Placemark>")
        let (records, _) = try read(reader(), text, name: "names.kml")
        XCTAssertEqual(records.map { $0.values[0] ?? "∅" }, ["Τμήμα Χημείας", "∅"])
    }

    func testKMLWithoutNamespace() throws {
        let text = "<kml><Folder><name>F</name><Placemark><name>p</name><Point><coordinates>1,2</coordinates></Point></Placemark></Folder></kml>"
        let (records, _) = try read(reader(), text, name: "plain.kml")
        XCTAssertEqual(records.map { [$0.values[0], $0.values[2], $0.values[3], $0.values[5]] }, [["p", "1", "2", "F"]])
    }

    func testMalformedKMLKeepsEarlierPlacemarks() throws {
        var text = "<kml><Document>\n"
        for index in 1...60 {
            text += "<Placemark><name>p\(index)</name><Point><coordinates>21.\(index),38.\(index)</coordinates></Point></Placemark>\n"
        }
        text += "<Placemark><name>broken</Placemark>\n</Document></kml>\n"
        let (records, log) = try read(reader(), text, name: "broken.kml")
        XCTAssertTrue(log.diagnostics.contains { $0.code == "xml.malformed" && $0.severity == .error }, describe(log))
        XCTAssertFalse(records.isEmpty)
        XCTAssertEqual(records.map { $0.values[0] }, (1...records.count).map { "p\($0)" })
    }

    func testSamplePlaces() throws {
        let url = KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras-web/places.kml")
        let (records, log) = try read(reader(), url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(records.count, 20)
        XCTAssertEqual(Set(records.map { fields($0)["folder"] ?? "∅" }), ["Τμήματα", "Βιβλιοθήκες", "Εστίαση", "Υγεία", "Μουσεία"])
        let museum = try XCTUnwrap(records.first { fields($0)["folder"] == "Μουσεία" })
        XCTAssertEqual(fields(museum)["altitude"], nil)
        XCTAssertEqual(fields(museum)["longitude"], "21.7836")
        XCTAssertEqual(fields(museum)["latitude"], "38.2857")
        XCTAssertEqual(fields(museum)["description"], "Μουσείο Επιστημών και Τεχνολογίας του Πανεπιστημίου Πατρών\nupatras.gr")
        let canteen = try XCTUnwrap(records.first { fields($0)["name"] == "Κυλικείο Βιβλιοθήκης" })
        XCTAssertNil(fields(canteen)["description"])
        XCTAssertEqual(fields(canteen)["altitude"], "0")
    }
}
