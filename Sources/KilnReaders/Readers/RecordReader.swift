import Foundation
import KilnC
import KilnCore
import KilnManifest

/// A kind of record a reader emits: its name (what a manifest's `into` maps) and its fields, in order.
/// Most readers emit one kind, `record`; a MediaWiki dump emits pages, sections, listings and aliases in one pass.
public struct RecordKind: Sendable, Equatable {
    /// The name a manifest maps to a table, e.g. `listing`.
    public var name: String { storage.name }
    /// The names of the fields of every record of this kind, in order.
    public var fieldNames: [String] { storage.fieldNames }
    /// One shared object, so that every record of a kind carries a single reference.
    private let storage: Storage

    private final class Storage: Sendable {
        package let name: String
        package let fieldNames: [String]
        /// Field positions by name, resolved once.
        package let positions: [String: Int]

        package init(name: String, fieldNames: [String]) {
            self.name = name
            self.fieldNames = fieldNames
            positions = Dictionary(fieldNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The name of the kind a single-kind reader emits.
    public static let defaultName = "record"

    public init(_ name: String = RecordKind.defaultName, fields: [String]) {
        storage = Storage(name: name, fieldNames: fields)
    }

    /// The position of `field` among this kind's fields, or `nil` when the kind has no such field.
    public func position(of field: String) -> Int? { storage.positions[field] }

    public static func == (lhs: RecordKind, rhs: RecordKind) -> Bool {
        lhs.storage === rhs.storage || (lhs.name == rhs.name && lhs.fieldNames == rhs.fieldNames)
    }
}

/// One record read from an input: its kind, its values by field, and the line it came from.
/// Readers set values by field name (`record["name"] = …`), so the order of a declaration can never move a value
/// into another field.
public struct Record: Sendable {
    /// What kind of record this is; its field list gives the meaning of `values`.
    public let kind: RecordKind
    /// Field values, in the order of `kind.fieldNames`; `nil` for an absent field.
    public private(set) var values: [String?]
    /// The 1-based line the record starts on.
    public var line: Int
    /// The bytes of the fields whose value is binary (a BLOB of an `sqlite` source), by position; `values` holds
    /// their hexadecimal text (for messages, fixtures and columns that are not `blob`). `nil` for a record without
    /// one, i.e. of every other reader.
    public private(set) var binaryValues: [Int: [UInt8]]?
    /// Set by a reader that fills the next record's values in the same array when the consumer let this one go
    /// (`RecordReuseToken`); `nil` for every other record.
    package let reuseToken: RecordReuseToken?

    /// An empty record of `kind` (every field absent), to be filled by name.
    public init(_ kind: RecordKind, line: Int) {
        self.kind = kind
        values = Array(repeating: nil, count: kind.fieldNames.count)
        self.line = line
        reuseToken = nil
    }

    /// A record whose values were computed in the order of `kind.fieldNames` (readers whose fields are declared by
    /// the manifest and evaluated from that same list).
    public init(_ kind: RecordKind, values: [String?], line: Int) {
        self.init(kind, values: values, line: line, reuseToken: nil)
    }

    /// As `init(_:values:line:)`, for a reader that reuses the array of values (see `RecordReuseToken`).
    package init(_ kind: RecordKind, values: [String?], line: Int, reuseToken: RecordReuseToken?) {
        precondition(values.count == kind.fieldNames.count, "a record of \(kind.name) needs \(kind.fieldNames.count) values")
        self.kind = kind
        self.values = values
        self.line = line
        self.reuseToken = reuseToken
    }

    /// Sets the field at `position` to `bytes`: its value is their hexadecimal text, its binary value the bytes.
    public mutating func setBinary(_ bytes: [UInt8], at position: Int) {
        values[position] = Hexadecimal.text(of: bytes)
        binaryValues = (binaryValues ?? [:]).merging([position: bytes]) { $1 }
    }

    /// The value of the field named `field`. Naming a field the kind does not declare is a programming error.
    public subscript(field: String) -> String? {
        get {
            guard let position = kind.position(of: field) else { preconditionFailure("\(kind.name) has no field \(field)") }
            return values[position]
        }
        set {
            guard let position = kind.position(of: field) else { preconditionFailure("\(kind.name) has no field \(field)") }
            values[position] = newValue
        }
    }
}

/// Tells a reader whether every record it emitted from its array of values has been let go. The reader puts one
/// token in each such record and keeps a reference itself: when that reference is the only one left, no consumer
/// holds a record (or its array, short of copying `values` out), so the next record's values are written in place,
/// without allocating and freeing an array per record. Otherwise the reader starts a fresh array. Either way the
/// array's copy-on-write keeps every record's values as they were emitted: the token only chooses the cheaper path.
package final class RecordReuseToken: Sendable {}


/// A format reader: turns one input file into records of named kinds and fields, streaming.
/// A reader reports every line it cannot parse to the log (file, line, text, what was expected) and goes on.
public protocol RecordReader {
    /// The kinds of record this reader emits, each with its fields; the first is the default kind, which a source
    /// with `into: "table"` maps.
    var kinds: [RecordKind] { get }

    /// Reads `input`, calling `emit` for each record.
    /// - Throws: `KilnError.io` when the file cannot be read; whatever `emit` throws.
    func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws

    /// This reader, emitting only the kinds named in `kinds` (a manifest maps only those), so that the work for
    /// the others is skipped. The default emits everything; the pipeline drops records of unmapped kinds.
    func restricted(to kinds: Set<String>) -> RecordReader

    /// This reader, bounded per file by the manifest's `limits` (a calendar's occurrences, a text file's pattern
    /// time). The default has no such bound.
    func limited(by limits: ManifestLimits) -> RecordReader
}

extension RecordReader {
    /// The fields of the default kind.
    public var fieldNames: [String] { kinds[0].fieldNames }

    /// The kind named `name`.
    public func kind(named name: String) -> RecordKind? { kinds.first { $0.name == name } }

    public func restricted(to kinds: Set<String>) -> RecordReader { self }

    public func limited(by limits: ManifestLimits) -> RecordReader { self }
}

/// A reader type that is built from a source's `options` object.
public protocol ConfigurableReader: RecordReader {
    /// The format name used in manifests.
    static var format: String { get }
    /// The media types a fetched file of this format may arrive as when its source names none (`MediaTypes`).
    static var acceptedMediaTypes: [String] { get }
    /// The reader's options as the manifest writes them; once decoded, a `ReaderPlan` shares them between threads.
    associatedtype Options: Decodable & Sendable
    /// Builds the reader, checking the options (patterns compile, required fields given).
    /// - Throws: `KilnError` or `DecodingError` describing the bad option.
    init(options: Options) throws
}

/// The formats Kiln can read, by manifest name: the one list of them. The manifest's `format`, `kiln fetch`'s
/// accepted media types, the reader reference pages (docs/reference/readers/) and the fuzz targets (Fuzz/targets/)
/// follow it (`DeclaredListsTests` holds the docs and the fuzz targets to it).
public enum ReaderRegistry {
    /// Every built-in reader type.
    public static let readerTypes: [any ConfigurableReader.Type] = [
        DelimitedReader.self, RoutesReader.self, TimetableReader.self, XMLRecordReader.self, HTMLReader.self,
        TextExtractReader.self, KMLReader.self, MediaWikiReader.self, WikitextReader.self, FilesReader.self, SQLiteReader.self,
        ICalendarReader.self, JSONRecordReader.self, WebPageReader.self,
    ]

    /// The format names, for messages.
    public static var formats: [String] { readerTypes.map { $0.format } }

    /// The media types a fetched file for a source of `format` may arrive as (any, for an unknown format).
    public static func acceptedMediaTypes(for format: String) -> [String] {
        readerTypes.first { $0.format == format }?.acceptedMediaTypes ?? MediaTypes.any
    }

    /// Builds the reader for `format` from manifest options.
    /// - Throws: `DecodingError` at `codingPath` when the format is unknown or an option is wrong; as `ReaderPlan.instantiate`.
    package static func makeReader(format: String, options: JSONValue, codingPath: [CodingKey]) throws -> RecordReader {
        try plan(format: format, options: options, codingPath: codingPath).instantiate()
    }

    /// The plan of a reader for `format`: its manifest options decoded into the format's own type, once.
    /// - Throws: `DecodingError` at `codingPath` when the format is unknown or an option is wrong.
    package static func plan(format: String, options: JSONValue, codingPath: [CodingKey]) throws -> ReaderPlan {
        guard let type = readerTypes.first(where: { $0.format == format }) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.dropLast() + [AnyKey(stringValue: "format")],
                debugDescription: "unknown format \"\(format)\"; expected one of: \(formats.joined(separator: ", "))"))
        }
        return ReaderPlan(options: try decode(type, options: options, codingPath: codingPath))
    }

