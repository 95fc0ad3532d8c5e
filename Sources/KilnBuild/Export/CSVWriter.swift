import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Writes query rows as CSV (RFC 4180, the form GTFS requires): a header row of the query's column names, then one
/// row per query row. A field is quoted only when it holds a comma, a double quote (doubled) or a line break; NULL
/// is an empty field; text is UTF-8 without a byte order mark; lines end with LF.
/// The `clock` option names columns that hold seconds after midnight, written as `HH:MM:SS` with hours past 23 kept
/// (a trip leaving at half past midnight of the service day is `24:30:00`, never wrapped to `00:30:00`).
package final class CSVWriter: RecordWriter {
    package static let format = "csv"

    package struct Options: Decodable {
        package var clock: [String] = []

        package enum CodingKeys: String, CodingKey, CaseIterable { case clock }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            clock = try c.decodeIfPresent([String].self, forKey: .clock) ?? []
        }
    }

    private let options: Options
    private var clockColumns: Set<Int> = []
    private var header: String?

    package init(options: JSONValue, manifest: Manifest) throws {
        self.options = try options.decode(Options.self, codingPath: [])
    }

    package func check(columns: [String]) throws {
        try require(options.clock, in: columns)
        clockColumns = Set(columns.indices.filter { options.clock.contains(columns[$0]) })
        header = columns.map(CSVWriter.field).joined(separator: ",")
    }

    package func add(_ row: Row, to sink: TextFileSink) throws {
        try writeHeader(sink)
        var fields: [String] = []
        for (index, value) in row.values.enumerated() {
            if clockColumns.contains(index), case .integer(let seconds) = value {
                fields.append(CSVWriter.clockTime(seconds))
            } else {
                fields.append(CSVWriter.field(value.textValue ?? ""))
            }
        }
        try sink.line(fields.joined(separator: ","))
    }

    package func finish(_ sink: TextFileSink) throws { try writeHeader(sink) }

    private func writeHeader(_ sink: TextFileSink) throws {
        guard let header else { return }
        try sink.line(header)
        self.header = nil
    }

    /// One CSV field: quoted when it holds a comma, a double quote, CR or LF, with its quotes doubled.
    package static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Seconds after midnight as `HH:MM:SS`; hours go past 23 for times after midnight of the service day.
    package static func clockTime(_ seconds: Int64) -> String {
        let hours = seconds / 3600, minutes = seconds / 60 % 60, rest = seconds % 60
        func two(_ number: Int64) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(two(hours)):\(two(minutes)):\(two(rest))"
    }
}
