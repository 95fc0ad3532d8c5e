import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// The fidelity table (docs/FIDELITY.md): each real input of `Tests/Fixtures/real/` is built by the `kiln` binary with
/// the pipeline beside it, and every field of its bundle is compared with what an independent parser makes of the same
/// file (`scripts/oracles/fidelity.py`: mwparserfromhell, ElementTree, lxml, installed by `scripts/oracles/install`;
/// Python's json module for JSON).
/// A field is exact, or reported (Kiln emptied it and a finding names the record and the field); nothing else passes.
final class FidelityTests: CLITestCase {
    /// What one input measured.
    struct Measure {
        var rows = 0
        var fields = 0
        var exact = 0
        var reported: [String] = []
        var unexplained: [String] = []
    }

    /// The conventions under which values compare (docs/FIDELITY.md, "Conventions").
    private static let derivedPointTolerance = 1.0000001e-7

    private static func oraclePython() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["KILN_ORACLE_PYTHON"] { return URL(fileURLWithPath: path) }
        return try PythonOracle.interpreter()
    }

    /// The oracle's tables for input `name` whose files are in `folder`.
    private func oracle(_ name: String, folder: URL) throws -> [String: [[String: Any]]] {
        let python = try FidelityTests.oraclePython()
        let process = Process()
        process.executableURL = python
        process.arguments = [CLITestCase.repositoryRoot.appendingPathComponent("scripts/oracles/fidelity.py").path, name, folder.path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, errors)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let tables = try XCTUnwrap(object["tables"] as? [String: [String: Any]])
        return try tables.mapValues { try XCTUnwrap($0["rows"] as? [[String: Any]]) }
    }

    /// Builds the input, runs the oracle, compares every field; returns what was measured.
    private func measure(_ name: String, keys: [String: [String]] = [:]) throws -> Measure {
        let folder = try copy("Tests/Fixtures/real/\(name)", to: name)
        let run = try kiln("build", name, "--out", "\(name).sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("\(name).report.json"))) as? [String: Any])
        let findings = (report["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        let database = try Database(path: file("\(name).sqlite").path, mode: .readOnly)
        var measure = Measure()
        for (table, expectedRows) in try oracle(name, folder: folder).sorted(by: { $0.key < $1.key }) {
            let key = keys[table] ?? ["position"]
            let columns = expectedRows.first.map { Array($0.keys).sorted() } ?? []
            let order = key.map { "\"\($0)\"" }.joined(separator: ", ")
            let actual = try database.rows("SELECT \(columns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \(table) ORDER BY \(order)")
            let expected = expectedRows.sorted { a, b in
                for column in key {
                    let left = "\(a[column] ?? "")", right = "\(b[column] ?? "")"
                    if let l = Double(left), let r = Double(right), l != r { return l < r }
                    if left != right { return left < right }
                }
                return false
            }
            XCTAssertEqual(actual.count, expected.count, "\(name) \(table): row count")
            measure.rows += expected.count
            for (number, (want, got)) in zip(expected, actual).enumerated() {
                for (index, column) in columns.enumerated() {
                    measure.fields += 1
                    let value = got.values[index]
                    if matches(want[column], value, column: column) {
                        measure.exact += 1
                        continue
                    }
                    let label = "\(table) row \(number + 1) (\(want["name"] ?? want["tag"] ?? want["position"] ?? "")) \(column): oracle \(want[column] ?? "NULL"), kiln \(value.textValue ?? "NULL")"
                    let recordName = "\(want["name"] ?? "")"
                    if value.textValue == nil, findings.contains(where: { $0.contains("\"\(recordName)\"") && $0.contains(" \(column) ") }) {
                        measure.reported.append(label)
                    } else {
                        measure.unexplained.append(label)
                    }
                }
            }
        }
        let line = "| \(name) | \(measure.rows) | \(measure.fields) | \(measure.exact) | \(measure.reported.count) | \(measure.unexplained.count) |\n"
        let table = file("fidelity-table.md")
        let previous = (try? String(contentsOf: table, encoding: .utf8)) ?? ""
        try (previous + line).write(to: table, atomically: true, encoding: .utf8)
        print("fidelity " + line, terminator: "")
        return measure
    }

    /// Equal under the documented conventions: numbers within the derived-point tolerance, descriptions compared with
    /// white space collapsed (Kiln keeps one line per block of a KML description), NULL for an absent value.
    private func matches(_ expected: Any?, _ actual: SQLValue, column: String) -> Bool {
        switch (expected, actual) {
        case (nil, .null), (is NSNull, .null): return true
        case (nil, _), (is NSNull, _), (_, .null): return false
        case (let number as NSNumber, .real(let value)): return abs(number.doubleValue - value) <= FidelityTests.derivedPointTolerance
        case (let number as NSNumber, .integer(let value)): return number.doubleValue == Double(value)
        case (let text as String, .real(let value)): return Double(text).map { abs($0 - value) <= FidelityTests.derivedPointTolerance } ?? false
        case (let text as String, _):
            guard let actual = actual.textValue else { return false }
            if column == "geometry" { return sameJSON(text, actual) }
            if column == "description" { return text == actual.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            return text == actual
        default:
            return "\(expected!)" == actual.textValue
        }
    }

    /// Two JSON texts hold the same structure, numbers within the derived-point tolerance.
    private func sameJSON(_ left: String, _ right: String) -> Bool {
        guard let a = try? JSONSerialization.jsonObject(with: Data(left.utf8)),
              let b = try? JSONSerialization.jsonObject(with: Data(right.utf8)) else { return false }
        func same(_ a: Any, _ b: Any) -> Bool {
            switch (a, b) {
            case (let x as [Any], let y as [Any]): return x.count == y.count && zip(x, y).allSatisfy(same)
            case (let x as [String: Any], let y as [String: Any]):
                return Set(x.keys) == Set(y.keys) && x.keys.allSatisfy { same(x[$0]!, y[$0]!) }
            case (let x as NSNumber, let y as NSNumber): return abs(x.doubleValue - y.doubleValue) <= FidelityTests.derivedPointTolerance
            case (let x as String, let y as String): return x == y
            default: return false
            }
        }
        return same(a, b)
    }

    private func assertFaithful(_ measure: Measure, reported: Int = 0, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThan(measure.fields, 0, file: file, line: line)
        XCTAssertEqual(measure.unexplained, [], file: file, line: line)
        XCTAssertEqual(measure.reported.count, reported, "\(measure.reported)", file: file, line: line)
        XCTAssertEqual(measure.exact + measure.reported.count, measure.fields, file: file, line: line)
    }

    // MARK: - Wiki articles (mwparserfromhell)

    func testEnglishWikivoyageRoppongi() throws {
        assertFaithful(try measure("wikivoyage-en-roppongi"))
    }

    func testGermanWikivoyageKarwendel() throws {
        assertFaithful(try measure("wikivoyage-de-karwendel"))
    }

    func testFrenchWikivoyageThouars() throws {
        // The theatre's url= holds a phone number: Kiln empties it and reports it (wikitext.url).
        let measure = try measure("wikivoyage-fr-thouars")
        assertFaithful(measure, reported: 1)
        XCTAssertTrue(measure.reported.first?.contains("Théâtre de Thouars") == true, "\(measure.reported)")
    }

    func testRussianAndFrenchTemplatesInValues() throws {
        assertFaithful(try measure("wikivoyage-ru-fr-templates", keys: ["listing": ["page", "position"]]))
    }

    func testWikitravelListingTags() throws {
        assertFaithful(try measure("wikitravel-listing-tags", keys: ["listing": ["page", "position"]]))
    }

    // MARK: - Transit XML (ElementTree)

    func testNextBusRouteConfig() throws {
        assertFaithful(try measure("nextbus-actransit-22", keys: ["stop": ["route", "position"], "direction_stop": ["direction", "position"]]))
    }

    // MARK: - KML exports (lxml)

    func testGoogleMyMapsCampusWithBuildingPolygons() throws {
        assertFaithful(try measure("kml-fdu-campus"))
    }

    func testGoogleMyMapsCityGuideInRussianWithRouteLines() throws {
        assertFaithful(try measure("kml-tbilisi-mymaps"))
    }

    /// Three placemarks outside any folder (their folder is NULL, not ''), and comments inside coordinates.
    func testOpenLayersSkiResortWithPlacemarksOutsideFolders() throws {
        assertFaithful(try measure("kml-openlayers-krasnaya-polyana"))
    }

    /// No KML namespace at all: Kiln reads KML elements by local name.
    func testOpenSkiMapExportWithoutTheKMLNamespace() throws {
        assertFaithful(try measure("kml-openskimap-lenk"))
    }

    /// gx:Track is read: the flight is a line through its 66 positions, its point halfway along and its `when` times
    /// as `timestamps`, each as lxml reads them; the placemark without geometry is kept without a place.
    func testGoogleEarthFlightTracksAreReadAsLinesWithTheirTimes() throws {
        assertFaithful(try measure("kml-openlayers-flight-tracks"))
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("kml-openlayers-flight-tracks.report.json"))) as? [String: Any])
        let findings = (report["diagnostics"] as? [[String: Any]] ?? []).map { "\($0["line"] ?? "") \($0["code"] ?? "")" }
        XCTAssertEqual(findings.filter { $0.hasSuffix("kml.unsupported-geometry") }, [], "\(findings)")
        let database = try Database(path: file("kml-openlayers-flight-tracks.sqlite").path, mode: .readOnly)
        let track = try database.rows("SELECT geometry_type, json_array_length(timestamps), json_array_length(geometry, '$.coordinates') FROM place WHERE name = 'E170'")
        let text = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/kml-openlayers-flight-tracks/kml-track-part.kml"), encoding: .utf8)
        let positions = String(text.components(separatedBy: "<gx:coord>").count - 1)
        XCTAssertEqual(track.first?.values.map { $0.textValue ?? "NULL" }, ["Track", positions, positions])
    }

    // MARK: - JSON (Python's json module)

    func testPannellumTourScenesKeyedByTheirId() throws {
        assertFaithful(try measure("json-pannellum-tour", keys: ["scene": ["id"]]))
    }

    func testTateArtworksWithSortedKeysAndLateContext() throws {
        assertFaithful(try measure("json-tate-artworks", keys: ["artwork": ["acno"], "subject": ["artwork", "position"]]))
    }

    func testWikidataLabelsKeyedByEntityAndLanguage() throws {
        assertFaithful(try measure("json-wikidata-labels"))
    }

    // MARK: - Scraped HTML in a legacy encoding (lxml)

    func testSwissBusPagesInISO88591() throws {
        assertFaithful(try measure("html-biel-bus-latin1"))
    }

    // MARK: - Quoted CSV (Python's csv module)

    func testACTransitGTFSQuotedByHeaderNames() throws {
        assertFaithful(try measure("actransit-gtfs", keys: ["route": ["route_long_name", "route_id"], "agency": ["agency_id"]]))
    }
}
