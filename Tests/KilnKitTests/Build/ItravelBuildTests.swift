import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The travel-guide pipeline (`raw/itravel`): pages, hierarchy, sections, listings, outliers, the spatial index and
/// full-text search in the built bundle; a hierarchy with a cycle.
final class ItravelBuildTests: KilnTestCase {
    /// `raw/itravel` built once for the whole class (the tests only read the bundle).
    nonisolated(unsafe) private static var shared: (folder: URL, bundle: URL, outcome: BuildOutcome)?

    override class func tearDown() {
        if let shared { try? FileManager.default.removeItem(at: shared.folder) }
        shared = nil
        super.tearDown()
    }

    private func built() throws -> (bundle: URL, outcome: BuildOutcome) {
        if let shared = ItravelBuildTests.shared { return (shared.bundle, shared.outcome) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-itravel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("itravel")
        try FileManager.default.copyItem(at: KilnTestCase.repositoryRoot.appendingPathComponent("raw/itravel"), to: copy)
        let bundle = folder.appendingPathComponent("itravel.sqlite")
        let outcome = try Builder.build(try ManifestLoader.load(copy.path), options: BuildOptions(output: bundle))
        ItravelBuildTests.shared = (folder, bundle, outcome)
        return (bundle, outcome)
    }

    private func texts(_ sql: String) throws -> [String] {
        let database = try Database(path: try built().bundle.path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    func testTheSampleBuildsWithWarningsOnly() throws {
        let outcome = try built().outcome
        XCTAssertTrue(outcome.built, outcome.diagnostics.filter { $0.severity == .error }.map(\.formatted).joined(separator: "\n"))
        // Rows only: the tables' bytes are BundleSizeCommandTests' (against SQLite's dbstat).
        XCTAssertEqual(outcome.tables.map { TableCount(name: $0.name, rows: $0.rows) },
                       [TableCount(name: "page", rows: 24), TableCount(name: "page_alias", rows: 3),
                        TableCount(name: "section", rows: 132), TableCount(name: "listing", rows: 160)])
        let codes = outcome.diagnostics.map { "\($0.code) (\($0.severity.rawValue))" }.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        XCTAssertEqual(codes, [
            "listing.duplicate (warning)": 2, "listing.far-from-page (warning)": 1, "listing.outlier (warning)": 1,
            "listing.no-name (warning)": 1, "page.missing-parent (warning)": 1, "wikitext.coordinates-range (warning)": 1,
            "wikitext.email (warning)": 1, "wikitext.tag (warning)": 1, "wikitext.url (warning)": 1,
            "wikitext.coordinates (info)": 2, "wikitext.unknown-parameter (info)": 1,
        ])
        XCTAssertEqual(outcome.diagnostics.first { $0.code == "page.missing-parent" }?.formatted,
                       "itravel-export.xml:1544: warning: Manila: its parent \"Metro Manila\" is not a page of the export; shipped without a parent [page.missing-parent]")
    }

    func testHierarchyOfThreeLevelsAndMore() throws {
        // Breadcrumbs from the bottom up, through parent_id.
        XCTAssertEqual(try texts("""
            WITH RECURSIVE up(id, title, depth) AS (SELECT id, title, 0 FROM page WHERE title = 'Upper West Side'
              UNION ALL SELECT p.parent_id, q.title, depth + 1 FROM up JOIN page AS p ON p.id = up.id JOIN page AS q ON q.id = p.parent_id)
            SELECT group_concat(title, ' < ') FROM (SELECT title FROM up ORDER BY depth)
            """), ["Upper West Side < Manhattan < New York City < North America"])
        XCTAssertEqual(try texts("SELECT c.title FROM page AS c JOIN page AS p ON p.id = c.parent_id WHERE p.title = 'Bavaria' ORDER BY c.title"),
                       ["Munich", "Weißenburg in Bayern"])
        XCTAssertEqual(try texts("SELECT title FROM page WHERE parent_id IS NULL ORDER BY title"),
                       ["Aalborg", "Asia", "Chernihiv", "Europe", "Manila", "Nelson (New Zealand)", "North America", "Vladimir"])
        XCTAssertEqual(try texts("SELECT a.alias, p.title FROM page_alias AS a JOIN page AS p ON p.id = a.page_id ORDER BY a.alias"),
                       ["Big Apple|New York City", "München|Munich", "NYC|New York City"])
        XCTAssertEqual(try texts("SELECT count(*) FROM page WHERE title LIKE 'Talk:%'"), ["0"])
    }

    func testPagesCarryTheirMarkerAndListingCount() throws {
        XCTAssertEqual(try texts("SELECT title, lat, lon, listing_count FROM page WHERE title IN ('Karwendel', 'Thouars', 'Dalat', 'Chernihiv') ORDER BY title"), [
            "Chernihiv|51.489534|31.30309|1",       // no coordinates of its own: the median of its listings'
            "Dalat|NULL|NULL|17",                    // neither
            "Karwendel|47.41139|11.4375|69",         // {{GeoData}}
            "Thouars|46.9758|-0.2142|28",            // {{Info Ville}}
        ])
        XCTAssertEqual(try texts("SELECT sum(listing_count) = (SELECT count(*) FROM listing) FROM page"), ["1"])
    }

    func testSectionsAndListingsBelongTogether() throws {
        XCTAssertEqual(try texts("""
            SELECT s.number, s.level, s.title, (SELECT title FROM section AS o WHERE o.page_id = s.page_id AND o.number = s.parent)
            FROM section AS s JOIN page AS p ON p.id = s.page_id WHERE p.title = 'Upper West Side' ORDER BY s.number
            """), ["0|0|NULL|NULL", "1|2|See|NULL", "2|3|Museums|See", "3|2|Eat|NULL", "4|2|Sleep|NULL"])
        XCTAssertEqual(try texts("""
            SELECT l.name, s.title, l.category FROM listing AS l JOIN section AS s ON s.page_id = l.page_id AND s.number = l.section
            JOIN page AS p ON p.id = l.page_id WHERE p.title = 'Karwendel' AND l.name IN ('Pleisenspitze', 'Gaisalm', 'Falkenhütte') ORDER BY l.name
            """), ["Falkenhütte|Hütten im Norden|sleep", "Gaisalm|Almen im Osten|eat", "Pleisenspitze|Karwendel-Hauptkette|see"])
        XCTAssertEqual(try texts("SELECT category, count(*) FROM listing GROUP BY category ORDER BY category"),
                       ["buy|1", "do|7", "drink|4", "eat|55", "other|2", "see|58", "sleep|33"])
    }

    func testExactFieldsOfRealListings() throws {
        XCTAssertEqual(try texts("""
            SELECT name, alt, address, directions, phone, url, hours, price, lat, lon, description FROM listing WHERE name = 'Tölzer Hütte'
            """), ["Tölzer Hütte|NULL|Tölzer Hütte, Eben 1, A-6215 Hinterriß|am Schafreiter|(0)664 / 180 179 0|http://www.toelzer-huette.at/|Mitte Mai Juni bis Mitte Oktober|NULL|47.5042|11.4928|NULL"])
        XCTAssertEqual(try texts("SELECT name, address, phone, url, price, checkin, lat, lon FROM listing WHERE name = 'Camping municipal'"),
                       ["Camping municipal|13 Rue de la Grande Côte de Crevant|+33 5 49 66 17 99|http://www.ville-thouars.fr/decouvrir/camping.htm|3.2 €|NULL|46.979967|-0.219622"])
        XCTAssertEqual(try texts("SELECT name, alt, directions, price FROM listing WHERE name = 'Valley of Love'"),
                       ["Valley of Love|Thung Lũng Tình Yêu|NULL|NULL"])
        XCTAssertEqual(try texts("SELECT name, url, email, category FROM listing WHERE name LIKE 'Elbj%'"),
                       ["Elbjørn|http://www.isbryderen-elbjorn.dk|info@isbryderen-elbjorn.dk|see"])
    }

    func testFieldErrorsEmptyTheFieldAndKeepTheListing() throws {
        XCTAssertEqual(try texts("SELECT name, lat, lon, checkin FROM listing WHERE name = 'Hotel Belleclaire'"), ["Hotel Belleclaire|NULL|-73.9818|3PM"])
        XCTAssertEqual(try texts("SELECT name, url, email FROM listing WHERE name = 'Théâtre de Thouars'"),
                       ["Théâtre de Thouars|NULL|silvousplait@theatre-thouars.com"])
        XCTAssertEqual(try texts("SELECT lat, lon FROM listing WHERE name = 'Children''s Museum of Manhattan'"), ["NULL|NULL"])
    }

    func testOutliersAreFlagged() throws {
        XCTAssertEqual(try texts("SELECT p.title, l.name, l.distance_km FROM listing AS l JOIN page AS p ON p.id = l.page_id WHERE l.outlier = 1 ORDER BY l.name"),
                       ["Upper West Side|Dakota Building|10385.8", "Manhattan|Jones Beach State Park|43.9"])
        XCTAssertEqual(try texts("SELECT max(distance_km) FROM listing WHERE outlier = 0 AND page_id = (SELECT id FROM page WHERE title = 'Karwendel')"), ["21.2"])
    }

    func testIdsAreStableIntegersAndDuplicatesStayApart() throws {
        XCTAssertEqual(try texts("SELECT count(*), count(DISTINCT id), min(id) > 0, max(id) < 4503599627370496 FROM listing"), ["160|160|1|1"])
        XCTAssertEqual(try texts("SELECT id FROM listing WHERE name = 'Pleisenspitze'"),
                       [String(StableListingID.make(page: "Karwendel", path: ["Sehenswürdigkeiten", "Berge und Gipfel", "Karwendel-Hauptkette"],
                                                    name: "Pleisenspitze", ordinal: 0))])
        XCTAssertEqual(try texts("SELECT address FROM listing WHERE name = 'Gray''s Papaya' ORDER BY address"), ["2090 Broadway", "539 8th Ave"])
    }

    func testSpatialQueryForARegionAndCategory() throws {
        XCTAssertEqual(try texts("""
            SELECT l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id
            WHERE r.min_lat >= 47.35 AND r.max_lat <= 47.45 AND r.min_lon >= 11.40 AND r.max_lon <= 11.62
              AND l.category = 'sleep' AND l.outlier = 0 ORDER BY l.name
            """), ["Birkkarhütte", "Falkenhütte", "Hallerangerhaus", "Karwendelhaus", "Lalidererspitzen-Biwak", "Lamsenjochhütte", "Plumsjochhütte"])
        XCTAssertEqual(try texts("SELECT count(*) FROM listing_rtree"), try texts("SELECT count(*) FROM listing WHERE lat IS NOT NULL AND lon IS NOT NULL"))
        // One marker per page for zoomed-out maps: the pages inside western Europe.
        XCTAssertEqual(try texts("""
            SELECT p.title FROM page_rtree AS r JOIN page AS p ON p.id = r.id
            WHERE r.min_lat >= 45 AND r.max_lat <= 52 AND r.min_lon >= -2 AND r.max_lon <= 12 ORDER BY p.title
            """), ["Alpen", "Bavaria", "Deux-Sèvres", "Europe", "France", "Germany", "Karwendel", "Munich", "Thouars"])
    }

    func testFullTextSearchIgnoresAccents() throws {
        XCTAssertEqual(try texts("SELECT l.name FROM listing_search AS s JOIN listing AS l ON l.id = s.id WHERE listing_search MATCH 'hutte AND karwendel' ORDER BY l.name"),
                       ["Nördlinger Hütte"])
        XCTAssertEqual(try texts("SELECT count(*) FROM listing_search WHERE listing_search MATCH 'eglise'"), ["2"])
    }

    func testBuildingTwiceGivesIdenticalBytes() throws {
        let (bundle, _) = try built()
        let copy = try copyRepositoryFolder("raw/itravel", as: "again")
        let output = temporaryDirectory.appendingPathComponent("again.sqlite")
        XCTAssertTrue(try Builder.build(try ManifestLoader.load(copy.path), options: BuildOptions(output: output)).built)
        XCTAssertEqual(try Data(contentsOf: output), try Data(contentsOf: bundle))
    }

    func testHierarchyWithACycleIsAnError() throws {
        let folder = try copyRepositoryFolder("raw/itravel", as: "cycle")
        let export = folder.appendingPathComponent("itravel-export.xml")
        let text = try String(contentsOf: export, encoding: .utf8)
        // North America becomes part of New York City (through its alias NYC), which is part of North America.
        let cyclic = text.replacingOccurrences(of: "'''North America''' is a continent.", with: "'''North America''' is a continent.\n{{IsPartOf|NYC}}")
        XCTAssertNotEqual(cyclic, text)
        try cyclic.write(to: export, atomically: true, encoding: .utf8)
        let output = temporaryDirectory.appendingPathComponent("cycle.sqlite")
        let outcome = try Builder.build(try ManifestLoader.load(folder.path), options: BuildOptions(output: output))
        XCTAssertFalse(outcome.built)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        XCTAssertEqual(outcome.diagnostics.filter { $0.severity == .error }.map(\.formatted), [
            "itravel-export.xml:220: error: North America is its own ancestor: North America → New York City → North America [page.cycle]",
            "itravel-export.xml:1680: error: New York City is its own ancestor: New York City → North America → New York City [page.cycle]",
        ])
    }
}
