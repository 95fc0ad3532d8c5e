import KilnC
import KilnCore
import KilnManifest

/// Splits the lines of a delimited file into records where a field may be quoted (RFC 4180): inside quotes a
/// separator, a line break and a doubled quote are the field's text, so one record may span lines. A value, fed one
/// line at a time; the fields of a record are made as strings only once it is complete.
///
/// Where RFC 4180 is broken the bytes are kept as written (as Python's `csv` module keeps them) and reported: a quote
/// inside a field that does not start with one, and text after a field's closing quote.
package struct DelimitedQuotedRecords {
    /// A complete record: its fields, the line it starts on, and whether its last field was quoted (an empty quoted
    /// last field is a value, never a trailing separator).
    package struct Parsed {
        package var fields: [String?]
        package var line: Int
        package var lastFieldQuoted: Bool
        package var spansLines: Bool
    }

    /// What one line gave.
    package enum Step {
        /// The record that ends on this line.
        case record(Parsed)
        /// The line ends inside a quoted field: the record goes on on the next line.
        case open
        /// The quoted field has grown past `maximumRecordLength` without closing.
        case tooLong
    }

    /// The longest record kept while its quoted field is open: as long as the longest line `LineReader` keeps.
    package static let maximumRecordLength = LineReader.defaultMaximumLineLength

    package let quote: UInt8?
    package let separators: [[UInt8]]
    package let isLeadByte: [Bool]
    /// Trims spaces and tabs around unquoted fields (the unquoted `;` files); RFC 4180 keeps them.
    package let trims: Bool

    private var fields: [String?] = []
    private var field: [UInt8] = []
    private var inQuotes = false
    /// The current field began with a quote.
    private var quoted = false
    /// The current field's closing quote has been read.
    private var closed = false
    /// A finding was already made about the current field.
    private var reported = false
    private var size = 0
    /// True while a record is open across a line end.
    package private(set) var isOpen = false
    /// The line the open record starts on, the line its open quote is on, and the last line fed.
    package private(set) var startLine = 0, quoteLine = 0, quoteColumn = 0, lastLine = 0

    package init(quote: UInt8?, separators: [[UInt8]], isLeadByte: [Bool], trims: Bool) {
        self.quote = quote
        self.separators = separators
        self.isLeadByte = isLeadByte
        self.trims = trims
    }

    /// Forgets the open record (a line inside it could not be read).
    package mutating func discard() {
        fields.removeAll()
        resetField()
        inQuotes = false
        isOpen = false
    }

    /// Feeds line `number` (its `ending`, LF, CR LF or CR, is put back inside a quoted field). `report` is told of
    /// each quote out of place, with the 1-based column on the line.
    package mutating func take(_ bytes: ArraySlice<UInt8>, number: Int, ending: LineEnding,
                       report: (_ message: String, _ column: Int) -> Void) -> Step {
        if !isOpen {
            startLine = number
            fields.removeAll(keepingCapacity: true)
            resetField()
        }
        lastLine = number
        // Offsets into the line's bytes, read through a span (no index arithmetic on the slice per byte).
        let span = bytes.span, base = bytes.startIndex, end = span.count
        var index = 0, run = 0
        func column() -> Int { String(decoding: bytes[base..<(base + index)], as: UTF8.self).unicodeScalars.count + 1 }
        func take(_ range: Range<Int>) { field.append(contentsOf: bytes[(base + range.lowerBound)..<(base + range.upperBound)]) }
        while index < end {
            let byte = span[index]
            if inQuotes {
                if byte == quote {
                    take(run..<index)
                    if index + 1 < end, span[index + 1] == quote {
                        field.append(byte)
                        index += 2
                    } else {
                        inQuotes = false
                        closed = true
                        index += 1
                    }
                    run = index
                } else {
                    index += 1
                }
                continue
            }
            if isLeadByte[Int(byte)], let length = separatorLength(span, at: index) {
                take(run..<index)
                finishField()
                index += length
                run = index
                continue
            }
            if byte == quote, !quoted, !closed, field.isEmpty, run == index {
                inQuotes = true
                quoted = true
                quoteLine = number
                quoteColumn = column()
                index += 1
                run = index
                continue
            }
            if !reported, closed || byte == quote {
                reported = true
                report(closed ? "text after the closing quote of a quoted field (kept as written)"
                              : "a quote inside a field that does not start with one (kept as written)", column())
            }
            index += 1
        }
        take(run..<end)
        if inQuotes {
            field.append(contentsOf: ending.bytes)
            size = isOpen ? size + bytes.count + 1 : bytes.count + 1
            isOpen = true
            return size > DelimitedQuotedRecords.maximumRecordLength ? .tooLong : .open
        }
        let spansLines = isOpen
        isOpen = false
        let lastFieldQuoted = quoted
        finishField()
        return .record(Parsed(fields: fields, line: startLine, lastFieldQuoted: lastFieldQuoted, spansLines: spansLines))
    }

    private func separatorLength(_ span: Span<UInt8>, at index: Int) -> Int? {
        search: for separator in separators where separator.count <= span.count - index {
            for offset in separator.indices where span[index + offset] != separator[offset] { continue search }
            return separator.count
        }
        return nil
    }

    private mutating func finishField() {
        var value = field[...]
        if trims, !quoted {
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        }
        fields.append(String(decoding: value, as: UTF8.self))
        resetField()
    }

    private mutating func resetField() {
        field.removeAll(keepingCapacity: true)
        quoted = false
        closed = false
        reported = false
    }
}

