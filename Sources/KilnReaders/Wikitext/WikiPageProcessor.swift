import KilnC
import KilnCore
import KilnManifest

/// One page as a wikitext reader found it: from a MediaWiki export's `<page>`, or a bare wikitext file.
package struct WikiPageText: Sendable {
    package var title: String
    package var id: String?
    package var namespace: String
    package var timestamp: String?
    package var text: String
    /// The line the page's records point at (its `<title>`, or 1 in a bare file).
    package var line: Int
    /// The line of the file where the text's first line is.
    package var textLine: Int
    /// Where the page leads when the export says it is a redirect (`<redirect title=…>`).
    package var redirect: String?
}

/// Turns pages into the records of the wikitext readers: `page`, `section`, `listing` and `alias` (redirect pages),
/// computing only the kinds wanted. Shared by the `mediawiki` and `wikitext` readers.
/// Not `Sendable`: it holds compiled patterns.
package struct WikiPageProcessor {
    /// The kinds of record, in the order `kinds` lists them.
    package static let pageKind = RecordKind("page", fields: ["pageid", "title", "namespace", "parent", "lat", "long", "timestamp"])
    package static let sectionKind = RecordKind("section", fields: ["pageid", "page", "number", "level", "title", "parent"])
    package static let listingKind = RecordKind("listing", fields: [
        "pageid", "page", "section", "id", "ordinal", "position", "template", "type", "category",
    ] + ListingConventions.fields + ["pagelistings", "pageplaced", "pagecenterlat", "pagecenterlong"])
    package static let aliasKind = RecordKind("alias", fields: ["pageid", "title", "namespace", "target"])
    package static let kinds = [pageKind, sectionKind, listingKind, aliasKind]

    package let conventions: WikiConventionOptions
    private let extractor: ListingExtractor
    /// The kinds a manifest maps; the others are not computed.
    package var wanted = Set(WikiPageProcessor.kinds.map(\.name))

    /// - Throws: never in practice (the listing checks' patterns are fixed).
    package init(conventions: WikiConventionOptions) throws {
        self.conventions = conventions
        extractor = try ListingExtractor(conventions: conventions.listings)
    }

    /// True when the text of a page is needed: always, except when only aliases are wanted and the export already
    /// said where a redirect page leads.
    package func wantsText(redirect: String?) -> Bool {
        wanted != ["alias"] || redirect == nil
    }

    /// Emits the records of `page`; its findings go to `log` (placed by line in `input`), and the templates and
    /// parameters it left out to `tally`, reported once per file.
    package func process(_ page: WikiPageText, input: InputFile, tally: inout WikiFileTally, log: DiagnosticLog,
                 emit: (Record) throws -> Void) throws {
        try analyze(page, kept: log.tally.examplesPerCode).apply(input: input, tally: &tally, log: log, emit: emit)
    }

    /// What `page` gives, computed without the log or the file's tally, so that any thread may compute it
    /// (`WikiPagePool`); `kept` is the log's examples per code. Findings are grouped by code alone: the log's
    /// overrides give each code one severity, so grouping by code and severity keeps the same ones.
    package func analyze(_ page: WikiPageText, kept: Int) -> WikiPageOutcome {
        var outcome = WikiPageOutcome(title: page.title, textLine: page.textLine)
        var findings = WikiFindings(kept: kept)
        analyze(page, into: &outcome, findings: &findings)
        (outcome.findings, outcome.dropped) = findings.sorted()
        return outcome
    }

    private func analyze(_ page: WikiPageText, into outcome: inout WikiPageOutcome, findings: inout WikiFindings) {
        let title = page.title
        if let target = page.redirect ?? RedirectLine.target(in: page.text) {
            guard wanted.contains("alias") else { return }
            var alias = Record(WikiPageProcessor.aliasKind, line: page.line)
            alias["pageid"] = page.id
            alias["title"] = title
            alias["namespace"] = page.namespace
            alias["target"] = target
            outcome.records.append(alias)
            return
        }
        guard wanted.contains("page") || wanted.contains("section") || wanted.contains("listing") else { return }
        let scanned = WikiPageScanner.scan(page.text, readTags: wanted.contains("listing"))
        if wanted.contains("page") {
            let facts = PageFacts(scanned, conventions: conventions.pages, findings: &findings)
            var record = Record(WikiPageProcessor.pageKind, line: page.line)
            record["pageid"] = page.id
            record["title"] = title
            record["namespace"] = page.namespace
            record["parent"] = facts.parent
            record["lat"] = facts.latitude
            record["long"] = facts.longitude
            record["timestamp"] = page.timestamp
            outcome.records.append(record)
        }
        if wanted.contains("section") {
            for section in scanned.outline.sections {
                var record = Record(WikiPageProcessor.sectionKind, line: section.number == 0 ? page.line : page.textLine + section.line - 1)
                record["pageid"] = page.id
                record["page"] = title
                record["number"] = String(section.number)
                record["level"] = String(section.level)
                record["title"] = section.title
                record["parent"] = section.parent.map(String.init)
                outcome.records.append(record)
            }
        }
        guard wanted.contains("listing") else { return }
        for unclosed in scanned.unclosedTemplates {
            findings.append(WikiFinding(code: .wikitextTemplate,
                                        message: unclosed.tooDeep
                                            ? "{{\(excerpt(unclosed.name, limit: 40))… nests templates deeper than \(WikiTemplateParser.maximumDepth) levels "
                                                + "(MediaWiki's own limit, $wgMaxPPExpandDepth), so it is not read; the templates inside it are"
                                            : "{{\(excerpt(unclosed.name, limit: 40))… is never closed with }}: MediaWiki shows it as text, so it is not read",
                                        line: unclosed.line))
        }
        let listings = extractor.listings(in: scanned, title: title, findings: &findings)
        outcome.listings = listings.count
        outcome.listingLike = WikiFileTally.listingLikeCandidates(scanned, conventions: conventions.listings, line: page.textLine)
        let summary = ListingSummary(listings)
        for (position, listing) in listings.enumerated() {
            let line = page.textLine + listing.line - 1
            for name in listing.unknownTemplates { outcome.notes.append(.init(.templates, name, page: title, listing: listing.label, line: line)) }
            for name in listing.unknownParameters { outcome.notes.append(.init(.parameters, name, page: title, listing: listing.label, line: line)) }
            if let text = listing.untakenTrailingText {
                outcome.notes.append(.init(.trailing, "", page: title, listing: listing.label + ": \"" + excerpt(text, limit: 50) + "\"", line: line))
            }
            var record = Record(WikiPageProcessor.listingKind, line: line)
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
            outcome.records.append(record)
        }
    }
}

