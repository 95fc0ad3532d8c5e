internal import CLibXML2

/// A failure to find or apply a character-encoding converter.
package struct EncodingError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, as a sentence.
    package let message: String
    package var description: String { message }
}

/// Converts text in a legacy code page (windows-1253, ISO-8859-7, …) to UTF-8 with libxml2's encoding handlers.
/// Not `Sendable`: the handler keeps conversion state.
package final class LegacyTextDecoder {
    /// The encoding name as the manifest gave it.
    package let encodingName: String
    private let handler: xmlCharEncodingHandlerPtr

    /// Finds the converter for `encodingName`.
    /// - Throws: `EncodingError` when libxml2 knows no such encoding.
    package init(encodingName: String) throws {
        _ = LibXML2.setUp
        guard let handler = xmlFindCharEncodingHandler(encodingName) else {
            throw EncodingError(message: "unknown encoding \"\(encodingName)\"")
        }
        self.encodingName = encodingName
        self.handler = handler
    }

    deinit { xmlCharEncCloseFunc(handler) }

    /// Checks that libxml2 can convert from `encodingName` (UTF-8 always can).
    /// - Throws: `EncodingError` naming the unknown encoding.
    package static func check(_ encodingName: String) throws {
        let lowered = encodingName.lowercased()
        if lowered == "utf-8" || lowered == "utf8" { return }
        _ = try LegacyTextDecoder(encodingName: encodingName)
    }

    /// Decodes one line's bytes (an ASCII-compatible single-byte encoding may be converted line by line).
    /// - Throws: `EncodingError` when the bytes are not valid in the encoding.
    package func decode(_ bytes: ArraySlice<UInt8>) throws -> String {
        if bytes.isEmpty { return "" }
        guard let input = xmlBufferCreateSize(bytes.count), let output = xmlBufferCreateSize(bytes.count * 3) else {
            throw EncodingError(message: "out of memory converting from \(encodingName)")
        }
        defer { xmlBufferFree(input); xmlBufferFree(output) }
        let added = bytes.withUnsafeBufferPointer { xmlBufferAdd(input, $0.baseAddress, Int32($0.count)) }
        guard added == 0 else { throw EncodingError(message: "out of memory converting from \(encodingName)") }
        let written = xmlCharEncInFunc(handler, output, input)
        guard written >= 0, xmlBufferLength(input) == 0, let content = xmlBufferContent(output) else {
            throw EncodingError(message: "bytes that are not valid \(encodingName)")
        }
        return String(decoding: UnsafeBufferPointer(start: content, count: Int(xmlBufferLength(output))), as: UTF8.self)
    }
}
