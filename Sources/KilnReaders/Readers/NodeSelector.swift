import KilnC
import KilnCore
import KilnManifest

/// How a manifest picks nodes in an XML or HTML document: an XPath expression (a plain string or `{xpath: …}`)
/// or a simple CSS selector (`{css: …}`), which is translated to XPath.
package enum NodeSelector: Decodable, Sendable, Equatable {
    case xpath(String)
    case css(String)

    package enum CodingKeys: String, CodingKey, CaseIterable { case xpath, css }

    package init(from decoder: Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .xpath(text)
            return
        }
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        if let css = try c.decodeIfPresent(String.self, forKey: .css) {
            self = .css(css)
        } else {
            self = .xpath(try c.decode(String.self, forKey: .xpath))
        }
    }

    /// The selector as XPath. A CSS selector is taken relative to the context node (`.//`).
    /// - Throws: `ValueProblem` for CSS beyond the supported subset.
    package func xpathText() throws -> String {
        switch self {
        case .xpath(let text): return text
        case .css(let text): return try CSSSelector.xpath(text)
        }
    }

    /// The selector compiled. A CSS selector is compiled in its form for evaluation (`CSSSelector.xpath(_:forEvaluation:)`),
    /// which selects the same nodes faster.
    /// - Throws: `ValueProblem` for unsupported CSS, `XPathError` for XPath libxml2 refuses.
    package func compile() throws -> XPathExpression {
        switch self {
        case .xpath(let text): return try XPathExpression(text)
        case .css(let text):
            return try XPathExpression(CSSSelector.xpath(text, forEvaluation: true), descendantTest: CSSSelector.descendantTest(text))
        }
    }
}

