import Foundation
import KilnC

/// The one JSON string escaper of every JSON Kiln writes, by hand (exports, the `json` reader's captured values,
/// extraction records) or through `KilnJSON`'s encoder (reports, check, diff, codes, fixtures). Quotes, backslashes
/// and C0 control characters are escaped as Foundation's encoder escapes them (`\b`, `\f`, `\n`, `\r`, `\t`,
/// `\u0007`); the other characters a terminal obeys (`TerminalText.isUnsafe`: DEL, C1 controls, bidirectional
/// overrides) become `\u007f`, `\u009b`, `\u202e` — valid JSON that still reads as the same string, and safe to print.
package enum JSONText {
    /// A number, a string, a hexadecimal string for a blob, or `null` (also for numbers JSON cannot hold).
    package static func value(_ value: SQLValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let number): return String(number)
        case .real(let number): return number.isFinite ? SQLValue.format(number) : "null"
        case .text(let text): return string(text)
        case .blob: return string(value.textValue ?? "")
        }
    }

    /// `text` as a JSON string.
    package static func string(_ text: String) -> String { "\"" + escaped(text) + "\"" }

    /// A JSON string's contents: what Foundation's encoder escapes, escaped as it does (slashes not escaped), and the
    /// terminal's unsafe characters as `\uXXXX`.
    package static func escaped(_ value: String) -> String {
        guard JSONText.needsEscaping(value.utf8) else { return value }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\u{08}": escaped += "\\b"
            case "\u{0C}": escaped += "\\f"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20 || TerminalText.isUnsafe(scalar): escaped += unicodeEscape(scalar)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// True when `bytes` hold a character `escaped` changes, found in one pass over the UTF-8 without decoding it:
    /// ASCII controls, `"` and `\\`, DEL, a C1 control (`C2 80`…`C2 9F`) or a bidirectional control (`E2 80 AA`…`E2 80 AE`,
    /// `E2 81 A6`…`E2 81 A9`). Text in Greek or Czech is mostly bytes over 0x7F, so this must not decode.
    package static func needsEscaping(_ bytes: String.UTF8View) -> Bool {
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return true }
            if previous == 0xC2, (0x80...0x9F).contains(byte) { return true }
            if beforePrevious == 0xE2, previous == 0x80, (0xAA...0xAE).contains(byte) { return true }
            if beforePrevious == 0xE2, previous == 0x81, (0xA6...0xA9).contains(byte) { return true }
            beforePrevious = previous
            previous = byte
        }
        return false
    }

    /// JSON text from Foundation's encoder with the terminal's unsafe characters escaped as `escaped` escapes them.
    /// The encoder escapes C0 controls itself, and JSON outside strings is ASCII, so every such character found is
    /// inside a string.
    package static func hardened(_ json: Data) -> Data {
        guard json.contains(where: { $0 >= 0x7F }) else { return json }
        let text = String(decoding: json, as: UTF8.self)
        guard text.unicodeScalars.contains(where: TerminalText.isUnsafe) else { return json }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x20, TerminalText.isUnsafe(scalar) { result += unicodeEscape(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return Data(result.utf8)
    }

    /// `\uXXXX` for a scalar of the Basic Multilingual Plane (every character escaped here is one).
    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
