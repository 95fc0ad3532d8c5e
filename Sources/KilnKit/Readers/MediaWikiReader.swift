/// Reads MediaWiki XML exports and dumps (`<mediawiki><page><title>…<ns>…<redirect/>…<revision><text>`) page by
/// page with libxml2's streaming reader, so a dump of any size is read once, in bounded memory. It emits four kinds of
/// record in that one pass: `page`, `section`, `listing`, and `alias` (what redirect pages make); a manifest maps the
/// kinds it wants (`into: {page: {table: …}, listing: {table: …}}`) and the work for the others is skipped.
/// Pages outside `namespaces` (default: articles, 0) are skipped;
/// redirect pages are only aliases. Each listing also carries its position on the page and what the page's listings
/// add up to (`ListingSummary`), so that per-page figures need no sort of every listing in SQL.
public struct MediaWikiReader: ConfigurableReader {
    public static let format = "mediawiki"

    /// The options a manifest gives a `mediawiki` source.
    public struct Options: Decodable {
        var namespaces: [Int] = [0]
        var encoding: String?
        var listings = ListingConventions()
        var pages = PageConventions()

        enum CodingKeys: String, CodingKey, CaseIterable {
            case namespaces, encoding
            case listingTemplates, parameters, types, sections, inlineTemplates, ignoreTemplates, defaultCategory, trailingDescription
            case parentTemplates, geoTemplates
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            namespaces = try c.decodeIfPresent([Int].self, forKey: .namespaces) ?? [0]
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
            try decodeListingConventions(c)
            try decodePageConventions(c)
        }

