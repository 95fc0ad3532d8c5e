import Foundation
import KilnTestSupport
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `BundleBytes` against `scripts/oracles/bundle_bytes.py`, and `ByteSize`'s reading of sizes.
final class BundleBytesTests: KilnTestCase {
    func testEachBTreeGoesToItsTableAsTheDbstatOracleSays() throws {
        let url = temporaryDirectory.appendingPathComponent("b.sqlite")
        let database = try Database(path: url.path)
        // `place` and `place_x` both exist, and `place_x_search`'s shadow tables start with `place_`: the longest
        // virtual table name owns them.
        try database.execute("""
            CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT UNIQUE, lat REAL, lon REAL);
            CREATE INDEX place_by_lat ON place (lat);
            CREATE TABLE place_x (code TEXT PRIMARY KEY, note TEXT) WITHOUT ROWID;
            CREATE VIRTUAL TABLE place_x_search USING fts5(note);
            CREATE VIRTUAL TABLE place_search USING fts5(name);
            CREATE VIRTUAL TABLE place_rtree USING rtree(id, min_lat, max_lat, min_lon, max_lon);
            CREATE TABLE kiln_metadata (key TEXT PRIMARY KEY, value TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO place SELECT i, 'place number ' || i || ' ' || hex(randomblob(20)), i / 100.0, i / 50.0 FROM n;
            INSERT INTO place_x SELECT 'c' || id, name || name FROM place WHERE id % 3 = 0;
            INSERT INTO place_x_search SELECT note FROM place_x;
            INSERT INTO place_search SELECT name FROM place;
            INSERT INTO place_rtree SELECT id, lat, lat, lon, lon FROM place;
            INSERT INTO kiln_metadata VALUES ('bundle.name', 'b');
            """)
        let owners = ["place_search": BundleBytes.Owner(table: "place", spatial: false),
                      "place_rtree": BundleBytes.Owner(table: "place", spatial: true),
                      "place_x_search": BundleBytes.Owner(table: "place_x", spatial: false)]
        let measured = try BundleBytes.measure(database, tables: ["place", "place_x"], owners: owners)
        try database.close()

        let expected = try XCTUnwrap(try PythonOracle.json("bundle_bytes.py", [url.path, "place", "place_x", "--",
                                                                             "place_search=place", "place_rtree=place", "place_x_search=place_x"]) as? [String: Any])
        XCTAssertEqual(measured.total, expected["total"] as? Int)
        XCTAssertEqual(measured.other, expected["other"] as? Int)
        let tables = try XCTUnwrap(expected["tables"] as? [String: [String: Int]])
        for (name, bytes) in measured.tables {
            XCTAssertEqual(["data": bytes.data, "index": bytes.index, "search": bytes.search, "spatial": bytes.spatial], tables[name], name)
        }
        XCTAssertGreaterThan(measured.tables["place"]!.spatial, 0)
        XCTAssertGreaterThan(measured.tables["place_x"]!.search, 0)
        XCTAssertEqual(measured.largest.first?.name, "place")
    }

    func testALimitNamesTheBiggestTablesAndEachTableOverItsOwn() {
        let bytes = BundleBytes(total: 10_000, tables: ["a": TableBytes(data: 6_000, search: 1_000), "b": TableBytes(data: 2_000), "c": TableBytes(index: 500)], other: 500)
        let url = URL(fileURLWithPath: "x.sqlite")
        XCTAssertEqual(bytes.exceeding(ManifestLimits(bundleBytes: ByteSize(parsing: "10 KB")), bundle: url), [])
        let over = bytes.exceeding(ManifestLimits(bundleBytes: ByteSize(parsing: "9.5 KB"), tables: ["b": ByteSize(parsing: "1999")!, "c": ByteSize(parsing: "1 KiB")!]), bundle: url)
        XCTAssertEqual(over.map(\.code), ["bundle.too-large", "bundle.too-large"])
        XCTAssertEqual(over[0].message, "x.sqlite would be 10.0 KB (10000 bytes), more than limits.bundleBytes (9.5 KB, 9500 bytes); the biggest tables: a 7.0 KB (data 6.0 KB, search 1.0 KB); b 2.0 KB (data 2.0 KB); c 500 bytes (index 500 bytes); schema, metadata and free pages 500 bytes")
        XCTAssertEqual(over[1].message, "table b would take 2.0 KB (data 2.0 KB), 2000 bytes, more than limits.tables.b (1999 bytes)")
    }

    func testSizesAreBytesOrANumberWithAUnit() {
        let cases: [(String, Int?)] = [
            ("250000", 250_000), ("50 MB", 50_000_000), ("50MB", 50_000_000), ("1.5 GB", 1_500_000_000), ("512 KiB", 524_288),
            ("64 MiB", 67_108_864), ("1 byte", 1), ("10 bytes", 10), ("  2 KB ", 2_000),
            ("", nil), ("MB", nil), ("0", nil), ("0 MB", nil), ("-1 MB", nil), ("5 parsecs", nil), ("5 mb", nil), ("1e3", nil),
            ("0.0001 B", nil), ("1.2.3 MB", nil), ("99999999 TB", nil),
        ]
        for (text, bytes) in cases {
            XCTAssertEqual(ByteSize(parsing: text)?.bytes, bytes, text)
        }
        XCTAssertEqual(ByteSize(parsing: "50 MB")?.phrase, "50 MB, 50000000 bytes")
        XCTAssertEqual(ByteSize(parsing: "123")?.phrase, "123 bytes")
    }
}
