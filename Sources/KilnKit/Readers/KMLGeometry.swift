import Foundation

/// A KML placemark's geometry: its type, the GeoJSON of the whole of it, and one representative point, so that
/// a building drawn as a polygon or a route drawn as a line still gets coordinates:
/// - `Point`: the point;
/// - `LineString`: the point halfway along the line, measured on the sphere (haversine) between its vertices;
/// - `Polygon`: the centroid (area-weighted, in degrees) of its outer ring; a ring with no area (all points on a
///   line) gives the mean of its vertices;
/// - `MultiGeometry`: the representative point of its first member that has one (polygons first, then lines, then
///   points), as Google My Maps puts a building's outline before its label.
/// The altitude is the point's own, or absent for derived points.
enum KMLGeometry {
    /// The geometry read from a placemark.
    struct Shape {
        var type: String
        var geoJSON: String
        var point: (longitude: String, latitude: String, altitude: String?)
    }

    /// The XPath expressions that find a placemark's geometry, compiled once.
    struct Selectors {
        let point, line, polygon, outer, inner, members, memberCount: XPathExpression

        init() throws {
            point = try XPathExpression("*[local-name()='Point']/*[local-name()='coordinates']")
            line = try XPathExpression("*[local-name()='LineString']/*[local-name()='coordinates']")
            polygon = try XPathExpression("count(*[local-name()='Polygon'])")
            outer = try XPathExpression("*[local-name()='Polygon']/*[local-name()='outerBoundaryIs']//*[local-name()='coordinates']")
            inner = try XPathExpression("*[local-name()='Polygon']/*[local-name()='innerBoundaryIs']//*[local-name()='coordinates']")
            members = try XPathExpression("*[local-name()='MultiGeometry']")
            memberCount = try XPathExpression("count(*[local-name()='MultiGeometry']/*[local-name()='Point' or local-name()='LineString' or local-name()='Polygon'])")
        }
    }

    /// What is wrong with a placemark's geometry.
    struct Problem: Error {
        var code: DiagnosticCode
        var message: String
    }

    typealias Position = (longitude: Double, latitude: Double, altitude: Double?, text: (String, String, String?))

    /// Reads the geometry of `placemark`.
    static func read(_ placemark: XMLElementCursor, selectors: Selectors) -> Result<Shape, Problem> {
        do {
            if let text = placemark.string(selectors.point) {
                return .success(try point(text))
            }
            if let text = placemark.string(selectors.line) {
                return .success(try line(text))
            }
            if placemark.number(selectors.polygon) > 0 {
                return .success(try polygon(outer: placemark.string(selectors.outer), inner: placemark.strings(selectors.inner)))
            }
            if placemark.number(selectors.memberCount) > 0 {
                return .success(try multiGeometry(placemark, selectors: selectors))
            }
        } catch let problem as Problem {
            return .failure(problem)
        } catch {
            return .failure(Problem(code: .kmlCoordinates, message: "\(error)"))
        }
        return .failure(Problem(code: .kmlGeometry, message: "has no Point, LineString, Polygon or MultiGeometry with coordinates; it has no place on the map"))
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

    private static func multiGeometry(_ placemark: XMLElementCursor, selectors: Selectors) throws -> Shape {
        var members: [Shape] = []
        let count = placemark.number(selectors.memberCount)
        for index in 1...count {
            let member = "*[local-name()='MultiGeometry']/*[local-name()='Point' or local-name()='LineString' or local-name()='Polygon'][\(index)]"
            let type = placemark.string(try XPathExpression("local-name(\(member))")) ?? ""
            switch type {
            case "Point":
                members.append(try point(placemark.string(try XPathExpression("\(member)/*[local-name()='coordinates']")) ?? ""))
            case "LineString":
                members.append(try line(placemark.string(try XPathExpression("\(member)/*[local-name()='coordinates']")) ?? ""))
            default:
                members.append(try polygon(outer: placemark.string(try XPathExpression("\(member)/*[local-name()='outerBoundaryIs']//*[local-name()='coordinates']")),
                                           inner: placemark.strings(try XPathExpression("\(member)/*[local-name()='innerBoundaryIs']//*[local-name()='coordinates']"))))
            }
        }
        let chosen = ["Polygon", "LineString", "Point"].lazy.compactMap { type in members.first { $0.type == type } }.first!
        return Shape(type: "MultiGeometry",
                     geoJSON: #"{"type":"GeometryCollection","geometries":["# + members.map(\.geoJSON).joined(separator: ",") + "]}",
                     point: chosen.point)
    }

    /// Parses KML `coordinates`: tuples `lon,lat[,alt]` separated by white space.
    static func coordinates(_ text: String, minimum: Int) throws -> [Position] {
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
    static func midpoint(_ positions: [Position]) -> (longitude: Double, latitude: Double) {
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
    static func centroid(_ ring: [Position]) -> (longitude: Double, latitude: Double) {
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
    static func format(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
