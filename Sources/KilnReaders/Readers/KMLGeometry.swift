import Foundation
import KilnC
import KilnCore
import KilnManifest

/// A KML placemark's geometry: its type, the GeoJSON of the whole of it, and one representative point, so that
/// a building drawn as a polygon or a route drawn as a line still gets coordinates:
/// - `Point`: the point;
/// - `LineString`: the point halfway along the line, measured on the sphere (haversine) between its vertices;
/// - `Polygon`: the centroid (area-weighted, in degrees) of its outer ring; a ring with no area (all points on a
///   line) gives the mean of its vertices;
/// - `gx:Track` (a GPS logger's export): a line through its `gx:coord` positions (a `Point` when it has one), its
///   point halfway along; its `when` times, in order, are its `timestamps` (a JSON array of the texts as written);
/// - `gx:MultiTrack`: its tracks as one `MultiLineString`, the first track's point, `timestamps` an array per track;
/// - `MultiGeometry`, nested to any depth, and the `MultiPolygon`, `MultiLineString` and `MultiPoint` some GIS
///   exporters write (not KML 2.2): the representative point of its first polygon, else its first line, else its
///   first point, in document order through every level, as Google My Maps puts a building's outline before its
///   label. Its GeoJSON is one flat `GeometryCollection` of its members in document order (RFC 7946 advises against
///   nested collections) — for a `MultiPolygon`, `MultiLineString` or `MultiPoint` whose members are all of its kind,
///   that GeoJSON type; its `timestamps` (when a member is a track) an array per member, `null` for the others.
/// The altitude is the point's own, or absent for derived points. Every other geometry element (`LinearRing` outside
/// a polygon, `Model`) is not read, and each is a problem of its own with its line.
package enum KMLGeometry {
    /// The geometry read from a placemark.
    package struct Shape {
        package var type: String
        package var geoJSON: String
        package var point: (longitude: String, latitude: String, altitude: String?)
        /// A track's `when` times as a JSON array (an array per member for a collection with tracks); nil otherwise.
        package var timestamps: String? = nil
    }

    /// The geometry elements of KML 2.2 and Google's `gx:` extension, by local name: those read, and those reported.
    package static let mapped: Set<String> = Set(["Point", "LineString", "Polygon", "Track", "MultiTrack"]).union(collections.keys)
    package static let unmapped: Set<String> = ["LinearRing", "Model"]
    /// The collections read as `MultiGeometry` is, and the member type each is named for.
    package static let collections = ["MultiGeometry": "", "MultiPolygon": "Polygon", "MultiLineString": "LineString", "MultiPoint": "Point"]

    /// The XPath expressions that find a placemark's geometry, compiled once.
    package struct Selectors {
        package let geometries, coordinates, outer, inner, when, trackCoordinates, tracks, trackExtras: XPathExpression

        package init() throws {
            let names = KMLGeometry.mapped.union(KMLGeometry.unmapped).sorted().map { "local-name()='\($0)'" }
            geometries = try XPathExpression("*[\(names.joined(separator: " or "))]")
            coordinates = try XPathExpression("*[local-name()='coordinates']")
            outer = try XPathExpression("*[local-name()='outerBoundaryIs']//*[local-name()='coordinates']")
            inner = try XPathExpression("*[local-name()='innerBoundaryIs']//*[local-name()='coordinates']")
            when = try XPathExpression("*[local-name()='when']")
            trackCoordinates = try XPathExpression("*[local-name()='coord']")
            tracks = try XPathExpression("*[local-name()='Track']")
            trackExtras = try XPathExpression("*[local-name()='angles' or local-name()='ExtendedData']")
        }
    }

    /// What is wrong with a placemark's geometry, and the line of the element it is about (`nil`: the placemark's).
    package struct Problem: Error {
        package var code: DiagnosticCode
        package var message: String
        package var line: Int? = nil
    }

    /// What a placemark's geometry gives: its shape (none when it has no place) and every problem found on the way.
    package struct Reading {
        package var shape: Shape?
        package var problems: [Problem] = []
    }

    package typealias Position = (longitude: Double, latitude: Double, altitude: Double?, text: (String, String, String?))

    /// Reads the geometry of `placemark`.
    package static func read(_ placemark: XMLElementCursor, selectors: Selectors) -> Reading {
        var reading = Reading()
        var shapes: [Shape] = []
        do {
            for (index, element) in placemark.elements(selectors.geometries).enumerated() {
                guard index == 0 else {
                    reading.problems.append(Problem(code: .kmlUnsupportedGeometry,
                                                    message: "holds a second geometry, \(element.qualifiedName); a Placemark has one, so it is not read",
                                                    line: element.line))
                    continue
                }
                if let kind = collections[element.localName] {
                    var members: [Shape] = []
                    try collect(element, selectors: selectors, into: &members, problems: &reading.problems)
                    if !members.isEmpty { shapes = [multiGeometry(members, named: element.localName, of: kind)] }
                } else {
                    try collect(element, selectors: selectors, into: &shapes, problems: &reading.problems)
                }
            }
        } catch let problem as Problem {
            reading.problems.append(problem)
            return reading
        } catch {
            reading.problems.append(Problem(code: .kmlCoordinates, message: "\(error)"))
            return reading
        }
        reading.shape = shapes.first
        if shapes.isEmpty {
            reading.problems.append(Problem(code: .kmlGeometry, message: "has no Point, LineString, Polygon, gx:Track or MultiGeometry with coordinates; it has no place on the map"))
        }
        return reading
    }

    /// The shapes of `element` and, for a `MultiGeometry`, of its members at any depth, in document order; every
    /// geometry element that is not mapped is a problem.
    private static func collect(_ element: XMLElementCursor, selectors: Selectors, into shapes: inout [Shape], problems: inout [Problem]) throws {
        switch element.localName {
        case "Point", "LineString":
            guard let text = element.string(selectors.coordinates) else {
                problems.append(Problem(code: .kmlGeometry, message: "its \(element.localName) has no coordinates; it is left out", line: element.line))
                return
            }
            shapes.append(try element.localName == "Point" ? point(text) : line(text))
        case "Polygon":
            shapes.append(try polygon(outer: element.string(selectors.outer), inner: element.strings(selectors.inner)))
        case "MultiGeometry", "MultiPolygon", "MultiLineString", "MultiPoint":
            for member in element.elements(selectors.geometries) {
                try collect(member, selectors: selectors, into: &shapes, problems: &problems)
            }
        case "Track":
            if let shape = try track(element, selectors: selectors, problems: &problems) { shapes.append(shape) }
        case "MultiTrack":
            var tracks: [Shape] = []
            for member in element.elements(selectors.tracks) {
                if let shape = try track(member, selectors: selectors, problems: &problems) { tracks.append(shape) }
            }
            guard let first = tracks.first else {
                problems.append(Problem(code: .kmlGeometry, message: "its \(element.qualifiedName) has no gx:Track with positions; it is left out", line: element.line))
                return
            }
            let lines = tracks.map { track in track.type == "Point" ? "[" + coordinatesJSON(track.geoJSON) + "]" : coordinatesJSON(track.geoJSON) }
            shapes.append(Shape(type: "MultiTrack", geoJSON: #"{"type":"MultiLineString","coordinates":["# + lines.joined(separator: ",") + "]}",
                                point: first.point, timestamps: "[" + tracks.map { $0.timestamps ?? "null" }.joined(separator: ",") + "]"))
        default:
            let what = element.localName == "LinearRing" ? "a LinearRing outside a Polygon" : element.qualifiedName
            problems.append(Problem(code: .kmlUnsupportedGeometry,
                                    message: "its \(what) is not read (the kml reader maps Point, LineString, Polygon, gx:Track, gx:MultiTrack and MultiGeometry); its coordinates are left out",
                                    line: element.line))
        }
    }

    private static func point(_ text: String) throws -> Shape {
        let positions = try coordinates(text, minimum: 1)
        let first = positions[0]
        return Shape(type: "Point", geoJSON: #"{"type":"Point","coordinates":"# + json(first) + "}",
                     point: (first.text.0, first.text.1, first.text.2))
    }

    private static func line(_ text: String) throws -> Shape {
        let positions = try coordinates(text, minimum: 2)
        let middle = midpoint(positions)
        return Shape(type: "LineString", geoJSON: #"{"type":"LineString","coordinates":["# + positions.map(json).joined(separator: ",") + "]}",
                     point: (format(middle.longitude), format(middle.latitude), nil))
    }

    private static func polygon(outer: String?, inner: [String]) throws -> Shape {
        guard let outer else { throw Problem(code: .kmlGeometry, message: "its Polygon has no outerBoundaryIs ring; it has no place on the map") }
        let ring = try coordinates(outer, minimum: 3)
        let holes = try inner.map { try coordinates($0, minimum: 3) }
        let center = centroid(ring)
        let rings = ([ring] + holes).map { "[" + $0.map(json).joined(separator: ",") + "]" }
        return Shape(type: "Polygon", geoJSON: #"{"type":"Polygon","coordinates":["# + rings.joined(separator: ",") + "]}",
                     point: (format(center.longitude), format(center.latitude), nil))
    }

    /// A `gx:Track`: a line through its `gx:coord` positions ("lon lat alt"), a point when it has one; nil (and a
    /// problem) when it has none. Its `when` times are its timestamps; when they do not pair with the positions
    /// (KML asks for as many), that is a problem and the timestamps are NULL.
    private static func track(_ element: XMLElementCursor, selectors: Selectors, problems: inout [Problem]) throws -> Shape? {
        let coords = element.strings(selectors.trackCoordinates)
        guard !coords.isEmpty else {
            problems.append(Problem(code: .kmlGeometry, message: "its \(element.qualifiedName) has no gx:coord; it is left out", line: element.line))
            return nil
        }
        let text = coords.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: ",") }
            .joined(separator: " ")
        var shape = try coords.count == 1 ? point(text) : line(text)
        let times = element.strings(selectors.when)
        if times.count == coords.count {
            shape.timestamps = "[" + times.map { JSONText.string(TextFolding.trim($0)) }.joined(separator: ",") + "]"
        } else {
            problems.append(Problem(code: .kmlGeometry, message: "its \(element.qualifiedName) has \(times.count) when and \(coords.count) gx:coord; "
                                        + "KML pairs them one to one, so its timestamps are left out", line: element.line))
        }
        let extra = element.strings(selectors.trackExtras).count
        if extra > 0 {
            problems.append(Problem(code: .kmlTrackData, message: "its \(element.qualifiedName)'s gx:angles and ExtendedData (\(extra) "
                                        + "\(extra == 1 ? "element" : "elements")) are not read; its positions and times are", line: element.line))
        }
        shape.type = "Track"
        return shape
    }

    /// The `coordinates` member of a shape's GeoJSON, as written.
    private static func coordinatesJSON(_ geoJSON: String) -> String {
        let start = geoJSON.range(of: #""coordinates":"#)!.upperBound
        return String(geoJSON[start..<geoJSON.index(before: geoJSON.endIndex)])
    }

    /// A collection of `members` (at least one) named `name` (`MultiGeometry`, `MultiPolygon`…) whose members are
    /// of the type `kind` names (any when empty): its point is its first polygon's, else its first line's, else its
    /// first point's. A `MultiPolygon`, `MultiLineString` or `MultiPoint` of members all of its kind is that GeoJSON
    /// type; anything else a `GeometryCollection`.
    private static func multiGeometry(_ members: [Shape], named name: String, of kind: String) -> Shape {
        let chosen = ["Polygon", "LineString", "Point"].lazy.compactMap { type in
            members.first { ($0.type == "Track" ? ($0.geoJSON.hasPrefix(#"{"type":"Point""#) ? "Point" : "LineString") : $0.type) == type }
        }.first ?? members[0]
        let timestamps = members.contains { $0.timestamps != nil } ? "[" + members.map { $0.timestamps ?? "null" }.joined(separator: ",") + "]" : nil
        if !kind.isEmpty, members.allSatisfy({ $0.type == kind }) {
            return Shape(type: name, geoJSON: #"{"type":""# + name + #"","coordinates":["# + members.map { coordinatesJSON($0.geoJSON) }.joined(separator: ",") + "]}",
                         point: chosen.point, timestamps: timestamps)
        }
        return Shape(type: name,
                     geoJSON: #"{"type":"GeometryCollection","geometries":["# + members.map(\.geoJSON).joined(separator: ",") + "]}",
                     point: chosen.point, timestamps: timestamps)
    }

    /// Parses KML `coordinates`: tuples `lon,lat[,alt]` separated by white space.
    package static func coordinates(_ text: String, minimum: Int) throws -> [Position] {
        var positions: [Position] = []
        for tuple in tuples(text) {
            let parts = tuple.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
            guard (2...3).contains(parts.count), let longitude = Double(parts[0]), let latitude = Double(parts[1]),
                  longitude.isFinite, latitude.isFinite, parts.count == 2 || Double(parts[2]) != nil else {
                throw Problem(code: .kmlCoordinates, message: "coordinates \"\(excerpt(String(tuple)))\" are not lon,lat[,alt]")
            }
            positions.append((longitude, latitude, parts.count == 3 ? Double(parts[2]) : nil, (parts[0], parts[1], parts.count == 3 ? parts[2] : nil)))
        }
        guard positions.count >= minimum else {
            throw Problem(code: .kmlCoordinates, message: "coordinates \"\(excerpt(text.trimmingSpaces))\" hold \(positions.count) positions; expected at least \(minimum)")
        }
        return positions
    }

    /// The `lon,lat[,alt]` tuples of a `coordinates` text: white space separates tuples, except around a comma (real
    /// exports write "lon , lat" now and then).
    private static func tuples(_ text: String) -> [Substring] {
        var tuples: [Substring] = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) {
            if let last = tuples.last, last.hasSuffix(",") || token.hasPrefix(",") {
                tuples[tuples.count - 1] = Substring(last + token)
            } else {
                tuples.append(token)
            }
        }
        return tuples
    }

    /// The point halfway along a line, by great-circle length.
    package static func midpoint(_ positions: [Position]) -> (longitude: Double, latitude: Double) {
        var lengths: [Double] = []
        for (a, b) in zip(positions, positions.dropFirst()) {
            lengths.append(KilnSQLFunctions.distance(a.latitude, a.longitude, b.latitude, b.longitude))
        }
        let total = lengths.reduce(0, +)
        guard total > 0 else { return (positions[0].longitude, positions[0].latitude) }
        var remaining = total / 2
        for (index, length) in lengths.enumerated() {
            if remaining <= length {
                let fraction = length == 0 ? 0 : remaining / length
                let a = positions[index], b = positions[index + 1]
                return (a.longitude + (b.longitude - a.longitude) * fraction, a.latitude + (b.latitude - a.latitude) * fraction)
            }
            remaining -= length
        }
        return (positions[positions.count - 1].longitude, positions[positions.count - 1].latitude)
    }

    /// The area-weighted centroid of a ring (shoelace formula, in degrees); the vertices' mean when it has no area.
    package static func centroid(_ ring: [Position]) -> (longitude: Double, latitude: Double) {
        var points = ring.map { ($0.longitude, $0.latitude) }
        if let first = points.first, let last = points.last, first != last { points.append(first) }
        let originX = points[0].0, originY = points[0].1
        var area = 0.0, x = 0.0, y = 0.0
        for (a, b) in zip(points, points.dropFirst()) {
            let ax = a.0 - originX, ay = a.1 - originY, bx = b.0 - originX, by = b.1 - originY
            let cross = ax * by - bx * ay
            area += cross
            x += (ax + bx) * cross
            y += (ay + by) * cross
        }
        guard abs(area) > 1e-18 else {
            let vertices = points.dropLast()
            return (vertices.map(\.0).reduce(0, +) / Double(vertices.count), vertices.map(\.1).reduce(0, +) / Double(vertices.count))
        }
        return (originX + x / (3 * area), originY + y / (3 * area))
    }

    private static func json(_ position: Position) -> String {
        "[" + [format(position.longitude), format(position.latitude)].joined(separator: ",")
            + (position.altitude.map { "," + format($0) } ?? "") + "]"
    }

    /// Degrees with 7 decimals (about 1 cm), trailing zeros removed: stable text for derived coordinates.
    package static func format(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
