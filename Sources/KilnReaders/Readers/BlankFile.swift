import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Finds files that hold nothing but white space and byte-order marks, which XML parsers report in words that do not
/// say so ("Extra content at the end of the document").
package enum BlankFile {
    /// True when `input` is at most `limit` bytes of white space and UTF-8 byte-order marks.
    package static func isBlank(_ input: InputFile, limit: Int = 4096) -> Bool {
        guard var bytes = input.leadingBytes(limit + 1), bytes.count <= limit else { return false }
        while bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
    }

    /// Reports a blank markup file as `xml.malformed`; true when it did.
    package static func reportIfBlank(_ input: InputFile, log: DiagnosticLog) -> Bool {
        guard isBlank(input) else { return false }
        log.report(.xmlMalformed, "malformed XML: the file holds no XML (it is empty, or only white space or a byte-order mark)",
                   at: input.at(nil))
        return true
    }
}
