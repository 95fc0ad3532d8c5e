import KilnC
import KilnCore

/// A manifest must be UTF-8 before Foundation reads it: its JSON5 reader traps — the process dies — on some byte
/// sequences that are not (found by `scripts/fuzz manifest`), where it should have thrown.
package enum ManifestEncoding {
    /// The first byte that is not UTF-8, with its 1-based line and column (in characters), or `nil`.
    package static func firstInvalidByte(_ bytes: [UInt8]) -> (byte: UInt8, line: Int, column: Int)? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0, line = 1, column = 1
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            case .emptyInput:
                return nil
            case .error:
                return (bytes[offset], line, column)
            }
        }
    }

    /// The manifest error for a file that is not UTF-8, or `nil` when it is.
    package static func issue(_ bytes: [UInt8], file: String) -> KilnError? {
        guard let bad = firstInvalidByte(bytes) else { return nil }
        let byte = "0x" + String(bad.byte, radix: 16, uppercase: true).leftPadded(to: 2)
        return .manifest(ManifestIssue(file: file, line: bad.line, keyPath: "",
                                       message: "not valid JSON5: the manifest is not UTF-8 (byte \(byte) at column \(bad.column))"))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
