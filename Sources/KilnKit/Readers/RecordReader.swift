import Foundation

/// One record read from an input: values aligned with its reader's `fieldNames`, and the line it came from.
public struct Record: Sendable {
    /// Field values, in the order of the reader's `fieldNames`; `nil` for an absent field.
    public var values: [String?]
    /// The 1-based line the record starts on.
    public var line: Int

    public init(values: [String?], line: Int) {
        self.values = values
        self.line = line
    }
}

/// An input file as a reader sees it: where it is, and how diagnostics name it.
public struct InputFile: Sendable {
    /// The file on disk.
    public let url: URL
    /// The path relative to the pipeline folder, used in diagnostics and metadata.
    public let relativePath: String

    public init(url: URL, relativePath: String) {
        self.url = url
        self.relativePath = relativePath
    }

    /// The place of `line` in this file.
    public func at(_ line: Int?, column: Int? = nil) -> Provenance {
        Provenance(file: relativePath, line: line, column: column)
    }
}

/// A format reader: turns one input file into records of named fields, streaming.
/// A reader reports every line it cannot parse to the log (file, line, text, what was expected) and goes on.
public protocol RecordReader {
    /// The names of the fields of every record, in order.
    var fieldNames: [String] { get }

    /// Reads `input`, calling `emit` for each record.
    /// - Throws: `KilnError.io` when the file cannot be read; whatever `emit` throws.
    func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws
}

/// A reader type that is built from a source's `options` object.
public protocol ConfigurableReader: RecordReader {
    /// The format name used in manifests.
    static var format: String { get }
    /// The reader's options as the manifest writes them.
    associatedtype Options: Decodable
    /// Builds the reader, checking the options (patterns compile, required fields given).
    /// - Throws: `KilnError` or `DecodingError` describing the bad option.
    init(options: Options) throws
}

/// The formats Kiln can read, by manifest name.
public enum ReaderRegistry {
    /// Every built-in reader type.
    public static let readerTypes: [any ConfigurableReader.Type] = [
        DelimitedReader.self, RoutesReader.self, TimetableReader.self, XMLRecordReader.self, HTMLReader.self,
        TextExtractReader.self, KMLReader.self, MediaWikiReader.self, FilesReader.self, SQLiteReader.self,
    ]

    /// The format names, for messages.
    public static var formats: [String] { readerTypes.map { $0.format } }

    /// Builds the reader for `format` from manifest options.
    /// - Throws: `DecodingError` at `codingPath` when the format is unknown or an option is wrong.
    static func makeReader(format: String, options: JSONValue, codingPath: [CodingKey]) throws -> RecordReader {
        guard let type = readerTypes.first(where: { $0.format == format }) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.dropLast() + [AnyKey(stringValue: "format")],
                debugDescription: "unknown format \"\(format)\"; expected one of: \(formats.joined(separator: ", "))"))
        }
        return try make(type, options: options, codingPath: codingPath)
    }

    private static func make<Reader: ConfigurableReader>(_ type: Reader.Type, options: JSONValue,
                                                         codingPath: [CodingKey]) throws -> RecordReader {
        try Reader(options: options.decode(Reader.Options.self, codingPath: codingPath))
    }
}

/// The options every line-based text format shares.
public struct TextOptions: Sendable {
    /// `utf-8` (the default), or a legacy code page such as `windows-1253` or `iso-8859-7`.
    public var encoding: String = "utf-8"
}

extension LineReader {
    /// Streams the decodable lines of `input` to `body`; reports each undecodable or overlong line and skips it,
    /// and reports a file without data or with a legacy encoding declared for UTF-8 text (`LineChecks`).
    /// - Throws: `KilnError.io` when reading fails; whatever `body` throws.
    static func forEachLine(of input: InputFile, encoding: String, log: DiagnosticLog,
                            _ body: (_ number: Int, _ text: String) throws -> Void) throws {
        let reader = try LineReader(url: input.url, encoding: encoding)
        var checks = LineChecks(input: input, encoding: reader.encoding)
        while let line = try reader.next() {
            checks.observe(line, log: log)
            guard let text = line.text else {
                if !checks.reportOverlong(line, limit: reader.maximumLineLength, log: log) {
                    log.report(undecodable(line, encoding: reader.encoding, in: input))
                }
                continue
            }
            try body(line.number, text)
        }
        checks.finish(log: log)
    }

    private static func undecodable(_ line: TextLine, encoding: String, in input: InputFile) -> Diagnostic {
        if let nul = line.bytes.firstIndex(of: 0) {
            let before = line.bytes[..<nul]
            let valid = validUTF8Prefix(before)
            if !isUTF8(encoding) || valid.bytes == before.count {
                let column = (isUTF8(encoding) ? valid.scalars : before.count) + 1
                return Diagnostic(code: "encoding", severity: .error,
                                  message: "line holds a NUL byte (at column \(column)); is the file UTF-16, or not text at all?",
                                  provenance: input.at(line.number, column: column))
            }
        }
        if isUTF8(encoding) {
            let (validBytes, validCharacters) = validUTF8Prefix(line.bytes)
            let bad = line.bytes.dropFirst(validBytes).first.map { String(format: "0x%02X", $0) } ?? "?"
            return Diagnostic(
                code: "encoding", severity: .error,
                message: "line is not valid UTF-8 (byte \(bad) at column \(validCharacters + 1)); "
                    + "if the file is in a legacy code page, set the source's \"encoding\" option, e.g. \"windows-1253\" or \"iso-8859-7\"",
                provenance: input.at(line.number, column: validCharacters + 1))
        }
        return Diagnostic(code: "encoding", severity: .error,
                          message: "line holds bytes that are not valid \(encoding)", provenance: input.at(line.number))
    }
}

/// The length of the longest valid UTF-8 prefix of `bytes`, in bytes and in Unicode scalars.
private func validUTF8Prefix(_ bytes: ArraySlice<UInt8>) -> (bytes: Int, scalars: Int) {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var byteCount = 0, scalarCount = 0
    while case .scalarValue(let scalar) = decoder.decode(&iterator) {
        byteCount += UTF8.width(scalar)
        scalarCount += 1
    }
    return (byteCount, scalarCount)
}

/// Shortens a line for a message.
func excerpt(_ text: String, limit: Int = 80) -> String {
    let head = text.prefix(limit)
    return head.endIndex == text.endIndex ? text : String(head) + "…"
}
