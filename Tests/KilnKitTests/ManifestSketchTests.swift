import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `ManifestSketch`, the rules of `kiln init`: the separator of a first line, the type every value fits and gives
/// back, names as plain identifiers, keys and references only where the rows keep them.
final class ManifestSketchTests: KilnTestCase {
    func testTheSeparatorIsTheOneTheFirstLineHoldsMostOfOutsideQuotes() {
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "a;b;c").separator, ";")
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "a\tb,c\td").separator, "\t")
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: #""x;y;z",b"#).separator, ",")
        XCTAssertTrue(ManifestSketch.separator(ofFirstLine: #""x;y;z",b"#).quoted)
        XCTAssertEqual(ManifestSketch.separator(ofFirstLine: "single").separator, ",")
    }

    func testATypeMustGiveEveryValueBackAsWritten() {
        XCTAssertEqual(ManifestSketch.columnType(["1", "-20", ""], name: "n"), "integer")
        XCTAssertEqual(ManifestSketch.columnType(["0102", "1104"], name: "n"), "text", "a leading zero")
        XCTAssertEqual(ManifestSketch.columnType(["21.7259", "38"], name: "n"), "real")
        XCTAssertEqual(ManifestSketch.columnType(["6.1", "6.10"], name: "n"), "text", "6.10 reads back as 6.1")
        XCTAssertEqual(ManifestSketch.columnType(["1e5"], name: "n"), "text")
        XCTAssertEqual(ManifestSketch.columnType(["1", "2"], name: "stop_id"), "text", "identifiers are text")
        XCTAssertEqual(ManifestSketch.columnType(["", ""], name: "n"), "text")
    }

    func testNamesArePlainIdentifiers() {
        XCTAssertEqual(ManifestSketch.identifier("Stops Export"), "stops_export")
        XCTAssertEqual(ManifestSketch.identifier("2024-lines"), "t_2024_lines")
        XCTAssertEqual(ManifestSketch.identifier("kiln_x"), "t_kiln_x")
        XCTAssertEqual(ManifestSketch.identifier("Ονομα"), "t_")
    }

    /// A GTFS reference is declared only where every value of the child is a key of the parent.
    func testAReferenceIsDeclaredOnlyWhereEveryRowKeepsIt() throws {
        let stops = try write("stop_id,stop_name\nA,One\nB,Two\n", to: "stops.txt")
        let kept = try write("trip_id,stop_id,stop_sequence\nt1,A,1\nt1,B,2\n", to: "stop_times.txt")
        let sketch = try ManifestSketch(bundle: "f", inputs: [(stops, "stops.txt"), (kept, "stop_times.txt")])
        XCTAssertTrue(sketch.gtfs)
        let times = try XCTUnwrap(sketch.tables.first { $0.name == "stop_times" })
        XCTAssertEqual(times.key, ["trip_id", "stop_sequence"])
        XCTAssertEqual(times.columns.first { $0.name == "stop_id" }?.references, "stops.stop_id")
        let broken = try write("trip_id,stop_id,stop_sequence\nt1,A,1\nt1,C,2\n", to: "broken/stop_times.txt")
        let other = try ManifestSketch(bundle: "f", inputs: [(stops, "stops.txt"), (broken, "stop_times.txt")])
        XCTAssertNil(other.tables.first { $0.name == "stop_times" }?.columns.first { $0.name == "stop_id" }?.references, "C is no stop")
    }
}
