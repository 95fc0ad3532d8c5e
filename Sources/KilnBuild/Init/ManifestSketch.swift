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
/// references its rows keep (`stop_times.trip_id` → `trips.trip_id`…). An XML or JSON file gives a table per
/// repeating record (`XMLShape`, `JSONShape`) with its simple fields; an iCalendar, KML, MediaWiki or wikitext file
/// the tables of its reader's kinds of record. Every table's values are what the reader itself gives, so the types
/// and keys hold in the build. Nothing is declared that the data breaks.
package struct ManifestSketch {
    /// One table as sniffed, with the source that fills it.
    package struct Table {
        package var name: String
        /// The input's path in the pipeline folder.
        package var path: String
        /// The reader's format.
        package var format = "delimited"
        /// The source that fills the table; the tables of one source (its kinds of record) share it.
        package var source: String
        /// The kind of record the table takes when its source maps several (`into: { kind: … }`), else nil.
        package var kind: String?
        /// The source's options as JSON5 text (`{ … }`), and what they were sniffed from.
        package var options: String
        package var comment: String
        package var columns: [Column]
        package var key: [String] = []
        /// Keys (by field) to try first, in order: the reader's own identifiers of the kind.
        package var knownKeys: [[String]] = []
        package var records: Int
        /// Each column's values ("" for none), for keys and references.
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

    /// The keys of the kinds of record of the readers with fixed fields, by format and kind, tried in order.
    static let readerKeys: [String: [String: [[String]]]] = [
        "ics": ["event": [["uid"]], "occurrence": [["event_uid", "start_utc"], ["event_uid", "start_local"]]],
        "kml": ["record": [["id"]]],
        "mediawiki": ["page": [["pageid"]], "section": [["pageid", "number"]], "listing": [["id"]], "alias": [["pageid"]]],
        "wikitext": ["page": [["pageid"]], "section": [["pageid", "number"]], "listing": [["id"]], "alias": [["pageid"]]],
    ]

    /// The formats `kiln init` sketches, by file extension (lower case); other files are sniffed by their content.
    package static let formatsByExtension: [String: String] = [
        "csv": "delimited", "tsv": "delimited", "txt": "delimited", "json": "json", "geojson": "json",
        "xml": "xml", "gpx": "xml", "kml": "kml", "ics": "ics", "ical": "ics", "wikicode": "wikitext", "wiki": "wikitext",
    ]

    /// Sketches the pipeline `bundle` of the files `inputs` (URL and path in the pipeline folder).
    /// - Throws: `KilnError.usage` for an input its reader cannot read without an error; `KilnError.io` as the
    ///   reader does.
    package init(bundle: String, inputs: [(url: URL, path: String)]) throws {
        self.bundle = bundle
        var tables: [Table] = []
        var names: Set<String> = [], sources: Set<String> = []
        // JSON files that are all of their folder's and alike are one source (`jsonGroup`), at the first one's place.
        let groups = Dictionary(grouping: inputs.indices) { index in
            ManifestSketch.formatsByExtension[inputs[index].url.pathExtension.lowercased()] == "json"
                ? inputs[index].url.deletingLastPathComponent().path + "\u{0}" + inputs[index].url.pathExtension : "\(index)"
        }
        var grouped: [Int: [Table]] = [:], skipped: Set<Int> = []
        for members in groups.values.sorted(by: { $0.min()! < $1.min()! }) where members.count > 1 {
            if let tables = try ManifestSketch.jsonGroup(members.map { inputs[$0] }) {
                grouped[members.min()!] = tables
                skipped.formUnion(members)
            }
        }
        for (position, input) in inputs.enumerated() where grouped[position] != nil || !skipped.contains(position) {
            var sniffed = try grouped[position] ?? ManifestSketch.sniff(input.url, path: input.path)
            var renamed: [String: String] = [:]
            for index in sniffed.indices {
                // The kinds of one reader share its source; the records of an XML or JSON file each have their own.
                let given = sniffed[index].kind == nil ? "\(sniffed[index].source)#\(index)" : sniffed[index].source
                if renamed[given] == nil {
                    var unique = sniffed[index].kind == nil ? sniffed[index].name : sniffed[index].source
                    while sources.contains(unique) { unique += "_2" }
                    sources.insert(unique)
                    renamed[given] = unique
                }
                let source = renamed[given]!
                sniffed[index].source = source
                // A kind's table of a second file is named after its source: ics_2 → ics_2_event.
                if names.contains(sniffed[index].name), let kind = sniffed[index].kind { sniffed[index].name = ManifestSketch.identifier(source + "_" + kind) }
                while names.contains(sniffed[index].name) { sniffed[index].name += "_2" }
                names.insert(sniffed[index].name)
            }
            tables += sniffed
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

    /// A column's name: `identifier` of the field with its camel case split (`stopId` → `stop_id`, `useForUI` →
    /// `use_for_ui`), so that an identifier reads as one.
    static func columnName(_ field: String) -> String {
        var split = ""
        let characters = Array(field)
        for (index, character) in characters.enumerated() {
            if index > 0, character.isUppercase,
               characters[index - 1].isLowercase || characters[index - 1].isNumber
                || (characters[index - 1].isUppercase && index + 1 < characters.count && characters[index + 1].isLowercase) {
                split.append("_")
            }
            split.append(character)
        }
        return identifier(split)
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

    /// The tables of one input, by its format: its extension's, else what its content starts with.
    private static func sniff(_ url: URL, path: String) throws -> [Table] {
        let stem = identifier(((path as NSString).lastPathComponent as NSString).deletingPathExtension)
        var format = formatsByExtension[url.pathExtension.lowercased()]
        if format == nil {
            let head = (try? FileHandle(forReadingFrom: url)).map { handle in
                defer { try? handle.close() }
                return (try? handle.read(upToCount: 512)) ?? Data()
            } ?? Data()
            let text = String(decoding: head, as: UTF8.self).drop { $0 == "\u{FEFF}" || $0.isWhitespace }
            format = text.hasPrefix("<") ? "xml" : text.hasPrefix("{") || text.hasPrefix("[") ? "json"
                : text.uppercased().hasPrefix("BEGIN:VCALENDAR") || text.uppercased().hasPrefix("BEGIN:VEVENT") ? "ics" : "delimited"
        }
        switch format {
        case "json": return try sniffJSON(url, path: path, stem: stem)
        case "xml", "kml": return try sniffXML(url, path: path, stem: stem, kml: format == "kml")
        case "ics": return try sniffCalendar(url, path: path, stem: stem)
        case "wikitext": return try sniffReaderKinds(url, path: path, stem: stem, format: "wikitext", options: [], comment: "wikitext: a page, its sections and listings")
        default: return [try sniffDelimited(url, path: path, stem: stem)]
        }
    }

    private static func sniffDelimited(_ url: URL, path: String, stem: String) throws -> Table {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw CannotRead.error(url, error) }
        let utf8 = String(data: data, encoding: .utf8)
        let text = utf8 ?? String(decoding: data, as: UTF8.self)
        let firstLine = text.drop { $0 == "\u{FEFF}" }.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
        let (separator, quotedLine) = separator(ofFirstLine: firstLine)
        // Any quote: RFC 4180's quoting (a quote inside an unquoted field stays text, with a warning).
        let quoted = quotedLine || text.contains("\"")
        // The first line's values, split outside quotes.
        var firstValues = [""], inQuotes = false
        for character in firstLine {
            if character == "\"" { inQuotes.toggle() } else if !inQuotes, String(character) == separator { firstValues.append("") } else { firstValues[firstValues.count - 1].append(character) }
        }
        let count = firstValues.count
        let placeholders = (1...count).map { "field\($0)" }
        // A header: every name is text that is not a number, and the names are distinct; the reader then reads each
        // field by its name (a row that ends early, as a trailing separator reads, is not a wrong count).
        let trimmed = firstValues.map { $0.trimmingCharacters(in: .whitespaces) }
        let header = !trimmed.contains { $0.isEmpty || Double($0) != nil } && Set(trimmed).count == trimmed.count
            && text.split(whereSeparator: \.isNewline).count > 1
        let fields = header ? trimmed : placeholders
        var options: [String: JSONValue] = ["separator": .string(separator), "fields": .array(fields.map(JSONValue.string))]
        if header { options["header"] = .string("names") }
        if quoted { options["quote"] = .string("\"") }
        let encoding = utf8 == nil ? "windows-1252" : nil
        if let encoding { options["encoding"] = .string(encoding) }
        let (_, read) = try readRecords(url, path: path, format: "delimited", options: .object(options), what: "delimited text")
        let records = read["record"]?.rows ?? []
        guard !records.isEmpty else { throw KilnError.usage("\(path) holds no records to sketch a table from") }
        let kind = try ReaderRegistry.makeReader(format: "delimited", options: .object(options), codingPath: []).kinds[0]
        let values = columnValues(fields, of: kind, records).map { $0.map { $0.trimmingCharacters(in: .whitespaces) } }
        var what = ["separator \(JSONText.string(separator))"]
        if quoted { what.append("quoted fields") }
        what.append(header ? "a header naming the fields" : "no header")
        if let encoding { what.append("not UTF-8: read as \(encoding)") }
        var text5 = ["separator: \(JSONText.string(separator))"]
        if quoted { text5.append(#"quote: "\"""#) }
        if header { text5.append(#"header: "names""#) }
        if let encoding { text5.append("encoding: \(JSONText.string(encoding))") }
        text5.append("fields: [\(fields.map(JSONText.string).joined(separator: ", "))]")
        return table(name: stem, path: path, format: "delimited", options: "{ \(text5.joined(separator: ", ")) }", comment: what.joined(separator: ", "),
                     fields: fields, values: values, records: records.count)
    }

    /// A table of `fields` (the reader's names) and their `values`, each column named as a plain identifier and typed.
    private static func table(name: String, path: String, format: String, kind: String? = nil, options: String, comment: String,
                              fields: [String], values: [[String]], records: Int, knownKeys: [[String]] = []) -> Table {
        var used: Set<String> = []
        let columns = fields.enumerated().map { index, field -> Column in
            var column = columnName(field.hasPrefix("_") ? String(field.dropFirst()) : field)
            while used.contains(column) { column += "_2" }
            used.insert(column)
            return Column(name: column, field: field, type: columnType(values[index], name: column),
                          notNull: records > 0 && !values[index].contains(""), references: nil)
        }
        return Table(name: name, path: path, format: format, source: name, kind: kind, options: options, comment: comment,
                     columns: columns, knownKeys: knownKeys, records: records, values: values)
    }

    /// The records `format`'s reader reads from `url` with `options`, by kind: the kind and each record's values.
    /// - Throws: `KilnError.usage` naming the reader's first error (the file is not `what` as the reader reads it).
    private static func readRecords(_ url: URL, path: String, format: String, options: JSONValue, what: String,
                                    tolerating tolerated: Set<String> = []) throws -> (log: DiagnosticLog, kinds: [String: (kind: RecordKind, rows: [[String?]])]) {
        let reader: RecordReader
        do {
            reader = try ReaderRegistry.makeReader(format: format, options: options, codingPath: [])
        } catch let error as KilnError {
            throw error
        } catch {
            throw KilnError.usage("\(path): kiln init could not sketch options its reader takes: \(error)")
        }
        let log = DiagnosticLog()
        var kinds: [String: (kind: RecordKind, rows: [[String?]])] = [:]
        for kind in reader.kinds { kinds[kind.name] = (kind, []) }
        try reader.read(InputFile(url: url, relativePath: path), log: log) { record in
            kinds[record.kind.name, default: (record.kind, [])].rows.append(record.values)
        }
        if let problem = log.sorted.first(where: { $0.severity == .error && !tolerated.contains($0.code) }) {
            throw KilnError.usage("\(path) is not \(what) kiln init can sketch: \(problem.formatted)")
        }
        return (log, kinds)
    }

    /// The values of `fields` in `rows` of `kind`, "" for none.
    private static func columnValues(_ fields: [String], of kind: RecordKind, _ rows: [[String?]]) -> [[String]] {
        fields.map { field in
            guard let position = kind.position(of: field) else { return Array(repeating: "", count: rows.count) }
            return rows.map { $0[position] ?? "" }
        }
    }

    /// A table per kind of record of a reader with fixed fields (`ics`, `kml`, `wikitext`, `mediawiki`): each kind
    /// that has records (the first kind always), every field of it but `_position`.
    private static func sniffReaderKinds(_ url: URL, path: String, stem: String, format: String, options: [(String, String)],
                                         json: JSONValue = .object([:]), comment: String, tolerating tolerated: Set<String> = []) throws -> [Table] {
        let what = ["ics": "an iCalendar file", "kml": "KML", "mediawiki": "a MediaWiki export", "wikitext": "wikitext"][format] ?? format
        let (_, read) = try readRecords(url, path: path, format: format, options: json, what: what, tolerating: tolerated)
        let reader = try ReaderRegistry.makeReader(format: format, options: json, codingPath: [])
        let several = reader.kinds.count > 1
        let optionsText = "{ " + options.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + (options.isEmpty ? "}" : " }")
        return reader.kinds.enumerated().compactMap { index, kind -> Table? in
            let rows = read[kind.name]?.rows ?? []
            guard index == 0 || !rows.isEmpty else { return nil }
            let fields = kind.fieldNames.filter { $0 != "_position" }
            return table(name: several ? kind.name : stem, path: path, format: format, kind: several ? kind.name : nil,
                         options: optionsText, comment: comment, fields: fields, values: columnValues(fields, of: kind, rows),
                         records: rows.count, knownKeys: readerKeys[format]?[kind.name] ?? [])
        }.map { var table = $0; table.source = stem; return table }
    }

    /// An iCalendar file: its events and their occurrences. A rule without end needs a `window`: from the earliest
    /// event's start date to a year after the latest one's, the feed's own dates (never the day of the build).
    private static func sniffCalendar(_ url: URL, path: String, stem: String) throws -> [Table] {
        let comment = "iCalendar: one row per event (UID) and per occurrence"
        let (log, read) = try readRecords(url, path: path, format: "ics", options: .object([:]), what: "an iCalendar file", tolerating: [DiagnosticCode.icsUnbounded.rawValue])
        guard log.sorted.contains(where: { $0.code == DiagnosticCode.icsUnbounded.rawValue }), let events = read["event"] else {
            return try sniffReaderKinds(url, path: path, stem: stem, format: "ics", options: [], comment: comment)
        }
        let starts = columnValues(["start"], of: events.kind, events.rows)[0].map { String($0.prefix(10)) }.filter { $0.count == 10 }.sorted()
        guard let from = starts.first, let last = starts.last, let year = Int(last.prefix(4)) else {
            return try sniffReaderKinds(url, path: path, stem: stem, format: "ics", options: [], comment: comment)
        }
        var until = String(format: "%04d", year + 1) + last.dropFirst(4)
        if until.hasSuffix("-02-29") { until = String(until.dropLast(2)) + "28" }
        let window: JSONValue = .object(["window": .object(["from": .string(from), "until": .string(until)])])
        return try sniffReaderKinds(url, path: path, stem: stem, format: "ics",
                                    options: [("window", "{ from: \(JSONText.string(from)), until: \(JSONText.string(until)) }")], json: window,
                                    comment: comment + "; a rule repeats without end: occurrences from the first event's start to a year after the last one's (the window)")
    }

    /// A JSON file: a table per record path (`JSONShape.records`) with its fields.
    private static func sniffJSON(_ url: URL, path: String, stem: String) throws -> [Table] {
        try jsonRecords(url, path: path).map { try jsonTable($0, files: [(url, path)], path: path, stem: stem) }
    }

    /// The record paths of a JSON file (`JSONShape.records`) and each one's fields (name, key path).
    /// A JSON record path, its fields (name, key path), and the member of the record around it that its rows carry
    /// through `context` (the enclosing record's path, the field's name, the member).
    typealias JSONRecord = (record: String, fields: [(name: String, path: String)], context: (element: String, name: String, member: String)?)

    /// The record paths of a JSON file (`JSONShape.records`) and each one's fields; a record inside another carries
    /// the other's identifier (`JSONShape.identifier(of:)`) through `context`: Tate's contributors say which artwork
    /// (`file_id`), Pannellum's hotspots which scene (`scenes_key`).
    private static func jsonRecords(_ url: URL, path: String) throws -> [JSONRecord] {
        let shape = JSONShape()
        try shape.read(try InputBytes(url: url, name: path, log: nil), shownAs: path)
        let records = shape.records
        guard !records.isEmpty else { throw KilnError.usage("\(path) holds no object or array of objects to sketch records from") }
        return records.map { record in
            let paths = shape.fields(of: record)
            let fields = paths.isEmpty ? [(".", ".")] : Array(zip(uniqueNames(paths.map(fieldName)), paths))
            var context: (String, String, String)?
            if let outer = shape.enclosing(record), let member = shape.identifier(of: outer) {
                let owner = outer.isEmpty ? "file" : outer.split(separator: "/").last { $0 != "*" }.map(String.init) ?? "record"
                context = (outer, uniqueNames(fields.map(\.0) + [columnName(owner + "_" + (member == "@key" ? "key" : member))]).last!, member)
            }
            return (record, fields, context)
        }
    }

    /// The table of the records at `record` of every file of `files`, read with `fields`: one source, whose `path` is
    /// the file's, or the glob of several.
    private static func jsonTable(_ sketched: JSONRecord, files: [(url: URL, path: String)], path: String, stem: String) throws -> Table {
        let (record, fields, around) = sketched
        var options: [String: JSONValue] = ["records": .string(record), "fields": .object(Dictionary(fields.map { ($0.name, .string($0.path)) }, uniquingKeysWith: { first, _ in first }))]
        let context = around.map { [($0.name, $0.member)] } ?? []
        if let around { options["context"] = .object([around.element: .object([around.name: .string(around.member)])]) }
        let json: JSONValue = .object(options)
        var rows: [[String?]] = []
        for file in files {
            rows += try readRecords(file.url, path: file.path, format: "json", options: json, what: "JSON").kinds["record"]?.rows ?? []
        }
        let kind = try ReaderRegistry.makeReader(format: "json", options: json, codingPath: []).kinds[0]
        let readerFields = fields.map(\.name) + context.map(\.0) + ["_ordinal"]
        var text = "{ records: \(JSONText.string(record)), fields: { \(fields.map { "\(JSONText.string($0.name)): \(JSONText.string($0.path))" }.joined(separator: ", ")) }"
        if let around { text += ", context: { \(JSONText.string(around.element)): { \(JSONText.string(around.name)): \(JSONText.string(around.member)) } }" }
        text += " }"
        let name = record.isEmpty ? stem : identifier(record.split(separator: "/").last { $0 != "*" }.map(String.init) ?? stem)
        let each = files.count > 1 ? " of each of its \(files.count) files" : ""
        return table(name: name, path: path, format: "json", options: text,
                     comment: record.isEmpty ? "JSON: the whole file is one record\(each)" : "JSON: a record per element of \(record.dropLast(2).isEmpty ? "the root array" : String(record.dropLast(2)))\(each)",
                     fields: readerFields, values: columnValues(readerFields, of: kind, rows), records: rows.count)
    }

    /// JSON files that are every file of their extension in their folder (two or more) and hold records at the same
    /// paths, as one source over their glob (`artworks/*.json`): their tables, each field any of them has; nil when
    /// `inputs` are not such a group.
    private static func jsonGroup(_ inputs: [(url: URL, path: String)]) throws -> [Table]? {
        guard inputs.count > 1, let first = inputs.first, formatsByExtension[first.url.pathExtension.lowercased()] == "json" else { return nil }
        let folder = first.url.deletingLastPathComponent(), ext = first.url.pathExtension
        let siblings = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { ($0 as NSString).pathExtension == ext && !$0.hasPrefix(".") }
        guard siblings.count == inputs.count else { return nil }
        let shapes = try inputs.map { try jsonRecords($0.url, path: $0.path) }
        guard shapes.allSatisfy({ $0.map(\.record) == shapes[0].map(\.record) }) else { return nil }
        let directory = (first.path as NSString).deletingLastPathComponent
        let glob = (directory.isEmpty ? "" : directory + "/") + "*." + ext
        let stem = identifier(directory.isEmpty ? (folder.lastPathComponent.isEmpty ? "records" : folder.lastPathComponent) : (directory as NSString).lastPathComponent)
        return try shapes[0].indices.map { index in
            var fields: [(name: String, path: String)] = []
            for shape in shapes {
                for field in shape[index].fields where !fields.contains(where: { $0.path == field.path }) {
                    fields.append((uniqueNames(fields.map(\.name) + [field.name]).last!, field.path))
                }
            }
            return try jsonTable((shapes[0][index].record, fields, shapes[0][index].context), files: inputs, path: glob, stem: stem)
        }
    }

    /// An XML file: a MediaWiki export or KML by its document element (or `kml`), else a table per repeating record
    /// (`XMLShape.records`) with its attributes and simple children, and the attributes of the record around it.
    private static func sniffXML(_ url: URL, path: String, stem: String, kml: Bool) throws -> [Table] {
        let shape = XMLShape()
        let streamed = try shape.read(try InputBytes(url: url, name: path, log: nil), path: url.path, shownAs: path)
        let root = shape.order.first.map { shape.elements[$0]!.localName }
        if root == "mediawiki" {
            return try sniffReaderKinds(url, path: path, stem: stem, format: "mediawiki", options: [], comment: "a MediaWiki export: its pages, sections, listings and redirects")
        }
        if kml || root == "kml" {
            let data = shape.dataNames
            let options = data.isEmpty ? [] : [("extendedData", "[" + data.map(JSONText.string).joined(separator: ", ") + "]")]
            let json: JSONValue = .object(data.isEmpty ? [:] : ["extendedData": .array(data.map(JSONValue.string))])
            return try sniffReaderKinds(url, path: path, stem: stem, format: "kml", options: options, json: json,
                                        comment: "KML: a row per placemark" + (data.isEmpty ? "" : ", its ExtendedData values as fields"))
        }
        guard streamed else { throw KilnError.usage("\(path) declares a document type: write its source by hand (docs/reference/readers/xml.md)") }
        let records = shape.records
        guard !records.isEmpty else { throw KilnError.usage("\(path) holds no element that repeats with attributes or simple children to sketch records from") }
        var prefixes: [String: String] = [:]
        func qualified(_ localName: String, _ namespace: String?) -> String {
            guard let namespace else { return localName }
            if prefixes[namespace] == nil { prefixes[namespace] = "n\(prefixes.count + 1)" }
            return prefixes[namespace]! + ":" + localName
        }
        let localNames = records.map { shape.elements[$0]!.localName }
        return try records.map { record -> Table in
            let element = shape.elements[record]!
            var paths = element.attributes.map { "@" + qualified($0.localName, $0.namespace) }
            if element.holdsText && !element.holdsElements { paths.append(".") }
            for child in element.children where shape.isSimpleField(child) && !records.contains(child) {
                let inner = shape.elements[child]!
                let step = qualified(inner.localName, inner.namespace)
                if inner.holdsText || inner.attributes.isEmpty { paths.append(step) }
                paths += inner.attributes.map { step + "/@" + qualified($0.localName, $0.namespace) }
            }
            var names = paths.map { $0 == "." ? "text" : fieldName($0) }
            // The attributes of the nearest record around this one, so that its rows say which one they belong to.
            let around = records.filter { record.hasPrefix($0 + "/") }.max { $0.count < $1.count }
            var context: [(String, String)] = []
            if let around {
                let outer = shape.elements[around]!
                context = outer.attributes.map { (columnName(outer.localName + "_" + $0.localName), "@" + qualified($0.localName, $0.namespace)) }
            }
            names = uniqueNames(names + context.map(\.0))
            let fields = Array(zip(names, paths))
            context = zip(names.dropFirst(paths.count), context.map(\.1)).map { ($0, $1) }
            var json: [String: JSONValue] = ["record": .string(record),
                                             "fields": .object(Dictionary(fields.map { ($0.0, .string($0.1)) }, uniquingKeysWith: { first, _ in first }))]
            var text = ["record: \(JSONText.string(record))"]
            let used = prefixes.filter { uri in (paths + context.map(\.1)).contains { $0.contains(uri.value + ":") } }
            if !used.isEmpty {
                json["namespaces"] = .object(Dictionary(used.map { ($0.value, .string($0.key)) }, uniquingKeysWith: { first, _ in first }))
                text.append("namespaces: { " + used.sorted { $0.value < $1.value }.map { "\($0.value): \(JSONText.string($0.key))" }.joined(separator: ", ") + " }")
            }
            text.append("fields: { " + fields.map { "\(JSONText.string($0.0)): \(JSONText.string($0.1))" }.joined(separator: ", ") + " }")
            if let around, !context.isEmpty {
                let outer = shape.elements[around]!.localName
                json["context"] = .object([outer: .object(Dictionary(context.map { ($0.0, .string($0.1)) }, uniquingKeysWith: { first, _ in first }))])
                text.append("context: { \(JSONText.string(outer)): { " + context.map { "\(JSONText.string($0.0)): \(JSONText.string($0.1))" }.joined(separator: ", ") + " } }")
            }
            let (_, read) = try readRecords(url, path: path, format: "xml", options: .object(json), what: "XML")
            let rows = read["record"]?.rows ?? []
            let kind = try ReaderRegistry.makeReader(format: "xml", options: .object(json), codingPath: []).kinds[0]
            let readerFields = fields.map(\.0) + context.map(\.0) + (context.isEmpty ? ["_ordinal"] : ["_ordinal", "_position"])
            let local = element.localName
            let parent = record.split(separator: "/").dropLast().last.map(String.init) ?? ""
            let name = localNames.filter { $0 == local }.count > 1 ? identifier(parent + "_" + local) : identifier(local)
            return table(name: name, path: path, format: "xml", options: "{ " + text.joined(separator: ", ") + " }",
                         comment: "XML: a record per <\(local)> at \(record)", fields: readerFields,
                         values: columnValues(readerFields, of: kind, rows), records: rows.count)
        }
    }

    /// The name of the field a path reads: its steps without `@` and namespace prefixes, joined by `_`
    /// (`location/@n1:lat` → `location_lat`, `route/name` → `route_name`).
    static func fieldName(_ path: String) -> String {
        columnName(path.split(separator: "/").map { step in
            String(step.drop { $0 == "@" }.split(separator: ":").last ?? "")
        }.joined(separator: "_"))
    }

    /// `names` with a repeated one made unique (`name_2`).
    private static func uniqueNames(_ names: [String]) -> [String] {
        var used: Set<String> = []
        return names.map { name in
            var unique = name
            while used.contains(unique) { unique += "_2" }
            used.insert(unique)
            return unique
        }
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
        if let known = table.knownKeys.first(where: unique) {
            return known.compactMap { field in table.columns.first { $0.field == field }?.name }
        }
        // After the id-like columns, a record's place in its file (`_ordinal`), then any text or integer column.
        let candidates = table.columns.filter { $0.name == "id" || $0.name.hasSuffix("_id") || $0.name == "code" }
            + table.columns.filter { $0.field == "_ordinal" } + table.columns.filter { $0.type != "real" }
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
        let formats = Set(tables.map(\.format)).sorted()
        var lines = ["// Sketched by kiln init from \(Set(tables.map(\.path)).count) input\(Set(tables.map(\.path)).count == 1 ? "" : "s")\(gtfs ? " (a GTFS feed)" : " (\(formats.joined(separator: ", ")))"): check the types, keys and",
                     "// references, then describe the tables. Reference: docs/reference/manifest.md. Paths are relative to this folder.",
                     "{", "  bundle: \(JSONText.string(bundle)),", "  schemaVersion: 1,", "", "  tables: ["]
        for table in tables {
            lines.append("    {")
            lines.append("      name: \(JSONText.string(table.name)),   // \(table.records) record\(table.records == 1 ? "" : "s")\(table.kind.map { " (\($0))" } ?? "") in \(table.path)")
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
        var done: Set<String> = []
        for table in tables where !done.contains(table.source) {
            done.insert(table.source)
            let members = tables.filter { $0.source == table.source }
            func mapping(_ table: Table) -> String {
                "{ " + table.columns.map { "\(JSONText.string($0.name)): \(JSONText.string($0.field))" }.joined(separator: ", ") + " }"
            }
            lines.append("    {")
            lines.append("      // \(table.comment)")
            lines.append("      name: \(JSONText.string(table.source)), format: \(JSONText.string(table.format)), path: \(JSONText.string(table.path)),")
            lines.append("      options: \(table.options),")
            if members.count == 1, table.kind == nil {
                lines.append("      into: \(JSONText.string(table.name)),")
                lines.append("      columns: \(mapping(table)),")
            } else {
                lines.append("      into: {")
                for member in members {
                    lines.append("        \(JSONText.string(member.kind ?? "record")): { table: \(JSONText.string(member.name)), columns: \(mapping(member)) },")
                }
                lines.append("      },")
            }
            lines.append("    },")
        }
        lines.append("  ],")
        if gtfs { lines += gtfsExports() }
        lines += ["}", ""]
        return lines.joined(separator: "\n")
    }

    /// A GTFS feed's exports: `gtfs`, the feed again (each file's columns under their own names, in its key's
    /// order, and a ZIP archive), and `geojson`, its stops as points for a map viewer.
    private func gtfsExports() -> [String] {
        var lines = ["", "  exports: [",
                     "    {",
                     "      name: \"gtfs\", description: \"The feed again: a CSV file per table, and a ZIP archive of them beside the folder.\",",
                     "      archive: \(JSONText.string(bundle + "-gtfs.zip")),",
                     "      files: ["]
        for table in tables where table.format == "delimited" {
            let columns = table.columns.map { $0.name == $0.field ? ManifestSketch.quoted($0.name) : "\(ManifestSketch.quoted($0.name)) AS \(ManifestSketch.quoted($0.field))" }
            let order = (table.key.isEmpty ? table.columns.map(\.name) : table.key).map(ManifestSketch.quoted).joined(separator: ", ")
            let file = table.path.split(separator: "/").last.map(String.init) ?? table.path
            let query = "SELECT \(columns.joined(separator: ", ")) FROM \(ManifestSketch.quoted(table.name)) ORDER BY \(order)"
            lines.append("        { path: \(JSONText.string(file)), format: \"csv\", query: \(JSONText.string(query)) },")
        }
        lines += ["      ],", "    },"]
        if let stops = tables.first(where: { $0.name == "stops" }),
           let latitude = stops.columns.first(where: { $0.field == "stop_lat" }), let longitude = stops.columns.first(where: { $0.field == "stop_lon" }),
           let id = stops.columns.first(where: { $0.field == "stop_id" }) {
            let query = "SELECT * FROM \(ManifestSketch.quoted(stops.name)) ORDER BY \(ManifestSketch.quoted(id.name))"
            lines += ["    {",
                      "      name: \"geojson\", description: \"The stops as a GeoJSON FeatureCollection, for any map viewer.\",",
                      "      files: [{ path: \"stops.geojson\", format: \"geojson\", options: { latitude: \(JSONText.string(latitude.name)), longitude: \(JSONText.string(longitude.name)), id: \(JSONText.string(id.name)) },",
                      "                query: \(JSONText.string(query)) }],",
                      "    },"]
        }
        lines.append("  ],")
        return lines
    }

    /// `name` as an SQL identifier, quoted only when it must be.
    private static func quoted(_ name: String) -> String {
        name.range(of: "^[a-z_][a-z0-9_]*$", options: .regularExpression) != nil ? name : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
