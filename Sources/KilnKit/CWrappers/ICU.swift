import CICU

/// A failure of ICU: its error name and what Kiln asked for.
public struct ICUError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in words, with ICU's error name.
    public let message: String

    public var description: String { message }
}

/// ICU's collator for one locale, giving sort keys: byte strings that compare (as bytes) in the locale's order, so
/// that an app's SQLite, which has no such collation, can sort by them. Not `Sendable`: an ICU collator is not
/// thread-safe.
public final class Collator {
    private let handle: OpaquePointer
    /// The locale as the manifest gave it.
    public let locale: String
    /// The locale ICU found collation rules for (`cs` for `cs_CZ`).
    public let validLocale: String

    /// Opens ICU's collator for `locale` (an ICU locale id such as `cs` or `de_AT`) at ICU's default (tertiary)
    /// strength: letters first, then accents, then case.
    /// - Throws: `ICUError` when ICU fails, or has no rules for the locale and would fall back to its root order —
    ///   except for `root` and English, whose order the root one is.
    public init(locale: String) throws {
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
    public func sortKey(_ text: String) -> [UInt8] {
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
    public func hexSortKey(_ text: String) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        return String(sortKey(text).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
    }

    private static func errorName(_ status: Int32) -> String {
        kiln_u_error_name(status).map { String(cString: $0) } ?? "error \(status)"
    }
}
