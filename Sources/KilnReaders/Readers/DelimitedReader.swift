import KilnC
import KilnCore
import KilnManifest

/// Reads separator-delimited text lines (`a; b; c`), as in the Patras app's `;` files, and with `quote` CSV as
/// RFC 4180 writes it (GTFS feeds, spreadsheet exports, Kiln's own `csv` export).
///
/// With `separator: ";"` the Greek question mark U+037E, canonically the same character, separates too.
/// A trailing separator is allowed. With `tail`, the fields after the fixed ones are a variadic list and each
/// becomes its own record (`stop; line; line; …;` gives one record per line) with its 0-based position.
/// With `quote` (`"\""`), a field may be quoted: separators, doubled quotes and line breaks inside are its text, and
/// a record spanning lines keeps the line where it starts (`DelimitedQuotedRecords`). With `header: "names"`, the
/// first record names the columns and each field is taken from the column of its name.
public struct DelimitedReader: ConfigurableReader {
    public static let format = "delimited"
    public static let acceptedMediaTypes = MediaTypes.text

    /// What the first record of a file is.
    package enum Header: Equatable {
        /// Data, like every other record.
        case none
        /// Column titles, passed over (`header: true`).
        case skip
        /// Column names: each field is read from the column of its name (`header: "names"`).
        case names
    }

    /// The options a manifest gives a `delimited` source.
    public struct Options: Decodable, Sendable {
        package var separator: String = ";"
        package var fields: [String]
        package var tail: String?
        package var tailPosition: String = "position"
        package var header: Header = .none
        /// The quote character, or `nil` when fields are never quoted (the default: quotes are text).
        package var quote: UInt8?
        package var encoding: String = "utf-8"

