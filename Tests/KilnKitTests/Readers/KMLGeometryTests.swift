import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `KMLGeometry`: the representative point of lines, polygons and multi-geometries, and their GeoJSON. Expected
/// points come from symmetry (a square's centroid is its centre; a straight two-segment line of equal halves has its
/// middle vertex halfway), not from what the code prints.
final class KMLGeometryTests: KilnTestCase {
    private func read(_ placemarks: String) throws -> (records: [Record], log: DiagnosticLog) {
        let text = """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
            \(placemarks)
            </Document></kml>
            """
        return try read(KMLReader(options: JSONValue.object([:]).decode(KMLReader.Options.self, codingPath: [])), text, name: "g.kml")
    }

    private func point(_ record: Record) -> (Double, Double)? {
        guard let lon = record["longitude"].flatMap(Double.init), let lat = record["latitude"].flatMap(Double.init) else { return nil }
        return (lon, lat)
    }

    func testPolygonCentroidLineMidpointAndMultiGeometry() throws {
        let (records, log) = try read("""
            <Placemark><name>square</name><Polygon><outerBoundaryIs><LinearRing><coordinates>
              21.0,38.0 21.2,38.0 21.2,38.2 21.0,38.2 21.0,38.0
            </coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>
            <Placemark><name>line</name><LineString><coordinates>21.0,38.0 21.1,38.0 21.2,38.0</coordinates></LineString></Placemark>
            <Placemark><name>multi</name><MultiGeometry><Point><coordinates>20,37</coordinates></Point><Polygon><outerBoundaryIs><LinearRing>
              <coordinates>1,1 3,1 3,3 1,3 1,1</coordinates></LinearRing></outerBoundaryIs></Polygon></MultiGeometry></Placemark>
            """)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        XCTAssertEqual(records.map { $0["geometryType"] }, ["Polygon", "LineString", "MultiGeometry"])
        let square = try XCTUnwrap(point(records[0]))
        XCTAssertEqual(square.0, 21.1, accuracy: 1e-9)
        XCTAssertEqual(square.1, 38.1, accuracy: 1e-9)
        let middle = try XCTUnwrap(point(records[1]))
        XCTAssertEqual(middle.1, 38.0, accuracy: 1e-9)
        XCTAssertEqual(middle.0, 21.1, accuracy: 1e-6, "on a parallel the two halves are equally long")
        let multi = try XCTUnwrap(point(records[2]))
        XCTAssertEqual(multi.0, 2, accuracy: 1e-9, "a polygon member is preferred to a point")
        XCTAssertEqual(multi.1, 2, accuracy: 1e-9)
        XCTAssertNil(records[0]["altitude"], "a derived point has no altitude")
    }

