import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Finds files that hold nothing but white space and byte-order marks, which parsers report in words that do not say
/// so ("Extra content at the end of the document"), and reports them in the words of the format the reader expected.
package enum BlankFile {
    /// True when `input` is at most `limit` bytes of white space and UTF-8 byte-order marks.
    package static func isBlank(_ input: InputFile, limit: Int = 4096) -> Bool {
        guard var bytes = input.leadingBytes(limit + 1), bytes.count <= limit else { return false }
        while bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
    }

    /// The format a reader expected, for the finding: each format's own code and name.
    package enum Format {
        case xml, json, iCalendar

        var code: DiagnosticCode {
            switch self {
            case .xml: return .xmlMalformed
            case .json: return .jsonMalformed
            case .iCalendar: return .icsMalformed
            }
        }

        var name: String {
            switch self {
            case .xml: return "XML"
            case .json: return "JSON"
            case .iCalendar: return "iCalendar data"
            }
        }
    }

    /// Reports a blank file as malformed `format` (`xml.malformed`, `json.malformed`, `ics.malformed`); true when it did.
    package static func reportIfBlank(_ input: InputFile, as format: Format, log: DiagnosticLog) -> Bool {
        guard isBlank(input) else { return false }
        let what = "the file holds no \(format.name) (it is empty, or only white space or a byte-order mark)"
        // At line 1, where the document should have begun (as parsers place an empty document's error).
        log.report(format.code, format == .iCalendar ? what : "malformed \(format.name): \(what)", at: input.at(1))
        return true
    }
}
