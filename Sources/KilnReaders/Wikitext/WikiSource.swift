import KilnC
import KilnCore
import KilnManifest

/// Wikitext held as UTF-8 bytes. Every construct the scanners look for (`{{`, `[[`, `|`, `=`, `<!--`, tags,
/// headings) is ASCII, so scanning bytes is exact for any text and far faster than walking Swift characters.
package struct WikiSource {
    /// The text's UTF-8 bytes.
    package let bytes: [UInt8]

    package init(_ text: String) {
        bytes = Array(text.utf8)
    }

    package var count: Int { bytes.count }

    /// The byte at `index`, or 0 past the end.
    package subscript(index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }

    /// The text of `range`.
    package func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// True when `ascii` is written at `index` (ASCII letters compared ignoring case when `caseInsensitive`).
    package func matches(_ ascii: String, at index: Int, caseInsensitive: Bool = false) -> Bool {
        var offset = index
        for expected in ascii.utf8 {
            guard offset < bytes.count else { return false }
            let found = bytes[offset]
            if found != expected && !(caseInsensitive && WikiSource.lower(found) == WikiSource.lower(expected)) { return false }
            offset += 1
        }
        return true
    }

    /// The first index at or after `start` (and before `end`, when given) where `ascii` is written, or `nil`.
    package func find(_ ascii: String, from start: Int, before end: Int? = nil, caseInsensitive: Bool = false) -> Int? {
        guard let first = ascii.utf8.first else { return start }
        let end = min(end ?? bytes.count, bytes.count)
        var index = start
        while index < end {
            let byte = bytes[index]
            if (byte == first || (caseInsensitive && WikiSource.lower(byte) == WikiSource.lower(first)))
                && matches(ascii, at: index, caseInsensitive: caseInsensitive) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The index just past the comment or `<nowiki>` section starting at `index` (to the end of the text when it
    /// is never closed, as MediaWiki reads it), or `nil` when none starts there. Their content is never markup.
    package func endOfOpaque(at index: Int) -> Int? {
        if matches("<!--", at: index) {
            return find("-->", from: index + 4).map { $0 + 3 } ?? bytes.count
        }
        if matches("<nowiki", at: index, caseInsensitive: true) {
            let after = index + 7
            if matches("/>", at: after) { return after + 2 }
            guard self[after] == UInt8(ascii: ">") else { return nil }
            return find("</nowiki>", from: after, caseInsensitive: true).map { $0 + 9 } ?? bytes.count
        }
        return nil
    }

    /// The number of line breaks in `range`.
    package func lineBreaks(in range: Range<Int>) -> Int {
        var count = 0
        for index in range where bytes[index] == 0x0A { count += 1 }
        return count
    }

    /// The index of the end of the line holding `index` (its `\n`, or the end of the text), or `limit` when that comes
    /// first: callers that stop at a limit anyway scan no further, so that many items on one long line stay linear.
    package func endOfLine(from index: Int, before limit: Int? = nil) -> Int {
        let stop = min(limit ?? bytes.count, bytes.count)
        var end = index
        while end < stop, bytes[end] != 0x0A { end += 1 }
        return end
    }

    package static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    package static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    package static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    package static func isASCIIDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }
}

/// How MediaWiki compares names of templates and parameters: case, underscores and runs of spaces do not count.
package enum WikiName {
    /// `Se_loger `, `se  loger` and `SE LOGER` all become `se loger`.
    package static func key(_ name: String) -> String {
        let source = WikiSource(name)
        return key(source, 0..<source.count)
    }

    /// The key of the name written in `range` of `source`, comments left out.
    package static func key(_ source: WikiSource, _ range: Range<Int>) -> String {
        written(source, range).lowercased()
    }

    /// The name written in `range` of `source` as MediaWiki reads it: comments left out, `_` read as a space (unless
    /// `underscores` is false), runs of white space made one space, the ends trimmed; the case kept. Works on bytes:
    /// names are read for every template and argument of a dump.
    package static func written(_ source: WikiSource, _ range: Range<Int>, underscores: Bool = true) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var index = range.lowerBound, pendingSpace = false
        while index < range.upperBound {
            let byte = source.bytes[index]
            if byte == UInt8(ascii: "<"), source.matches("<!--", at: index), let end = source.endOfOpaque(at: index) {
                index = end
                continue
            }
            if WikiSource.isSpace(byte) || (underscores && byte == UInt8(ascii: "_")) {
                pendingSpace = !bytes.isEmpty
            } else {
                if pendingSpace { bytes.append(0x20) }
                pendingSpace = false
                bytes.append(byte)
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A page title as MediaWiki stores it: `_` read as a space, spaces collapsed, the first letter upper case.
    package static func title(_ text: String) -> String {
        let collapsed = TextFolding.collapseSpaces(text.replacingOccurrences(of: "_", with: " "))
        guard let first = collapsed.first else { return collapsed }
        return first.uppercased() + collapsed.dropFirst()
    }
}
