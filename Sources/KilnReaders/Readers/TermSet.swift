import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads texts naming one or several terms of a vocabulary (`Σάββατο - Κυριακή`), matched ignoring case and accents,
/// into a set: the codes in canonical order joined by `,`, and a bit mask (bit *i* for the *i*-th term).
/// Not `Sendable`: its separator pattern reuses match data.
package final class TermSet {
    /// What separates terms by default (`VocabularySpec.defaultSeparator`).
    package static let defaultSeparator = VocabularySpec.defaultSeparator

    /// The parsed set.
    package struct Selection: Equatable, Sendable {
        package var codes: String
        package var mask: Int
    }

    /// The terms' names, for messages.
    package let names: [String]
    private let separator: RegexPattern
    private let codes: [String: (code: String, order: Int)]

    /// - Throws: `RegexCompileError` for a bad separator.
    package init(terms: [Term], separator: String = TermSet.defaultSeparator) throws {
        self.separator = try RegexPattern(separator)
        names = terms.map(\.name)
        var codes: [String: (String, Int)] = [:]
        for (order, term) in terms.enumerated() {
            for name in [term.name] + term.aliases { codes[TextFolding.fold(name)] = (term.code, order) }
        }
        self.codes = codes
    }

    /// The set `text` names; `nil` when a part is not a known term.
    /// - Throws: `RegexMatchError` when the separator pattern fails.
    package func parse(_ text: String) throws -> Selection? {
        var found: [(code: String, order: Int)] = []
        for part in try separator.split(text) {
            let key = TextFolding.fold(part)
            if key.isEmpty { continue }
            guard let term = codes[key] else { return nil }
            if !found.contains(where: { $0.code == term.code }) { found.append(term) }
        }
        guard !found.isEmpty else { return nil }
        let ordered = found.sorted { $0.order < $1.order }
        return Selection(codes: ordered.map(\.code).joined(separator: ","), mask: ordered.reduce(0) { $0 | 1 << $1.order })
    }
}
