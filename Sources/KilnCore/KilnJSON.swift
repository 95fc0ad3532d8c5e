import Foundation
import KilnC

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

    /// Why a JSON document could not be decoded, as a short phrase ("bundle is missing", "it is not valid JSON")
    /// rather than Swift's description of the error, for messages about files a user gave.
    public static func reason(_ error: Error) -> String {
        guard let error = error as? DecodingError else { return "it cannot be read" }
        func place(_ path: [CodingKey]) -> String {
            path.isEmpty ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "it is not valid JSON"
        case .dataCorrupted(let context): return "the value at \(place(context.codingPath)) is not valid"
        case .keyNotFound(let key, let context): return "\(place(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context): return "\(place(context.codingPath)) does not have the expected type"
        case .valueNotFound(_, let context): return "\(place(context.codingPath)) is null"
        @unknown default: return "it does not have the expected shape"
        }
    }
}
