import KilnC
import KilnCore
import KilnManifest

/// The HTML character references wikitext uses: numeric ones (`&#233;`, `&#xE9;`) and the named ones that occur in
/// travel guides. Others are left as written.
package enum HTMLEntity {
    package static let named: [String: String] = [
        "nbsp": "\u{00A0}", "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "ndash": "–", "mdash": "—",
        "hellip": "…", "euro": "€", "pound": "£", "yen": "¥", "copy": "©", "reg": "®", "deg": "°", "middot": "·",
        "times": "×", "minus": "−", "laquo": "«", "raquo": "»", "thinsp": "\u{2009}", "ensp": "\u{2002}",
        "emsp": "\u{2003}", "shy": "",
    ]

    /// The character the reference at `start` (which holds `&`) stands for, and the index past its `;`; `nil` when
    /// no known reference ends before `limit`.
    package static func decode(_ source: WikiSource, at start: Int, limit: Int) -> (String, Int)? {
        var index = start + 1
        while index < limit, index - start <= 10, source[index] != UInt8(ascii: ";") {
            guard WikiSource.isASCIILetter(source[index]) || WikiSource.isASCIIDigit(source[index]) || source[index] == UInt8(ascii: "#") else {
                return nil
            }
            index += 1
        }
        guard index < limit, source[index] == UInt8(ascii: ";"), index > start + 1 else { return nil }
        let name = source.text(start + 1..<index)
        if let text = named[name] { return (text, index + 1) }
        guard name.hasPrefix("#") else { return nil }
        let digits = name.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
        guard let value, let scalar = Unicode.Scalar(value) else { return nil }
        return (String(Character(scalar)), index + 1)
    }
}
