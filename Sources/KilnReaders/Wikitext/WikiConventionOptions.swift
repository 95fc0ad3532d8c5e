import KilnC
import KilnCore
import KilnManifest

/// The options every wikitext reader (`mediawiki`, `wikitext`) shares: what the wiki's listing templates, parameters,
/// types, section headings and inline templates mean, and which page templates name a parent or coordinates.
/// A reader decodes its own options beside these from the same object.
package struct WikiConventionOptions: Sendable {
    package var listings = ListingConventions()
    package var pages = PageConventions()

    /// The keys these options take.
    package static let keys = [
        "language", "listingTemplates", "parameters", "ignoreParameters", "types", "sections", "inlineTemplates",
        "ignoreTemplates", "defaultCategory", "trailingDescription", "parentTemplates", "geoTemplates",
    ]

    /// Decodes the shared options from `container`, after refusing any key that is neither one of `keys` nor one of
    /// the reader's own `readerKeys`.
    /// - Throws: `DecodingError` at the wrong option's path.
    package init(_ c: KeyedDecodingContainer<AnyKey>, readerKeys: [String]) throws {
        let known = readerKeys + WikiConventionOptions.keys
        for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key],
                                                    debugDescription: "unknown key \"\(key.stringValue)\"; expected one of: \(known.joined(separator: ", "))"))
        }
        try decodeListingConventions(c)
        try decodePageConventions(c)
    }

    private static func key(_ name: String) -> AnyKey { AnyKey(stringValue: name) }

    private mutating func decodeListingConventions(_ c: KeyedDecodingContainer<AnyKey>) throws {
        let key = WikiConventionOptions.key
        listings.language = try c.decodeIfPresent(String.self, forKey: key("language"))
        for (name, category) in try c.decodeIfPresent([String: String?].self, forKey: key("listingTemplates")) ?? [:] {
            listings.templates[WikiName.key(name)] = category
        }
        let fields = Set(ListingConventions.fields + ["type"])
        for (name, field) in try c.decodeIfPresent([String: String].self, forKey: key("parameters")) ?? [:] {
            guard fields.contains(field) else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key("parameters"), key(name)],
                                                        debugDescription: "\"\(field)\" is not a listing field; fields: \(ListingConventions.fields.joined(separator: ", ")), type"))
            }
            listings.parameters[WikiName.key(name)] = field
        }
        for name in try c.decodeIfPresent([String].self, forKey: key("ignoreParameters")) ?? [] {
            listings.ignoredParameters.insert(WikiName.key(name))
        }
        for (name, category) in try c.decodeIfPresent([String: String].self, forKey: key("types")) ?? [:] {
            listings.types[TextFolding.fold(name)] = category
        }
        for (heading, category) in try c.decodeIfPresent([String: String].self, forKey: key("sections")) ?? [:] {
            listings.sections[TextFolding.fold(heading)] = category
        }
        for (name, declared) in try c.decodeIfPresent([String: InlineTemplateDeclaration].self, forKey: key("inlineTemplates")) ?? [:] {
            do {
                listings.inlineTemplates[WikiName.key(name)] = try InlineTemplateFormat(declared.format, values: declared.values)
            } catch let problem as InlineTemplateFormat.Problem {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key("inlineTemplates"), key(name)],
                                                        debugDescription: "format \"\(declared.format)\": \(problem.description)"))
            }
        }
        for name in try c.decodeIfPresent([String].self, forKey: key("ignoreTemplates")) ?? [] {
            listings.ignoredTemplates.insert(WikiName.key(name))
        }
        if c.contains(key("defaultCategory")) {
            listings.defaultCategory = try c.decodeNil(forKey: key("defaultCategory")) ? nil : c.decode(String.self, forKey: key("defaultCategory"))
        }
        listings.trailingDescriptionOption = try c.decodeIfPresent(Bool.self, forKey: key("trailingDescription"))
    }

    private mutating func decodePageConventions(_ c: KeyedDecodingContainer<AnyKey>) throws {
        let key = WikiConventionOptions.key
        for name in try c.decodeIfPresent([String].self, forKey: key("parentTemplates")) ?? [] {
            pages.parentTemplates.insert(WikiName.key(name))
        }
        for (name, parameters) in try c.decodeIfPresent([String: [String]].self, forKey: key("geoTemplates")) ?? [:] {
            guard parameters.count == 2 else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key("geoTemplates"), key(name)],
                                                        debugDescription: "give the two parameters holding latitude and longitude, e.g. [\"lat\", \"long\"] or [\"1\", \"2\"]"))
            }
            pages.geoTemplates[WikiName.key(name)] = (parameters[0], parameters[1])
        }
    }
}

/// An inline template as a manifest declares it: a format (`"{1} {2}"`), or `{format, values}` where `values` maps,
/// per parameter, what is written to what is shown (`{"1": {lu: "lun."}}`).
package struct InlineTemplateDeclaration: Decodable {
    package var format: String
    package var values: [String: [String: String]] = [:]

    private enum CodingKeys: String, CodingKey, CaseIterable { case format, values }

    package init(from decoder: Decoder) throws {
        if let format = try? decoder.singleValueContainer().decode(String.self) {
            self.format = format
            return
        }
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        values = try c.decodeIfPresent([String: [String: String]].self, forKey: .values) ?? [:]
    }
}
