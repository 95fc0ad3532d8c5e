import KilnC
import KilnCore
import KilnManifest

/// One listing of a page: its fields as plain text (checked), where it is, its category and its stable id.
package struct WikiListing: Equatable {
    /// The template or tag it was written with, as a key (`see`, `vcard`, `eat`…).
    package var template: String
    /// The section it belongs to, and its 1-based line in the page's text.
    package var section: Int
    package var line: Int
    /// `type=` as written (plain text).
    package var type: String?
    package var category: String?
    /// Field values by name (see `ListingConventions.fields`); empty fields are absent.
    package var fields: [String: String]
    /// 0, or how many listings with the same name came before it in the same section.
    package var ordinal: Int
    package var id: Int64
    /// Names (as written) of templates inside its values that are not known and were left out, once per occurrence.
    package var unknownTemplates: [String]
    /// Names (as written) of its parameters with a value that are no field and not ignored: left out.
    package var unknownParameters: [String] = []
    /// The text after it on its line, when the conventions do not take it as its description (English guides).
    package var untakenTrailingText: String?

    /// `listing "Name"`, or `a listing without a name`, for messages.
    package var label: String { fields["name"].map { "listing \"\(excerpt($0, limit: 60))\"" } ?? "a listing without a name" }
}

/// Finds the listings of a scanned page: templates the conventions name as listings and Wikitravel tags. Values
/// become plain text; coordinates, web and e-mail addresses are checked (a failing field is emptied and reported);
/// the category comes from the template or tag, else `type=`, else the nearest section heading that names one.
/// Not `Sendable`: it holds compiled patterns.
package struct ListingExtractor {
    package let conventions: ListingConventions
    private let plainText: WikiPlainText
    private let check: ListingFieldCheck

    /// - Throws: never in practice (the checks' patterns are fixed).
    package init(conventions: ListingConventions) throws {
        self.conventions = conventions
        plainText = conventions.plainText
        check = try ListingFieldCheck()
    }

    /// The listings of `page` (titled `title`), in order; findings are appended to `findings`.
    package func listings(in page: WikiPage, title: String, findings: inout some WikiFindingSink) -> [WikiListing] {
        var listings: [WikiListing] = []
        var seen: [String: Int] = [:]
        var sectionCategories: [Int: String?] = [:]
        for (position, element) in page.elements.enumerated() {
            guard var listing = read(element, in: page, findings: &findings) else { continue }
            if listing.fields["description"] == nil, case .template(let template) = element.kind {
                let next = position + 1 < page.elements.count ? page.elements[position + 1].range.lowerBound : nil
                var unknown: [String] = []
                let text = trailingText(page.source, after: template.range.upperBound, before: next, unknown: &unknown)
                if conventions.takesTrailingDescription(template.key) {
                    listing.fields["description"] = text
                    listing.unknownTemplates += unknown
                } else {
                    listing.untakenTrailingText = text
                }
            }
            checkFields(&listing, findings: &findings)
            listing.category = category(of: listing, in: page, cache: &sectionCategories)
            let path = page.outline.sections[listing.section].path
            let key = path.joined(separator: "\u{1E}") + "\u{1F}" + (listing.fields["name"] ?? "")
            listing.ordinal = seen[key, default: 0]
            seen[key] = listing.ordinal + 1
            listing.id = StableListingID.make(page: title, path: path, name: listing.fields["name"], ordinal: listing.ordinal)
            listings.append(listing)
        }
        return listings
    }

    /// The raw fields of one element when it is a listing.
    private func read(_ element: WikiPage.Element, in page: WikiPage, findings: inout some WikiFindingSink) -> WikiListing? {
        var listing = WikiListing(template: "", section: element.section, line: element.line, type: nil, category: nil,
                                  fields: [:], ordinal: 0, id: 0, unknownTemplates: [])
        switch element.kind {
        case .template(let template):
            guard conventions.templates[template.key] != nil else { return nil }
            listing.template = template.key
            for argument in template.arguments {
                guard let key = argument.key else { continue }
                guard let field = conventions.parameters[key] else {
                    if !conventions.ignoredParameters.contains(key), !WikiName.written(page.source, argument.value).isEmpty {
                        listing.unknownParameters.append(argument.name ?? key)
                    }
                    continue
                }
                let text = value(of: field, page.source, argument.value, unknown: &listing.unknownTemplates)
                listing.fields[field] = text.isEmpty ? nil : text
            }
        case .tag(let tag):
            listing.template = tag.name
            for (key, raw) in tag.attributes {
                guard let field = conventions.parameters[WikiName.key(key)] else {
                    if !conventions.ignoredParameters.contains(WikiName.key(key)), !raw.allSatisfy(\.isWhitespace) {
                        listing.unknownParameters.append(key)
                    }
                    continue
                }
                let source = WikiSource(raw)
                let text = value(of: field, source, 0..<source.count, unknown: &listing.unknownTemplates)
                listing.fields[field] = text.isEmpty ? nil : text
            }
            if let range = tag.description {
                let text = plainText.text(page.source, range, unknown: &listing.unknownTemplates)
                if text.contains(where: { $0.isLetter || $0.isNumber }) {
                    listing.fields["description"] = text
                } else if !text.isEmpty {
                    listing.fields["description"] = nil
                    findings.append(tagFinding(tag, listing, "its description \"\(excerpt(text, limit: 30))\" holds no text; left out"))
                }
            }
            for problem in tag.problems { findings.append(tagFinding(tag, listing, problem)) }
        }
        listing.type = listing.fields.removeValue(forKey: "type")
        return listing
    }

    private func tagFinding(_ tag: ListingTag, _ listing: WikiListing, _ problem: String) -> WikiFinding {
        WikiFinding(code: .wikitextTag, message: "<\(tag.name)> \(listing.label): \(problem)", line: listing.line)
    }

    /// The plain text of one value: web addresses keep the address of a `[http://… label]` link, e-mail addresses
    /// lose a `mailto:`, and a coordinate that renders as nothing (`{{#invoke:…}}`) stays as written, so that it is
    /// reported rather than silently missing.
    private func value(of field: String, _ source: WikiSource, _ range: Range<Int>, unknown: inout [String]) -> String {
        switch field {
        case "lat", "long":
            let text = plainText.text(source, range, unknown: &unknown)
            return text.isEmpty ? WikiName.written(source, range, underscores: false) : text
        case "url": return plainText.text(source, range, mode: .url, unknown: &unknown)
        case "email":
            let text = plainText.text(source, range, unknown: &unknown)
            return text.prefix(7).lowercased() == "mailto:" ? String(text.dropFirst(7)) : text
        default: return plainText.text(source, range, unknown: &unknown)
        }
    }

    /// The text after a template on its line (`{{vCard|…}}: a fine hut.` → `a fine hut.`), unless another listing
    /// follows on the same line; leading punctuation is dropped; `nil` when no letter or digit is left.
    private func trailingText(_ source: WikiSource, after end: Int, before next: Int?, unknown: inout [String]) -> String? {
        let lineEnd = source.endOfLine(from: end, before: next)
        if let next, lineEnd >= next { return nil }
        var text = Substring(plainText.text(source, end..<lineEnd, unknown: &unknown))
        while let first = text.first, first.isWhitespace || ":,.;–—-".contains(first) { text.removeFirst() }
        return text.contains(where: { $0.isLetter || $0.isNumber }) ? String(text) : nil
    }

    /// Empties coordinates, web and e-mail addresses that do not hold, and reports each with its raw value.
    private func checkFields(_ listing: inout WikiListing, findings: inout some WikiFindingSink) {
        for (field, limit) in [("lat", 90.0), ("long", 180.0)] {
            guard let text = listing.fields[field] else { continue }
            switch ListingFieldCheck.coordinate(text, limit: limit) {
            case .degrees(let degrees): listing.fields[field] = degrees
            case .notANumber:
                listing.fields[field] = nil
                findings.append(WikiFinding(code: .wikitextCoordinates, message: "\(listing.label): \(field) \"\(excerpt(text))\" is not a number of degrees; left out of its coordinates",
                                            line: listing.line))
            case .outOfRange:
                listing.fields[field] = nil
                findings.append(WikiFinding(code: .wikitextCoordinatesRange, message: "\(listing.label): \(field) \(text) is outside -\(Int(limit))…\(Int(limit)); the field is left empty",
                                            line: listing.line))
            }
        }
        if let url = listing.fields["url"], !check.isURL(url) {
            listing.fields["url"] = nil
            findings.append(WikiFinding(code: .wikitextURL, message: "\(listing.label): url \"\(excerpt(url))\" is not a web address; the field is left empty",
                                        line: listing.line))
        }
        if let email = listing.fields["email"], !check.isEmail(email) {
            listing.fields["email"] = nil
            findings.append(WikiFinding(code: .wikitextEmail, message: "\(listing.label): email \"\(excerpt(email))\" is not an e-mail address; the field is left empty",
                                        line: listing.line))
        }
    }

    /// The template's or tag's category, else the one `type=` names, else the nearest heading's, else the default.
    private func category(of listing: WikiListing, in page: WikiPage, cache: inout [Int: String?]) -> String? {
        if let category = conventions.templates[listing.template] ?? nil { return category }
        if let type = listing.type, let category = conventions.types[TextFolding.fold(type)] { return category }
        for section in page.outline.chain(from: listing.section) {
            if let cached = cache[section.number] {
                if let category = cached { return category }
                continue
            }
            let category = section.title.flatMap { conventions.sections[TextFolding.fold($0)] }
            cache[section.number] = category
            if let category { return category }
        }
        return conventions.defaultCategory
    }
}
