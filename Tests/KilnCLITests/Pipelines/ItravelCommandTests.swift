import Foundation
import XCTest
import KilnC
import KilnKit

/// The travel-guide pipeline end to end: `kiln build raw/itravel`, `kiln check` on the bundle, `kiln export geojson`
/// parsed back, the map query in SQL, and `kiln extract` on the MediaWiki export.
final class ItravelCommandTests: CLITestCase {
    private func buildSample() throws -> Run {
        try copy("raw/itravel", to: "raw/itravel")
        return try kiln("build", "raw/itravel")
    }

    func testBuildReportsRowsAndFindings() throws {
        let run = try buildSample()
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("""
            built build/itravel.sqlite (bundle itravel)
              page        24 rows
              page_alias  3 rows
              section     132 rows
              listing     160 rows
            size: 
            """), run.stderr)
        XCTAssertTrue(run.stderr.contains("""
            target android 24 (SQLite 3.9.0): build/itravel.android.sqlite
            target ios 15 (SQLite 3.35.0): build/itravel.sqlite
            diagnostics: 0 errors, 10 warnings, 3 info

            """), run.stderr)
        XCTAssertTrue(run.stderr.contains("  listing.far-from-page (warning) ×1\n    raw/itravel/itravel-export.xml:1758: Upper West Side: listing \"Dakota Building\" at 40.7767, 73.9761 is 10385.8 km from the page's position; flagged as an outlier\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("raw/itravel/itravel-export.xml:1275: Thouars: listing \"Théâtre de Thouars\": url \"http://05 49 66 24 24\" is not a web address; the field is left empty"), run.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("build/itravel.report.json").path))
    }

    func testCheckPassesOnTheBuiltBundle() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let run = try kiln("check", "build/itravel.sqlite")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("check build/itravel.sqlite with raw/itravel/kiln.json5\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  schema     passed (5 checks)\n"), run.stdout)
        XCTAssertTrue(run.stdout.contains("warning: Upper West Side: listing \"Dakota Building\" at 40.7767, 73.9761 is 10385.8 km from the page's position; flagged as an outlier [listing.far-from-page]"), run.stdout)
        XCTAssertTrue(run.stdout.contains("not run on a bundle: table alias_entry is not shipped"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("passed: 0 errors, 5 warnings, 0 info\n"), run.stdout)
    }

    func testCheckFailsWhenTheSpatialIndexIsMissing() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let database = try Database(path: file("build/itravel.sqlite").path, mode: .readWrite)
        try database.execute("DROP TABLE listing_rtree")
        try database.close()
        let run = try kiln("check", "build/itravel.sqlite")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("error: spatial index listing_rtree is missing in the bundle [schema.spatial]"), run.stdout)
    }

    func testGeoJSONExportParsesBack() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let run = try kiln("export", "geojson", "build/itravel.sqlite", "--out", "map")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "wrote map/listings.geojson\nwrote map/pages.geojson\n")
        func collection(_ name: String) throws -> [[String: Any]] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file("map/" + name))) as? [String: Any]
            XCTAssertEqual(object?["type"] as? String, "FeatureCollection")
            return try XCTUnwrap(object?["features"] as? [[String: Any]])
        }
        let listings = try collection("listings.geojson")
        XCTAssertEqual(listings.count, 113)
        let birkkar = try XCTUnwrap(listings.first { ($0["properties"] as? [String: Any])?["name"] as? String == "Birkkarspitze" })
        XCTAssertEqual((birkkar["geometry"] as? [String: Any])?["coordinates"] as? [Double], [11.43772, 47.41136])
        XCTAssertEqual((birkkar["properties"] as? [String: Any])?["category"] as? String, "see")
        XCTAssertEqual((birkkar["properties"] as? [String: Any])?["page"] as? String, "Karwendel")
        XCTAssertNotNil(birkkar["id"] as? Int)
        let pages = try collection("pages.geojson")
        XCTAssertEqual(pages.count, 17)
        let karwendel = try XCTUnwrap(pages.first { ($0["properties"] as? [String: Any])?["title"] as? String == "Karwendel" })
        XCTAssertEqual(karwendel["id"] as? Int, 100)
        XCTAssertEqual((karwendel["geometry"] as? [String: Any])?["coordinates"] as? [Double], [11.4375, 47.41139])
        XCTAssertEqual((karwendel["properties"] as? [String: Any])?["listing_count"] as? Int, 69)
    }

    func testMapQueryThroughSQL() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let database = try Database(path: file("build/itravel.sqlite").path, mode: .readOnly)
        let rows = try database.rows("""
            SELECT l.name FROM listing_rtree AS r JOIN listing AS l ON l.id = r.id
            WHERE r.min_lat >= 46.97 AND r.max_lat <= 46.98 AND r.min_lon >= -0.22 AND r.max_lon <= -0.21
              AND l.category = 'see' AND l.outlier = 0
            ORDER BY l.name
            """)
        XCTAssertEqual(rows.map { $0.values.first?.textValue ?? "" }, [
            "Chapelle Jeanne d'Arc", "Château des ducs de La Trémoille", "Hotel Tyndo", "Parc Imbert", "Tour Porte au Prévost",
            "Tour du Prince de Galles", "Église Saint-Laon", "Église Saint-Médard",
        ])
    }

    func testExtractShowsTheListingsOfTheExport() throws {
        try copy("raw/itravel", to: "raw/itravel")
        let run = try kiln("extract", "guide.listing", "raw/itravel/itravel-export.xml", "--manifest", "raw/itravel", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((object["records"] as? [Any])?.count, 160)
        let aliases = try kiln("extract", "guide.alias", "raw/itravel/itravel-export.xml", "--manifest", "raw/itravel")
        XCTAssertTrue(aliases.stdout.contains("München    0          Munich"), aliases.stdout)
    }
}
