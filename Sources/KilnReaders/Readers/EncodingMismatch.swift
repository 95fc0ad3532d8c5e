import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Finds text that is UTF-8 but is read in a legacy single-byte encoding (declared by the manifest's `encoding`
/// option, an XML declaration or an HTML `<meta>` charset): every byte is valid in such an encoding, so the text reads
/// garbled without any other finding. Legacy Greek is almost never valid UTF-8, so the check does not misfire on it.
package enum EncodingMismatch {
    /// How much of a markup file is looked at: declarations come first.
    package static let prefixLength = 1 << 16

    /// True for an encoding name that is not a Unicode one (nor ASCII, which UTF-8 extends).
    package static func isLegacy(_ name: String) -> Bool {
        let lowercase = name.lowercased()
        let lowered = lowercase.utf8.contains(0x5F) ? lowercase.replacingOccurrences(of: "_", with: "-") : lowercase
        return !(lowered.hasPrefix("utf") || lowered.hasPrefix("ucs") || ["us-ascii", "ascii"].contains(lowered))
    }

    /// True when `bytes` hold a character beyond ASCII and are valid UTF-8. With `cut`, the bytes are the start of a
    /// longer file, and a sequence cut off at their end still counts.
    package static func isUTF8Text(_ bytes: ArraySlice<UInt8>, cut: Bool = false) -> Bool {
        var end = bytes.endIndex
        if cut, let lead = bytes.suffix(3).lastIndex(where: { (0xC2...0xF4).contains($0) }),
           bytes.distance(from: lead, to: bytes.endIndex) < (bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2) {
            end = lead
        }
        let text = bytes[..<end]
        return text.contains(where: { $0 >= 0x80 }) && String(validating: text, as: UTF8.self) != nil
    }

    /// The patterns of an XML declaration's and an HTML `<meta>`'s encoding, compiled once for the many files of a
    /// source. Not `Sendable`: a compiled pattern reuses its match data.
    package final class Declarations {
        private let patterns = [#"^\s*(?:\x{FEFF})?<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']"#,
                                #"(?i)<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)"#].compactMap { try? RegexPattern($0) }

        /// The encoding an XML declaration or an HTML `<meta>` names in the first bytes of a file.
        package func declared(inMarkup prefix: ArraySlice<UInt8>) -> String? {
            let text = String(decoding: prefix.prefix(4096), as: UTF8.self)
            for expression in patterns {
                guard let match = try? expression.firstMatch(in: text) else { continue }
                return match.groups.count > 1 ? match.groups[1] : nil
            }
            return nil
        }
    }

    /// Reports a markup file whose bytes are UTF-8 but that is read in a legacy encoding: `override` (the source's
    /// `encoding` option) or what the file declares.
    package static func checkMarkup(_ input: InputFile, override: String?, log: DiagnosticLog) {
        guard let prefix = input.leadingBytes(prefixLength) else { return }
        checkMarkup(input, prefix: prefix, override: override, declarations: Declarations(), log: log)
    }

    /// `checkMarkup(_:override:log:)` on the file's first bytes already read (at least `prefixLength` of them, or
    /// the whole file), with the patterns compiled once.
    package static func checkMarkup(_ input: InputFile, prefix: ArraySlice<UInt8>, override: String?, declarations: Declarations, log: DiagnosticLog) {
        let prefix = prefix.prefix(prefixLength)
        // Only UTF-8 text beyond ASCII can be misread; the declaration is looked for only then.
        guard isUTF8Text(prefix, cut: true), let encoding = override ?? declarations.declared(inMarkup: prefix), isLegacy(encoding) else { return }
        let origin = override == nil ? "the file declares" : "the source's \"encoding\" option says"
        let remedy = override == nil ? "correct the declaration, or set the source's \"encoding\" option to \"UTF-8\"" : "remove the \"encoding\" option"
        log.report(.encodingMismatch, "the file is UTF-8, but \(origin) \"\(encoding)\": its text reads garbled; \(remedy)", at: input.at(nil))
    }
}
