/// White space in UTF-8 bytes exactly as Swift's `Character.isWhitespace` finds it, without making characters.
///
/// A `Character` is white space when its first scalar is, and a scalar may join its neighbours into one character
/// (a combining mark after a space, a prepended mark before one). Byte by byte the two agree only on *plain* text,
/// whose scalars never join a white space: ASCII, U+0080–U+02FF (Latin), U+0370–U+047F (Greek, Cyrillic) and
/// U+2000–U+20BF (spaces, punctuation, currency) except the zero-width joiners. Callers use the byte functions on
/// plain text and Swift's characters on anything else.
package enum UTF8Whitespace {
    /// True when every scalar of `bytes[range]` is plain (and well formed).
    package static func isPlain(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
            } else if (0xC2...0xCB).contains(lead) || (0xCE...0xD1).contains(lead) {
                guard index + 1 < end, bytes[index + 1] & 0xC0 == 0x80 else { return false }
                index += 2
            } else if lead == 0xE2 {
                guard index + 2 < end, (0x80...0x82).contains(bytes[index + 1]), bytes[index + 2] & 0xC0 == 0x80 else { return false }
                // U+200C and U+200D (zero-width non-joiner and joiner) extend the character before them.
                if bytes[index + 1] == 0x80, bytes[index + 2] == 0x8C || bytes[index + 2] == 0x8D { return false }
                index += 3
            } else {
                return false
            }
        }
        return true
    }

    /// True when every scalar of `bytes` is plain.
    package static func isPlain(_ bytes: [UInt8]) -> Bool { isPlain(bytes, 0..<bytes.count) }

    /// In plain text: the length in bytes of the white space scalar at `index`, or 0 when the scalar there is not
    /// white space (U+0009–U+000D, U+0020, U+0085, U+00A0, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F).
    @inline(__always)
    package static func whitespaceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        if lead < 0x80 { return lead == 0x20 || (0x09...0x0D).contains(lead) ? 1 : 0 }
        if lead == 0xC2 { return bytes[index + 1] == 0x85 || bytes[index + 1] == 0xA0 ? 2 : 0 }
        if lead == 0xE2 {
            let second = bytes[index + 1], third = bytes[index + 2]
            if second == 0x80 { return third <= 0x8A || third == 0xA8 || third == 0xA9 || third == 0xAF ? 3 : 0 }
            if second == 0x81 { return third == 0x9F ? 3 : 0 }
        }
        return 0
    }

    /// In plain text: the length in bytes of the scalar at `index`.
    @inline(__always)
    package static func scalarLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : 3
    }

    /// In plain text: the index of the first scalar that is not white space, or `range.upperBound`.
    package static func firstVisible(_ bytes: [UInt8], _ range: Range<Int>) -> Int {
        var index = range.lowerBound
        while index < range.upperBound {
            let length = whitespaceLength(bytes, at: index)
            if length == 0 { return index }
            index += length
        }
        return range.upperBound
    }

    /// Appends plain `bytes[range]` to `output` with every run of white space made one space and none at either end
    /// (what `TextFolding.collapseSpaces` gives).
    package static func appendCollapsed(_ bytes: [UInt8], _ range: Range<Int>, to output: inout [UInt8]) {
        var index = firstVisible(bytes, range)
        var runStart = index
        while index < range.upperBound {
            let space = whitespaceLength(bytes, at: index)
            if space == 0 {
                index += scalarLength(bytes, at: index)
                continue
            }
            output.append(contentsOf: bytes[runStart..<index])
            index = firstVisible(bytes, index..<range.upperBound)
            if index < range.upperBound { output.append(0x20) }
            runStart = index
        }
        output.append(contentsOf: bytes[runStart..<index])
    }
}
