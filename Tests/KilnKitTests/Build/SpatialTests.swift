import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The `spatial` table declaration (an R*Tree in the bundle, compared by `kiln check`) and the SQL functions
/// `kiln_distance_km` and `kiln_median` every connection has.
final class SpatialTests: KilnTestCase {
    private let places = """
        1;Eiffel Tower;48.8584;2.2945
        2;Louvre;48.8606;2.3376
        3;Big Ben;51.5007;-0.1246
        4;Nowhere;;;
        5;Notre-Dame;48.8530;2.3499

        """

    private func manifest(spatial: String = #"spatial: { name: "place_rtree", latitude: "lat", longitude: "lon" },"#,
                          idType: String = "integer", latType: String = "real") -> String {
        """
        { bundle: "places", schemaVersion: 1,
          tables: [{ name: "place",
            columns: [{ name: "id", type: "\(idType)" }, { name: "name", type: "text", notNull: true },
                      { name: "lat", type: "\(latType)" }, { name: "lon", type: "real" }],
            primaryKey: ["id"],
            \(spatial)
          }],
          sources: [{ name: "places", format: "delimited", path: "places.txt", options: { fields: ["id", "name", "lat", "lon"] },
                      into: "place", columns: { id: "id", name: "name", lat: { field: "lat", normalize: ["trim", "emptyToNull"] },
                                                lon: { field: "lon", normalize: ["trim", "emptyToNull"] } } }],
        }
        """
    }

    private func pipeline(_ text: String) throws -> CompiledPipeline {
        try write(places, to: "places/places.txt")
        try write(text, to: "places/kiln.json5")
        return try ManifestLoader.load(temporaryDirectory.appendingPathComponent("places").path)
    }

