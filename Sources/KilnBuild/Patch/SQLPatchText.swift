import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// SQL literals that give back exactly the value they were made from, in any SQLite: every statement of a patch is
/// one line, so that an app may run it line by line (Android's `execSQL` runs one statement per call).
package enum SQLLiteral {
    /// The literal of `value`: integers as digits, reals as a decimal when it is exactly the double (`38.25`), else
    /// as an exact quotient of an integer by a power of two (`(5382475397419459/140737488355328.0)`, which no
    /// decimal parser can round differently), text quoted (as `CAST(X'…' AS TEXT)` when it holds a line break or
    /// NUL), BLOBs as `X'…'`, NULL.
    package static func of(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer):
            return integer == .min ? "(-9223372036854775807-1)" : String(integer)
        case .real(let real): return self.real(real)
        case .text(let text):
            if text.utf8.contains(where: { $0 == 10 || $0 == 13 || $0 == 0 }) { return "CAST(\(hex(Array(text.utf8))) AS TEXT)" }
            return quoteLiteral(text)
        case .blob(let bytes): return hex(bytes)
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        var text = "X'"
        text.reserveCapacity(bytes.count * 2 + 3)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return text + "'"
    }

    /// 2^62, the largest power of two a literal gives exactly (19 digits, which SQLite reads into a 64-bit integer).
    private static let largestPower = "4611686018427387904.0"

    private static func real(_ value: Double) -> String {
        if value.isInfinite { return value < 0 ? "-9e999" : "9e999" }
        if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
        if value == value.rounded(), abs(value) < 9007199254740992 { return String(Int64(value)) + ".0" }
        if let decimal = exactDecimal(value) { return decimal }
        // value = significand × 2^exponent with an odd integer significand below 2^53.
        var significand = value.significandBitPattern | (value.isNormal ? 1 << 52 : 0)
        var exponent = Int(value.exponent) - 52
        if !value.isNormal { exponent = -1074 }
        while significand & 1 == 0 {
            significand >>= 1
            exponent += 1
        }
        let digits = (value.sign == .minus ? "-" : "") + String(significand)
        var steps: [String] = []
        var remaining = abs(exponent)
        while remaining > 62 {
            steps.append(largestPower)
            remaining -= 62
        }
        if remaining > 0 { steps.append(String(UInt64(1) << UInt64(remaining)) + ".0") }
        return "(" + digits + steps.map { (exponent < 0 ? "/" : "*") + $0 }.joined() + ")"
    }

    /// The shortest decimal of `value` when it is exactly the double's value (few binary fractions are, e.g. 0.5),
    /// so that any parser, however it rounds, reads it back. A decimal of `f` places equals a double when the double
    /// times 2^f is an integer: its binary fraction then ends within `f` places, and so does its decimal one.
    private static func exactDecimal(_ value: Double) -> String? {
        let text = "\(value)"
        guard !text.contains("e"), let dot = text.firstIndex(of: ".") else { return nil }
        let places = text.distance(from: text.index(after: dot), to: text.endIndex)
        // At most 15 digits and 22 places: SQLite reads the digits into an integer and divides it by a power of ten,
        // both exact, and the quotient is a double, so no rounding can move it.
        guard places <= 22, text.filter(\.isNumber).drop(while: { $0 == "0" }).count <= 15 else { return nil }
        let scaled = value * Double(UInt64(1) << UInt64(places))
        return scaled.isFinite && scaled == scaled.rounded() ? text : nil
    }
}

/// The statements of a plain SQL patch for one table, by key and in key order.
package enum SQLPatchStatements {
    /// `"a" = 1 AND "b" IS NULL` for the values of `columns` in `values`.
    package static func match(_ columns: [String], _ values: ArraySlice<SQLValue>) -> String {
        zip(columns, values).map { column, value in
            value == .null ? "\(quoteIdentifier(column)) IS NULL" : "\(quoteIdentifier(column)) = \(SQLLiteral.of(value))"
        }.joined(separator: " AND ")
    }

    /// `DELETE FROM table WHERE key…;` and a line break.
    package static func delete(_ table: String, key: [String], values: [SQLValue]) -> String {
        "DELETE FROM \(quoteIdentifier(table)) WHERE \(match(key, values[...]));\n"
    }

    /// `INSERT INTO table (columns) VALUES (…);` and a line break.
    package static func insert(_ table: String, columns: [String], values: [SQLValue]) -> String {
        "INSERT INTO \(quoteIdentifier(table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(values.map(SQLLiteral.of).joined(separator: ", ")));\n"
    }

    /// `UPDATE table SET column = value… WHERE key…;` and a line break.
    package static func update(_ table: String, key: [String], keyValues: ArraySlice<SQLValue>, changes: [(String, SQLValue)]) -> String {
        let assignments = changes.map { "\(quoteIdentifier($0.0)) = \(SQLLiteral.of($0.1))" }.joined(separator: ", ")
        return "UPDATE \(quoteIdentifier(table)) SET \(assignments) WHERE \(match(key, keyValues));\n"
    }
}
