/// Bytes as lowercase hexadecimal text, two digits a byte: a blob shown as text.
public enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as hexadecimal text, in one pass into one buffer (not a formatted string per byte).
    public static func text(of bytes: [UInt8]) -> String {
        var text = [UInt8](repeating: 0, count: bytes.count * 2)
        for (index, byte) in bytes.enumerated() {
            text[2 * index] = digits[Int(byte >> 4)]
            text[2 * index + 1] = digits[Int(byte & 0x0F)]
        }
        return String(decoding: text, as: UTF8.self)
    }
}
