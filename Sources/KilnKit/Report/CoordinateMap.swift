import Foundation

/// The points of one bundle table that has coordinates (or of one page of it), drawn as an SVG map: every row with
/// both coordinates, the median point, and the outliers in another colour — the rows the table itself flags (an
/// `outlier` column, as the travel guide's listings have), or else the points farther from the median than five
/// times the median distance (and more than a kilometre). A table with a `page_id` column gets one map per page
/// (the pages with most points first), each with that page's median.
struct CoordinateMap {
    struct Point {
        var label: String
        var latitude: Double
        var longitude: Double
        var outlier = false
    }

    let table: String
    /// The page the points belong to, for a table mapped per page.
    var page: String?
    let latitudeColumn: String
    let longitudeColumn: String
    private(set) var points: [Point]
    let median: (latitude: Double, longitude: Double)

    /// At most this many points are drawn per table (the first in key order); the count says how many there are.
    static let pointLimit = 20_000
    /// At most this many pages are drawn per table mapped per page.
    static let pageLimit = 6

    /// The maps of every table in `tables` that has a latitude and a longitude column (`latitude`/`lat`,
    /// `longitude`/`lon`/`long`/`lng`) and at least one row with both.
    /// - Throws: `SQLiteError` when the bundle cannot be read.
    static func maps(in database: Database, tables: [String]) throws -> [CoordinateMap] {
        var maps: [CoordinateMap] = []
        for table in tables {
            let columns = try database.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0.values.first?.textValue }
            guard let latitude = ["latitude", "lat"].first(where: columns.contains),
                  let longitude = ["longitude", "lon", "long", "lng"].first(where: columns.contains) else { continue }
            let label = ["name", "title", "code", "id"].first(where: columns.contains)
            let flagged = columns.contains("outlier") ? "\"outlier\"" : "NULL"
            let page = columns.contains("page_id") ? "\"page_id\"" : "NULL"
            let sql = "SELECT \(label.map(quoteIdentifier) ?? "rowid"), \(quoteIdentifier(latitude)), \(quoteIdentifier(longitude)), \(flagged), \(page) "
                + "FROM \(quoteIdentifier(table)) "
                + "WHERE typeof(\(quoteIdentifier(latitude))) IN ('integer', 'real') AND typeof(\(quoteIdentifier(longitude))) IN ('integer', 'real') "
                + "ORDER BY rowid LIMIT \(pointLimit)"
            var groups: [String: [Point]] = [:], order: [String] = []
            for row in try database.rows(sql) {
                guard let lat = row.values[1].number, let lon = row.values[2].number, abs(lat) <= 90, abs(lon) <= 180 else { continue }
                var point = Point(label: row.values[0].textValue ?? "", latitude: lat, longitude: lon)
                if flagged != "NULL" { point.outlier = (row.values[3].number ?? 0) != 0 }
                let key = row.values[4].textValue ?? ""
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(point)
            }
            let pages = order.sorted { (groups[$0]!.count, $1) > (groups[$1]!.count, $0) }.prefix(page == "NULL" ? 1 : pageLimit)
            let titles = page == "NULL" ? [:] : try pageTitles(database)
            for key in pages {
                var map = CoordinateMap(table: table, latitude: latitude, longitude: longitude, points: groups[key]!, flagged: flagged != "NULL")
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

    init?(table: String, latitude: String, longitude: String, points: [Point], flagged: Bool = false) {
        guard !points.isEmpty else { return nil }
        self.table = table
        latitudeColumn = latitude
        longitudeColumn = longitude
        let center = (latitude: CoordinateMap.median(points.map(\.latitude)), longitude: CoordinateMap.median(points.map(\.longitude)))
        median = center
        let distances = points.map { KilnSQLFunctions.distance($0.latitude, $0.longitude, center.latitude, center.longitude) }
        let limit = max(5 * CoordinateMap.median(distances), 1)
        self.points = flagged ? points : zip(points, distances).map { point, distance in
            var point = point
            point.outlier = distance > limit
            return point
        }
    }

    var outliers: [Point] { points.filter(\.outlier) }

    /// The map as an inline SVG element, 100% wide; north up, longitude scaled by the cosine of the median latitude.
    func svg() -> String {
        let scale = cos(median.latitude * .pi / 180)
        let xs = points.map { $0.longitude * scale }, ys = points.map { -$0.latitude }
        let minX = xs.min()!, maxX = xs.max()!, minY = ys.min()!, maxY = ys.max()!
        let span = max(maxX - minX, maxY - minY, 0.001)
        let width = 1000.0, pad = 20.0
        let factor = (width - 2 * pad) / span
        let height = max(200, (maxY - minY) * factor + 2 * pad)
        func x(_ value: Double) -> String { format(pad + (value - minX) * factor) }
        func y(_ value: Double) -> String { format(pad + (value - minY) * factor) }
        var svg = "<svg class=\"map\" role=\"img\" viewBox=\"0 0 \(Int(width)) \(Int(height.rounded(.up)))\" data-table=\"\(HTML.escape(table))\" data-page=\"\(HTML.escape(page ?? ""))\" "
            + "data-points=\"\(points.count)\" data-outliers=\"\(outliers.count)\" xmlns=\"http://www.w3.org/2000/svg\">"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"#f4f6f8\"/>"
        for (point, (px, py)) in zip(points, zip(xs, ys)) where !point.outlier {
            svg += "<circle class=\"point\" cx=\"\(x(px))\" cy=\"\(y(py))\" r=\"4\"><title>\(HTML.escape(point.label))</title></circle>"
        }
        for (point, (px, py)) in zip(points, zip(xs, ys)) where point.outlier {
            svg += "<circle class=\"outlier\" cx=\"\(x(px))\" cy=\"\(y(py))\" r=\"7\"><title>\(HTML.escape(point.label)) (far from the median)</title></circle>"
        }
        let mx = x(median.longitude * scale), my = y(-median.latitude)
        svg += "<g class=\"median\"><title>median \(format(median.latitude, digits: 5)), \(format(median.longitude, digits: 5))</title>"
            + "<path d=\"M\(mx) \(my) m-12 0 h24 m-12 -12 v24\"/></g>"
        return svg + "</svg>"
    }

    private func format(_ value: Double, digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
