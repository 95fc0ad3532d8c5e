import KilnC
import KilnCore
import KilnManifest

/// How an inline template reads, as a manifest declares it: a format such as `{1} {2}` (`{{Prix|13|€}}` → `13 €`),
/// optionally with groups in square brackets that are left out when an argument in them is empty, and with a map of
/// values per parameter (`{{Horaire|lu|je|8|30|22|}}` with `lu` → `lun.`, `je` → `jeu.`).
///
/// Format syntax: `{name}` is an argument (`1` the first positional one); `{name?}` prints nothing but requires the
/// argument; `[…]` is a group, kept only when every argument written directly in it is non-empty (a group that
/// names no argument directly is kept when one of its inner groups is); `\[`, `\]`, `\{`, `\}` are literal.
package struct InlineTemplateFormat: Equatable, Sendable {
    /// One piece of a format.
    package enum Piece: Equatable {
        case literal(String)
        case argument(String, print: Bool)
        case group([Piece])
    }

    package var pieces: [Piece]
    /// Values replaced per parameter: parameter → written value (trimmed) → replacement.
    package var values: [String: [String: String]]

    package init(pieces: [Piece], values: [String: [String: String]] = [:]) {
        self.pieces = pieces
        self.values = values
    }

    /// Parses `format`.
    /// - Throws: `InlineTemplateFormat.Problem` for unbalanced brackets or braces.
    package init(_ format: String, values: [String: [String: String]] = [:]) throws {
        var characters = Substring(format)
        pieces = try InlineTemplateFormat.parse(&characters, closing: nil, depth: 0)
        self.values = values
    }

    /// A problem in a format, for the manifest's error message.
    package struct Problem: Error, CustomStringConvertible {
        package var description: String
    }

    /// Groups nested deeper than this are refused, so that a manifest cannot exhaust the stack.
    package static let maximumDepth = 16

    private static func parse(_ rest: inout Substring, closing: Character?, depth: Int) throws -> [Piece] {
        guard depth <= maximumDepth else { throw Problem(description: "groups nest deeper than \(maximumDepth) levels") }
        var pieces: [Piece] = []
        var literal = ""
        func flush() {
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
        }
        while let character = rest.popFirst() {
            switch character {
            case "\\":
                guard let escaped = rest.popFirst() else { throw Problem(description: "the format ends with a lone \\") }
                literal.append(escaped)
            case "{":
                guard let close = rest.firstIndex(of: "}") else { throw Problem(description: "a { is never closed with }") }
                var name = String(rest[..<close])
                rest = rest[rest.index(after: close)...]
                let print = !name.hasSuffix("?")
                if !print { name.removeLast() }
                guard !name.isEmpty else { throw Problem(description: "{} names no argument") }
                flush()
                pieces.append(.argument(name, print: print))
            case "[":
                flush()
                pieces.append(.group(try parse(&rest, closing: "]", depth: depth + 1)))
            case "]":
                guard closing == "]" else { throw Problem(description: "a ] closes no [") }
                flush()
                return pieces
            default:
                literal.append(character)
            }
        }
        guard closing == nil else { throw Problem(description: "a [ is never closed with ]") }
        flush()
        return pieces
    }

    /// The text of the template: `argument` gives an argument's plain text (`nil` when it is absent).
    /// Outside any group, an empty argument reads as nothing.
    package func render(_ argument: (String) -> String?) -> String {
        render(pieces, argument, inGroup: false)?.text ?? ""
    }

    /// The text of `pieces`, or `nil` when in a group and an argument written directly in it is empty.
    private func render(_ pieces: [Piece], _ argument: (String) -> String?, inGroup: Bool) -> (text: String, hasContent: Bool)? {
        var text = ""
        var hasContent = false
        for piece in pieces {
            switch piece {
            case .literal(let literal):
                text += literal
            case .argument(let name, let print):
                guard let raw = argument(name), !raw.isEmpty else {
                    if inGroup { return nil }
                    continue
                }
                hasContent = true
                if print { text += values[name]?[raw] ?? raw }
            case .group(let inner):
                if let group = render(inner, argument, inGroup: true), group.hasContent {
                    text += group.text
                    hasContent = true
                }
            }
        }
        return (text, hasContent)
    }
}
