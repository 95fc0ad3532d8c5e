import Foundation

/// Limits a manifest sets on the work its own SQL may do (`limits: { sqlSeconds: 60 }`).
public struct ManifestLimits: Sendable, Equatable {
    /// The default time one statement of manifest SQL may run: generous, but a runaway join ends.
    public static let defaultSQLSeconds: Double = 60

    /// Seconds one statement of a query table, an `sql` rule (or any rule) or an export query may run before it is
    /// stopped: a rule becomes an error finding naming it, a query table or export a manifest error.
    public var sqlSeconds: Double = ManifestLimits.defaultSQLSeconds

    public init(sqlSeconds: Double = ManifestLimits.defaultSQLSeconds) {
        self.sqlSeconds = sqlSeconds
    }
}

extension ManifestLimits: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case sqlSeconds }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        sqlSeconds = try c.decodeIfPresent(Double.self, forKey: .sqlSeconds) ?? ManifestLimits.defaultSQLSeconds
        guard sqlSeconds > 0, sqlSeconds.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.sqlSeconds],
                                                    debugDescription: "expected a number of seconds greater than 0"))
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
