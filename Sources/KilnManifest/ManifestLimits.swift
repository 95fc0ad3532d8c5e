import Foundation
import KilnC
import KilnCore

/// Limits a manifest sets on the work its own SQL may do, on the size of what it ships and on what one input file may
/// cost (`limits: { sqlSeconds: 60, bundleBytes: "50 MB", occurrencesPerFile: 100000, regexSecondsPerFile: 10 }`).
public struct ManifestLimits: Sendable, Equatable {
    /// The default time one statement of manifest SQL may run: generous, but a runaway join ends.
    public static let defaultSQLSeconds: Double = 60
    /// The default number of occurrences one calendar file may expand to (200 events of 5 000 occurrences each made
    /// a 73 MB bundle).
    public static let defaultOccurrencesPerFile = 100_000
    /// The default time the regular expressions of a line-based reader may spend on one file.
    public static let defaultRegexSecondsPerFile: Double = 10

    /// Seconds one statement of a query table, an `sql` rule (or any rule) or an export query may run before it is
    /// stopped: a rule becomes an error finding naming it, a query table or export a manifest error.
    public var sqlSeconds: Double = ManifestLimits.defaultSQLSeconds
    /// The most occurrences an `ics` file ships, over all its events; those beyond are an error finding naming the file.
    public var occurrencesPerFile = ManifestLimits.defaultOccurrencesPerFile
    /// Seconds the patterns of a `text` or `timetable` source may spend matching the lines of one file; the lines
    /// after are not examined, and an error finding names them.
    public var regexSecondsPerFile = ManifestLimits.defaultRegexSecondsPerFile

    /// The largest bundle file a build may put in place (`bundle.too-large` beyond it); `nil` for no limit.
    public var bundleBytes: ByteSize?
    /// The most bytes each named table may take with its indexes, full-text and R*Tree tables.
    public var tables: [String: ByteSize] = [:]

    public init(sqlSeconds: Double = ManifestLimits.defaultSQLSeconds, bundleBytes: ByteSize? = nil, tables: [String: ByteSize] = [:],
                occurrencesPerFile: Int = ManifestLimits.defaultOccurrencesPerFile,
                regexSecondsPerFile: Double = ManifestLimits.defaultRegexSecondsPerFile) {
        self.sqlSeconds = sqlSeconds
        self.bundleBytes = bundleBytes
        self.tables = tables
        self.occurrencesPerFile = occurrencesPerFile
        self.regexSecondsPerFile = regexSecondsPerFile
    }
}

/// A size in bytes as a manifest or an option writes it: `250000`, `"250000"`, `"512 KB"`, `"50 MB"`, `"1.5 GB"`
/// (powers of 1000, as Kiln prints sizes) or `"64 MiB"` (powers of 1024).
public struct ByteSize: Sendable, Equatable, CustomStringConvertible {
    public var bytes: Int
    /// The size as it was written, for messages.
    public var text: String

    public var description: String { text }

    /// `50 MB, 50000000 bytes`, or `250000 bytes` for a size written in bytes: for messages.
    public var phrase: String { text == "\(bytes)" || text == "\(bytes) bytes" ? "\(bytes) bytes" : "\(text), \(bytes) bytes" }

    private static let units: [(String, Double)] = [
        ("bytes", 1), ("byte", 1), ("B", 1), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12),
        ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
    ]

    /// Reads `text`; `nil` for anything but a positive number with one of the units (or none: bytes).
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
        guard let value = Double(number), value > 0,
              let scale = unit.isEmpty ? 1 : ByteSize.units.first(where: { $0.0 == unit })?.1,
              value * scale < 9e18, (value * scale).rounded(.down) >= 1 else { return nil }
        bytes = Int((value * scale).rounded(.down))
        self.text = trimmed
    }

    /// What a size may look like, for messages.
    package static let expected = "a size: bytes (250000) or a number with KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. \"50 MB\""
}

extension ByteSize: Decodable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self), number > 0 {
            self.init(bytes: number)
            return
        }
        guard let text = try? container.decode(String.self), let size = ByteSize(parsing: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected \(ByteSize.expected)"))
        }
        self = size
    }

    /// `bytes` bytes, written as a number.
    package init(bytes: Int) {
        self.bytes = bytes
        text = "\(bytes) bytes"
    }
}

extension ManifestLimits: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case sqlSeconds, bundleBytes, tables, occurrencesPerFile, regexSecondsPerFile }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        func seconds(_ key: CodingKeys, _ fallback: Double) throws -> Double {
            let value = try c.decodeIfPresent(Double.self, forKey: key) ?? fallback
            guard value > 0, value.isFinite else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key], debugDescription: "expected a number of seconds greater than 0"))
            }
            return value
        }
        sqlSeconds = try seconds(.sqlSeconds, ManifestLimits.defaultSQLSeconds)
        regexSecondsPerFile = try seconds(.regexSecondsPerFile, ManifestLimits.defaultRegexSecondsPerFile)
        occurrencesPerFile = c.contains(.occurrencesPerFile) ? try c.decodeWholeNumber(forKey: .occurrencesPerFile) : ManifestLimits.defaultOccurrencesPerFile
        guard occurrencesPerFile > 0 else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.occurrencesPerFile], debugDescription: "expected a whole number greater than 0"))
        }
        bundleBytes = try c.decodeIfPresent(ByteSize.self, forKey: .bundleBytes)
        tables = try c.decodeIfPresent([String: ByteSize].self, forKey: .tables) ?? [:]
    }
}

extension KeyedDecodingContainer {
    /// A whole number at `key`. Foundation's own error for a fraction (`schemaVersion: 1.5`) names neither the key nor
    /// the problem ("not valid JSON"); this one says what was expected, at the key.
    package func decodeWholeNumber(forKey key: Key) throws -> Int {
        if let value = try? decode(Int.self, forKey: key) { return value }
        if let value = try? decode(Double.self, forKey: key) {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key],
                                                    debugDescription: "expected a whole number, not \(value)"))
        }
        return try decode(Int.self, forKey: key)
    }
}
