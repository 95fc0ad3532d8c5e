import KilnC
import KilnCore
import KilnManifest

/// Turns wikitext into the plain text a reader of the page sees: links keep their label (`[[Kostroma|Kostromy]]`
/// → `Kostromy`), external links their label, bold and italic quotes go, HTML tags go (`<br>` becomes a space,
/// `<ref>` notes are left out), entities are decoded, comments are left out, and white space (no-break spaces too)
/// is collapsed. Templates are rendered when they are declared inline (`{{Prix|2|€}}` with `{1} {2}` → `2 €`),
/// left out silently when ignored or when they are parser functions or magic words (`WikiMagicWords`), and otherwise
/// left out and named, as written, in `unknown`.
package struct WikiPlainText {
    /// What a value is read as.
    package enum Mode {
        /// Text: external links become their label.
        case text
        /// A web address: external links become their address, apostrophes stay.
        case url
    }

    /// Formats of inline templates by `WikiName.key` (see `InlineTemplateFormat`).
    package var inlineTemplates: [String: InlineTemplateFormat] = [:]
    /// Templates left out without a finding, by `WikiName.key`.
    package var ignoredTemplates: Set<String> = []
    /// Link prefixes (lower case) whose links are not text at all: files and categories.
    package var droppedLinkPrefixes: Set<String> = WikiPlainText.defaultDroppedLinkPrefixes

    /// The longest `[[…]]` read as a link (an image with a long caption); longer, or never closed, it is text. With
    /// `maximumCaptionDepth`, the bound keeps text full of unclosed `[[` linear.
    package static let maximumLink = 1 << 14
    /// How deeply links may nest in an image caption.
    package static let maximumCaptionDepth = 4

    /// File and category namespaces of the English, German, French, Spanish and Italian wikis.
    package static let defaultDroppedLinkPrefixes: Set<String> = [
        "file", "image", "media", "datei", "bild", "fichier", "archivo", "imagen", "immagine",
        "category", "kategorie", "catégorie", "categoría", "categoria",
    ]

    /// The plain text of `range` of `source`; the names of templates left out because they are not known are
    /// appended to `unknown`.
    package func text(_ source: WikiSource, _ range: Range<Int>, mode: Mode = .text, unknown: inout [String]) -> String {
        var output = CollapsingText()
        render(source, range, mode: mode, into: &output, unknown: &unknown)
        return output.text
    }

    private func render(_ source: WikiSource, _ range: Range<Int>, mode: Mode, into output: inout CollapsingText,
                        unknown: inout [String]) {
        let bytes = source.bytes
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "<"):
                if let end = source.endOfOpaque(at: index) {
                    if source.matches("<nowiki>", at: index, caseInsensitive: true) {
                        let inner = min(end, range.upperBound)
                        let close = source.find("</nowiki>", from: index + 8, caseInsensitive: true) ?? inner
                        output.append(bytes[(index + 8)..<min(close, inner)])
                    }
                    index = min(end, range.upperBound)
                } else if let end = skipTag(source, at: index, limit: range.upperBound, into: &output) {
                    index = end
                } else {
                    output.append(byte)
                    index += 1
                }
            case UInt8(ascii: "{") where source[index + 1] == UInt8(ascii: "{"):
                if let template = WikiTemplateParser.parse(source, at: index), template.range.upperBound <= range.upperBound {
                    if let rendered = self.render(template, source, unknown: &unknown) { output.append(rendered) }
                    index = template.range.upperBound
                } else {
                    output.append(bytes[index..<index + 2])
                    index += 2
                }
            case UInt8(ascii: "[") where source[index + 1] == UInt8(ascii: "["):
                if let end = internalLink(source, at: index, limit: range.upperBound, mode: mode, into: &output, unknown: &unknown) {
                    index = end
                } else {
                    output.append(bytes[index..<index + 2])
                    index += 2
                }
            case UInt8(ascii: "["):
                if let end = externalLink(source, at: index, limit: range.upperBound, mode: mode, into: &output, unknown: &unknown) {
                    index = end
                } else {
                    output.append(byte)
                    index += 1
                }
            case UInt8(ascii: "'") where mode == .text && source[index + 1] == UInt8(ascii: "'"):
                var run = 0
                while index + run < range.upperBound, bytes[index + run] == UInt8(ascii: "'") { run += 1 }
                // '' italic, ''' bold, ''''' both; four is an apostrophe and bold; more than five keeps the extra ones.
                let kept = run == 4 ? 1 : (run > 5 ? run - 5 : 0)
                for _ in 0..<kept { output.append(UInt8(ascii: "'")) }
                index += run
            case UInt8(ascii: "&"):
                if let (text, end) = HTMLEntity.decode(source, at: index, limit: range.upperBound) {
                    output.append(text)
                    index = end
                } else {
                    output.append(byte)
                    index += 1
                }
            default:
                output.append(byte)
                index += 1
            }
        }
    }

    /// A template's text: its inline format filled in, nothing for ignored ones, parser functions (`{{#invoke:…}}`)
    /// and magic words (`{{PAGENAME}}`); `nil` (and its name as written in `unknown`) for any other.
    private func render(_ template: WikiTemplate, _ source: WikiSource, unknown: inout [String]) -> String? {
        let key = template.key
        if let format = inlineTemplates[key] {
            return format.render { name in template.argument(name).map { text(source, $0, unknown: &unknown) } }
        }
        if ignoredTemplates.contains(key) || WikiMagicWords.contains(template.name) { return "" }
        unknown.append(template.name)
        return nil
    }

    /// `[[target|label]]`: the label (the target when there is none); nothing for files and categories.
    /// Returns the index past the link, or `nil` when it is not closed before `limit`.
    private func internalLink(_ source: WikiSource, at start: Int, limit: Int, mode: Mode, into output: inout CollapsingText,
                              unknown: inout [String]) -> Int? {
        let limit = min(limit, start + WikiPlainText.maximumLink)
        // The target runs to the first `|` or `]]`; a line break or another `[[` first means this is no link.
        var index = start + 2
        while index + 1 < limit, source[index] != UInt8(ascii: "|"), !source.matches("]]", at: index) {
            if source[index] == 0x0A || source.matches("[[", at: index) { return nil }
            index += 1
        }
        guard index + 1 < limit else { return nil }
        let pipe: Int? = source[index] == UInt8(ascii: "|") ? index : nil
        var targetStart = start + 2
        while targetStart < index, WikiSource.isSpace(source[targetStart]) { targetStart += 1 }
        let linksTo = source[targetStart] == UInt8(ascii: ":")
        if linksTo { targetStart += 1 }
        let target = targetStart..<max(targetStart, index)
        let dropped = !linksTo && source.bytes[target].firstIndex(of: UInt8(ascii: ":")).map {
            droppedLinkPrefixes.contains(WikiName.key(source, targetStart..<$0))
        } == true
        // The label ends at the matching `]]`. Only images nest links in their caption, a few levels at most.
        var depth = 1
        while depth > 0 {
            guard index + 1 < limit, source[index] != 0x0A else { return nil }
            if source.matches("]]", at: index) {
                depth -= 1
                index += 2
            } else if source.matches("[[", at: index) {
                depth += 1
                guard dropped, depth <= WikiPlainText.maximumCaptionDepth else { return nil }
                index += 2
            } else if source.matches("{{", at: index), let end = WikiTemplateParser.end(source, from: index), end <= limit {
                index = end
            } else {
                index += 1
            }
        }
        let end = index
        if dropped { return end }
        if let pipe, pipe + 1 < end - 2 {
            render(source, pipe + 1..<end - 2, mode: mode, into: &output, unknown: &unknown)
        } else {
            // `_` is a space in titles; CollapsingText trims and collapses the spaces around the target.
            for byte in source.bytes[target] { output.append(byte == UInt8(ascii: "_") ? 0x20 : byte) }
        }
        return end
    }

    /// `[http://example.org label]`: the label as text (nothing without one), the address as a URL.
    private func externalLink(_ source: WikiSource, at start: Int, limit: Int, mode: Mode, into output: inout CollapsingText,
                              unknown: inout [String]) -> Int? {
        let schemes = ["http://", "https://", "ftp://", "//", "mailto:"]
        guard schemes.contains(where: { source.matches($0, at: start + 1, caseInsensitive: true) }) else { return nil }
        var index = start + 1, space: Int?
        while index < limit, source[index] != UInt8(ascii: "]") {
            if source[index] == 0x0A || source[index] == UInt8(ascii: "[") { return nil }
            if space == nil, source[index] == UInt8(ascii: " ") { space = index }
            index += 1
        }
        guard index < limit else { return nil }
        switch mode {
        case .url: output.append(source.bytes[start + 1..<(space ?? index)])
        case .text: if let space { render(source, space + 1..<index, mode: mode, into: &output, unknown: &unknown) }
        }
        return index + 1
    }

    /// An HTML tag at `start`: `<br>` becomes a space, `<ref>…</ref>` and `<ref/>` are left out with their content,
    /// any other tag is left out and its content kept. Returns the index past what was consumed, or `nil` when no
    /// tag starts there.
    private func skipTag(_ source: WikiSource, at start: Int, limit: Int, into output: inout CollapsingText) -> Int? {
        var index = start + 1
        if source[index] == UInt8(ascii: "/") { index += 1 }
        let nameStart = index
        while index < limit, WikiSource.isASCIILetter(source[index]) || WikiSource.isASCIIDigit(source[index]) { index += 1 }
        guard index > nameStart, WikiSource.isASCIILetter(source[nameStart]) else { return nil }
        let name = source.text(nameStart..<index).lowercased()
        var close = index
        while close < min(limit, start + 500), source[close] != UInt8(ascii: ">") {
            if source[close] == UInt8(ascii: "<") { return nil }
            close += 1
        }
        guard close < limit, source[close] == UInt8(ascii: ">") else { return nil }
        let selfClosing = source[close - 1] == UInt8(ascii: "/")
        if name == "br" || name == "p" || name == "div" || name == "li" { output.space() }
        if name == "ref", nameStart == start + 1, !selfClosing {
            return source.find("</ref>", from: close, before: limit, caseInsensitive: true).map { min($0 + 6, limit) } ?? limit
        }
        return close + 1
    }
}

/// Text gathered with white space collapsed as it comes: runs of spaces, tabs, line breaks and no-break spaces
/// become one space, and none is kept at either end.
package struct CollapsingText {
    private var bytes: [UInt8] = []
    private var pendingSpace = false
    private var pendingC2 = false

    /// The text so far.
    package var text: String { String(decoding: pendingC2 ? bytes + [0xC2] : bytes, as: UTF8.self) }

    package mutating func space() {
        if !bytes.isEmpty { pendingSpace = true }
    }

    package mutating func append(_ byte: UInt8) {
        if pendingC2 {
            pendingC2 = false
            if byte == 0xA0 { space(); return }
            emit(0xC2)
        }
        if byte == 0xC2 { pendingC2 = true; return }
        if WikiSource.isSpace(byte) { space(); return }
        emit(byte)
    }

    package mutating func append<Bytes: Sequence>(_ sequence: Bytes) where Bytes.Element == UInt8 {
        for byte in sequence { append(byte) }
    }

    package mutating func append(_ string: String) { append(string.utf8) }

    private mutating func emit(_ byte: UInt8) {
        if pendingSpace {
            bytes.append(0x20)
            pendingSpace = false
        }
        bytes.append(byte)
    }
}