/// Translates the CSS subset users need to pick records in scraped pages into XPath 1.0: type selectors, `*`,
/// `.class`, `#id`, `[attr]`, `[attr=value]` (quoted or not), the descendant (space) and child (`>`) combinators,
/// and selector lists (`a, b`).
package enum CSSSelector {
    /// The XPath for `selector`, relative to the context node. `forEvaluation` gives the form compiled: a class test
    /// is then preceded by `@class and`, which selects the same nodes (an element without a class attribute has
    /// none of its classes) but spares libxml2 building the padded class string of every element that has no class
    /// — most of a page's cells. Messages show the form without it.
    /// - Throws: `ValueProblem` naming the part that is not supported.
    package static func xpath(_ selector: String, forEvaluation: Bool = false) throws -> String {
        let alternatives = try splitList(selector).map { try translate($0.trimmingSpaces, original: selector, forEvaluation: forEvaluation) }
        guard !alternatives.isEmpty else { throw ValueProblem(message: "empty CSS selector") }
        return alternatives.joined(separator: " | ")
    }

    /// For a selector that is one compound of a type or `*` and `.class` and `#id` tests (`td.content`, `.content`,
    /// `div#main`, `td.a.b`, `*`): the test that picks the elements its XPath picks in an HTML page by walking the
    /// tree. `nil` for anything else (lists, combinators, attribute selectors, a name with upper-case or non-ASCII
    /// letters), which the XPath engine evaluates.
    package static func descendantTest(_ selector: String) -> DescendantElementTest? {
        let text = selector.trimmingSpaces
        guard !text.isEmpty, !text.contains(where: { " >,[]\"'".contains($0) }) else { return nil }
        var rest = Substring(text)
        let nameEnd = rest.firstIndex { $0 == "." || $0 == "#" } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard name.isEmpty || name == "*"
              || name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" })
        else { return nil }
        rest = rest[nameEnd...]
        var classes: [String] = [], ids: [String] = []
        while let first = rest.first {
            rest = rest.dropFirst()
            let end = rest.firstIndex { $0 == "." || $0 == "#" } ?? rest.endIndex
            if first == "." { classes.append(String(rest[..<end])) } else { ids.append(String(rest[..<end])) }
            rest = rest[end...]
        }
        return DescendantElementTest(name: name.isEmpty || name == "*" ? nil : name, classes: classes, ids: ids)
    }

    /// Splits a selector list on the commas outside brackets and quotes.
    private static func splitList(_ selector: String) -> [String] {
        var parts: [String] = [], current = "", depth = 0
        var quote: Character?
        for character in selector {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "[" {
                depth += 1
            } else if character == "]" {
                depth -= 1
            } else if character == ",", depth == 0 {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        return parts
    }

    private static func translate(_ selector: String, original: String, forEvaluation: Bool) throws -> String {
        var path = "."
        var combinator = "//"
        var index = selector.startIndex
        while index < selector.endIndex {
            let character = selector[index]
            if character == " " {
                index = selector.index(after: index)
                continue
            }
            if character == ">" {
                combinator = "/"
                index = selector.index(after: index)
                continue
            }
            var end = index
            var bracketDepth = 0
            while end < selector.endIndex {
                let c = selector[end]
                if c == "[" { bracketDepth += 1 }
                if c == "]" { bracketDepth -= 1 }
                if bracketDepth == 0 && (c == " " || c == ">") { break }
                end = selector.index(after: end)
            }
            path += combinator + (try compound(String(selector[index..<end]), original: original, forEvaluation: forEvaluation))
            combinator = "//"
            index = end
        }
        guard path != "." else { throw ValueProblem(message: "empty CSS selector in \"\(original)\"") }
        return path
    }

    /// One compound selector such as `td.time[data-x=1]`.
    private static func compound(_ text: String, original: String, forEvaluation: Bool) throws -> String {
        var element = "*"
        var predicates: [String] = []
        var rest = Substring(text)
        let nameEnd = rest.firstIndex { $0 == "." || $0 == "#" || $0 == "[" } ?? rest.endIndex
        let name = rest[..<nameEnd]
        if !name.isEmpty {
            guard name == "*" || name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ValueProblem(message: "unsupported CSS \"\(name)\" in \"\(original)\"; supported: tag, .class, #id, [attr], [attr=value], descendant and > combinators")
            }
            element = String(name)
        }
        rest = rest[nameEnd...]
        while let first = rest.first {
            switch first {
            case ".", "#":
                rest = rest.dropFirst()
                let end = rest.firstIndex { $0 == "." || $0 == "#" || $0 == "[" } ?? rest.endIndex
                let value = String(rest[..<end])
                guard !value.isEmpty else { throw ValueProblem(message: "empty class or id in \"\(original)\"") }
                let classTest = "contains(concat(' ', normalize-space(@class), ' '), \(literal(" " + value + " ")))"
                predicates.append(first == "." ? (forEvaluation ? "@class and " + classTest : classTest)
                                               : "@id=\(literal(value))")
                rest = rest[end...]
            case "[":
                guard let close = rest.firstIndex(of: "]") else { throw ValueProblem(message: "unclosed [ in \"\(original)\"") }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                if let equals = inside.firstIndex(of: "=") {
                    let attribute = inside[..<equals].trimmingSpaces
                    var value = inside[inside.index(after: equals)...].trimmingSpaces
                    if let quote = value.first, quote == "\"" || quote == "'", value.count >= 2, value.last == quote {
                        value = String(value.dropFirst().dropLast())
                    }
                    guard isName(attribute) else { throw ValueProblem(message: "unsupported attribute selector [\(inside)] in \"\(original)\"") }
                    predicates.append("@\(attribute)=\(literal(value))")
                } else {
                    let attribute = inside.trimmingSpaces
                    guard isName(attribute) else { throw ValueProblem(message: "unsupported attribute selector [\(inside)] in \"\(original)\"") }
                    predicates.append("@\(attribute)")
                }
                rest = rest[rest.index(after: close)...]
            default:
                throw ValueProblem(message: "unsupported CSS \"\(rest)\" in \"\(original)\"; supported: tag, .class, #id, [attr], [attr=value], descendant and > combinators")
            }
        }
        return element + predicates.map { "[\($0)]" }.joined()
    }

    private static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ":" }
    }

    /// An XPath string literal; XPath 1.0 has no escapes, so a value with both quote kinds uses concat().
    package static func literal(_ value: String) -> String {
        if !value.contains("'") { return "'\(value)'" }
        if !value.contains("\"") { return "\"\(value)\"" }
        return "concat('" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "', \"'\", '") + "')"
    }
}
