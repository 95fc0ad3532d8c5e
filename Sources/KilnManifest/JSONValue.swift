import Foundation
import KilnC
import KilnCore

/// A JSON value kept as it was written, for format options that each reader decodes into its own type.
public enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as text, for constants written into a column.
    public var scalarText: String? {
        switch self {
        case .null, .array, .object: return nil
        case .bool(let value): return value ? "1" : "0"
        case .number(let value): return sqlNumber(value)
        case .string(let value): return value
        }
    }

    /// Decodes this value as `T`, reporting errors under `codingPath` so they point into the manifest.
    /// - Throws: `DecodingError` whose coding path starts with `codingPath`.
    package func decode<T: Decodable>(_ type: T.Type, codingPath: [CodingKey]) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: JSONEncoder().encode(self))
        } catch let DecodingError.typeMismatch(type, context) {
            throw DecodingError.typeMismatch(type, context.prefixed(with: codingPath))
        } catch let DecodingError.valueNotFound(type, context) {
            throw DecodingError.valueNotFound(type, context.prefixed(with: codingPath))
        } catch let DecodingError.keyNotFound(key, context) {
            throw DecodingError.keyNotFound(key, context.prefixed(with: codingPath))
        } catch let DecodingError.dataCorrupted(context) {
            throw DecodingError.dataCorrupted(context.prefixed(with: codingPath))
        }
    }
}

extension DecodingError.Context {
    package func prefixed(with path: [CodingKey]) -> DecodingError.Context {
        DecodingError.Context(codingPath: path + codingPath, debugDescription: debugDescription, underlyingError: underlyingError)
    }
}

/// A coding key for any name or index, used to see every key an object has.
package struct AnyKey: CodingKey {
    package var stringValue: String
    package var intValue: Int?
    package init(stringValue: String) { self.stringValue = stringValue }
    package init(intValue: Int) { stringValue = "Index \(intValue)"; self.intValue = intValue }
}

extension Decoder {
    /// A keyed container that refuses keys the type does not declare, naming the ones it accepts.
    /// - Throws: `DecodingError.dataCorrupted` at the unknown key's path.
    package func strictContainer<Key: CodingKey & CaseIterable>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let all = try container(keyedBy: AnyKey.self)
        let known = Key.allCases.map(\.stringValue)
        for key in all.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + [key],
                debugDescription: "unknown key \"\(key.stringValue)\"; expected one of: \(known.joined(separator: ", "))"))
        }
        return try container(keyedBy: type)
    }
}

/// Renders a coding path as `sources[2].options.separator`.
package func keyPathString(_ path: [CodingKey]) -> String {
    var text = ""
    for key in path {
        if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(index) {
            text += "[\(index)]"
        } else {
            text += text.isEmpty ? key.stringValue : "." + key.stringValue
        }
    }
    return text
}
