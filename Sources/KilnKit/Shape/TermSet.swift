/// One term of a controlled vocabulary: the name written in the sources, the code stored, other spellings.
public struct Term: Decodable, Sendable {
    public var name: String
    public var code: String
    public var aliases: [String] = []

    enum CodingKeys: String, CodingKey, CaseIterable { case name, heading, code, aliases }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        guard let name = try c.decodeIfPresent(String.self, forKey: .name) ?? c.decodeIfPresent(String.self, forKey: .heading) else {
            throw DecodingError.keyNotFound(CodingKeys.name, .init(codingPath: c.codingPath, debugDescription: "a term needs \"name\""))
        }
        self.name = name
        code = try c.decode(String.self, forKey: .code)
        aliases = try c.decodeIfPresent([String].self, forKey: .aliases) ?? []
    }
}

/// A vocabulary declared at the top of a manifest (`vocabularies`): its terms in canonical order and what separates
/// several of them in one text.
public struct VocabularySpec: Decodable, Sendable {
    public var terms: [Term]
    public var separator: String = TermSet.defaultSeparator

    enum CodingKeys: String, CodingKey, CaseIterable { case terms, separator }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        terms = try c.decode([Term].self, forKey: .terms)
        separator = try c.decodeIfPresent(String.self, forKey: .separator) ?? TermSet.defaultSeparator
    }
}

/// Reads texts naming one or several terms of a vocabulary (`Σάββατο - Κυριακή`), matched ignoring case and accents,
/// into a set: the codes in canonical order joined by `,`, and a bit mask (bit *i* for the *i*-th term).
/// Not `Sendable`: its separator pattern reuses match data.
public final class TermSet {
    /// What separates terms by default: `-`, `,`, `&`, `+` or `/`, with spaces around.
    public static let defaultSeparator = #"\s*(?:-|,|&|\+|/)\s*"#

    /// The parsed set.
    public struct Selection: Equatable, Sendable {
        public var codes: String
        public var mask: Int
    }

    /// The terms' names, for messages.
    public let names: [String]
    private let separator: RegexPattern
    private let codes: [String: (code: String, order: Int)]

    /// - Throws: `RegexCompileError` for a bad separator.
    public init(terms: [Term], separator: String = TermSet.defaultSeparator) throws {
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
    public func parse(_ text: String) throws -> Selection? {
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
