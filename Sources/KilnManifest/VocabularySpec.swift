import KilnC
import KilnCore

/// One term of a controlled vocabulary: the name written in the sources, the code stored, other spellings.
public struct Term: Decodable, Sendable {
    public var name: String
    public var code: String
    public var aliases: [String] = []

    package enum CodingKeys: String, CodingKey, CaseIterable { case name, heading, code, aliases }

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
    public var separator: String = VocabularySpec.defaultSeparator

    /// What separates terms by default: `-`, `,`, `&`, `+` or `/`, with spaces around.
    public static let defaultSeparator = #"\s*(?:-|,|&|\+|/)\s*"#

    package enum CodingKeys: String, CodingKey, CaseIterable { case terms, separator }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        terms = try c.decode([Term].self, forKey: .terms)
        separator = try c.decodeIfPresent(String.self, forKey: .separator) ?? VocabularySpec.defaultSeparator
    }
}
