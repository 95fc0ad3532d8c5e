import Foundation
import KilnC

/// How Kiln writes JSON (reports, extraction output, fixtures, `kiln codes`): one encoder setting for every file, so
/// bytes are stable — keys sorted, pretty-printed, slashes as they are — and strings escaped by `JSONText`'s rule.
package enum KilnJSON {
    /// `value` as JSON with Kiln's settings.
    /// - Throws: `EncodingError` for a value JSON cannot hold.
    package static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return JSONText.hardened(try encoder.encode(value))
    }

    /// The members of a flat JSON object (string keys; string or integer values) that `encode(_:filling:)` writes
    /// itself.
    package enum FlatObject: Sendable {
        case strings([String: String])
        case integers([String: Int])
    }

    /// The same bytes as `encode` of `value` with each of `objects`' members in the top-level member of that name,
    /// which `value` itself encodes as an empty object: those members are written here, in the encoder's order (keys
    /// by their UTF-8 bytes) and with its escapes, instead of going through Foundation's encoder, which takes most
    /// of a second for a report of 50 000 inputs (`KilnJSONTests` compares both on random keys).
    /// - Throws: `EncodingError` for a value JSON cannot hold, or when `value` has no such empty member.
    package static func encode<Value: Encodable>(_ value: Value, filling objects: [(key: String, members: FlatObject)]) throws -> Data {
        var json = [UInt8](try encode(value))
        for (key, members) in objects {
            let empty = Array("\n  \(JSONText.string(key)) : {\n\n  }".utf8)
            guard let start = json.firstRange(of: empty)?.lowerBound else {
                throw Swift.EncodingError.invalidValue(key, Swift.EncodingError.Context(codingPath: [], debugDescription: "no empty top-level object \(key) to fill"))
            }
            let filled = Array("\n  \(JSONText.string(key)) : ".utf8) + flatObject(members)
            json.replaceSubrange(start..<start + empty.count, with: filled)
        }
        return Data(json)
    }

    /// `members` as the encoder writes an object one level down from the top.
    private static func flatObject(_ members: FlatObject) -> [UInt8] {
        let keys: [String]
        var bytes: [UInt8] = Array("{\n".utf8)
        switch members {
        case .strings(let values):
            keys = Array(values.keys)
            bytes.reserveCapacity(values.reduce(16) { $0 + $1.key.utf8.count + $1.value.utf8.count + 12 })
        case .integers(let values):
            keys = Array(values.keys)
            bytes.reserveCapacity(values.reduce(16) { $0 + $1.key.utf8.count + 32 })
        }
        guard !keys.isEmpty else { return Array("{\n\n  }".utf8) }
        for (index, key) in sortedInUTF8(keys).enumerated() {
            bytes.append(contentsOf: index == 0 ? "    ".utf8 : ",\n    ".utf8)
            appendString(key, to: &bytes)
            bytes.append(contentsOf: " : ".utf8)
            switch members {
            case .strings(let values): appendString(values[key] ?? "", to: &bytes)
            case .integers(let values): bytes.append(contentsOf: String(values[key] ?? 0).utf8)
            }
        }
        bytes.append(contentsOf: "\n  }".utf8)
        return bytes
    }

    /// `text` as a JSON string (`JSONText.string`), appended as UTF-8.
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        if JSONText.needsEscaping(text.utf8) { bytes.append(contentsOf: JSONText.escaped(text).utf8) } else { bytes.append(contentsOf: text.utf8) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The keys in the encoder's order: by UTF-8 bytes, not as Swift compares strings (by canonical equivalence).
    /// The two agree on ASCII text, which Swift compares faster.
    private static func sortedInUTF8(_ keys: [String]) -> [String] {
        keys.map { (key: $0, ascii: $0.utf8.allSatisfy { $0 < 0x80 }) }
            .sorted { $0.ascii && $1.ascii ? $0.key < $1.key : $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map(\.key)
    }

    /// Why a JSON document could not be decoded, as a short phrase ("bundle is missing", "it is not valid JSON")
    /// rather than Swift's description of the error, for messages about files a user gave.
    package static func reason(_ error: Error) -> String {
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
