internal import CICU

/// A failure of ICU: its error name and what Kiln asked for.
package struct ICUError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in words, with ICU's error name.
    package let message: String

    package var description: String { message }
}

/// ICU's collator for one locale, giving sort keys: byte strings that compare (as bytes) in the locale's order, so
/// that an app's SQLite, which has no such collation, can sort by them. Not `Sendable`: an ICU collator is not
/// thread-safe.
package final class Collator {
    private let handle: OpaquePointer
    /// The locale as the manifest gave it.
    package let locale: String
    /// The locale ICU found collation rules for (`cs` for `cs_CZ`).
    package let validLocale: String

    /// Opens ICU's collator for `locale` (an ICU locale id such as `cs` or `de_AT`) at ICU's default (tertiary)
    /// strength: letters first, then accents, then case.
    /// - Throws: `ICUError` when ICU fails, or has no rules for the locale and would fall back to its root order —
    ///   except for `root` and English, whose order the root one is.
    package init(locale: String) throws {
        var status: Int32 = 0
        guard let collator = kiln_ucol_open(locale, &status), status <= 0 else {
            throw ICUError(message: "ICU cannot open a collator for locale \"\(locale)\": \(Collator.errorName(status))")
        }
        var localeStatus: Int32 = 0
        let valid = kiln_ucol_valid_locale(collator, &localeStatus).map { String(cString: $0) } ?? "root"
        let language = locale.split(whereSeparator: { $0 == "_" || $0 == "-" }).first.map(String.init) ?? ""
        if valid == "root" && !["root", "en", ""].contains(language.lowercased()) {
            kiln_ucol_close(collator)
            throw ICUError(message: "ICU has no collation for locale \"\(locale)\" (it would sort by its root order); "
                               + "give a language ICU knows, e.g. \"cs\", \"de\", \"sk\", or \"root\"")
        }
        handle = collator
        self.locale = locale
        validLocale = valid
    }

    deinit { kiln_ucol_close(handle) }

    /// The sort key of `text`, without ICU's terminating zero byte.
    package func sortKey(_ text: String) -> [UInt8] {
        let units = Array(text.utf16)
        var capacity = max(64, units.count * 4 + 16)
        while true {
            var key = [UInt8](repeating: 0, count: capacity)
            let length = units.withUnsafeBufferPointer { source in
                key.withUnsafeMutableBufferPointer { result in
                    kiln_ucol_sort_key(handle, source.baseAddress, Int32(source.count), result.baseAddress, Int32(capacity))
                }
            }
            if Int(length) <= capacity {
                let end = length > 0 && key[Int(length) - 1] == 0 ? Int(length) - 1 : Int(length)
                return Array(key.prefix(end))
            }
            capacity = Int(length)
        }
    }

    /// The sort key of `text` as lowercase hexadecimal: two digits per byte, so that texts compared as ASCII (SQLite's
    /// `BINARY` collation) sort in the locale's order.
    package func hexSortKey(_ text: String) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        return String(sortKey(text).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
    }

    private static func errorName(_ status: Int32) -> String {
        kiln_u_error_name(status).map { String(cString: $0) } ?? "error \(status)"
    }
}

