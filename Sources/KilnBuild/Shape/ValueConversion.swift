import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Converts text to a column's declared type; the type is never guessed from the text.
package enum ValueConversion {
    package static func convert(_ text: String, to type: ColumnType) -> Result<SQLValue, ValueProblem> {
        switch type {
        case .text: return .success(.text(text))
        case .blob: return .success(.blob(Array(text.utf8)))
        case .integer:
            guard let value = Int64(text) ?? Int64(TextFolding.trim(text)) else {
                return .failure(ValueProblem(message: "expected a whole number, found \"\(excerpt(text))\""))
            }
            return .success(.integer(value))
        case .real:
            let trimmed = TextFolding.trim(text)
            if let value = shortDecimal(trimmed) { return .success(.real(value == 0 ? 0 : value)) }
            // Only plain decimal notation: Double() would also take "nan", "inf" and hexadecimal floats.
            let plain = !trimmed.isEmpty && trimmed.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
            }
            guard plain, let value = Double(trimmed), value.isFinite else {
                return .failure(ValueProblem(message: "expected a decimal number, found \"\(excerpt(text))\""))
            }
            return .success(.real(value == 0 ? 0 : value))
        }
    }

    /// The value of `text` when it is a short plain decimal (`[+-]digits[.digits]`, at most 15 digits in all), else
    /// `nil`. Such a value is exact as a whole number of units of its last digit, below 2^53, and 10^k is exact for
    /// k <= 22, so one correctly rounded division gives exactly the double `Double(text)` gives (Clinger's fast path).
    package static func shortDecimal(_ text: String) -> Double? {
        let bytes = text.utf8Span.span
        guard !bytes.isEmpty else { return nil }
        var index = 0
        let negative = bytes[0] == UInt8(ascii: "-")
        if negative || bytes[0] == UInt8(ascii: "+") { index = 1 }
        var units: UInt64 = 0
        var digits = 0
        var pointAt = -1
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                digits += 1
                units = units &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
            } else if byte == UInt8(ascii: "."), pointAt < 0, digits > 0 {
                pointAt = digits
            } else {
                return nil
            }
            index += 1
        }
        let fractionDigits = pointAt < 0 ? 0 : digits - pointAt
        guard digits > 0, digits <= 15, pointAt < 0 || fractionDigits > 0 else { return nil }
        let magnitude = Double(units) / exactPowersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }

    /// 10^0 through 10^15, each exact as a double.
    private static let exactPowersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                                                     1e13, 1e14, 1e15]
}
