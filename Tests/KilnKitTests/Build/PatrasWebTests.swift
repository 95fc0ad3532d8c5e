import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// raw/patras-web, built from XML, HTML and KML, gives the same bundle as raw/patras from its text files — plus the
/// campus places — and reports exactly the mess its SOURCES.md says was put in.
final class PatrasWebTests: KilnTestCase {
    private struct Builds {
        let web: BuildOutcome
        let text: BuildOutcome
    }

    /// Both pipelines are built once for the whole class, into a folder removed at the end.
    nonisolated(unsafe) private static var cached: Builds?
    nonisolated(unsafe) private static var folder: URL?

    override class func tearDown() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
        folder = nil
        cached = nil
        super.tearDown()
    }

    private func builds() throws -> Builds {
        if let cached = PatrasWebTests.cached { return cached }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-patras-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        PatrasWebTests.folder = folder
        func build(_ path: String, _ name: String) throws -> BuildOutcome {
            let copy = folder.appendingPathComponent(name)
            try FileManager.default.copyItem(at: KilnTestCase.repositoryRoot.appendingPathComponent(path), to: copy)
            let output = folder.appendingPathComponent("out").appendingPathComponent("\(name).sqlite")
            return try Builder.build(try ManifestLoader.load(copy.path), options: BuildOptions(output: output))
        }
        let builds = Builds(web: try build("raw/patras-web", "patras-web"), text: try build("raw/patras", "patras"))
        PatrasWebTests.cached = builds
        return builds
    }

    private func describe(_ diagnostics: [Diagnostic]) -> String { diagnostics.map(\.formatted).joined(separator: "\n") }

    private func open(_ url: URL) throws -> Database { try Database(path: url.path, mode: .readOnly) }

    private func texts(_ database: Database, _ sql: String) throws -> [String] {
        try database.rows(sql).map { $0.values.first?.textValue ?? "NULL" }
    }

    /// Every row of `table`, each as its columns' SQL literals, sorted.
    private func rows(_ database: Database, _ table: String) throws -> [String] {
        let columns = try database.rows("SELECT name FROM pragma_table_info(\(quoteLiteral(table))) ORDER BY cid")
            .compactMap { $0.values.first?.textValue }
        XCTAssertFalse(columns.isEmpty, table)
        let expression = columns.map { "quote(\(quoteIdentifier($0)))" }.joined(separator: " || '|' || ")
        return try texts(database, "SELECT \(expression) FROM \(quoteIdentifier(table))").sorted()
    }

    // MARK: The builds

    func testBothBuild() throws {
        let builds = try builds()
        XCTAssertTrue(builds.web.built, describe(builds.web.diagnostics))
        XCTAssertTrue(builds.text.built, describe(builds.text.diagnostics))
        XCTAssertEqual(builds.web.bundle, "patras-web")
        XCTAssertEqual(builds.web.diagnostics.filter { $0.severity == .error }.count, 0, describe(builds.web.diagnostics))
        XCTAssertEqual(builds.web.tables.map(\.name), ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable", "place"])
        let database = try open(builds.web.output)
        XCTAssertEqual(try texts(database, "PRAGMA integrity_check"), ["ok"])
        XCTAssertEqual(try database.rows("PRAGMA foreign_key_check").count, 0)
        // lines.xml, three stop pages, 21 timetable pages, Routes_UTF8.txt and places.kml.
        XCTAssertEqual(builds.web.inputs.count, 1 + 3 + 21 + 1 + 1, builds.web.inputs.keys.sorted().joined(separator: ", "))
        XCTAssertEqual(builds.web.inputs.keys.filter { !$0.hasPrefix("timetables/") }.sorted(),
                       ["Routes_UTF8.txt", "lines.xml", "places.kml", "stops-1.xml", "stops-2.xml", "stops-3.xml"])
    }

    func testTheTwoBundlesHoldTheSameRows() throws {
        let builds = try builds()
        XCTAssertTrue(builds.web.built && builds.text.built)
        let web = try open(builds.web.output), text = try open(builds.text.output)
        for table in ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"] {
            let webRows = try rows(web, table), textRows = try rows(text, table)
            XCTAssertFalse(webRows.isEmpty, table)
            XCTAssertEqual(webRows.count, textRows.count, table)
            let onlyWeb = Set(webRows).subtracting(textRows).sorted(), onlyText = Set(textRows).subtracting(webRows).sorted()
            XCTAssertEqual(onlyWeb, [], "\(table): rows only in the web bundle")
            XCTAssertEqual(onlyText, [], "\(table): rows only in the text bundle")
            XCTAssertEqual(webRows, textRows, table)
        }
        XCTAssertEqual(try texts(web, "SELECT count(*) FROM stop"), ["168"])
        XCTAssertEqual(try texts(web, "SELECT count(*) FROM line"), ["21"])
    }

    func testTheSameRowsThroughAttach() throws {
        let builds = try builds()
        let web = try open(builds.web.output)
        _ = try web.rows("ATTACH DATABASE \(quoteLiteral(builds.text.output.path)) AS text")
        for table in ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"] {
            let name = quoteIdentifier(table)
            XCTAssertEqual(try texts(web, "SELECT count(*) FROM (SELECT * FROM main.\(name) EXCEPT SELECT * FROM text.\(name))"), ["0"], table)
            XCTAssertEqual(try texts(web, "SELECT count(*) FROM (SELECT * FROM text.\(name) EXCEPT SELECT * FROM main.\(name))"), ["0"], table)
        }
    }

    // MARK: What the web build reports

    func testExactlyOneUnmatchedLine() throws {
        let diagnostics = try builds().web.diagnostics
        let unmatched = diagnostics.filter { $0.code == "extract.unmatched" }
        XCTAssertEqual(unmatched.count, 1, describe(diagnostics))
        let finding = try XCTUnwrap(unmatched.first)
        XCTAssertEqual(finding.severity, .warning)
        XCTAssertEqual(finding.provenance, Provenance(file: "timetables/line-1.1.html", line: 28))
        XCTAssertEqual(finding.message,
                       "no row pattern captured this line that looks like data: \"Τελευταίο δρομολόγιο από Πλατεία Γεωργίου στις 23:15\"")
    }

    func testRepeatedStopsAndLinesAreDuplicateRows() throws {
        let diagnostics = try builds().web.diagnostics
        let duplicates = diagnostics.filter { $0.code == "duplicate-row" }
        XCTAssertTrue(duplicates.allSatisfy { $0.severity == .warning }, describe(duplicates))
        // The 4 stops repeated at the start of page 2 and the 3 at the start of page 3.
        let stops = duplicates.filter { $0.message.hasPrefix("stop code ") }
        XCTAssertEqual(stops.map { $0.message.components(separatedBy: "\"")[1] }, ["0610", "0612", "0615", "0618", "1509", "1601", "1602"],
                       describe(stops))
        XCTAssertEqual(stops.map { $0.provenance?.file }, Array(repeating: "stops-2.xml", count: 4) + Array(repeating: "stops-3.xml", count: 3))
        // Line 6.2 listed twice in lines.xml.
        let lines = duplicates.filter { $0.message.contains("\"6.2\"") && $0.provenance?.file == "lines.xml" }
        XCTAssertFalse(lines.isEmpty, describe(duplicates))
        XCTAssertTrue(duplicates.allSatisfy { ["stops-2.xml", "stops-3.xml", "lines.xml"].contains($0.provenance?.file ?? "") },
                      describe(duplicates))
        // Nothing else but the unmatched note, the elements a source leaves to another (`xml.unread`),
        // and the sample's routing-guarantee warning (README, "The routing guarantee").
        XCTAssertEqual(Set(diagnostics.map(\.code)), ["duplicate-row", "extract.unmatched", "route.transfers", "xml.unread"], describe(diagnostics))
    }

    // MARK: Places

    func testPlaces() throws {
        let database = try open(try builds().web.output)
        XCTAssertEqual(try texts(database, "SELECT count(*) FROM place"), ["20"])
        XCTAssertEqual(try texts(database, "SELECT category || ': ' || count(*) FROM place GROUP BY category ORDER BY category"),
                       ["Βιβλιοθήκες: 2", "Εστίαση: 3", "Μουσεία: 1", "Τμήματα: 12", "Υγεία: 2"])
        XCTAssertEqual(try texts(database, "SELECT description FROM place WHERE name = 'Τμήμα Μαθηματικών'"), ["Κτίριο Β\nΤηλ. 2610 996 000"])
        XCTAssertEqual(try texts(database, "SELECT quote(description) FROM place WHERE name = 'Κυλικείο Βιβλιοθήκης'"), ["NULL"])
        XCTAssertEqual(try texts(database, "SELECT typeof(latitude) || ' ' || latitude || ' ' || longitude FROM place WHERE category = 'Μουσεία'"),
                       ["real 38.2857 21.7836"])
    }

    func testPlaceSearchFindsADescriptionWord() throws {
        let database = try open(try builds().web.output)
        XCTAssertEqual(try texts(database, "SELECT name FROM place_search WHERE place_search MATCH 'Λέσχη' ORDER BY name"), ["Φοιτητικό Εστιατόριο"])
        XCTAssertEqual(try texts(database, "SELECT category FROM place_search WHERE place_search MATCH 'επειγόντων'"), ["Υγεία"])
        // A link's label is part of the text (the address itself is not kept).
        XCTAssertEqual(try texts(database, "SELECT name FROM place_search WHERE place_search MATCH '\"lis.upatras.gr\"'"),
                       ["Βιβλιοθήκη & Κέντρο Πληροφόρησης"])
    }
}
