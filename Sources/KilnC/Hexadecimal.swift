/// Bytes as lowercase hexadecimal text, two digits a byte: a blob shown as text.
package enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as hexadecimal text, written in one pass straight into the string's storage (a blob of tens of
    /// megabytes is a source's value too).
    package static func text(of bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "" }
        return bytes.withUnsafeBufferPointer { source in
            digits.withUnsafeBufferPointer { digits in
                String(unsafeUninitializedCapacity: source.count * 2) { text in
                    var position = 0
                    for byte in source {
                        text[position] = digits[Int(byte >> 4)]
                        text[position + 1] = digits[Int(byte & 0x0F)]
                        position += 2
                    }
                    return position
                }
            }
        }
    }

    /// The bytes the hexadecimal `text` (digits in either case, two per byte) spells; `nil` for an odd count or any
    /// other character.
    package static func bytes(of text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for digit in text {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}
