import KilnC
import KilnCore
import KilnManifest

/// Refuses, when a manifest loads, the XPath that a reader would evaluate to a silently wrong or empty value:
/// libxml2 compiles `normalise-space(x)` (a typo) or an undeclared prefix and only fails, quietly, on evaluation;
/// and a streaming reader holds only the record element, so an expression that leaves it (its preceding or
/// following siblings, its ancestors, an absolute path) or asks for the record's own `position()` or `last()`
/// sees a fragment of the document and answers 0 or nothing for every record.
///
/// The check is lexical (XPath 1.0 tokens: names, axes, function calls, predicates, literals); libxml2 still
/// compiles the expression afterwards and refuses what is not XPath at all.
package struct XPathGuard: Sendable {
    /// What the expression is evaluated on.
    package enum Scope: Sendable {
        /// One element expanded from a stream: nothing outside it exists.
        case streamedRecord
        /// A whole parsed document (HTML pages): every axis is correct.
        case wholeDocument
    }

    package let scope: Scope
    /// The namespace prefixes the source declares.
    package let prefixes: Set<String>

    package init(scope: Scope, prefixes: Set<String> = []) {
        self.scope = scope
        self.prefixes = prefixes
    }

    /// XPath 1.0's function library (what libxml2 implements without extensions).
    package static let functions: Set<String> = [
        "last", "position", "count", "id", "local-name", "namespace-uri", "name", "string", "concat", "starts-with",
        "contains", "substring-before", "substring-after", "substring", "string-length", "normalize-space", "translate",
        "boolean", "not", "true", "false", "lang", "number", "sum", "floor", "ceiling", "round",
    ]
    package static let nodeTests: Set<String> = ["node", "text", "comment", "processing-instruction"]
    package static let operatorNames: Set<String> = ["and", "or", "div", "mod"]
    /// Axes that leave the record element, with what to use instead.
    package static let leavingAxes: [String: String] = [
        "preceding-sibling": "the field \"_position\" (the record's position within its parent) or \"_ordinal\" (within its file)",
        "following-sibling": "the field \"_position\" (the record's position within its parent) or \"_ordinal\" (within its file)",
        "preceding": "the field \"_ordinal\" (the record's position within its file)",
        "following": "the field \"_ordinal\" (the record's position within its file)",
        "ancestor": "a \"context\" field declared on the enclosing element",
        "ancestor-or-self": "a \"context\" field declared on the enclosing element",
        "parent": "a \"context\" field declared on the enclosing element",
    ]

    /// Why `expression` cannot be evaluated correctly here, with the supported alternative; `nil` when it can.
    package func problem(in expression: String) -> String? {
        let tokens = XPathGuard.tokens(expression)
        var predicateDepth = 0
        for (index, token) in tokens.enumerated() {
            let next = index + 1 < tokens.count ? tokens[index + 1] : ""
            let previous = index > 0 ? tokens[index - 1] : ""
            switch token {
            case "[": predicateDepth += 1; continue
            case "]": predicateDepth -= 1; continue
            default: break
            }
            if scope == .streamedRecord {
                if token == ".." {
                    return "\"..\" leaves the record element, which is all a streaming reader holds; use \(XPathGuard.leavingAxes["parent"]!)"
                }
                if (token == "/" || token == "//"), XPathGuard.startsExpression(previous) {
                    return "an absolute path (\"\(token)…\") leaves the record element, which is all a streaming reader holds; "
                        + "use a path relative to the record, or \(XPathGuard.leavingAxes["ancestor"]!)"
                }
                if next == "::", let alternative = XPathGuard.leavingAxes[token] {
                    return "the axis \"\(token)::\" leaves the record element, which is all a streaming reader holds, so it "
                        + "would give the same wrong value for every record; use \(alternative)"
                }
                if next == "(", predicateDepth == 0, token == "position" || token == "last" {
                    return "\(token)() of the record itself is always 1 in a streaming reader; use the field \"_position\" "
                        + "(the record's position within its parent) or \"_ordinal\" (within its file)"
                }
            }
            if next == "(", XPathGuard.isName(token), !XPathGuard.nodeTests.contains(token), !XPathGuard.operatorNames.contains(token),
               !XPathGuard.functions.contains(token) {
                let suggestion = XPathGuard.functions.min { editDistance($0, token) < editDistance($1, token) }
                    .map { editDistance($0, token) <= 3 ? " (did you mean \($0)()?)" : "" } ?? ""
                return "\(token)() is not an XPath 1.0 function\(suggestion); libxml2 would give no value for every record"
            }
            if XPathGuard.isName(token), next != "::", next != "(", let colon = token.firstIndex(of: ":") {
                let prefix = String(token[..<colon])
                if prefix != "xml", !prefixes.contains(prefix) {
                    return "the namespace prefix \"\(prefix)\" is not declared; declare it in the source's \"namespaces\" option"
                }
            }
        }
        return nil
    }

    /// True when a token before a `/` means the `/` starts a new location path (so it is absolute).
    private static func startsExpression(_ previous: String) -> Bool {
        previous.isEmpty || ["(", "[", ",", "|", "=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "and", "or", "div", "mod"].contains(previous)
    }

    private static func isName(_ token: String) -> Bool {
        guard let first = token.unicodeScalars.first else { return false }
        return first.properties.isAlphabetic || first == "_"
    }

    /// XPath tokens: literals (kept whole), numbers, names (with `-`, `.`, and a `prefix:` part), `::`, `//`, `..`,
    /// two-character comparison operators, and single characters.
    package static func tokens(_ expression: String) -> [String] {
        let scalars = Array(expression.unicodeScalars)
        var tokens: [String] = []
        var index = 0
        func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_" || scalar == "-" || scalar == "."
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" { index += 1; continue }
            if scalar == "\"" || scalar == "'" {
                var end = index + 1
                while end < scalars.count, scalars[end] != scalar { end += 1 }
                tokens.append("\"literal\"")
                index = min(end + 1, scalars.count)
                continue
            }
            if scalar.properties.isAlphabetic || scalar == "_" {
                var end = index + 1
                while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
                // A prefixed name: `p:local` (but not the axis separator `::`).
                if end + 1 < scalars.count, scalars[end] == ":", scalars[end + 1] != ":",
                   scalars[end + 1].properties.isAlphabetic || scalars[end + 1] == "_" || scalars[end + 1] == "*" {
                    end += 1
                    while end < scalars.count, isNameScalar(scalars[end]) || scalars[end] == "*" { end += 1 }
                }
                tokens.append(String(String.UnicodeScalarView(scalars[index..<end])))
                index = end
                continue
            }
            let pair = index + 1 < scalars.count ? String(String.UnicodeScalarView(scalars[index...index + 1])) : ""
            if ["::", "//", "..", "!=", "<=", ">="].contains(pair) {
                tokens.append(pair)
                index += 2
                continue
            }
            if scalar.properties.numericType != nil {
                var end = index + 1
                while end < scalars.count, scalars[end].properties.numericType != nil || scalars[end] == "." { end += 1 }
                tokens.append("0")
                index = end
                continue
            }
            tokens.append(String(scalar))
            index += 1
        }
        return tokens
    }
}

/// The Levenshtein distance between two short names, for "did you mean" suggestions.
package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