extension DelimitedReader {
    /// Reads `input` record by record with `DelimitedQuotedRecords`: for `quote`, and for `header: "names"`.
    package func readRecords(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        var parser = DelimitedQuotedRecords(quote: options.quote, separators: separators, isLeadByte: isLeadByte,
                                            trims: options.quote == nil)
        let fixed = options.fields.count
        var awaitingHeader = options.header != .none
        /// With `header: "names"`: for each field, its column in the header (nil: the header lacks it).
        var columns: [Int?]?
        var expected = fixed
        var stopped = false
        let kind = kinds[0]
        try LineReader.forEachLineUTF8AnyEnding(of: input, encoding: options.encoding, log: log) { number, line, ending in
            if stopped { return }
            if parser.isOpen, number != parser.lastLine + 1 {
                log.report(.parse, "line \(parser.lastLine + 1) inside the quoted field opened at line \(parser.quoteLine) "
                               + "could not be read: the record of line \(parser.startLine) is left out", at: input.at(parser.startLine))
                parser.discard()
            }
            if !parser.isOpen, line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            let step = parser.take(line.bytes, number: number, ending: ending) { message, column in
                log.report(.delimitedQuote, message, at: input.at(number, column: column))
            }
            let parsed: DelimitedQuotedRecords.Parsed
            switch step {
            case .open: return
            case .tooLong:
                log.report(.parse, "the quoted field opened at line \(parser.quoteLine) is not closed within "
                               + "\(DelimitedQuotedRecords.maximumRecordLength >> 20) MiB: the rest of the file is not read",
                           at: input.at(parser.quoteLine, column: parser.quoteColumn))
                stopped = true
                return
            case .record(let record): parsed = record
            }
            var fields = parsed.fields
            if fields.count > 1, fields.last??.isEmpty == true, !parsed.lastFieldQuoted,
               awaitingHeader || options.tail != nil || fields.count == expected + 1 {
                fields.removeLast()
            }
            if awaitingHeader {
                awaitingHeader = false
                if options.header == .names {
                    columns = headerColumns(fields.map { TextFolding.trim($0 ?? "") }, line: parsed.line, input: input, log: log)
                    expected = fields.count
                } else {
                    checkSkippedHeader(fields.map { TextFolding.trim($0 ?? "") }, line: parsed.line, input: input, log: log)
                }
                return
            }
            if options.tail == nil ? fields.count != expected : fields.count < fixed {
                let shown = parsed.spansLines ? "the record of lines \(parsed.line)–\(number)" : "\"\(excerpt(line.text))\""
                let names = columns == nil ? describeFields() : "the header's \(expected) columns"
                log.report(.parse, "expected \(options.tail == nil ? "" : "at least ")\(expected) fields (\(names)), "
                               + "found \(fields.count) in \(shown)", at: input.at(parsed.line))
                return
            }
            if let columns {
                try emit(Record(kind, values: columns.map { $0.map { fields[$0] } ?? nil }, line: parsed.line))
            } else if options.tail == nil {
                try emit(Record(kind, values: fields, line: parsed.line))
            } else {
                let head = Array(fields.prefix(fixed))
                for (position, item) in fields.dropFirst(fixed).enumerated() {
                    try emit(Record(kind, values: head + [item, String(position)], line: parsed.line))
                }
            }
        }
        if parser.isOpen, !stopped {
            log.report(.parse, "the quoted field opened here is never closed: the record of line \(parser.startLine) "
                           + "is left out", at: input.at(parser.quoteLine, column: parser.quoteColumn))
        }
    }

    /// Where each field is in a header naming `names`: a field the header lacks is an error, a column no field reads
    /// is reported (its values are not read), a name written twice is read from its first column.
    private func headerColumns(_ names: [String], line: Int, input: InputFile, log: DiagnosticLog) -> [Int?] {
        var positions: [String: Int] = [:]
        var repeated: [String] = []
        for (index, name) in names.enumerated() {
            if positions[name] == nil { positions[name] = index } else { repeated.append(name) }
        }
        if !repeated.isEmpty {
            log.report(.delimitedRepeatedHeader, "the header names \(quotedList(repeated)) more than once; each field reads the first",
                       at: input.at(line))
        }
        let missing = options.fields.filter { positions[$0] == nil }
        if !missing.isEmpty {
            log.report(.delimitedHeader, "the header has no column for the field\(missing.count == 1 ? "" : "s") "
                           + "\(quotedList(missing)); its columns: \(quotedList(names))", at: input.at(line))
        }
        let read = Set(options.fields)
        let unread = names.filter { !read.contains($0) }
        if !unread.isEmpty {
            log.report(.delimitedUnreadColumn, "no field reads the column\(unread.count == 1 ? "" : "s") \(quotedList(unread)): "
                           + "\(unread.count == 1 ? "its" : "their") values are not read", at: input.at(line))
        }
        return options.fields.map { positions[$0] }
    }

    private func quotedList(_ names: [String]) -> String {
        names.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
