/// What decoding an image file showed: a sound image and its size, a damaged one with the library's message, one
/// too large to decode (its size from the header), one using a feature the library cannot decode (12-bit
/// precision, a lossless process…: not damage), with the library's message, or bytes that are not of the library's
/// format at all, with its message.
package enum ImageInspection: Equatable, Sendable {
    case sound(width: Int, height: Int)
    case damaged(message: String)
    case tooLarge(width: Int, height: Int)
    case unsupported(message: String)
    case notThisFormat(message: String)

    /// Turns a shim's result code (0 sound, 1 damaged, 2 too large, 3 unsupported, 4 not this format) into an
    /// inspection.
    package static func from(code: Int32, width: UInt32, height: UInt32, message: [CChar]) -> ImageInspection {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch code {
        case 0: return .sound(width: Int(width), height: Int(height))
        case 2: return .tooLarge(width: Int(width), height: Int(height))
        case 3: return .unsupported(message: text)
        case 4: return .notThisFormat(message: text)
        default: return .damaged(message: text.isEmpty ? "the image cannot be decoded" : text)
        }
    }
}