        private mutating func decodeListingConventions(_ c: KeyedDecodingContainer<CodingKeys>) throws {
            for (name, category) in try c.decodeIfPresent([String: String?].self, forKey: .listingTemplates) ?? [:] {
                listings.templates[WikiName.key(name)] = category
            }
            let fields = Set(ListingConventions.fields + ["type"])
            for (name, field) in try c.decodeIfPresent([String: String].self, forKey: .parameters) ?? [:] {
                guard fields.contains(field) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.parameters, AnyKey(stringValue: name)],
                                                            debugDescription: "\"\(field)\" is not a listing field; fields: \(ListingConventions.fields.joined(separator: ", ")), type"))
                }
                listings.parameters[WikiName.key(name)] = field
            }
            for (name, category) in try c.decodeIfPresent([String: String].self, forKey: .types) ?? [:] {
                listings.types[TextFolding.fold(name)] = category
            }
            for (heading, category) in try c.decodeIfPresent([String: String].self, forKey: .sections) ?? [:] {
                listings.sections[TextFolding.fold(heading)] = category
            }
            for (name, format) in try c.decodeIfPresent([String: String].self, forKey: .inlineTemplates) ?? [:] {
                listings.inlineTemplates[WikiName.key(name)] = format
            }
            for name in try c.decodeIfPresent([String].self, forKey: .ignoreTemplates) ?? [] {
                listings.ignoredTemplates.insert(WikiName.key(name))
            }
            if c.contains(.defaultCategory) {
                listings.defaultCategory = try c.decodeNil(forKey: .defaultCategory) ? nil : c.decode(String.self, forKey: .defaultCategory)
            }
            listings.trailingDescription = try c.decodeIfPresent(Bool.self, forKey: .trailingDescription) ?? true
        }

        private mutating func decodePageConventions(_ c: KeyedDecodingContainer<CodingKeys>) throws {
            for name in try c.decodeIfPresent([String].self, forKey: .parentTemplates) ?? [] {
                pages.parentTemplates.insert(WikiName.key(name))
            }
            for (name, parameters) in try c.decodeIfPresent([String: [String]].self, forKey: .geoTemplates) ?? [:] {
                guard parameters.count == 2 else {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.geoTemplates, AnyKey(stringValue: name)],
                                                            debugDescription: "give the two parameters holding latitude and longitude, e.g. [\"lat\", \"long\"] or [\"1\", \"2\"]"))
                }
                pages.geoTemplates[WikiName.key(name)] = (parameters[0], parameters[1])
            }
        }
    }

    /// The kinds of record, in the order `kinds` lists them.
    public static let pageKind = RecordKind("page", fields: ["pageid", "title", "namespace", "parent", "lat", "long", "timestamp"])
    public static let sectionKind = RecordKind("section", fields: ["pageid", "page", "number", "level", "title", "parent"])
    public static let listingKind = RecordKind("listing", fields: [
        "pageid", "page", "section", "id", "ordinal", "position", "template", "type", "category",
    ] + ListingConventions.fields + ["pagelistings", "pageplaced", "pagecenterlat", "pagecenterlong"])
    public static let aliasKind = RecordKind("alias", fields: ["pageid", "title", "namespace", "target"])

    public let kinds = [MediaWikiReader.pageKind, MediaWikiReader.sectionKind, MediaWikiReader.listingKind, MediaWikiReader.aliasKind]
    private let options: Options
    private let extractor: ListingExtractor
    private let titleAttribute: XPathExpression
    private let keyAttribute: XPathExpression
    /// The kinds a manifest maps; the others are not computed.
    private var wanted: Set<String>

    /// Builds the reader.
    /// - Throws: `EncodingError` for an unknown `encoding`.
    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        extractor = try ListingExtractor(conventions: options.listings)
        titleAttribute = try XPathExpression("@title")
        keyAttribute = try XPathExpression("@key")
        wanted = Set(kinds.map(\.name))
    }

    public func restricted(to kinds: Set<String>) -> RecordReader {
        var copy = self
        copy.wanted = kinds
        return copy
    }

    /// Streams the pages of `input` once, emitting the records of the wanted kinds; findings go to `log`.
    /// - Throws: `KilnError.io` when the file cannot be opened; whatever `emit` throws.
    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: options.encoding, log: log)
        let reader = try XMLStreamReader(path: input.url.path, encoding: options.encoding)
        var state = FileState()
        var page: MediaWikiPage?
        var revisionDepth: Int?
        while let event = reader.next() {
            switch event {
            case .start("namespace", _, _) where page == nil:
                if let element = reader.expand(), let key = element.string(keyAttribute).flatMap({ Int($0) }), !element.text.isEmpty {
                    state.namespacePrefixes[element.text] = key
                }
            case .start("page", _, let depth):
                page = MediaWikiPage(depth: depth)
                revisionDepth = nil
            case .start("revision", _, let depth) where page != nil:
                revisionDepth = depth
            case .end("revision", _, _):
                revisionDepth = nil
            case .start(let name, _, let depth) where page != nil:
                read(name, depth: depth, revisionDepth: revisionDepth, into: &page!, reader: reader, state: state)
            case .end("page", _, _):
                if let finished = page { try process(finished, input: input, state: &state, log: log, emit: emit) }
                page = nil
            default:
                break
            }
        }
        report(state, in: input, log: log)
        report(reader.issues, in: input, log: log)
    }

    /// Takes one child element of a page or of its revision.
    private func read(_ name: String, depth: Int, revisionDepth: Int?, into page: inout MediaWikiPage, reader: XMLStreamReader,
                      state: FileState) {
        if let revisionDepth {
            guard depth == revisionDepth + 1 else { return }
            switch name {
            case "timestamp": page.timestamp = reader.text()
            case "text" where wantsText(page, state: state):
                guard let element = reader.expand() else { return }
                page.text = element.text
                page.textLine = element.line
            default: break
            }
            return
        }
        guard depth == page.depth + 1 else { return }
        switch name {
        case "title":
            guard let element = reader.expand() else { return }
            page.title = element.text
            page.line = element.line
        case "ns": page.namespace = Int(reader.text().trimmingSpaces)
        case "id": page.id = reader.text().trimmingSpaces
        case "redirect": page.redirect = reader.expand()?.string(titleAttribute).map(WikiName.title)
        default: break
        }
    }

    /// True when the page's text is needed: the page is in a namespace read, and for aliases only when no
    /// `<redirect>` element already said where it leads.
    private func wantsText(_ page: MediaWikiPage, state: FileState) -> Bool {
        guard options.namespaces.contains(state.namespace(of: page)) else { return false }
        return wanted != ["alias"] || page.redirect == nil
    }

    private func process(_ page: MediaWikiPage, input: InputFile, state: inout FileState, log: DiagnosticLog,
                         emit: (Record) throws -> Void) throws {
        guard let title = page.title, options.namespaces.contains(state.namespace(of: page)) else { return }
        let namespace = String(state.namespace(of: page))
        let target = page.redirect ?? page.text.flatMap(RedirectLine.target(in:))
        var findings: [WikiFinding] = []
        defer {
            for finding in findings.enumerated().sorted(by: { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }).map(\.element) {
                log.report(finding.code, finding.severity, "\(title): \(finding.message)", at: input.at(page.textLine + finding.line - 1))
            }
        }
        if let target {
            guard wanted.contains("alias") else { return }
            var alias = Record(MediaWikiReader.aliasKind, line: page.line)
            alias["pageid"] = page.id
            alias["title"] = title
            alias["namespace"] = namespace
            alias["target"] = target
            try emit(alias)
            return
        }
        guard wanted.contains("page") || wanted.contains("section") || wanted.contains("listing") else { return }
        let scanned = WikiPageScanner.scan(page.text ?? "", readTags: wanted.contains("listing"))
        if wanted.contains("page") {
            let facts = PageFacts(scanned, conventions: options.pages, findings: &findings)
            var record = Record(MediaWikiReader.pageKind, line: page.line)
            record["pageid"] = page.id
            record["title"] = title
            record["namespace"] = namespace
            record["parent"] = facts.parent
            record["lat"] = facts.latitude
            record["long"] = facts.longitude
            record["timestamp"] = page.timestamp
            try emit(record)
        }
        if wanted.contains("section") {
            for section in scanned.outline.sections {
                var record = Record(MediaWikiReader.sectionKind, line: section.number == 0 ? page.line : page.textLine + section.line - 1)
                record["pageid"] = page.id
                record["page"] = title
                record["number"] = String(section.number)
                record["level"] = String(section.level)
                record["title"] = section.title
                record["parent"] = section.parent.map(String.init)
                try emit(record)
            }
        }
        guard wanted.contains("listing") else { return }
        for unclosed in scanned.unclosedTemplates {
            findings.append(WikiFinding(code: .wikitextTemplate, severity: .warning,
                                        message: "{{\(excerpt(unclosed.name, limit: 40))… is never closed with }}: MediaWiki shows it as text, so it is not read",
                                        line: unclosed.line))
        }
        let listings = extractor.listings(in: scanned, title: title, findings: &findings)
        let summary = ListingSummary(listings)
        for (position, listing) in listings.enumerated() {
            for name in listing.unknownTemplates { state.noteUnknown(name, page: title, listing: listing, line: page.textLine + listing.line - 1) }
            var record = Record(MediaWikiReader.listingKind, line: page.textLine + listing.line - 1)
            record["pageid"] = page.id
            record["page"] = title
            record["section"] = String(listing.section)
            record["id"] = String(listing.id)
            record["ordinal"] = String(listing.ordinal)
            record["position"] = String(position + 1)
            record["template"] = listing.template
            record["type"] = listing.type
            record["category"] = listing.category
            for field in ListingConventions.fields { record[field] = listing.fields[field] }
            record["pagelistings"] = String(summary.count)
            record["pageplaced"] = String(summary.placed)
            record["pagecenterlat"] = summary.medianLatitude
            record["pagecenterlong"] = summary.medianLongitude
            try emit(record)
        }
    }

    /// One `wikitext.unknown-template` finding per template name: how often it was left out of listing values.
    private func report(_ state: FileState, in input: InputFile, log: DiagnosticLog) {
        for (name, use) in state.unknownTemplates.sorted(by: { ($0.value.line, $0.key) < ($1.value.line, $1.key) }) {
            log.report(.wikitextUnknownTemplate, .info,
                       "template {{\(name)}} is not known: left out of listing values \(use.count == 1 ? "once" : "\(use.count) times") (first in \(use.page), \(use.listing)); declare it in inlineTemplates or ignoreTemplates",
                       at: input.at(use.line))
        }
    }

    private func report(_ issues: [XMLIssue], in input: InputFile, log: DiagnosticLog) {
        XMLIssueReport.report(issues, in: input, log: log)
    }
}

