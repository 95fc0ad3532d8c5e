import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The points of one bundle table that has coordinates (or of one page of it), drawn as an SVG map with axes in
/// degrees and a scale bar: every row with both coordinates, the median point, and in red the rows the table flags
/// itself (an `outlier` column, as the travel guide's listings have) — nothing else is flagged. The map's extent is
/// robust (`robustRange`): one point thousands of kilometres from the rest does not shrink them to a dot; it is drawn
/// at the edge as a diamond and listed. A table with a `page_id` column gets one map per page (the pages with most
/// points first), each with that page's median.
package struct CoordinateMap {
    package struct Point {
        package var label: String
        package var latitude: Double
        package var longitude: Double
        package var outlier = false
    }

    package let table: String
    /// The page the points belong to, for a table mapped per page.
    package var page: String?
    package let latitudeColumn: String
    package let longitudeColumn: String
    package private(set) var points: [Point]
    package let median: (latitude: Double, longitude: Double)

    /// At most this many points are drawn per table (the first in key order); the count says how many there are.
    package static let pointLimit = 20_000
    /// At most this many pages are drawn per table mapped per page.
    package static let pageLimit = 6

    /// The maps of every table in `tables` that has a latitude and a longitude column (`latitude`/`lat`,
    /// `longitude`/`lon`/`long`/`lng`) and at least one row with both.
    /// - Throws: `SQLiteError` when the bundle cannot be read.
    /// A point is flagged when the table's `outlier` column says so or one of `rules` on the table and its two
    /// columns flags it.
    /// With `failedRows` (staging's tables, which keep each row's `_file` and `_line`), a row is flagged too when its
    /// `file:line` is one of them; at most `limit` points are read per table.
    package static func maps(in database: Database, tables: [String], rules: [BoundsRule] = [], failedRows: Set<String>? = nil,
                             limit: Int = pointLimit) throws -> [CoordinateMap] {
        var maps: [CoordinateMap] = []
        for table in tables {
            let columns = try database.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0.values.first?.textValue }
            guard let latitude = ["latitude", "lat"].first(where: columns.contains),
                  let longitude = ["longitude", "lon", "long", "lng"].first(where: columns.contains) else { continue }
            let label = ["name", "title", "code", "id"].first(where: columns.contains)
            let boxes = rules.filter { $0.table == table && $0.latitude == latitude && $0.longitude == longitude }
            let flagged = columns.contains("outlier") ? "\"outlier\"" : "NULL"
            let page = columns.contains("page_id") ? "\"page_id\"" : "NULL"
            let place = failedRows != nil && columns.contains("_file") && columns.contains("_line") ? "\"_file\" || ':' || \"_line\"" : "NULL"
            let sql = "SELECT \(label.map(quoteIdentifier) ?? "rowid"), \(quoteIdentifier(latitude)), \(quoteIdentifier(longitude)), \(flagged), \(page), \(place) "
                + "FROM \(quoteIdentifier(table)) "
                + "WHERE typeof(\(quoteIdentifier(latitude))) IN ('integer', 'real') AND typeof(\(quoteIdentifier(longitude))) IN ('integer', 'real') "
                + "ORDER BY rowid LIMIT \(limit)"
            var groups: [String: [Point]] = [:], order: [String] = []
            for row in try database.rows(sql) {
                guard let lat = row.values[1].number, let lon = row.values[2].number, abs(lat) <= 90, abs(lon) <= 180 else { continue }
                var point = Point(label: row.values[0].textValue ?? "", latitude: lat, longitude: lon)
                if flagged != "NULL" { point.outlier = (row.values[3].number ?? 0) != 0 }
                point.outlier = point.outlier || boxes.contains { $0.flags(latitude: lat, longitude: lon) }
                    || (row.values[5].textValue.map { failedRows?.contains($0) ?? false } ?? false)
                let key = row.values[4].textValue ?? ""
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(point)
            }
            let pages = order.sorted { (groups[$0]!.count, $1) > (groups[$1]!.count, $0) }.prefix(page == "NULL" ? 1 : pageLimit)
            let titles = page == "NULL" ? [:] : try pageTitles(database)
            for key in pages {
                var map = CoordinateMap(table: table, latitude: latitude, longitude: longitude, points: groups[key]!,
                                        flaggedBy: (flagged == "NULL" ? [] : ["the table's outlier column"]) + boxes.map { "the rule \($0.code)" }
                                            + (place == "NULL" ? [] : ["an error of this build"]))
                map?.page = page == "NULL" ? nil : titles[key].map { "\($0) (page \(key))" } ?? "page \(key)"
                if let map { maps.append(map) }
            }
        }
        return maps
    }

    /// Page titles by id, when the bundle has a `page` table with `id` and `title`.
    private static func pageTitles(_ database: Database) throws -> [String: String] {
        let columns = try database.rows("SELECT name FROM pragma_table_info('page')").compactMap { $0.values.first?.textValue }
        guard columns.contains("id"), columns.contains("title") else { return [:] }
        var titles: [String: String] = [:]
        for row in try database.rows("SELECT id, title FROM page") {
            if let id = row.values[0].textValue, let title = row.values[1].textValue { titles[id] = title }
        }
        return titles
    }

    package init?(table: String, latitude: String, longitude: String, points: [Point], flaggedBy: [String] = []) {
        guard !points.isEmpty else { return nil }
        self.table = table
        latitudeColumn = latitude
        longitudeColumn = longitude
        self.points = points
        self.flaggedBy = flaggedBy
        median = (latitude: CoordinateMap.median(points.map(\.latitude)), longitude: CoordinateMap.median(points.map(\.longitude)))
        view = MapView(latitudes: CoordinateMap.robustRange(points.map(\.latitude)),
                       longitudes: CoordinateMap.robustRange(points.map(\.longitude)))
    }

    /// What flags the table's rows (its `outlier` column, the manifest's `bounds` rules); empty when nothing does.
    package let flaggedBy: [String]
    /// Where the points are drawn.
    package let view: MapView

    /// The rows the table flags.
    package var outliers: [Point] { points.filter(\.outlier) }
    /// The points outside the drawn extent (drawn at its edge).
    package var offMap: [Point] { points.filter { !view.contains($0) } }

    /// The distance in kilometres from the median.
    package func distanceFromMedian(_ point: Point) -> Double {
        KilnSQLFunctions.distance(point.latitude, point.longitude, median.latitude, median.longitude)
    }

    /// The range of `values` to draw. The bulk is every value within five scaled median absolute deviations of the
    /// median (at least 0.01°, about a kilometre) or within the central 80% (by rank); the range then reaches every
    /// value at most the bulk's width (at least 0.05°) beyond it. A value is left out only when it is among the few
    /// most extreme and far from all the others, so that it cannot shrink them to a dot.
    package static func robustRange(_ values: [Double]) -> ClosedRange<Double> {
        let sorted = values.sorted()
        guard sorted.count >= 3 else { return sorted.first!...sorted.last! }
        let center = median(sorted)
        let fence = max(5 * 1.4826 * median(sorted.map { abs($0 - center) }), 0.01)
        let last = Double(sorted.count - 1)
        let low = min(sorted[Int((0.1 * last).rounded(.up))], sorted.first { $0 >= center - fence }!)
        let high = max(sorted[Int((0.9 * last).rounded(.down))], sorted.last { $0 <= center + fence }!)
        let reach = max(high - low, 0.05)
        return sorted.first { $0 >= low - reach }!...sorted.last { $0 <= high + reach }!
    }

    /// The map as an inline SVG element, 100% wide; north up, longitude scaled by the cosine of the middle latitude.
    package func svg() -> String {
        let plot = view.plot
        var svg = "<svg class=\"map\" role=\"img\" viewBox=\"0 0 \(MapView.width) \(Int(view.height.rounded(.up)))\" data-table=\"\(HTML.escape(table))\" data-page=\"\(HTML.escape(page ?? ""))\" "
            + "data-points=\"\(points.count)\" data-outliers=\"\(outliers.count)\" data-offmap=\"\(offMap.count)\" "
            + "data-plot=\"\(format(plot.minX)) \(format(plot.minY)) \(format(plot.width)) \(format(plot.height))\" xmlns=\"http://www.w3.org/2000/svg\">"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><rect class=\"plot\" x=\"\(format(plot.minX))\" y=\"\(format(plot.minY))\" "
            + "width=\"\(format(plot.width))\" height=\"\(format(plot.height))\"/>"
        svg += axes() + scaleBar()
        for point in points where !point.outlier && view.contains(point) {
            let (x, y) = view.position(point)
            svg += "<circle class=\"point\" cx=\"\(format(x))\" cy=\"\(format(y))\" r=\"4\"><title>\(HTML.escape(point.label))</title></circle>"
        }
        for point in points where point.outlier && view.contains(point) {
            let (x, y) = view.position(point)
            svg += "<circle class=\"outlier\" cx=\"\(format(x))\" cy=\"\(format(y))\" r=\"7\"><title>\(HTML.escape(point.label)) (flagged by the table)</title></circle>"
        }
        for point in offMap {
            let (x, y) = view.position(point)
            svg += "<path class=\"offmap\(point.outlier ? " flagged" : "")\" d=\"M\(format(x)) \(format(y)) m0 -9 l9 9 l-9 9 l-9 -9 z\">"
                + "<title>\(HTML.escape(point.label)): \(format(point.latitude, digits: 5)), \(format(point.longitude, digits: 5)), "
                + "\(format(distanceFromMedian(point))) km from the median, outside the map</title></path>"
        }
        let (mx, my) = view.position(Point(label: "", latitude: median.latitude, longitude: median.longitude))
        svg += "<g class=\"median\"><title>median \(format(median.latitude, digits: 5)), \(format(median.longitude, digits: 5))</title>"
            + "<path d=\"M\(format(mx)) \(format(my)) m-12 0 h24 m-12 -12 v24\"/></g>"
        return svg + "</svg>"
    }

    /// Grid lines and labels in degrees on the left (latitude) and bottom (longitude) edges of the plot.
    private func axes() -> String {
        let plot = view.plot
        var svg = "<g class=\"axes\">"
        let latitudes = view.visibleLatitudes, longitudes = view.visibleLongitudes
        let latitudeStep = MapView.niceStep((latitudes.upperBound - latitudes.lowerBound) / 6)
        let longitudeStep = MapView.niceStep((longitudes.upperBound - longitudes.lowerBound) / 6)
        for latitude in MapView.ticks(latitudes, step: latitudeStep) {
            let y = view.y(latitude)
            svg += "<line x1=\"\(format(plot.minX))\" y1=\"\(format(y))\" x2=\"\(format(plot.maxX))\" y2=\"\(format(y))\"/>"
                + "<text class=\"latitude\" x=\"\(format(plot.minX - 6))\" y=\"\(format(y + 6))\" text-anchor=\"end\">"
                + "\(MapView.degrees(latitude, step: latitudeStep, positive: "N", negative: "S"))</text>"
        }
        for longitude in MapView.ticks(longitudes, step: longitudeStep) {
            let x = view.x(longitude)
            svg += "<line x1=\"\(format(x))\" y1=\"\(format(plot.minY))\" x2=\"\(format(x))\" y2=\"\(format(plot.maxY))\"/>"
                + "<text class=\"longitude\" x=\"\(format(x))\" y=\"\(format(plot.maxY + 24))\" text-anchor=\"middle\">"
                + "\(MapView.degrees(longitude, step: longitudeStep, positive: "E", negative: "W"))</text>"
        }
        return svg + "</g>"
    }

    /// A bar of a round length (1, 2 or 5 times a power of ten, in metres or kilometres) about a fifth of the plot's
    /// width, at its bottom left.
    private func scaleBar() -> String {
        let plot = view.plot
        let pixelsPerKilometre = view.factor / (KilnSQLFunctions.earthRadius * .pi / 180)
        let kilometres = MapView.niceStep(plot.width / 5 / pixelsPerKilometre, roundingDown: true)
        let length = kilometres * pixelsPerKilometre
        let label = kilometres >= 1 ? "\(MapView.plain(kilometres)) km" : "\(MapView.plain(kilometres * 1000)) m"
        let x = plot.minX + 16, y = plot.maxY - 16
        return "<g class=\"scale\" data-kilometres=\"\(MapView.plain(kilometres))\" data-length=\"\(format(length))\">"
            + "<rect x=\"\(format(x - 6))\" y=\"\(format(y - 30))\" width=\"\(format(length + 12))\" height=\"40\" fill=\"#fff\" fill-opacity=\".8\"/>"
            + "<path d=\"M\(format(x)) \(format(y - 8)) v8 h\(format(length)) v-8\"/>"
            + "<text x=\"\(format(x + length / 2))\" y=\"\(format(y - 12))\" text-anchor=\"middle\">\(label)</text></g>"
    }

    private func format(_ value: Double, digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// How a map's degrees become the SVG's pixels: the plot area inside the margins for the axes, and the visible
/// extent — the robust ranges with a margin, widened to the plot's shape — at one scale for both axes (longitude
/// times the cosine of the middle latitude).
package struct MapView {
    package static let width = 1000
    /// The plot's margins: left for the latitudes, bottom for the longitudes.
    package static let left = 128.0, right = 14.0, top = 14.0, bottom = 38.0

    package let plot: (minX: Double, minY: Double, width: Double, height: Double, maxX: Double, maxY: Double)
    /// Pixels per degree of latitude.
    package let factor: Double
    package let cosine: Double
    package let visibleLatitudes: ClosedRange<Double>
    package let visibleLongitudes: ClosedRange<Double>
    package var height: Double { plot.maxY + MapView.bottom }

    package init(latitudes: ClosedRange<Double>, longitudes: ClosedRange<Double>) {
        let middle = (latitudes.lowerBound + latitudes.upperBound) / 2
        cosine = max(cos(middle * .pi / 180), 0.01)
        let spanX = (longitudes.upperBound - longitudes.lowerBound) * cosine, spanY = latitudes.upperBound - latitudes.lowerBound
        let span = max(spanX, spanY, 0.002) * 1.1
        let plotWidth = Double(MapView.width) - MapView.left - MapView.right
        factor = plotWidth / span
        let plotHeight = max(220, spanY * 1.1 * factor)
        plot = (MapView.left, MapView.top, plotWidth, plotHeight, MapView.left + plotWidth, MapView.top + plotHeight)
        let halfLatitude = plotHeight / factor / 2, halfLongitude = plotWidth / factor / cosine / 2
        let centerLongitude = (longitudes.lowerBound + longitudes.upperBound) / 2
        visibleLatitudes = (middle - halfLatitude)...(middle + halfLatitude)
        visibleLongitudes = (centerLongitude - halfLongitude)...(centerLongitude + halfLongitude)
    }

    package func contains(_ point: CoordinateMap.Point) -> Bool {
        visibleLatitudes.contains(point.latitude) && visibleLongitudes.contains(point.longitude)
    }

    package func x(_ longitude: Double) -> Double { plot.minX + (longitude - visibleLongitudes.lowerBound) * cosine * factor }
    package func y(_ latitude: Double) -> Double { plot.minY + (visibleLatitudes.upperBound - latitude) * factor }

    /// Where `point` is drawn: its place, or for a point outside the extent the nearest place on the plot's edge.
    package func position(_ point: CoordinateMap.Point) -> (Double, Double) {
        (min(max(x(point.longitude), plot.minX), plot.maxX), min(max(y(point.latitude), plot.minY), plot.maxY))
    }

    /// 1, 2 or 5 times a power of ten: the nearest to `value` at or above it, or (`roundingDown`) at or below it.
    package static func niceStep(_ value: Double, roundingDown: Bool = false) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        let steps = [1.0, 2, 5, 10].map { $0 * power }
        return roundingDown ? steps.last { $0 <= value * (1 + 1e-9) }! : steps.first { $0 >= value * (1 - 1e-9) }!
    }

    /// The multiples of `step` within `range`.
    package static func ticks(_ range: ClosedRange<Double>, step: Double) -> [Double] {
        let first = (range.lowerBound / step).rounded(.up), last = (range.upperBound / step).rounded(.down)
        guard first <= last else { return [] }
        return stride(from: first, through: last, by: 1).map { $0 * step }
    }

    /// `value` in degrees with the decimals `step` needs and a hemisphere letter: `38.24°N`, `0°`.
    package static func degrees(_ value: Double, step: Double, positive: String, negative: String) -> String {
        let digits = max(0, Int((-log10(step)).rounded(.up)))
        let text = String(format: "%.\(digits)f", abs(value))
        let zero = Double(text) == 0
        return text + "°" + (zero ? "" : value > 0 ? positive : negative)
    }

    /// A round number without a trailing `.0`.
    package static func plain(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}

/// A map of a failed build's staged rows, as its JSON report keeps it (no bundle holds them for `kiln report` to
/// read): the table, its coordinate columns, the page, what flags points, and each point.
public struct StagedMap: Codable, Sendable, Equatable {
    /// One staged row's label, place, and whether an error or a rule flags it.
    public struct Point: Codable, Sendable, Equatable {
        public var label: String
        public var latitude: Double
        public var longitude: Double
        public var flagged: Bool
    }

    /// At most this many staged rows are kept per table (the first in staging order), so that the report stays small.
    package static let pointLimit = 5_000

    public var table: String
    public var latitude: String
    public var longitude: String
    public var page: String?
    public var flaggedBy: [String]
    public var points: [Point]

    package init(_ map: CoordinateMap) {
        table = map.table
        latitude = map.latitudeColumn
        longitude = map.longitudeColumn
        page = map.page
        flaggedBy = map.flaggedBy
        points = map.points.map { Point(label: $0.label, latitude: $0.latitude, longitude: $0.longitude, flagged: $0.outlier) }
    }

    /// The map to draw.
    package var map: CoordinateMap? {
        var map = CoordinateMap(table: table, latitude: latitude, longitude: longitude,
                                points: points.map { CoordinateMap.Point(label: $0.label, latitude: $0.latitude, longitude: $0.longitude, outlier: $0.flagged) },
                                flaggedBy: flaggedBy)
        map?.page = page
        return map
    }
}
