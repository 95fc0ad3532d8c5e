import Foundation

/// Limits a manifest sets on the work its own SQL may do and on what one input file may cost
/// (`limits: { sqlSeconds: 60, occurrencesPerFile: 100000, regexSecondsPerFile: 10 }`).
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

    public init(sqlSeconds: Double = ManifestLimits.defaultSQLSeconds,
                occurrencesPerFile: Int = ManifestLimits.defaultOccurrencesPerFile,
                regexSecondsPerFile: Double = ManifestLimits.defaultRegexSecondsPerFile) {
        self.sqlSeconds = sqlSeconds
        self.occurrencesPerFile = occurrencesPerFile
        self.regexSecondsPerFile = regexSecondsPerFile
    }
}

extension ManifestLimits: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case sqlSeconds, occurrencesPerFile, regexSecondsPerFile }

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
    }
}

extension KeyedDecodingContainer {
    /// A whole number at `key`. Foundation's own error for a fraction (`schemaVersion: 1.5`) names neither the key nor
    /// the problem ("not valid JSON"); this one says what was expected, at the key.
    func decodeWholeNumber(forKey key: Key) throws -> Int {
        if let value = try? decode(Int.self, forKey: key) { return value }
        if let value = try? decode(Double.self, forKey: key) {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key],
                                                    debugDescription: "expected a whole number, not \(value)"))
        }
        return try decode(Int.self, forKey: key)
    }
}