/// ICU's normalization and case folding, for `TextFolding`: text goes into UTF-16 buffers that live only for the call
/// (on the stack when small), through ICU, and back to UTF-8. ICU cannot fail on the valid Unicode a Swift string
/// holds; a failure other than a buffer too small (which is retried with the size ICU asks for) means its data is
/// missing from the machine, and stops the program.
package enum ICUText {
    /// Nonisolated unsafe: ICU documents the normalizer `unorm2_getNFCInstance` returns as immutable and thread-safe.
    nonisolated(unsafe) private static let nfcForm = normalizer(kiln_unorm2_nfc, form: "NFC")
    /// Nonisolated unsafe: ICU documents the normalizer `unorm2_getNFDInstance` returns as immutable and thread-safe.
    nonisolated(unsafe) private static let nfdForm = normalizer(kiln_unorm2_nfd, form: "NFD")
    private static let bufferOverflow: Int32 = 15 // U_BUFFER_OVERFLOW_ERROR

    /// `text` in Unicode NFC; text already in NFC is returned as it is, without copying.
    package static func nfc(_ text: String) -> String {
        if text.isEmpty { return text }
        return withUTF16(text) { source in
            var status: Int32 = 0
            let composedPrefix = kiln_unorm2_span_quick_check_yes(nfcForm, source.baseAddress, Int32(source.count), &status)
            if status <= 0 && Int(composedPrefix) == source.count { return text }
            return written(estimate: source.count + 8, { kiln_unorm2_normalize(nfcForm, source.baseAddress, Int32(source.count), $0, $1, &$2) },
                           string)
        }
    }

    /// The caseless form of `text`, as Foundation's `folding(options: [.caseInsensitive, .diacriticInsensitive])`
    /// of its NFC gave it: decomposed (NFD), the marks after a letter below U+0510 (Latin, Greek, Cyrillic,
    /// Armenian) and the combining diacritics (U+0300–U+036F) after any letter removed, full Unicode case folding
    /// (`ß` as `ss`, final sigma as σ), then NFC. The marks of other scripts on their letters (Hebrew points,
    /// Indic nukta, Thai tone marks) stay: there they make other letters or words.
    package static func caselessWithoutAccents(_ text: String) -> String {
        if text.isEmpty { return text }
        return withUTF16(text) { source in
            written(estimate: source.count * 2 + 8, { kiln_unorm2_normalize(nfdForm, source.baseAddress, Int32(source.count), $0, $1, &$2) }) { decomposed in
                let bare = UnsafeBufferPointer(rebasing: decomposed[..<dropMarksAfterLetters(decomposed)])
                return written(estimate: bare.count * 3 / 2 + 8, { kiln_u_str_fold_case($0, $1, bare.baseAddress, Int32(bare.count), &$2) }) { foldedUnits in
                    let folded = UnsafeBufferPointer(foldedUnits)
                    return written(estimate: folded.count + 8, { kiln_unorm2_normalize(nfcForm, folded.baseAddress, Int32(folded.count), $0, $1, &$2) },
                                   string)
                }
            }
        }
    }

    /// What `caselessWithoutAccents` takes from ICU besides normalization, as data that code outside Kiln can carry
    /// (the search accessors of `kiln export swift|room`): every code point full case folding changes, with what it
    /// folds to, in code point order; and the cluster-extending code points from U+0483 on, as ranges.
    package static let foldData: (caseFolds: [(UInt32, [UInt32])], extending: [ClosedRange<UInt32>]) = {
        var folds: [(UInt32, [UInt32])] = [], extending: [ClosedRange<UInt32>] = []
        for value in UInt32(0)...0x10FFFF where !(0xD800...0xDFFF).contains(value) {
            if value >= 0x483, kiln_u_is_grapheme_extend(Int32(bitPattern: value)) != 0 {
                if let last = extending.last, last.upperBound == value - 1 {
                    extending[extending.count - 1] = last.lowerBound...value
                } else {
                    extending.append(value...value)
                }
            }
            guard kiln_u_changes_when_casefolded(Int32(bitPattern: value)) != 0, let scalar = Unicode.Scalar(value) else { continue }
            let units = Array(String(scalar).utf16)
            let folded = units.withUnsafeBufferPointer { source in
                written(estimate: 8, { kiln_u_str_fold_case($0, $1, source.baseAddress, Int32(source.count), &$2) }, string)
            }
            folds.append((value, folded.unicodeScalars.map(\.value)))
        }
        return (folds, extending)
    }()

    /// Removes in place, from decomposed UTF-16 text, the cluster-extending marks that follow a base below U+0510,
    /// and those below U+0510 (the combining diacritics) after any base; a mark with no base before it is a base.
    /// Returns the new length.
    private static func dropMarksAfterLetters(_ units: UnsafeMutableBufferPointer<UInt16>) -> Int {
        var read = 0, write = 0
        var hasBase = false, baseIsAlphabetic = false
        while read < units.count {
            var codePoint = Int32(units[read])
            var width = 1
            if codePoint & 0xFC00 == 0xD800, read + 1 < units.count, units[read + 1] & 0xFC00 == 0xDC00 {
                codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (Int32(units[read + 1]) - 0xDC00)
                width = 2
            }
            let extends = codePoint >= 0x300 && (codePoint < 0x370 || (codePoint >= 0x483 && kiln_u_is_grapheme_extend(codePoint) != 0))
            if extends && hasBase {
                if baseIsAlphabetic || codePoint < 0x510 { read += width; continue }
            } else {
                hasBase = true
                baseIsAlphabetic = codePoint < 0x510
            }
            for offset in 0..<width { units[write + offset] = units[read + offset] }
            write += width
            read += width
        }
        return write
    }

    /// Hands `body` the UTF-16 form of `text` (not empty).
    private static func withUTF16<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt16>) -> Result) -> Result {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { bytes in
                written(estimate: bytes.count + 1, { kiln_u_str_from_utf8($0, $1, bytes.baseAddress, Int32(bytes.count), &$2) }) {
                    body(UnsafeBufferPointer($0))
                }
            }
        }
    }

    /// Runs an ICU function that writes UTF-16 (`write(buffer, capacity, &status)` returning the length it needs)
    /// into a temporary buffer, with more room when it asks for it, and hands `body` what it wrote.
    private static func written<Result>(estimate: Int,
                                        _ write: (UnsafeMutablePointer<UInt16>, Int32, inout Int32) -> Int32,
                                        _ body: (UnsafeMutableBufferPointer<UInt16>) -> Result) -> Result {
        var capacity = max(estimate, 16)
        while true {
            let result: Result? = withUnsafeTemporaryAllocation(of: UInt16.self, capacity: capacity) { buffer in
                var status: Int32 = 0
                let length = Int(write(buffer.baseAddress!, Int32(capacity), &status))
                if status == bufferOverflow && length > capacity {
                    capacity = length
                    return nil
                }
                precondition(status <= 0 && length <= capacity, "ICU failed on valid text: \(errorName(status))")
                return body(UnsafeMutableBufferPointer(rebasing: buffer[..<length]))
            }
            if let result { return result }
        }
    }

    /// UTF-16 as a Swift string, converted by ICU.
    private static func string(_ units: UnsafeMutableBufferPointer<UInt16>) -> String {
        if units.isEmpty { return "" }
        return String(unsafeUninitializedCapacity: units.count * 3) { utf8 in
            var status: Int32 = 0
            let length = utf8.withMemoryRebound(to: CChar.self) {
                kiln_u_str_to_utf8($0.baseAddress, Int32($0.count), units.baseAddress, Int32(units.count), &status)
            }
            precondition(status <= 0, "ICU failed on valid text: \(errorName(status))")
            return Int(length)
        }
    }

    private static func normalizer(_ instance: (UnsafeMutablePointer<Int32>) -> OpaquePointer?, form: String) -> OpaquePointer {
        var status: Int32 = 0
        guard let normalizer = instance(&status), status <= 0 else {
            preconditionFailure("ICU has no \(form) normalization data: \(errorName(status))")
        }
        return normalizer
    }

    private static func errorName(_ status: Int32) -> String {
        kiln_u_error_name(status).map { String(cString: $0) } ?? "error \(status)"
    }
}

/// The ICU library Kiln was built against.
package enum ICULibrary {
    /// ICU's version, e.g. `72.1` (collation sort keys and text folding may change with it).
    package static let version: String = U_ICU_VERSION
}
