import KilnC
import KilnCore
import KilnManifest

/// What a page's wikitext holds: its section tree, and the templates and listing tags at its top level in the
/// order they appear, each with its section and line.
package struct WikiPage {
    /// A top-level template or listing tag.
    package struct Element {
        package enum Kind {
            case template(WikiTemplate)
            case tag(ListingTag)
        }

        package var kind: Kind
        /// The section it is in.
        package var section: Int
        /// Its 1-based line in the page's text.
        package var line: Int
        package var range: Range<Int> {
            switch kind {
            case .template(let template): return template.range
            case .tag(let tag): return tag.range
            }
        }
    }

    package var source: WikiSource
    package var outline: SectionOutline
    package var elements: [Element]
    /// Templates opened with `{{` and never closed: MediaWiki shows them as text, so they are not read.
    package var unclosedTemplates: [(line: Int, name: String, tooDeep: Bool)]
}

/// Reads a page's wikitext once, front to back: headings open sections; templates are parsed with their nesting
/// (what is inside them is not the page's top level); comments and `<nowiki>` are skipped; Wikitravel listing
/// tags are parsed tolerantly.
package enum WikiPageScanner {
    /// Scans `text`. With `readTags` false, listing tags are not looked for (a pass that needs only sections or
    /// templates saves the work).
    package static func scan(_ text: String, readTags: Bool = true) -> WikiPage {
        let source = WikiSource(text)
        var outline = SectionOutline()
        var elements: [WikiPage.Element] = []
        var unclosed: [(line: Int, name: String, tooDeep: Bool)] = []
        let bytes = source.bytes
        var index = 0, line = 1
        var lineStart = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                lineStart = true
                index += 1
                continue
            }
            defer { lineStart = false }
            if lineStart, byte == UInt8(ascii: "=") {
                let end = source.endOfLine(from: index)
                if let heading = WikiHeading.parse(source, lineStart: index, lineEnd: end) {
                    var unknown: [String] = []
                    let title = WikiPlainText().text(source, heading.title, unknown: &unknown)
                    outline.add(level: heading.level, title: title, line: line)
                    index = end
                    continue
                }
            }
            switch byte {
            case UInt8(ascii: "<"):
                if let end = source.endOfOpaque(at: index) {
                    line += source.lineBreaks(in: index..<end)
                    index = end
                    continue
                }
                if readTags, let tag = ListingTagParser.parse(source, at: index) {
                    elements.append(.init(kind: .tag(tag), section: outline.current, line: line))
                    line += source.lineBreaks(in: tag.range)
                    index = max(tag.range.upperBound, index + 1)
                    continue
                }
            case UInt8(ascii: "{") where source[index + 1] == UInt8(ascii: "{"):
                var tooDeep = false
                if let template = WikiTemplateParser.parse(source, at: index, tooDeep: &tooDeep) {
                    elements.append(.init(kind: .template(template), section: outline.current, line: line))
                    line += source.lineBreaks(in: template.range)
                    index = template.range.upperBound
                } else {
                    unclosed.append((line, openingName(source, at: index), tooDeep))
                    index += 2
                }
                continue
            default:
                break
            }
            index += 1
        }
        return WikiPage(source: source, outline: outline, elements: elements, unclosedTemplates: unclosed)
    }

    /// What follows an unclosed `{{`, up to its first `|`, `}` or line break, for a message.
    private static func openingName(_ source: WikiSource, at index: Int) -> String {
        var end = index + 2
        while end < source.count, end - index < 42, ![UInt8(ascii: "|"), UInt8(ascii: "}"), 0x0A].contains(source[end]) { end += 1 }
        return source.text(index + 2..<end).trimmingCharacters(in: .whitespaces)
    }
}
