import KilnC
import KilnCore
import KilnManifest

/// A Wikitravel listing tag: `<see name="…" lat="…">description</see>` (also `eat`, `drink`, `sleep`, `buy`, `do`,
/// `listing`). Real pages hold malformed ones; what is clear is kept and the rest is described in `problems`.
package struct ListingTag {
    /// The tag name, lower case.
    package var name: String
    /// Attributes in order, names as written (trimmed), values with their quotes removed.
    package var attributes: [(key: String, value: String)]
    /// The bytes between the start tag and `</name>`; `nil` for `<see … />`.
    package var description: Range<Int>?
    /// The whole tag, from `<` to the end of its closing tag (or of what was taken as its description).
    package var range: Range<Int>
    /// What was wrong and how it was read, as sentence fragments.
    package var problems: [String]
}

/// Reads listing tags tolerantly: attributes may span lines, be unquoted or single-quoted; junk after a closing
/// quote is skipped; a quote that never closes ends at the `>`; a tag that is never closed takes the rest of its
/// line as its description.
package enum ListingTagParser {
    /// The tag names of the Wikitravel listing format.
    package static let names: Set<String> = ["see", "do", "buy", "eat", "drink", "sleep", "listing"]

    /// The tag name starting at `start` (which holds `<`) when it is one of `names`.
    package static func name(_ source: WikiSource, at start: Int) -> String? {
        var index = start + 1
        while WikiSource.isASCIILetter(source[index]) { index += 1 }
        let after = source[index]
        guard index > start + 1, WikiSource.isSpace(after) || after == UInt8(ascii: ">") || after == UInt8(ascii: "/") else { return nil }
        let name = source.text(start + 1..<index).lowercased()
        return names.contains(name) ? name : nil
    }

    /// The listing tag starting at `start`, or `nil` when no listing tag starts there.
    package static func parse(_ source: WikiSource, at start: Int) -> ListingTag? {
        guard let name = name(source, at: start) else { return nil }
        var tag = ListingTag(name: name, attributes: [], description: nil, range: start..<start, problems: [])
        var index = start + 1 + name.utf8.count
        var startTagEnd: Int?
        var selfClosing = false
        let limit = min(source.count, start + maximumStartTag)
        while index < limit {
            let byte = source[index]
            if WikiSource.isSpace(byte) { index += 1; continue }
            if byte == UInt8(ascii: ">") { startTagEnd = index + 1; break }
            if byte == UInt8(ascii: "/"), source[index + 1] == UInt8(ascii: ">") { startTagEnd = index + 2; selfClosing = true; break }
            if byte == UInt8(ascii: "<") { break }
            index = attribute(source, at: index, limit: limit, into: &tag)
        }
        guard let contentStart = startTagEnd else {
            tag.problems.append("the start tag <\(name) …> is never closed with \">\"; its attributes are kept")
            let end = min(index, limit)
            tag.range = start..<end
            return tag
        }
        if selfClosing {
            tag.range = start..<contentStart
            return tag
        }
        switch closing(source, of: name, from: contentStart) {
        case .closed(let close, let closeEnd):
            tag.description = contentStart..<close
            tag.range = start..<closeEnd
        case .unclosed(let nextListing):
            tag.problems.append("no </\(name)> closes it; its description is the rest of the line")
            let end = source.endOfLine(from: contentStart, before: nextListing)
            tag.description = contentStart..<end
            tag.range = start..<end
        }
        return tag
    }

    /// The longest start tag read; longer, it is taken as never closed.
    package static let maximumStartTag = 1 << 13

    /// How far a description may run looking for its closing tag.
    package static let maximumDescription = 1 << 16

    private enum Closing {
        case closed(at: Int, end: Int)
        case unclosed(nextListing: Int?)
    }

    /// The closing tag of `name` after `start`, unless another listing starts first (then that one's start) or
    /// none comes within `maximumDescription` bytes. One forward pass, so dense unclosed tags stay linear.
    private static func closing(_ source: WikiSource, of name: String, from start: Int) -> Closing {
        let limit = min(source.count, start + maximumDescription)
        var index = start
        while index < limit {
            if source[index] == UInt8(ascii: "<") {
                if source.matches("</\(name)", at: index, caseInsensitive: true) {
                    let end = source.find(">", from: index).map { $0 + 1 } ?? index + name.utf8.count + 2
                    return .closed(at: index, end: end)
                }
                if self.name(source, at: index) != nil { return .unclosed(nextListing: index) }
            }
            index += 1
        }
        return .unclosed(nextListing: nil)
    }

    /// Reads one attribute at `start`; returns where reading goes on.
    private static func attribute(_ source: WikiSource, at start: Int, limit: Int, into tag: inout ListingTag) -> Int {
        var index = start
        while index < limit, isNameByte(source[index]) { index += 1 }
        guard index > start else {
            let end = junkEnd(source, from: start, limit: limit)
            tag.problems.append("\"\(excerpt(source.text(start..<end), limit: 30))\" is not an attribute; skipped")
            return end
        }
        let key = source.text(start..<index)
        var cursor = index
        while cursor < limit, WikiSource.isSpace(source[cursor]) { cursor += 1 }
        guard cursor < limit, source[cursor] == UInt8(ascii: "=") else {
            tag.problems.append("attribute \(key) has no value; skipped")
            return index
        }
        cursor += 1
        while cursor < limit, WikiSource.isSpace(source[cursor]) { cursor += 1 }
        let quote = cursor < limit ? source[cursor] : 0
        guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            var end = cursor
            while end < limit, !WikiSource.isSpace(source[end]), source[end] != UInt8(ascii: ">") { end += 1 }
            tag.attributes.append((key, source.text(cursor..<end)))
            return end
        }
        let valueStart = cursor + 1
        let tagEnd = source.find(">", from: valueStart, before: limit) ?? limit
        guard let close = source.find(String(UnicodeScalar(quote)), from: valueStart, before: limit),
              !crossesAttributes(source, valueStart..<close, beyond: tagEnd) else {
            tag.problems.append("the value of \(key) has no closing quote; it ends at \">\"")
            var end = tagEnd
            if end > valueStart, source[end - 1] == UInt8(ascii: "/") { end -= 1 }
            tag.attributes.append((key, source.text(valueStart..<end)))
            return end
        }
        tag.attributes.append((key, source.text(valueStart..<close)))
        let after = close + 1
        let next = source[after]
        if after < limit, !WikiSource.isSpace(next), next != UInt8(ascii: ">"), next != UInt8(ascii: "/") {
            let end = junkEnd(source, from: after, limit: limit)
            tag.problems.append("junk \"\(excerpt(source.text(after..<end), limit: 30))\" after the value of \(key); skipped")
            return end
        }
        return after
    }

    /// True when a quoted value would run past the start tag's `>` into what looks like the next attribute or the
    /// description: then the quote is taken as never closed.
    private static func crossesAttributes(_ source: WikiSource, _ value: Range<Int>, beyond tagEnd: Int) -> Bool {
        guard value.upperBound > tagEnd else { return false }
        return source.bytes[value].contains(0x0A) || source.find("</", from: value.lowerBound, before: value.upperBound) != nil
    }

    private static func junkEnd(_ source: WikiSource, from start: Int, limit: Int) -> Int {
        var end = start + 1
        while end < limit, !WikiSource.isSpace(source[end]), source[end] != UInt8(ascii: ">") { end += 1 }
        return end
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        WikiSource.isASCIILetter(byte) || WikiSource.isASCIIDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
