import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Writes query rows as a GeoJSON FeatureCollection (RFC 7946) that any map viewer opens: one Point feature per row,
/// `[longitude, latitude]` from the `latitude` and `longitude` columns (a row missing either gets `"geometry": null`),
/// the `id` column as the feature's id, and every other column, in query order, as a property. One feature per
/// line; numbers are written as SQLite holds them and text as UTF-8, so the same bundle gives the same bytes.
package final class GeoJSONWriter: RecordWriter {
    package static let format = "geojson"

    package struct Options: Decodable {
        package var latitude = "lat"
        package var longitude = "lon"
        /// The feature id column; `nil` when the manifest gives none and the query has no `id` column.
        package var id: String?

        package enum CodingKeys: String, CodingKey, CaseIterable { case latitude, longitude, id }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            latitude = try c.decodeIfPresent(String.self, forKey: .latitude) ?? "lat"
            longitude = try c.decodeIfPresent(String.self, forKey: .longitude) ?? "lon"
            id = try c.decodeIfPresent(String.self, forKey: .id)
        }
    }

    private let options: Options
    private var idColumn: String?
    private var started = false
    private var pending: String?

    package init(options: JSONValue, manifest: Manifest) throws {
        self.options = try options.decode(Options.self, codingPath: [])
    }

    package func check(columns: [String]) throws {
        try require([options.latitude, options.longitude] + (options.id.map { [$0] } ?? []), in: columns)
        idColumn = options.id ?? (columns.contains("id") ? "id" : nil)
    }

    package func add(_ row: Row, to sink: TextFileSink) throws {
        try start(sink)
        if let pending { try sink.line(pending + ",") }
        pending = feature(row)
    }

    package func finish(_ sink: TextFileSink) throws {
        try start(sink)
        if let pending { try sink.line(pending) }
        pending = nil
        try sink.line("]}")
    }

    private func start(_ sink: TextFileSink) throws {
        guard !started else { return }
        started = true
        try sink.line(#"{"type":"FeatureCollection","features":["#)
    }

    private func feature(_ row: Row) -> String {
        var text = #"{"type":"Feature""#
        if let idColumn { text += #","id":"# + JSONText.value(row[idColumn]) }
        let latitude = row[options.latitude].number, longitude = row[options.longitude].number
        if let latitude, let longitude, latitude.isFinite, longitude.isFinite {
            text += #","geometry":{"type":"Point","coordinates":["# + JSONText.value(.real(longitude)) + ","
                + JSONText.value(.real(latitude)) + "]}"
        } else {
            text += #","geometry":null"#
        }
        let skipped: Set<String> = [options.latitude, options.longitude, idColumn ?? ""]
        let properties = zip(row.columns, row.values).filter { !skipped.contains($0.0) }
            .map { JSONText.string($0.0) + ":" + JSONText.value($0.1) }
        return text + #","properties":{"# + properties.joined(separator: ",") + "}}"
    }
}