/// What one page gives, made by `WikiPageProcessor.analyze` on any thread and applied by the file's reading thread
/// in page order: its records, its findings as the log will keep them, and what it adds to the file's tally.
package struct WikiPageOutcome: Sendable {
    /// One use of a name left out, for the file's tally (`WikiFileTally`).
    package struct Note: Sendable {
        package enum Tally: Sendable { case templates, parameters, trailing }
        package var tally: Tally
        package var name: String
        package var page: String
        package var listing: String
        package var line: Int

        package init(_ tally: Tally, _ name: String, page: String, listing: String, line: Int) {
            (self.tally, self.name, self.page, self.listing, self.line) = (tally, name, page, listing, line)
        }
    }

    package var title: String
    package var textLine: Int
    package var records: [Record] = []
    /// The kept findings in line order, and per code and severity how many were left out (`WikiFindings.sorted`).
    package var findings: [WikiFinding] = []
    package var dropped: [(WikiFindings.Key, Int)] = []
    package var notes: [Note] = []
    /// Listings found, and the templates written like listings (`WikiFileTally.listingLikeCandidates`).
    package var listings = 0
    package var listingLike: [(name: String, line: Int)] = []

    /// Emits the records, then reports the findings to `log` (placed by line in `input`) and adds the rest to `tally`:
    /// what `WikiPageProcessor.process` did in one go.
    package func apply(input: InputFile, tally: inout WikiFileTally, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        tally.pagesRead += 1
        defer {
            for finding in findings {
                log.report(finding.code, "\(title): \(finding.message)", at: input.at(textLine + finding.line - 1))
            }
            // The log would store none of these (it keeps as many per code as were kept here): counted, as it counts.
            for (key, count) in dropped {
                let placeholder = Diagnostic(code: key.code, severity: key.severity, message: "", provenance: nil)
                for _ in 0..<count { log.report(placeholder) }
            }
        }
        tally.listings += listings
        tally.noteListingLike(listingLike)
        for note in notes {
            switch note.tally {
            case .templates: tally.templates.note(note.name, page: note.page, listing: note.listing, line: note.line)
            case .parameters: tally.parameters.note(note.name, page: note.page, listing: note.listing, line: note.line)
            case .trailing: tally.trailing.note(note.name, page: note.page, listing: note.listing, line: note.line)
            }
        }
        for record in records { try emit(record) }
    }
}