/// One `<page>` of an export as it is read.
private struct MediaWikiPage {
    var depth: Int
    var line = 0
    var title: String?
    var namespace: Int?
    var id: String?
    var redirect: String?
    var timestamp: String?
    var text: String?
    var textLine = 0
}

/// What a reader keeps while it reads one file.
private struct FileState {
    /// Namespace names from `<siteinfo>`, for old exports whose pages have no `<ns>`.
    var namespacePrefixes: [String: Int] = [:]
    /// Templates left out of listing values: how often, and where first.
    var unknownTemplates: [String: (count: Int, line: Int, page: String, listing: String)] = [:]

    func namespace(of page: MediaWikiPage) -> Int {
        if let namespace = page.namespace { return namespace }
        guard let title = page.title, let colon = title.firstIndex(of: ":") else { return 0 }
        return namespacePrefixes[String(title[..<colon])] ?? 0
    }

    mutating func noteUnknown(_ name: String, page: String, listing: WikiListing, line: Int) {
        if var use = unknownTemplates[name] {
            use.count += 1
            unknownTemplates[name] = use
        } else {
            unknownTemplates[name] = (1, line, page, listing.label)
        }
    }
}

/// `#REDIRECT [[Target]]` (any language's magic word: `#WEITERLEITUNG`, `#REDIRECTION`) at the start of a page.
enum RedirectLine {
    /// The target's title, or `nil` when the text does not start with a redirect.
    static func target(in text: String) -> String? {
        let head = text.prefix(300).drop { $0.isWhitespace }
        guard head.first == "#", let open = head.range(of: "[["), let close = head[open.upperBound...].range(of: "]]") else { return nil }
        let word = head[head.index(after: head.startIndex)..<open.lowerBound].trimmingCharacters(in: .whitespaces)
        guard !word.isEmpty, word.dropLast(word.hasSuffix(":") ? 1 : 0).allSatisfy({ $0.isLetter }) else { return nil }
        let target = head[open.upperBound..<close.lowerBound].split(separator: "|", maxSplits: 1).first.map(String.init) ?? ""
        let title = WikiName.title(target.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "")
        return title.isEmpty ? nil : title
    }
}
