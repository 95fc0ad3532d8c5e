import Foundation

/// How Kiln writes JSON (reports, extraction output, fixtures, `kiln codes`): one encoder setting for every file, so
/// bytes are stable — keys sorted, pretty-printed, slashes as they are — and strings escaped by `JSONText`'s rule.
public enum KilnJSON {
    /// `value` as JSON with Kiln's settings.
    /// - Throws: `EncodingError` for a value JSON cannot hold.
    public static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return JSONText.hardened(try encoder.encode(value))
    }
}