    func testGeometryIsValidGeoJSON() throws {
        let (records, _) = try read("""
            <Placemark><name>p</name><Point><coordinates>21.78,38.29,12</coordinates></Point></Placemark>
            <Placemark><name>l</name><LineString><coordinates>21,38 22,39</coordinates></LineString></Placemark>
            <Placemark><name>m</name><MultiGeometry><Point><coordinates>1,2</coordinates></Point><LineString><coordinates>1,2 3,4</coordinates></LineString></MultiGeometry></Placemark>
            """)
        for record in records {
            let text = try XCTUnwrap(record["geometry"])
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
            XCTAssertNotNil(object["type"] as? String)
        }
        let point = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(records[0]["geometry"]!.utf8)) as? [String: Any])
        XCTAssertEqual(point["coordinates"] as? [Double], [21.78, 38.29, 12])
        let collection = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(records[2]["geometry"]!.utf8)) as? [String: Any])
        XCTAssertEqual(collection["type"] as? String, "GeometryCollection")
        XCTAssertEqual((collection["geometries"] as? [Any])?.count, 2)
    }

    func testExtendedDataIsReadByNameAndTheRestIsReported() throws {
        let text = """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
            <Placemark id="p1"><name>Parking</name><styleUrl>#icon-1</styleUrl>
              <ExtendedData><Data name="capacity"><value>40</value></Data><Data name="notes"><value>x</value></Data></ExtendedData>
              <Point><coordinates>1,2</coordinates></Point></Placemark>
            <Placemark id="p2"><name>Parking</name>
              <ExtendedData><SchemaData schemaUrl="#s"><SimpleData name="capacity">12</SimpleData></SchemaData></ExtendedData>
              <Point><coordinates>3,4</coordinates></Point></Placemark>
            </Document></kml>
            """
        let reader = try KMLReader(options: JSONValue.object(["extendedData": .array([.string("capacity")])]).decode(KMLReader.Options.self, codingPath: []))
        let (records, log) = try read(reader, text, name: "mymaps.kml")
        XCTAssertEqual(records.map { $0["capacity"] }, ["40", "12"])
        XCTAssertEqual(records.map { $0["id"] }, ["p1", "p2"], "repeated names stay apart by id")
        XCTAssertEqual(records[0]["styleUrl"], "#icon-1")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [
            "mymaps.kml:2: info: ExtendedData \"notes\" (on 1 placemark) is not read: name it in the source's \"extendedData\" option to keep it [kml.extended-data]",
        ])
    }

    private func geometries(_ record: Record) throws -> [[String: Any]] {
        let text = try XCTUnwrap(record["geometry"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertEqual(object["type"] as? String, "GeometryCollection", text)
        return try XCTUnwrap(object["geometries"] as? [[String: Any]], text)
    }

    /// Issue 28: `<MultiGeometry><Point/><MultiGeometry><Polygon/><Polygon/></MultiGeometry></MultiGeometry>` (19 US
    /// states of OpenLayers' states.kml) kept only the point, with no finding.
    func testNestedMultiGeometryKeepsEveryMemberAtAnyDepth() throws {
        let square = { (x: Int, y: Int) in
            "<Polygon><outerBoundaryIs><LinearRing><coordinates>\(x),\(y) \(x + 2),\(y) \(x + 2),\(y + 2) \(x),\(y + 2) \(x),\(y)</coordinates></LinearRing></outerBoundaryIs></Polygon>"
        }
        let (records, log) = try read("""
            <Placemark><name>Alaska</name><MultiGeometry><Point><coordinates>-150,64,0</coordinates></Point>
              <MultiGeometry>\(square(10, 20))\(square(30, 40))</MultiGeometry></MultiGeometry></Placemark>
            <Placemark><name>deep</name><MultiGeometry><MultiGeometry><MultiGeometry>
              <LineString><coordinates>0,0 0,2</coordinates></LineString></MultiGeometry><Point><coordinates>5,5</coordinates></Point></MultiGeometry>
              \(square(1, 1))</MultiGeometry></Placemark>
            """)
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        XCTAssertEqual(records.map { $0["geometryType"] }, ["MultiGeometry", "MultiGeometry"])
        XCTAssertEqual(try geometries(records[0]).map { $0["type"] as? String }, ["Point", "Polygon", "Polygon"], "both polygons are kept")
        let alaska = try XCTUnwrap(point(records[0]))
        XCTAssertEqual(alaska.0, 11, accuracy: 1e-9, "the first polygon's centroid, as for a flat MultiGeometry")
        XCTAssertEqual(alaska.1, 21, accuracy: 1e-9)
        XCTAssertEqual(try geometries(records[1]).map { $0["type"] as? String }, ["LineString", "Point", "Polygon"], "document order through every level")
        let deep = try XCTUnwrap(point(records[1]))
        XCTAssertEqual(deep.0, 2, accuracy: 1e-9)
        XCTAssertEqual(deep.1, 2, accuracy: 1e-9)
    }

    /// `gx:Track` is a line through its positions with its `when` times as `timestamps`; `gx:MultiTrack` a
    /// `MultiLineString` with an array of times per track; the non-standard `MultiPolygon`, `MultiLineString` and
    /// `MultiPoint` are collections of their members, in their own GeoJSON type when every member is of their kind.
    /// Times that do not pair with positions are a finding, and the track keeps its line.
    func testTracksAndNonStandardMultiGeometriesAreRead() throws {
        let text = """
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document>
            <Placemark><name>run</name><gx:Track><when>2010-05-28T02:02:09Z</when><when> 2010-05-28T02:02:35Z </when><when>2010-05-28T02:02:44Z</when>
              <gx:coord>-122.207881 37.371915 156.0</gx:coord><gx:coord>-122.205712 37.373288 152.0</gx:coord><gx:coord>-122.204678 37.373939 147.0</gx:coord>
              <gx:angles>0 0 0</gx:angles></gx:Track></Placemark>
            <Placemark><name>laps</name><gx:MultiTrack><altitudeMode>absolute</altitudeMode>
              <gx:Track><when>2010-05-28T02:02:09Z</when><when>2010-05-28T02:02:35Z</when><gx:coord>1 2 3</gx:coord><gx:coord>1 3 3</gx:coord></gx:Track>
              <gx:Track><when>2010-05-28T03:00:00Z</when><gx:coord>5 6</gx:coord><gx:coord>5 7</gx:coord></gx:Track></gx:MultiTrack></Placemark>
            <Placemark><name>parcels</name><MultiPolygon><Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 2,0 2,2 0,2 0,0</coordinates></LinearRing></outerBoundaryIs></Polygon>
              <Polygon><outerBoundaryIs><LinearRing><coordinates>10,10 11,10 11,11 10,10</coordinates></LinearRing></outerBoundaryIs></Polygon></MultiPolygon></Placemark>
            <Placemark><name>roads</name><MultiLineString><LineString><coordinates>0,0 0,2</coordinates></LineString><LineString><coordinates>1,1 1,3</coordinates></LineString></MultiLineString></Placemark>
            <Placemark><name>stops</name><MultiPoint><Point><coordinates>7,8</coordinates></Point><Point><coordinates>9,10</coordinates></Point></MultiPoint></Placemark>
            <Placemark><name>mixed</name><MultiGeometry><Point><coordinates>7,8</coordinates></Point><gx:Track><when>2010-05-28T02:02:09Z</when><gx:coord>7 8 9</gx:coord></gx:Track></MultiGeometry></Placemark>
            </Document></kml>
            """
        let (records, log) = try read(KMLReader(options: JSONValue.object([:]).decode(KMLReader.Options.self, codingPath: [])), text, name: "t.kml")
        XCTAssertEqual(log.diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code) \($0.message)" }, [
            #"2 kml.track-data placemark "run": its gx:Track's gx:angles and ExtendedData (1 element) are not read; its positions and times are"#,
            #"7 kml.geometry placemark "laps": its gx:Track has 1 when and 2 gx:coord; KML pairs them one to one, so its timestamps are left out"#,
        ])
        XCTAssertEqual(records.map { $0["geometryType"] }, ["Track", "MultiTrack", "MultiPolygon", "MultiLineString", "MultiPoint", "MultiGeometry"])
        XCTAssertEqual(records.map { $0["geometry"] }, [
            #"{"type":"LineString","coordinates":[[-122.207881,37.371915,156],[-122.205712,37.373288,152],[-122.204678,37.373939,147]]}"#,
            #"{"type":"MultiLineString","coordinates":[[[1,2,3],[1,3,3]],[[5,6],[5,7]]]}"#,
            #"{"type":"MultiPolygon","coordinates":[[[[0,0],[2,0],[2,2],[0,2],[0,0]]],[[[10,10],[11,10],[11,11],[10,10]]]]}"#,
            #"{"type":"MultiLineString","coordinates":[[[0,0],[0,2]],[[1,1],[1,3]]]}"#,
            #"{"type":"MultiPoint","coordinates":[[7,8],[9,10]]}"#,
            #"{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[7,8]},{"type":"Point","coordinates":[7,8,9]}]}"#,
        ])
        XCTAssertEqual(records.map { $0["timestamps"] }, [
            #"["2010-05-28T02:02:09Z","2010-05-28T02:02:35Z","2010-05-28T02:02:44Z"]"#,
            #"[["2010-05-28T02:02:09Z","2010-05-28T02:02:35Z"],null]"#,
            nil, nil, nil,
            #"[null,["2010-05-28T02:02:09Z"]]"#,
        ])
        // Representative points: halfway along the track, the first polygon's centroid, the first line's middle.
        XCTAssertEqual(records[2]["longitude"], "1")
        XCTAssertEqual(records[2]["latitude"], "1")
        XCTAssertEqual(records[3]["latitude"], "1")
        XCTAssertEqual(records[4]["longitude"], "7")
        XCTAssertEqual(records[1]["latitude"], "2.5")
    }

    /// Geometry the reader does not map is a finding at its own line; the rest of the placemark is kept.
    func testUnmappedGeometryElementsAreFindingsWithTheirLine() throws {
        let text = """
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Document>
            <Placemark><name>flight</name>
              <gx:Track><when>2010-05-01T13:00:00Z</when><gx:coord>-93.38 44.88 2743</gx:coord></gx:Track></Placemark>
            <Placemark><name>mixed</name><MultiGeometry><Point><coordinates>1,2</coordinates></Point>
              <MultiGeometry><Model><Location><longitude>1</longitude><latitude>2</latitude></Location></Model>
              <LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></MultiGeometry></MultiGeometry></Placemark>
            <Placemark><name>two</name><Point><coordinates>3,4</coordinates></Point>
              <LineString><coordinates>3,4 5,6</coordinates></LineString></Placemark>
            <Placemark><name>label</name><MultiGeometry><Point/><LineString><coordinates>0,0 0,2</coordinates></LineString></MultiGeometry></Placemark>
            </Document></kml>
            """
        let (records, log) = try read(KMLReader(options: JSONValue.object([:]).decode(KMLReader.Options.self, codingPath: [])), text, name: "g.kml")
        let diagnostics = log.diagnostics.sorted { ($0.provenance?.line ?? 0) < ($1.provenance?.line ?? 0) }
        XCTAssertEqual(diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code)" }, [
            "5 kml.unsupported-geometry", "6 kml.unsupported-geometry", "8 kml.unsupported-geometry", "9 kml.geometry",
        ])
        let messages = diagnostics.map(\.message)
        guard messages.count == 4 else { return }
        XCTAssertTrue(messages[0].contains("its Model is not read"), messages[0])
        XCTAssertTrue(messages[1].contains("a LinearRing outside a Polygon is not read"), messages[1])
        XCTAssertTrue(messages[2].contains("a second geometry, LineString;"), messages[2])
        XCTAssertTrue(messages[3].contains("placemark \"label\": its Point has no coordinates; it is left out"), messages[3])
        // A track of one position is a point, with its time.
        XCTAssertEqual(records.map { $0["geometryType"] }, ["Track", "MultiGeometry", "Point", "MultiGeometry"])
        XCTAssertEqual(records[0]["geometry"], #"{"type":"Point","coordinates":[-93.38,44.88,2743]}"#)
        XCTAssertEqual(records[0]["timestamps"], #"["2010-05-01T13:00:00Z"]"#)
        XCTAssertEqual(try geometries(records[1]).map { $0["type"] as? String }, ["Point"])
        XCTAssertEqual(records[2]["longitude"], "3")
    }
}