    private static func decode<Reader: ConfigurableReader>(_ type: Reader.Type, options: JSONValue,
                                                           codingPath: [CodingKey]) throws -> any ReaderOptions {
        DecodedOptions<Reader>(options: try options.decode(Reader.Options.self, codingPath: codingPath))
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
    package static func forEachLine(of input: InputFile, encoding: String, log: DiagnosticLog,
                            _ body: (_ number: Int, _ text: String) throws -> Void) throws {
        try forEachLineUTF8(of: input, encoding: encoding, log: log) { number, line in try body(number, line.text) }
    }

    package static func undecodable(_ line: TextLine, encoding: String, in input: InputFile) -> Diagnostic {
        if let nul = line.bytes.firstIndex(of: 0) {
            let before = line.bytes[..<nul]
            let valid = validUTF8Prefix(before)
            if !isUTF8(encoding) || valid.bytes == before.count {
                let column = (isUTF8(encoding) ? valid.scalars : before.count) + 1
                return Diagnostic(code: .encoding, message: "line holds a NUL byte (at column \(column)); is the file UTF-16, or not text at all?",
                                  provenance: input.at(line.number, column: column))
            }
        }
        if isUTF8(encoding) {
            let (validBytes, validCharacters) = validUTF8Prefix(line.bytes)
            let bad = line.bytes.dropFirst(validBytes).first.map { String(format: "0x%02X", $0) } ?? "?"
            return Diagnostic(
                code: .encoding, message: "line is not valid UTF-8 (byte \(bad) at column \(validCharacters + 1)); "
                    + "if the file is in a legacy code page, set the source's \"encoding\" option, e.g. \"windows-1253\" or \"iso-8859-7\"",
                provenance: input.at(line.number, column: validCharacters + 1))
        }
        return Diagnostic(code: .encoding, message: "line holds bytes that are not valid \(encoding)", provenance: input.at(line.number))
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

