import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln init DIR [INPUT…]`: a first, commented `kiln.json5` sketched from the inputs, which builds at once. Each
/// delimited file (comma, semicolon, tab or bar; quoted or not; UTF-8 or Windows-1252; with a header or without) is
/// read by the delimited reader itself with the separator and quoting its first line suggests, and becomes a table:
/// a column per field, typed by every value (`integer` only without leading zeros, so that a code `0123` stays text;
/// `real`; else `text`), `notNull` where no value is empty, the key the first id-like (else text or integer) column unique in every row. A
/// GTFS feed (`stops.txt` beside `routes.txt`, `trips.txt` or `stop_times.txt`) gets GTFS's own keys and the
/// references its rows keep (`stop_times.trip_id` → `trips.trip_id`…). Nothing is declared that the data breaks.
package struct ManifestSketch {
    /// One delimited input as sniffed.
    package struct Table {
        package var name: String
        /// The input's path in the pipeline folder.
        package var path: String
        package var separator: String
        package var quoted: Bool
        /// `nil` for UTF-8.
        package var encoding: String?
        /// True when the first record names the fields.
        package var header: Bool
        package var fields: [String]
        package var columns: [Column]
        package var key: [String] = []
        package var records: Int
        /// Each field's values, for keys and references.
        var values: [[String]]
    }

    /// One column: its name, the field it reads, its type, whether every row has a value, what it refers to.
    package struct Column {
        package var name: String
        package var field: String
        package var type: String
        package var notNull: Bool
        package var references: String?
    }

    package var bundle: String
    package var tables: [Table]
    /// True when the tables are a GTFS feed's.
    package var gtfs: Bool

    /// GTFS's keys by file (https://gtfs.org/documentation/schedule/reference/).
    static let gtfsKeys: [String: [String]] = [
        "agency": ["agency_id"], "stops": ["stop_id"], "routes": ["route_id"], "trips": ["trip_id"],
        "stop_times": ["trip_id", "stop_sequence"], "calendar": ["service_id"], "calendar_dates": ["service_id", "date"],
        "shapes": ["shape_id", "shape_pt_sequence"], "frequencies": ["trip_id", "start_time"], "levels": ["level_id"],
    ]

    /// GTFS's references: (file, field) → (file, field).
    static let gtfsReferences: [(String, String, String, String)] = [
        ("routes", "agency_id", "agency", "agency_id"), ("trips", "route_id", "routes", "route_id"),
        ("stop_times", "trip_id", "trips", "trip_id"), ("stop_times", "stop_id", "stops", "stop_id"),
        ("frequencies", "trip_id", "trips", "trip_id"), ("trips", "service_id", "calendar", "service_id"),
    ]

    /// Sketches the pipeline `bundle` of the delimited files `inputs` (URL and path in the pipeline folder).
    /// - Throws: `KilnError.usage` for an input that is not delimited text the reader reads; `KilnError.io` as the
    ///   reader does.
    package init(bundle: String, inputs: [(url: URL, path: String)]) throws {
        self.bundle = bundle
        var tables: [Table] = []
        var names: Set<String> = []
        for input in inputs {
            var table = try ManifestSketch.sniff(input.url, path: input.path)
            while names.contains(table.name) { table.name += "_2" }
            names.insert(table.name)
            tables.append(table)
        }
        let stems = Set(inputs.map { ($0.path as NSString).lastPathComponent })
        gtfs = stems.contains("stops.txt") && !stems.isDisjoint(with: ["routes.txt", "trips.txt", "stop_times.txt"])
        for index in tables.indices {
            tables[index].key = ManifestSketch.key(tables[index], gtfs: gtfs)
        }
        if gtfs { ManifestSketch.addReferences(&tables) }
        self.tables = tables
    }

    /// `Stops Export.csv` → `stops_export`: a plain identifier, not reserved.
    static func identifier(_ text: String) -> String {
        var name = String(text.lowercased().unicodeScalars.map { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) ? Character($0) : "_" })
        while name.contains("__") { name = name.replacingOccurrences(of: "__", with: "_") }
        name = name.trimmingCharacters(in: CharacterSet(charactersIn: "_"))
        if name.isEmpty || name.first!.isNumber || name.hasPrefix("kiln_") || name.hasPrefix("sqlite_") { name = "t_" + name }
        return name
    }

    /// The separator the first line suggests: the candidate it holds most of, outside quotes (`,` when none).
    static func separator(ofFirstLine line: Substring) -> (separator: String, quoted: Bool) {
        var counts: [Character: Int] = [:], inQuotes = false, quoted = false
        for character in line {
            if character == "\"" { inQuotes.toggle(); quoted = true; continue }
            if !inQuotes, [",", ";", "\t", "|"].contains(character) { counts[character, default: 0] += 1 }
        }
        let best = [",", ";", "\t", "|"].max { (counts[$0] ?? 0) < (counts[$1] ?? 0) } ?? ","
        return (String((counts[best] ?? 0) > 0 ? best : ","), quoted)
    }

    private static func sniff(_ url: URL, path: String) throws -> Table {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw CannotRead.error(url, error) }
        let utf8 = String(data: data, encoding: .utf8)
        let text = utf8 ?? String(decoding: data, as: UTF8.self)
        let firstLine = text.drop { $0 == "\u{FEFF}" }.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
        let (separator, quotedLine) = separator(ofFirstLine: firstLine)
        // Any quote: RFC 4180's quoting (a quote inside an unquoted field stays text, with a warning).
        let quoted = quotedLine || text.contains("\"")
        var count = 1, inQuotes = false
        for character in firstLine {
            if character == "\"" { inQuotes.toggle() } else if !inQuotes, String(character) == separator { count += 1 }
        }
        let placeholders = (1...count).map { "field\($0)" }
        var options: [String: JSONValue] = ["separator": .string(separator), "fields": .array(placeholders.map(JSONValue.string))]
        if quoted { options["quote"] = .string("\"") }
        let encoding = utf8 == nil ? "windows-1252" : nil
        if let encoding { options["encoding"] = .string(encoding) }
        let reader = try ReaderRegistry.makeReader(format: "delimited", options: .object(options), codingPath: [])
        let log = DiagnosticLog()
        var rows: [[String]] = []
        try reader.read(InputFile(url: url, relativePath: path), log: log) { record in
            rows.append(record.values.map { $0 ?? "" })
        }
        if let problem = log.sorted.first(where: { $0.severity == .error }) {
            throw KilnError.usage("\(path) is not delimited text kiln init can sketch: \(problem.formatted)")
        }
        guard let first = rows.first else { throw KilnError.usage("\(path) holds no records to sketch a table from") }
        // A header: every name is text that is not a number, and the names are distinct.
        let trimmed = first.map { $0.trimmingCharacters(in: .whitespaces) }
        let header = !trimmed.contains { $0.isEmpty || Double($0) != nil } && Set(trimmed).count == trimmed.count && rows.count > 1
        let fields = header ? trimmed : placeholders
        let records = header ? Array(rows.dropFirst()) : rows
        var values = Array(repeating: [String](), count: count)
        for row in records { for index in 0..<count { values[index].append(index < row.count ? row[index].trimmingCharacters(in: .whitespaces) : "") } }
        var used: Set<String> = []
        let columns = fields.enumerated().map { index, field -> Column in
            var name = identifier(field)
            while used.contains(name) { name += "_2" }
            used.insert(name)
            return Column(name: name, field: field, type: columnType(values[index], name: name), notNull: !values[index].contains(""), references: nil)
        }
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        return Table(name: identifier(stem), path: path, separator: separator, quoted: quoted, encoding: encoding, header: header,
                     fields: fields, columns: columns, records: records.count, values: values)
    }

    /// The type every value of a column fits, written back as it was: `integer` (no leading zero, within 64 bits),
    /// `real`, else `text`; identifiers (`…id`, `code`) stay text.
    static func columnType(_ values: [String], name: String) -> String {
        let present = values.filter { !$0.isEmpty }
        if present.isEmpty || name == "id" || name.hasSuffix("_id") || name.hasSuffix("code") { return "text" }
        let isInteger = { (value: String) -> Bool in
            guard let number = Int64(value) else { return false }
            return String(number) == value
        }
        if present.allSatisfy(isInteger) { return "integer" }
        // A real only where SQLite gives the text back: `0102`, `6.10` (a line beside `6.1`) and `1e5` stay text.
        let isReal = { (value: String) -> Bool in
            isInteger(value) || (value.wholeMatch(of: /-?[0-9]+\.[0-9]+/) != nil && Double(value).map { "\($0)" } == value)
        }
        return present.allSatisfy(isReal) ? "real" : "text"
    }

    /// The key of `table`: GTFS's own for a feed's file, else the first id-like column, or the first text or integer
    /// column, whose values are present and unique in every row; none when no column is.
    static func key(_ table: Table, gtfs: Bool) -> [String] {
        func unique(_ columns: [String]) -> Bool {
            let positions = columns.compactMap { name in table.columns.firstIndex { $0.field == name } }
            guard positions.count == columns.count, table.records > 0 else { return false }
            var seen: Set<[String]> = []
            for row in 0..<table.records {
                let key = positions.map { table.values[$0][row] }
                if key.contains("") || !seen.insert(key).inserted { return false }
            }
            return true
        }
        if gtfs, let known = gtfsKeys[table.name] {
            return unique(known) ? known.compactMap { field in table.columns.first { $0.field == field }?.name } : []
        }
        let candidates = table.columns.filter { $0.name == "id" || $0.name.hasSuffix("_id") || $0.name == "code" } + table.columns.filter { $0.type != "real" }
        guard let column = candidates.first(where: { unique([$0.field]) }) else { return [] }
        return [column.name]
    }

    /// GTFS's references that every row keeps (a value present is one of the referred file's keys).
    private static func addReferences(_ tables: inout [Table]) {
        for (file, field, target, targetField) in gtfsReferences {
            guard let child = tables.firstIndex(where: { $0.name == file }), let parent = tables.first(where: { $0.name == target }),
                  parent.key.count == 1, let parentColumn = parent.columns.firstIndex(where: { $0.field == targetField }),
                  parent.key == [parent.columns[parentColumn].name],
                  let column = tables[child].columns.firstIndex(where: { $0.field == field }) else { continue }
            let known = Set(parent.values[parentColumn])
            guard tables[child].values[column].allSatisfy({ $0.isEmpty || known.contains($0) }) else { continue }
            tables[child].columns[column].references = "\(parent.name).\(parent.columns[parentColumn].name)"
        }
    }

    /// The manifest's text: commented, in the order the inputs were given.
    package func json5() -> String {
        var lines = ["// Sketched by kiln init from \(tables.count) input\(tables.count == 1 ? "" : "s")\(gtfs ? " (a GTFS feed)" : ""): check the types, keys and",
                     "// references, then describe the tables. Reference: docs/reference/manifest.md. Paths are relative to this folder.",
                     "{", "  bundle: \(JSONText.string(bundle)),", "  schemaVersion: 1,", "", "  tables: ["]
        for table in tables {
            lines.append("    {")
            lines.append("      name: \(JSONText.string(table.name)),   // \(table.records) record\(table.records == 1 ? "" : "s") in \(table.path)")
            lines.append("      columns: [")
            for column in table.columns {
                var parts = ["name: \(JSONText.string(column.name))", "type: \(JSONText.string(column.type))"]
                if column.notNull { parts.append("notNull: true") }
                if let references = column.references { parts.append("references: \(JSONText.string(references))") }
                lines.append("        { \(parts.joined(separator: ", ")) },")
            }
            lines.append("      ],")
            if !table.key.isEmpty { lines.append("      primaryKey: [\(table.key.map(JSONText.string).joined(separator: ", "))],") }
            lines.append("    },")
        }
        lines += ["  ],", "", "  sources: ["]
        for table in tables {
            var what = ["separator \(JSONText.string(table.separator))"]
            if table.quoted { what.append("quoted fields") }
            what.append(table.header ? "a header naming the fields" : "no header")
            if let encoding = table.encoding { what.append("not UTF-8: read as \(encoding)") }
            var options = ["separator: \(JSONText.string(table.separator))"]
            if table.quoted { options.append(#"quote: "\"""#) }
            if table.header { options.append(#"header: "names""#) }
            if let encoding = table.encoding { options.append("encoding: \(JSONText.string(encoding))") }
            options.append("fields: [\(table.fields.map(JSONText.string).joined(separator: ", "))]")
            lines.append("    {")
            lines.append("      // \(what.joined(separator: ", "))")
            lines.append("      name: \(JSONText.string(table.name)), format: \"delimited\", path: \(JSONText.string(table.path)),")
            lines.append("      options: { \(options.joined(separator: ", ")) },")
            lines.append("      into: \(JSONText.string(table.name)),")
            let mapping = table.columns.map { "\(JSONText.string($0.name)): \(JSONText.string($0.field))" }
            lines.append("      columns: { \(mapping.joined(separator: ", ")) },")
            lines.append("    },")
        }
        lines += ["  ],", "}", ""]
        return lines.joined(separator: "\n")
    }
}