    private func bundle() throws -> (URL, CompiledPipeline) {
        let pipeline = try pipeline(manifest())
        let output = temporaryDirectory.appendingPathComponent("places.sqlite")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(outcome.built, outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        return (output, pipeline)
    }

    private func texts(_ database: Database, _ sql: String) throws -> [String] {
        try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    // MARK: - SQL functions

    func testDistanceInKilometres() throws {
        let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
        XCTAssertEqual(try texts(database, "SELECT round(kiln_distance_km(48.8566, 2.3522, 51.5074, -0.1278), 1)"), ["343.6"])
        XCTAssertEqual(try texts(database, "SELECT kiln_distance_km(40.7870, -73.9754, 40.7870, -73.9754)"), ["0.0"])
        XCTAssertEqual(try texts(database, "SELECT round(kiln_distance_km(0, 0, 0, 180))"), ["20015.0"])
        XCTAssertEqual(try texts(database, "SELECT kiln_distance_km(NULL, 1, 2, 3), kiln_distance_km('x', 1, 2, 3), kiln_distance_km('47.5', 11, 47.5, 11)"),
                       ["NULL|NULL|0.0"])
        XCTAssertEqual(KilnSQLFunctions.distance(48.8566, 2.3522, 51.5074, -0.1278), 343.56, accuracy: 0.01)
    }

    func testMedianIgnoresNullsAndText() throws {
        let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
        try database.execute("CREATE TABLE v (g TEXT, x); INSERT INTO v VALUES ('odd', 3), ('odd', 1), ('odd', 100), ('even', 4), ('even', 1), ('even', 2), ('even', 10), ('nulls', NULL), ('nulls', 'abc'), ('one', 7.5)")
        XCTAssertEqual(try texts(database, "SELECT g, kiln_median(x) FROM v GROUP BY g ORDER BY g"), ["even|3.0", "nulls|NULL", "odd|3.0", "one|7.5"])
        XCTAssertEqual(try texts(database, "SELECT kiln_median(x) FROM v WHERE 0"), ["NULL"])
        let many = (1...1000).map { "(\($0))" }.joined(separator: ",")
        try database.execute("CREATE TABLE n (x); INSERT INTO n VALUES \(many)")
        XCTAssertEqual(try texts(database, "SELECT kiln_median(x) FROM n"), ["500.5"])
    }

    func testFunctionsAreDeterministicSoIndexesMayUseThem() throws {
        let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
        try database.execute("CREATE TABLE p (lat REAL, lon REAL); CREATE INDEX far ON p (kiln_distance_km(lat, lon, 0, 0))")
    }

    // MARK: - The declaration

    func testSpatialIndexIsBuiltAndQueried() throws {
        let (output, _) = try bundle()
        let database = try Database(path: output.path, mode: .readOnly, functions: KilnSQLFunctions.all)
        XCTAssertEqual(try texts(database, "SELECT sql FROM sqlite_schema WHERE name = 'place_rtree'"),
                       ["CREATE VIRTUAL TABLE \"place_rtree\" USING rtree(id, min_lat, max_lat, min_lon, max_lon)"])
        XCTAssertEqual(try texts(database, "SELECT count(*) FROM place_rtree"), ["4"])
        // Paris only: the region query goes through the R*Tree, the exact coordinates come from the table.
        XCTAssertEqual(try texts(database, """
            SELECT p.name FROM place_rtree AS r JOIN place AS p ON p.id = r.id
            WHERE r.min_lat >= 48.8 AND r.max_lat <= 48.9 AND r.min_lon >= 2.2 AND r.max_lon <= 2.4 ORDER BY p.name
            """), ["Eiffel Tower", "Louvre", "Notre-Dame"])
        XCTAssertEqual(try texts(database, "SELECT rtreecheck('place_rtree')"), ["ok"])
    }

    func testCheckComparesTheSpatialIndex() throws {
        let (output, pipeline) = try bundle()
        let report = try BundleChecker(pipeline: pipeline).check(output)
        XCTAssertTrue(report.passed, report.diagnostics.map(\.formatted).joined(separator: "\n"))

        let dropped = try edited(output, "dropped.sqlite", "DROP TABLE place_rtree")
        let findings = try BundleChecker(pipeline: pipeline).check(dropped).diagnostics.filter { $0.severity == .error }
        XCTAssertEqual(findings.map(\.code), ["schema.spatial"])
        XCTAssertEqual(findings.map(\.message), ["spatial index place_rtree is missing in the bundle"])

        let redeclared = try edited(output, "other.sqlite", "DROP TABLE place_rtree; CREATE VIRTUAL TABLE place_rtree USING rtree(id, a, b)")
        XCTAssertEqual(try BundleChecker(pipeline: pipeline).check(redeclared).diagnostics.filter { $0.severity == .error }.map(\.code),
                       ["schema.spatial"])
    }

    func testDeclarationIsChecked() throws {
        XCTAssertThrowsError(try pipeline(manifest(idType: "text"))) { error in
            XCTAssertTrue("\(error)".contains("manifest error at tables[0].spatial: an R*Tree keys its entries by the row's id: table \"place\" needs a primary key of one integer column"), "\(error)")
        }
        XCTAssertThrowsError(try pipeline(manifest(latType: "text"))) { error in
            XCTAssertTrue("\(error)".contains("manifest error at tables[0].spatial.latitude: the latitude column \"lat\" must be of type real"), "\(error)")
        }
        XCTAssertThrowsError(try pipeline(manifest(spatial: #"spatial: { name: "place", latitude: "lat", longitude: "lon" },"#))) { error in
            XCTAssertTrue("\(error)".contains("manifest error at tables[0].spatial.name: \"place\" is already the name of a table"), "\(error)")
        }
        XCTAssertThrowsError(try pipeline(manifest(spatial: #"spatial: { name: "r", latitude: "lat", longitude: "longitude" },"#))) { error in
            XCTAssertTrue("\(error)".contains("manifest error at tables[0].spatial.longitude: table \"place\" has no column \"longitude\""), "\(error)")
        }
        XCTAssertThrowsError(try pipeline(manifest(spatial: #"spatial: { name: "r", lat: "lat" },"#))) { error in
            XCTAssertTrue("\(error)".contains("unknown key \"lat\""), "\(error)")
        }
    }

    func testSchemaSQLOfTheDeclaration() throws {
        let spatial = SpatialSpec(name: "listing_rtree", latitude: "lat", longitude: "lon")
        let pipeline = try pipeline(manifest())
        let table = try XCTUnwrap(pipeline.manifest.table("place"))
        XCTAssertEqual(SchemaSQL.fillSpatial(spatial, of: table),
                       "INSERT INTO \"listing_rtree\" (id, min_lat, max_lat, min_lon, max_lon) SELECT \"id\", \"lat\", \"lat\", \"lon\", \"lon\" FROM main.\"place\" WHERE typeof(\"lat\") IN ('integer', 'real') AND typeof(\"lon\") IN ('integer', 'real') ORDER BY \"id\"")
    }
}
