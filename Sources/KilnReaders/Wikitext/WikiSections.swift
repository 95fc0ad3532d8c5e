import KilnC
import KilnCore
import KilnManifest

/// One section of a page: the lead (number 0, the text before the first heading) or the section a heading opens.
package struct WikiSection: Equatable {
    /// 0 for the lead, then 1, 2, … in the order the headings appear.
    package var number: Int
    /// 0 for the lead; the number of `=` around a heading (`== See ==` is 2).
    package var level: Int
    /// The heading as plain text; `nil` for the lead.
    package var title: String?
    /// The number of the section this one is part of; `nil` for the lead and the outermost headings.
    package var parent: Int?
    /// The 1-based line of the heading in the page's text (1 for the lead).
    package var line: Int
    /// The titles from the outermost section down to this one.
    package var path: [String]
}

/// MediaWiki headings: a line that starts and ends with `=` (`== See ==`, `=== Grand Palace ===`); the level is
/// the shorter of the two runs, at most 6; comments and spaces after the closing run are allowed.
package enum WikiHeading {
    /// The level and title range of the line `start..<end` when it is a heading.
    package static func parse(_ source: WikiSource, lineStart start: Int, lineEnd end: Int) -> (level: Int, title: Range<Int>)? {
        var leading = 0
        while start + leading < end, source[start + leading] == UInt8(ascii: "=") { leading += 1 }
        guard leading > 0 else { return nil }
        var last = end
        while true {
            while last > start, WikiSource.isSpace(source[last - 1]) { last -= 1 }
            guard last - 3 > start, source.matches("-->", at: last - 3),
                  let open = commentStart(source, before: last - 3, notBefore: start) else { break }
            last = open
        }
        var trailing = 0
        while last - trailing - 1 >= start + leading, source[last - trailing - 1] == UInt8(ascii: "=") { trailing += 1 }
        let level = min(leading, trailing, 6)
        let titleStart = start + level, titleEnd = last - level
        guard level > 0, titleStart < titleEnd else { return nil }
        return (level, titleStart..<titleEnd)
    }

    private static func commentStart(_ source: WikiSource, before index: Int, notBefore start: Int) -> Int? {
        var candidate = index - 4
        while candidate >= start {
            if source.matches("<!--", at: candidate) { return candidate }
            candidate -= 1
        }
        return nil
    }
}

/// The section tree of a page, built heading by heading.
package struct SectionOutline {
    /// Every section so far, the lead first.
    package private(set) var sections = [WikiSection(number: 0, level: 0, title: nil, parent: nil, line: 1, path: [])]

    /// The section the text being read belongs to.
    package var current: Int { sections.count - 1 }

    /// Opens the section of a heading of `level` titled `title` on `line`.
    package mutating func add(level: Int, title: String, line: Int) {
        var parent: Int? = current
        while let candidate = parent, candidate != 0, sections[candidate].level >= level { parent = sections[candidate].parent }
        if parent == 0 { parent = nil }
        let path = (parent.map { sections[$0].path } ?? []) + [title]
        sections.append(WikiSection(number: sections.count, level: level, title: title, parent: parent, line: line, path: path))
    }

    /// The section `number` and those enclosing it, innermost first.
    package func chain(from number: Int) -> [WikiSection] {
        var result: [WikiSection] = []
        var next: Int? = number
        while let index = next {
            result.append(sections[index])
            next = sections[index].parent ?? (index == 0 ? nil : 0)
        }
        return result
    }
}
