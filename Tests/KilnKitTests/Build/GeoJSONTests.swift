import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The `geojson` export writer: a FeatureCollection any map viewer opens, parsed back here.
final class GeoJSONTests: KilnTestCase {
    /// A bundle with one table of places, and a manifest exporting `query` as `out.geojson` with `options`.
    private func export(_ query: String, options: String = "", rows: String) throws -> (URL, Manifest) {
        let folder = temporaryDirectory.appendingPathComponent("geo")
        try write(rows, to: "geo/places.txt")
        try write("""
            { bundle: "geo", schemaVersion: 1,
              tables: [{ name: "place", columns: [{ name: "id", type: "integer" }, { name: "name", type: "text" },
                         { name: "lat", type: "real" }, { name: "lon", type: "real" }, { name: "stars", type: "integer" }],
                         primaryKey: ["id"] }],
              sources: [{ name: "p", format: "delimited", path: "places.txt", options: { fields: ["id", "name", "lat", "lon", "stars"] },
                          into: "place", columns: { id: "id", name: { field: "name", normalize: [] },
                            lat: { field: "lat", normalize: ["trim", "emptyToNull"] }, lon: { field: "lon", normalize: ["trim", "emptyToNull"] },
                            stars: { field: "stars", normalize: ["trim", "emptyToNull"] } } }],
              exports: [{ name: "map", files: [{ path: "out.geojson", format: "geojson", \(options) query: \(JSONText.string(query)) }] }],
            }
            """, to: "geo/kiln.json5")
        let pipeline = try ManifestLoader.load(folder.path)
        let bundle = temporaryDirectory.appendingPathComponent("geo.sqlite")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: bundle))
        XCTAssertTrue(outcome.built, outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        let written = try Exporter(manifest: pipeline.manifest).export("map", from: bundle, to: temporaryDirectory.appendingPathComponent("out"))
        return (try XCTUnwrap(written.first), pipeline.manifest)
    }

    private func parse(_ url: URL) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    func testFeaturesParseBackWithLongitudeFirst() throws {
        let rows = "1;Café \"Zur Kanne\" \\ Bar;49.0304;10.9719;3\n2;Ταβέρνα;38.2466;21.7346;;\n3;No place;;;1\n"
        let (url, _) = try export("SELECT id, lat, lon, name, stars FROM place ORDER BY id", rows: rows)
        let collection = try parse(url)
        XCTAssertEqual(collection["type"] as? String, "FeatureCollection")
        let features = try XCTUnwrap(collection["features"] as? [[String: Any]])
        XCTAssertEqual(features.count, 3)
        XCTAssertEqual(features.map { $0["type"] as? String }, ["Feature", "Feature", "Feature"])
        XCTAssertEqual(features.map { $0["id"] as? Int }, [1, 2, 3])
        let geometry = try XCTUnwrap(features[0]["geometry"] as? [String: Any])
        XCTAssertEqual(geometry["type"] as? String, "Point")
        XCTAssertEqual(geometry["coordinates"] as? [Double], [10.9719, 49.0304])
        XCTAssertTrue(features[2]["geometry"] is NSNull)
        let properties = features.map { $0["properties"] as? [String: Any] ?? [:] }
        XCTAssertEqual(properties[0]["name"] as? String, "Café \"Zur Kanne\" \\ Bar")
        XCTAssertEqual(properties[0]["stars"] as? Int, 3)
        XCTAssertEqual(properties[1]["name"] as? String, "Ταβέρνα")
        XCTAssertTrue(properties[1]["stars"] is NSNull)
        XCTAssertEqual(Set(properties[0].keys), ["name", "stars"], "lat, lon and id are not repeated as properties")
    }

    func testLayoutIsOneFeaturePerLineAndDeterministic() throws {
        let (url, manifest) = try export("SELECT id, lat, lon, name FROM place ORDER BY id", rows: "1;A;1.5;2;0\n2;B;-3;4.25;0\n")
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[2.0,1.5]},"properties":{"name":"A"}},
            {"type":"Feature","id":2,"geometry":{"type":"Point","coordinates":[4.25,-3.0]},"properties":{"name":"B"}}
            ]}

            """)
        let again = try Exporter(manifest: manifest).export("map", from: temporaryDirectory.appendingPathComponent("geo.sqlite"),
                                                            to: temporaryDirectory.appendingPathComponent("again"))
        XCTAssertEqual(try Data(contentsOf: again[0]), try Data(contentsOf: url))
    }

    func testEmptyQueryGivesAnEmptyCollection() throws {
        let (url, _) = try export("SELECT id, lat, lon FROM place WHERE 0", rows: "1;A;1;2;0\n")
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), "{\"type\":\"FeatureCollection\",\"features\":[\n]}\n")
        XCTAssertEqual((try parse(url)["features"] as? [Any])?.count, 0)
    }

    func testColumnOptions() throws {
        let (url, _) = try export("SELECT name AS title, lat AS y, lon AS x FROM place", options: #"options: { latitude: "y", longitude: "x", id: "title" },"#,
                                  rows: "1;A;1;2;0\n")
        let feature = try XCTUnwrap((try parse(url)["features"] as? [[String: Any]])?.first)
        XCTAssertEqual(feature["id"] as? String, "A")
        XCTAssertEqual((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double], [2, 1])
        XCTAssertEqual((feature["properties"] as? [String: Any])?.count, 0)
    }

    func testMissingCoordinateColumnsAreAManifestError() throws {
        XCTAssertThrowsError(try export("SELECT id, name FROM place", rows: "1;A;1;2;0\n")) { error in
            XCTAssertTrue("\(error)".contains("the geojson writer needs the query to return columns lat, lon; missing: lat, lon"), "\(error)")
        }
    }

    func testJSONStrings() {
        XCTAssertEqual(JSONText.string("a\"b\\c\nd\te\u{01}é→"), #""a\"b\\c\nd\te\u0001é→""#)
        XCTAssertEqual(JSONText.value(.real(.infinity)), "null")
        XCTAssertEqual(JSONText.value(.integer(-5)), "-5")
        XCTAssertEqual(JSONText.value(.blob([0xAB, 0x01])), "\"ab01\"")
    }
}
