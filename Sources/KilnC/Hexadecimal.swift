/// Bytes as lowercase hexadecimal text, two digits a byte: a blob shown as text.
package enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as hexadecimal text, in one pass into one buffer (not a formatted string per byte).
    package static func text(of bytes: [UInt8]) -> String {
        var text = [UInt8](repeating: 0, count: bytes.count * 2)
        for (index, byte) in bytes.enumerated() {
            text[2 * index] = digits[Int(byte >> 4)]
            text[2 * index + 1] = digits[Int(byte & 0x0F)]
        }
        return String(decoding: text, as: UTF8.self)
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