/// What was left out of a file's listings, reported once per name at the end of the file: templates inside values
/// that are not known (`wikitext.unknown-template`), and listing parameters that are no field
/// (`wikitext.unknown-parameter`, such as a misspelt `typr=go`).
package struct WikiFileTally {
    /// Uses of one name: how many, and the first (page, listing, line).
    package struct Uses {
        /// By name compared ignoring case; the name as first written is kept for the message.
        package var byKey: [String: (name: String, count: Int, line: Int, page: String, listing: String)] = [:]

        /// Uses of names beyond `WikiFileTally.namesLimit` distinct ones: counted, the first kept for the message.
        package var otherUses = 0
        package var firstOther: (name: String, line: Int, page: String, listing: String)?

        package mutating func note(_ name: String, page: String, listing: String, line: Int, limit: Int = WikiFileTally.namesLimit) {
            let key = name.lowercased()
            if var use = byKey[key] {
                use.count += 1
                byKey[key] = use
            } else if byKey.count < limit {
                byKey[key] = (name, 1, line, page, listing)
            } else {
                otherUses += 1
                if firstOther == nil { firstOther = (name, line, page, listing) }
            }
        }

        /// In the order of their first use.
        package var sorted: [(name: String, count: Int, line: Int, page: String, listing: String)] {
            byKey.sorted { ($0.value.line, $0.key) < ($1.value.line, $1.key) }.map(\.value)
        }
    }

    package var templates = Uses()
    package var parameters = Uses()
    /// Listings whose line goes on after them with text the conventions do not take as their description.
    package var trailing = Uses()
    /// Pages read (articles and redirects) and listings found in the file.
    package var pagesRead = 0
    package var listings = 0
    /// Top-level templates that are no listing template but are written like one (three named parameters or more),
    /// by name.
    package var listingLike = Uses()

    /// The most distinct names `listingLike` keeps, so that a dump without listings stays in bounded memory.
    package static let listingLikeLimit = 1000
    /// The most distinct unknown templates and parameters a file's tally keeps, each reported with its count; the uses
    /// of further names are counted together (a file of two million distinct names held them all).
    package static let namesLimit = 1000

    /// The page's top-level templates that are no listing template but are written like one (three named parameters
    /// or more), with their lines in the file, for `noteListingLike`.
    package static func listingLikeCandidates(_ page: WikiPage, conventions: ListingConventions, line: Int) -> [(name: String, line: Int)] {
        page.elements.compactMap { element in
            guard case .template(let template) = element.kind, conventions.templates[template.key] == nil,
                  template.arguments.filter({ $0.key != nil }).count >= 3 else { return nil }
            return (template.name, line + element.line - 1)
        }
    }

    package mutating func noteListingLike(_ candidates: [(name: String, line: Int)]) {
        for (name, line) in candidates
        where listingLike.byKey.count < WikiFileTally.listingLikeLimit || listingLike.byKey[name.lowercased()] != nil {
            listingLike.note(name, page: "", listing: "", line: line)
        }
    }

    /// Reports templates used at least twice that are written like listings but are none: as `source.empty` (a
    /// warning) when the file gave no listing at all, else as `wikitext.listing-like` (info). The manifest's
    /// `listingTemplates` probably miss the wiki's names; `ignoreTemplates` silences a template that is no listing.
    package func reportNoListings(in input: InputFile, log: DiagnosticLog, ignored: Set<String>) {
        guard pagesRead > 0 else { return }
        let repeated = listingLike.sorted.filter { $0.count >= 2 && !ignored.contains($0.name.lowercased()) }
        guard let first = repeated.max(by: { $0.count < $1.count }) else { return }
        let named = repeated.sorted { $0.count > $1.count }.prefix(4).map { "{{\($0.name)}} (\(times($0.count)))" }.joined(separator: ", ")
        let more = repeated.count > 4 ? " and \(repeated.count - 4) more" : ""
        let them = repeated.count == 1 ? "it" : "them"
        if listings == 0 {
            log.report(.sourceEmpty, "no listing in this file, but \(named)\(more) \(repeated.count == 1 ? "is" : "are") written like listings (named parameters): declare \(them) in listingTemplates, or in ignoreTemplates if \(repeated.count == 1 ? "it is" : "they are") no listing",
                       at: input.at(first.line))
        } else {
            log.report(.wikitextListingLike, "\(named)\(more) \(repeated.count == 1 ? "is" : "are") written like listings (named parameters) but \(repeated.count == 1 ? "is" : "are") no listing template: declare \(them) in listingTemplates, or in ignoreTemplates if \(repeated.count == 1 ? "it is" : "they are") no listing",
                       at: input.at(first.line))
        }
    }

    /// Reports what was left out, placed at each name's first use in `input`; with `listingsWanted`, a file whose
    /// listing-like templates gave no listing.
    package func report(in input: InputFile, log: DiagnosticLog, listingsWanted: Bool, ignoredTemplates: Set<String> = []) {
        if listingsWanted { reportNoListings(in: input, log: log, ignored: ignoredTemplates) }
        for use in templates.sorted {
            log.report(.wikitextUnknownTemplate, "template {{\(use.name)}} is not known: left out of listing values \(times(use.count)) (first in \(use.page), \(use.listing)); declare it in inlineTemplates or ignoreTemplates",
                       at: input.at(use.line))
        }
        if let use = trailing.sorted.first {
            log.report(.wikitextTrailingText, "the text after \(times(use.count, "listing")) on \(use.count == 1 ? "its line is" : "their lines is") not read as a description: under the source's conventions these templates hold theirs in content= (first in \(use.page), \(use.listing)); set the source's trailingDescription (or language) if this wiki writes them after the template",
                       at: input.at(use.line))
        }
        for use in parameters.sorted {
            log.report(.wikitextUnknownParameter, "listing parameter \(use.name)= is not a listing field: its value was left out \(times(use.count)) (first in \(use.page), \(use.listing)); map it in parameters or list it in ignoreParameters",
                       at: input.at(use.line))
        }
        for (uses, code, what) in [(templates, DiagnosticCode.wikitextUnknownTemplate, "templates"),
                                   (parameters, DiagnosticCode.wikitextUnknownParameter, "listing parameters")] {
            guard let first = uses.firstOther else { continue }
            let name = code == .wikitextUnknownTemplate ? "{{\(first.name)}}" : "\(first.name)="
            log.report(code,
                       "\(uses.otherUses) more uses of \(what) not known were left out of listing values, beyond the first \(WikiFileTally.namesLimit) names "
                           + "reported one by one (the first of the others: \(name) in \(first.page), \(first.listing))",
                       at: input.at(first.line))
        }
    }

    private func times(_ count: Int) -> String { count == 1 ? "once" : "\(count) times" }

    private func times(_ count: Int, _ noun: String) -> String { count == 1 ? "1 \(noun)" : "\(count) \(noun)s" }
}
