import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Turns a page's tree (libxml2's HTML parse, as `MarkupNode`s) into the subset an app's web view shows offline:
/// headings, paragraphs, bold and italic, lists, links, line breaks and images. Scripts, styles, iframes, forms,
/// objects and their content are removed; so are event-handler (`on…`) and style attributes and `javascript:` links
/// (the link's text stays). Other elements (`div`, `span`, `font`, layout tables) are unwrapped, keeping their text.
/// Every removal is reported. Links to pages of the site become `page:SLUG` (with any `#fragment`); links the
/// sanitizer cannot ship are removed and reported.
package struct HTMLSanitizer {
    /// What a link points to.
    package enum LinkTarget: Equatable {
        /// A page of the site, by slug, with an optional fragment.
        case page(slug: String, fragment: String?)
        /// A web, mail or phone link, kept as it is.
        case external(String)
        /// A fragment of the same page.
        case fragment(String)
    }

    /// Something the sanitizer removed or changed, with the line of the element.
    package struct Removal: Equatable {
        package enum Kind: String, Error { case script, style, iframe, form, object, handler = "event handler", styleAttribute = "style attribute",
                              javascriptLink = "javascript: link", emptyLink = "empty link", unsupportedLink = "link",
                              unresolvedLink = "query link", image }
        package let kind: Kind
        package let detail: String
        package let line: Int
    }

    /// The sanitized page.
    package struct Result {
        package var html = ""
        package var text = ""
        package var links: [(href: String, target: LinkTarget, line: Int)] = []
        package var images: [(src: String, alt: String?, line: Int)] = []
        package var removals: [Removal] = []
        /// Elements unwrapped (their text kept), by name, with how many.
        package var unwrapped: [String: Int] = [:]
    }

    /// Hosts whose page links are links to the site's own pages (e.g. `www.mouseio-epistimon.gr`).
    package var siteHosts: Set<String> = []

    private static let kept: Set<String> = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "b", "strong", "i", "em", "ul", "ol", "li", "a", "img"]
    private static let dropped: [String: Removal.Kind] = [
        "script": .script, "noscript": .script, "style": .style, "iframe": .iframe, "frame": .iframe, "frameset": .iframe,
        "form": .form, "input": .form, "button": .form, "select": .form, "textarea": .form,
        "object": .object, "embed": .object, "applet": .object, "link": .style, "meta": .style, "template": .script,
    ]
    private static let void: Set<String> = ["embed", "input", "link", "meta", "param", "source", "track", "area", "base", "col", "wbr", "keygen"]
    private static let blocks: Set<String> = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "li", "div", "tr", "table", "blockquote",
                                              "section", "article", "header", "footer", "nav", "center", "dl", "dt", "dd", "address", "pre", "hr"]

    /// Sanitizes the children of `root` (the page's content element).
    package func sanitize(_ root: MarkupNode) -> Result {
        var result = Result()
        var html = ""
        if case .element(_, _, _, let children) = root {
            for child in children { render(child, into: &html, result: &result, inParagraph: false) }
        }
        result.html = Self.tidyLines(html)
        result.text = Self.plainText(result.html.isEmpty ? [] : [root], sanitizer: self)
        return result
    }

    private func render(_ node: MarkupNode, into html: inout String, result: inout Result, inParagraph: Bool) {
        switch node {
        case .text(let text, _):
            html += Self.escape(text)
        case .element(let name, let attributes, let line, let children):
            if let kind = Self.dropped[name] {
                result.removals.append(Removal(kind: kind, detail: "<\(name)>", line: line))
                // A void element has no content: what libxml2 hangs under one (it nests what follows an `<embed>`)
                // is the page's.
                if Self.void.contains(name) {
                    for child in children { render(child, into: &html, result: &result, inParagraph: inParagraph) }
                }
                return
            }
            for attribute in attributes.keys.sorted() {
                let lower = attribute.lowercased()
                if lower.hasPrefix("on") {
                    result.removals.append(Removal(kind: .handler, detail: "\(lower) on <\(name)>", line: line))
                } else if lower == "style" {
                    result.removals.append(Removal(kind: .styleAttribute, detail: "on <\(name)>", line: line))
                }
            }
            func inner() -> String {
                var text = ""
                for child in children { render(child, into: &text, result: &result, inParagraph: inParagraph || name == "p") }
                return text
            }
            switch name {
            case "a":
                let content = inner()
                guard let href = attributes["href"]?.trimmingCharacters(in: .whitespacesAndNewlines), !href.isEmpty else {
                    html += content
                    return
                }
                switch classify(href) {
                case .success(let target):
                    result.links.append((href, target, line))
                    html += "<a href=\"\(Self.escape(Self.rewritten(target), attribute: true))\">\(content)</a>"
                case .failure(let removal):
                    result.removals.append(Removal(kind: removal, detail: href, line: line))
                    html += content
                }
            case "img":
                guard let source = attributes["src"]?.trimmingCharacters(in: .whitespacesAndNewlines), !source.isEmpty else { return }
                let cleaned = String(String.UnicodeScalarView(source.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }))
                let schemeEnd = cleaned.firstIndex { ":/?#".contains($0) }
                if cleaned.hasPrefix("//") || schemeEnd.map({ cleaned[$0] == ":" }) == true {
                    result.removals.append(Removal(kind: .image, detail: excerpt(source, limit: 60), line: line))
                    return
                }
                let path = Self.relativePath(source)
                result.images.append((path, attributes["alt"], line))
                var tag = "<img src=\"\(Self.escape(path, attribute: true))\""
                if let alt = attributes["alt"] { tag += " alt=\"\(Self.escape(alt, attribute: true))\"" }
                for size in ["width", "height"] {
                    if let value = attributes[size], Int(value) != nil { tag += " \(size)=\"\(value)\"" }
                }
                html += tag + ">"
            case "br":
                html += "<br>"
            case "b", "strong", "i", "em", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li":
                let tag = ["b": "strong", "i": "em"][name] ?? name
                let content = inner()
                if content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, tag != "li" { return }
                let block = Self.blocks.contains(tag)
                html += (block ? "\n" : "") + "<\(tag)\(Self.anchor(attributes))>\(content)</\(tag)>" + (block ? "\n" : "")
            case "p":
                let content = inner().trimmingCharacters(in: .whitespacesAndNewlines)
                if !content.isEmpty { html += "\n<p\(Self.anchor(attributes))>\(content)</p>\n" }
            default:
                result.unwrapped[name, default: 0] += 1
                let content = inner()
                let hasBlock = children.contains { if case .element(let n, _, _, _) = $0 { return Self.blocks.contains(n) } else { return false } }
                if Self.blocks.contains(name), !inParagraph, !hasBlock, !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    html += "\n<p>\(content.trimmingCharacters(in: .whitespacesAndNewlines))</p>\n"
                } else if name == "td" || name == "th" {
                    html += content + " "
                } else {
                    html += content
                }
            }
        }
    }

    /// Where `href` leads, or why it cannot be shipped. As browsers do, tabs and line breaks anywhere and control
    /// characters and spaces at the ends are ignored first (`java&#9;script:` is a `javascript:` link).
    package func classify(_ written: String) -> Swift.Result<LinkTarget, Removal.Kind> {
        let href = String(String.UnicodeScalarView(written.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }))
            .trimmingCharacters(in: CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(0x20)))
        if href.isEmpty || href == "#" { return .failure(.emptyLink) }
        if href.hasPrefix("#") { return .success(.fragment(String(href.dropFirst()))) }
        let schemeEnd = href.firstIndex { ":/?#".contains($0) }
        let scheme = schemeEnd.flatMap { href[$0] == ":" ? href[..<$0].lowercased() : nil }
        switch scheme {
        case "javascript", "vbscript":
            return .failure(.javascriptLink)
        case "mailto", "tel":
            return .success(.external(href))
        case "http", "https":
            guard let components = URLComponents(string: href), let host = components.host, !host.isEmpty else { return .failure(.unsupportedLink) }
            if siteHosts.contains(host.lowercased()) { return page(components.path, query: components.query, fragment: components.fragment) }
            return .success(.external(href))
        case .some:
            return .failure(.unsupportedLink)
        case nil:
            if href.hasPrefix("//") {
                guard let components = URLComponents(string: "https:" + href), let host = components.host else { return .failure(.unsupportedLink) }
                if siteHosts.contains(host.lowercased()) { return page(components.path, query: components.query, fragment: components.fragment) }
                return .success(.external("https:" + href))
            }
            let parts = href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let pathAndQuery = parts[0].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            return page(String(pathAndQuery[0]), query: pathAndQuery.count > 1 ? String(pathAndQuery[1]) : nil,
                        fragment: parts.count > 1 ? String(parts[1]) : nil)
        }
    }

    /// Extensions of a server's scripts, whose query says which page they show.
    private static let scriptExtensions: Set<String> = ["php", "asp", "aspx", "jsp", "cgi"]
    /// Extensions a page's file name may end with; any other dot belongs to the name (`/wiki/St._Petersburg`).
    private static let pageExtensions = scriptExtensions.union(["html", "htm", "xhtml", "shtml"])

    /// The page a site link leads to. MediaWiki's script links (`/w/index.php?title=Patras&action=edit`) name their
    /// page in the `title` parameter, written as its `/wiki/` link would be (spaces as `_`); a query on a path that
    /// names no page of its own (a script or the site's root) and gives no `title` leads nowhere that can be told.
    private func page(_ path: String, query: String?, fragment: String?) -> Swift.Result<LinkTarget, Removal.Kind> {
        let fragment = fragment.flatMap { $0.isEmpty ? nil : $0 }
        let decoded = path.removingPercentEncoding ?? path
        let last = decoded.split(separator: "/").last.map(String.init)
        let fileExtension = last.flatMap { name in name.lastIndex(of: ".").map { name[name.index(after: $0)...].lowercased() } }
        let names = last == nil || fileExtension.map(HTMLSanitizer.scriptExtensions.contains) == true
        if let query, !query.isEmpty, names {
            guard let title = HTMLSanitizer.titleParameter(query) else { return .failure(.unresolvedLink) }
            return .success(.page(slug: title.replacingOccurrences(of: " ", with: "_").lowercased(), fragment: fragment))
        }
        guard let name = last else { return .success(.page(slug: "index", fragment: fragment)) }
        var slug = name[...]
        if let fileExtension, HTMLSanitizer.pageExtensions.contains(fileExtension) { slug = slug[..<slug.lastIndex(of: ".")!] }
        return .success(.page(slug: slug.lowercased(), fragment: fragment))
    }

    /// The `title` parameter of a query string (`title=Ancient_Olympia&action=edit`), percent-decoded, `+` read as a
    /// space; `nil` when there is none or it is empty.
    package static func titleParameter(_ query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "title" else { continue }
            let value = parts[1].replacingOccurrences(of: "+", with: " ")
            let title = (value.removingPercentEncoding ?? value).trimmingCharacters(in: .whitespaces)
            return title.isEmpty ? nil : title
        }
        return nil
    }

    /// The form the app resolves: `page:SLUG#fragment` for the site's pages.
    package static func rewritten(_ target: LinkTarget) -> String {
        switch target {
        case .page(let slug, let fragment): return "page:\(slug)" + (fragment.map { "#\($0)" } ?? "")
        case .external(let href): return href
        case .fragment(let name): return "#\(name)"
        }
    }

    private static func relativePath(_ source: String) -> String {
        var path = source.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        while path.hasPrefix("./") || path.hasPrefix("/") { path = path.hasPrefix("./") ? path.dropFirst(2) : path.dropFirst() }
        return (String(path).removingPercentEncoding ?? String(path))
    }

    /// The HTML with each run of white space that holds a line break made one line break, and no blank lines.
    private static func tidyLines(_ html: String) -> String {
        var result = ""
        var pending = ""
        for character in html {
            if character.isWhitespace, character != "\u{A0}" {
                pending.append(character)
                continue
            }
            if !pending.isEmpty {
                if !result.isEmpty { result += pending.contains(where: \.isNewline) ? "\n" : pending }
                pending = ""
            }
            result.append(character)
        }
        return result
    }

    /// The `id` attribute, kept so that `#fragment` links still land.
    private static func anchor(_ attributes: [String: String]) -> String {
        guard let id = attributes["id"], !id.isEmpty else { return "" }
        return " id=\"\(escape(id, attribute: true))\""
    }

    package static func escape(_ text: String, attribute: Bool = false) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where attribute: result += "&quot;"
            case "\u{A0}": result += "&nbsp;"
            default: result.append(character)
            }
        }
        return result
    }

    /// The text of what the sanitizer keeps, one line per block, spaces collapsed: for full-text search.
    private static func plainText(_ roots: [MarkupNode], sanitizer: HTMLSanitizer) -> String {
        var lines: [String] = []
        var current = ""
        func flush() {
            let line = TextFolding.collapseSpaces(current)
            if !line.isEmpty { lines.append(line) }
            current = ""
        }
        func walk(_ node: MarkupNode) {
            switch node {
            case .text(let text, _):
                current += text
            case .element(let name, _, _, let children):
                if dropped[name] != nil, !void.contains(name) { return }
                if name == "br" { flush(); return }
                let block = blocks.contains(name) || name == "td" || name == "th"
                if block { flush() }
                children.forEach(walk)
                if block { flush() } else if name == "img" { current += " " }
            }
        }
        roots.forEach(walk)
        flush()
        return lines.joined(separator: "\n")
    }
}
