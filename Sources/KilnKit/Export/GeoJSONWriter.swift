/// Writes query rows as a GeoJSON FeatureCollection (RFC 7946) that any map viewer opens: one Point feature per row,
/// `[longitude, latitude]` from the `latitude` and `longitude` columns (a row missing either gets `"geometry": null`),
/// the `id` column as the feature's id, and every other column, in query order, as a property. One feature per
/// line; numbers are written as SQLite holds them and text as UTF-8, so the same bundle gives the same bytes.
final class GeoJSONWriter: RecordWriter {
    static let format = "geojson"

    struct Options: Decodable {
        var latitude = "lat"
        var longitude = "lon"
        /// The feature id column; `nil` when the manifest gives none and the query has no `id` column.
        var id: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case latitude, longitude, id }

        init(from decoder: Decoder) throws {
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

    init(options: JSONValue, manifest: Manifest) throws {
        self.options = try options.decode(Options.self, codingPath: [])
    }

    func check(columns: [String]) throws {
        try require([options.latitude, options.longitude] + (options.id.map { [$0] } ?? []), in: columns)
        idColumn = options.id ?? (columns.contains("id") ? "id" : nil)
    }

    func add(_ row: Row, to sink: TextFileSink) throws {
        try start(sink)
        if let pending { try sink.line(pending + ",") }
        pending = feature(row)
    }

    func finish(_ sink: TextFileSink) throws {
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

/// JSON text for SQLite values, written by hand so that large exports stream and their bytes never depend on an
/// encoder's choices.
enum JSONText {
    /// A number, a string, a hexadecimal string for a blob, or `null` (also for numbers JSON cannot hold).
    static func value(_ value: SQLValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let number): return String(number)
        case .real(let number): return number.isFinite ? SQLValue.format(number) : "null"
        case .text(let text): return string(text)
        case .blob: return string(value.textValue ?? "")
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    static func string(_ text: String) -> String { "\"" + escaped(text) + "\"" }

    /// A JSON string's contents as Foundation's encoder writes them (slashes not escaped, `\b` and `\f` short), so
    /// that text written by hand and text written by `KilnJSON` are the same bytes.
    static func escaped(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return value }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\u{08}": escaped += "\\b"
            case "\u{0C}": escaped += "\\f"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