        package enum CodingKeys: String, CodingKey, CaseIterable { case separator, fields, tail, tailPosition, header, quote, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            separator = try c.decodeIfPresent(String.self, forKey: .separator) ?? ";"
            fields = try c.decode([String].self, forKey: .fields)
            tail = try c.decodeIfPresent(String.self, forKey: .tail)
            tailPosition = try c.decodeIfPresent(String.self, forKey: .tailPosition) ?? "position"
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding) ?? "utf-8"
            func refuse(_ key: CodingKeys, _ message: String) -> DecodingError {
                DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key], debugDescription: message))
            }
            if let flag = try? c.decodeIfPresent(Bool.self, forKey: .header) {
                header = flag ? .skip : .none
            } else if let word = try c.decodeIfPresent(String.self, forKey: .header) {
                guard word == "names" else { throw refuse(.header, "expected true, false or \"names\"; found \"\(word)\"") }
                header = .names
            }
            if let text = try c.decodeIfPresent(String.self, forKey: .quote) {
                guard text.utf8.count == 1, let byte = text.utf8.first, byte > 0x20, byte < 0x7F else {
                    throw refuse(.quote, "the quote must be one printable ASCII character, such as \"\\\"\"")
                }
                quote = byte
            }
            if separator.isEmpty { throw refuse(.separator, "the separator must not be empty") }
            if let quote, separator.utf8.contains(quote) { throw refuse(.quote, "the quote must not be part of the separator") }
            if header == .names, tail != nil {
                throw refuse(.tail, "a tail is read by position; with header: \"names\" every field is read by its column's name")
            }
            if let repeated = Dictionary(grouping: fields, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
                throw refuse(.fields, "the field \"\(repeated)\" is named twice")
            }
        }
    }

    public let kinds: [RecordKind]
    package let options: Options
    package let separators: [[UInt8]]
    /// The first bytes of the separators, so that most bytes are passed over with one test.
    package let isLeadByte: [Bool]

    public init(options: Options) throws {
        try LegacyTextDecoder.check(options.encoding)
        self.options = options
        kinds = [RecordKind(fields: options.fields + (options.tail.map { [$0, options.tailPosition] } ?? []))]
        var separators = [Array(options.separator.utf8)]
        if options.separator == ";" { separators.append(Array("\u{037E}".utf8)) }
        if options.separator == "\u{037E}" { separators.append(Array(";".utf8)) }
        self.separators = separators
        var isLeadByte = [Bool](repeating: false, count: 256)
        for separator in separators { isLeadByte[Int(separator[0])] = true }
        self.isLeadByte = isLeadByte
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if options.quote != nil || options.header == .names {
            try readRecords(input, log: log, emit: emit)
            return
        }
        let fixed = options.fields.count
        var skippedHeader = options.header == .none
        // Every record holds its kind, an object whose reference count the reading thread raises and the staging
        // thread lowers: an equal copy every few hundred records keeps the two threads off one counter.
        var kind = kinds[0]
        var kindUses = 0
        func nextKind() -> RecordKind {
            kindUses += 1
            if kindUses > DelimitedReader.recordsPerKindCopy {
                kind = RecordKind(kinds[0].name, fields: kinds[0].fieldNames)
                kindUses = 1
            }
            return kind
        }
        // Values that look quoted are reported once per file: without `quote` their quotes are kept as text.
        var reportedQuotes = false
        try LineReader.forEachLineUTF8AnyEnding(of: input, encoding: options.encoding, log: log) { number, line, _ in
            if line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            var fields = split(line.bytes)
            if fields.count > 1, fields.last??.isEmpty == true { fields.removeLast() }
            if !skippedHeader {
                skippedHeader = true
                checkSkippedHeader(fields.map { DelimitedReader.unquoted($0 ?? "") }, line: number, input: input, log: log)
                return
            }
            if !reportedQuotes, line.bytes.contains(0x22), let index = fields.firstIndex(where: { DelimitedReader.looksQuoted($0 ?? "") }) {
                reportedQuotes = true
                let name = index < fixed ? options.fields[index] : options.tail ?? "the tail"
                log.report(.delimitedLooksQuoted, "the values look quoted (\(name) is \(fields[index] ?? "")): without the quote option the quotes "
                               + "are kept as text, here and on every such line of the file; add quote: \"\\\"\" to the source's options "
                               + "to read RFC 4180 CSV", at: input.at(number))
            }
            if options.tail == nil ? fields.count != fixed : fields.count < fixed {
                log.report(.parse, "expected \(options.tail == nil ? "" : "at least ")\(fixed) fields (\(describeFields())), "
                               + "found \(fields.count) in \"\(excerpt(line.text))\"",
                           at: input.at(number))
                return
            }
            if options.tail == nil {
                try emit(Record(nextKind(), values: fields, line: number))
                return
            }
            let head = Array(fields.prefix(fixed))
            for (position, item) in fields.dropFirst(fixed).enumerated() {
                try emit(Record(nextKind(), values: head + [item, String(position)], line: number))
            }
        }
    }

    /// True when `field` looks quoted as CSV quotes it: a `"` at both ends, or a doubled `""` inside.
    package static func looksQuoted(_ field: String) -> Bool {
        let bytes = field.utf8
        if bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 { return true }
        return field.contains("\"\"")
    }

    /// `field` without the `"` around it, if it has them both.
    package static func unquoted(_ field: String) -> String {
        field.utf8.count >= 2 && field.hasPrefix("\"") && field.hasSuffix("\"") ? String(field.dropFirst().dropLast()) : field
    }

    /// Compares the header row a source passes over (`header: true`) with its fields, which are read by position: a
    /// declared field that the header names at another position, or a header of another number of columns, is a
    /// `delimited.header-fields` warning (values would be read from the wrong column). A header of titles that name
    /// no field (another language, spaces) is what `header: true` is for: no finding.
    package func checkSkippedHeader(_ names: [String], line: Int, input: InputFile, log: DiagnosticLog) {
        let fixed = options.fields.count
        guard names != options.fields else { return }
        let moved = options.fields.enumerated().filter { position, field in
            names.contains(field) && (position >= names.count || names[position] != field)
        }.map(\.element)
        let countDiffers = options.tail == nil ? names.count != fixed : names.count < fixed
        let overlaps = options.fields.contains(where: names.contains)
        guard !moved.isEmpty || (countDiffers && overlaps) || (countDiffers && options.tail == nil) else { return }
        var problems: [String] = []
        if !moved.isEmpty {
            problems.append("\(moved.map { "\"\($0)\"" }.joined(separator: ", ")) \(moved.count == 1 ? "is" : "are") not in the column the fields give")
        }
        if countDiffers { problems.append("it has \(names.count) column\(names.count == 1 ? "" : "s"), the fields \(fixed)") }
        log.report(.delimitedHeaderFields, "the header row names the columns \(names.map { "\"\($0)\"" }.joined(separator: ", ")), "
                       + "but the fields (\(describeFields())) are read by position: \(problems.joined(separator: "; ")); "
                       + "read each field from the column of its name with header: \"names\", or declare the fields in the file's order",
                   at: input.at(line))
    }

    /// How many records share one copy of the kind.
    package static let recordsPerKindCopy = 256

    package func describeFields() -> String {
        (options.fields + (options.tail.map { ["\($0)…"] } ?? [])).joined(separator: options.separator + " ")
    }

    /// Splits a line's UTF-8 bytes on any of the separators, trimming spaces around each field: strings are made
    /// only for the fields (as optionals: the record's values, without a second array).
    private func split(_ bytes: ArraySlice<UInt8>) -> [String?] {
        let span = bytes.span
        var fields: [String?] = []
        fields.reserveCapacity(options.fields.count + 1)
        var fieldStart = 0
        var index = 0
        outer: while index < span.count {
            let byte = span[index]
            guard isLeadByte[Int(byte)] else {
                index += 1
                continue
            }
            for separator in separators where byte == separator[0] {
                if separator.count == 1 || DelimitedReader.matches(separator, in: span, at: index) {
                    fields.append(trimmedField(bytes, span, fieldStart..<index))
                    index += separator.count
                    fieldStart = index
                    continue outer
                }
            }
            index += 1
        }
        fields.append(trimmedField(bytes, span, fieldStart..<span.count))
        return fields
    }

    private static func matches(_ separator: [UInt8], in span: Span<UInt8>, at index: Int) -> Bool {
        guard separator.count <= span.count - index else { return false }
        for offset in separator.indices where span[index + offset] != separator[offset] { return false }
        return true
    }

    /// The field at `range` (offsets into `span`, the bytes of `bytes`) without the spaces and tabs around it.
    private func trimmedField(_ bytes: ArraySlice<UInt8>, _ span: Span<UInt8>, _ range: Range<Int>) -> String {
        var first = range.lowerBound, end = range.upperBound
        while first < end && (span[first] == 0x20 || span[first] == 0x09) { first += 1 }
        while end > first && (span[end - 1] == 0x20 || span[end - 1] == 0x09) { end -= 1 }
        guard first < end else { return "" }
        return String(decoding: bytes[(bytes.startIndex + first)..<(bytes.startIndex + end)], as: UTF8.self)
    }
}
