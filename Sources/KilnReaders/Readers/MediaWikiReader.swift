import KilnC
import KilnCore
import KilnManifest

/// Reads MediaWiki XML exports and dumps (`<mediawiki><page><title>…<ns>…<redirect/>…<revision><text>`) page by
/// page with libxml2's streaming reader, so a dump of any size is read once, in bounded memory. It emits four kinds of
/// record in that one pass: `page`, `section`, `listing`, and `alias` (what redirect pages make); a manifest maps the
/// kinds it wants (`into: {page: {table: …}, listing: {table: …}}`) and the work for the others is skipped.
/// Pages outside `namespaces` (default: articles, 0) are skipped;
/// redirect pages are only aliases. Each listing also carries its position on the page and what the page's listings
/// add up to (`ListingSummary`), so that per-page figures need no sort of every listing in SQL.
public struct MediaWikiReader: ConfigurableReader {
    public static let format = "mediawiki"
    public static let acceptedMediaTypes = MediaTypes.markup

    /// The options a manifest gives a `mediawiki` source: `namespaces`, `encoding`, and the conventions every
    /// wikitext reader shares (`WikiConventionOptions`).
    public struct Options: Decodable, Sendable {
        package var namespaces: [Int] = [0]
        package var encoding: String?
        package var conventions: WikiConventionOptions

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            conventions = try WikiConventionOptions(c, readerKeys: ["namespaces", "encoding"])
            namespaces = try c.decodeIfPresent([Int].self, forKey: AnyKey(stringValue: "namespaces")) ?? [0]
            encoding = try c.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "encoding"))
        }
    }

    /// The kinds of record, in the order `kinds` lists them (see `WikiPageProcessor`).
    public static let pageKind = WikiPageProcessor.pageKind
    public static let sectionKind = WikiPageProcessor.sectionKind
    public static let listingKind = WikiPageProcessor.listingKind
    public static let aliasKind = WikiPageProcessor.aliasKind

    public let kinds = WikiPageProcessor.kinds
    private let options: Options
    private var processor: WikiPageProcessor
    private let titleAttribute: XPathExpression
    private let keyAttribute: XPathExpression

    /// Builds the reader.
    /// - Throws: `EncodingError` for an unknown `encoding`.
    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        processor = try WikiPageProcessor(conventions: options.conventions)
        titleAttribute = try XPathExpression("@title")
        keyAttribute = try XPathExpression("@key")
    }

    public func restricted(to kinds: Set<String>) -> RecordReader {
        var copy = self
        copy.processor.wanted = kinds
        return copy
    }

    /// Streams the pages of `input` once, emitting the records of the wanted kinds; findings go to `log`.
    /// - Throws: `KilnError.io` when the file cannot be opened; whatever `emit` throws.
    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, as: .xml, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: options.encoding, log: log)
        let reader = try XMLStreamReader(source: input.bytes(log: log), path: input.url.path, encoding: options.encoding)
        var state = FileState()
        var page: MediaWikiPage?
        var revisionDepth: Int?
        let workers = input.threads.pageWorkerCount
        let pool = workers > 0 ? try WikiPagePool(like: processor, workers: workers, kept: log.tally.examplesPerCode) : nil
        defer { pool?.close() }
        while let event = reader.next() {
            switch event {
            case .start("namespace", _, _) where page == nil:
                if let element = reader.expand(), let key = element.string(keyAttribute).flatMap({ Int($0) }), !element.text.isEmpty {
                    state.namespacePrefixes[element.text] = key
                }
            case .start("page", _, let depth):
                state.pagesSeen += 1
                page = MediaWikiPage(depth: depth)
                revisionDepth = nil
            case .start("revision", _, let depth) where page != nil:
                revisionDepth = depth
            case .end("revision", _, _):
                revisionDepth = nil
            case .start(let name, _, let depth) where page != nil:
                read(name, depth: depth, revisionDepth: revisionDepth, into: &page!, reader: reader, state: state)
            case .end("page", _, _):
                if let finished = page { try process(finished, input: input, pool: pool, state: &state, log: log, emit: emit) }
                page = nil
            default:
                break
            }
        }
        try pool?.drain { try $0.apply(input: input, tally: &state.tally, log: log, emit: emit) }
        if state.tally.pagesRead == 0, reader.issues.isEmpty {
            let namespaces = options.namespaces.map(String.init).joined(separator: ", ")
            log.report(.sourceEmpty, "no page of namespace \(namespaces) in this file (\(state.pagesSeen) <page> element\(state.pagesSeen == 1 ? "" : "s") in all): nothing is read from it; check the source's path and its namespaces option",
                       at: input.at(nil))
        }
        state.tally.report(in: input, log: log, listingsWanted: processor.wanted.contains("listing"),
                           ignoredTemplates: processor.conventions.listings.ignoredTemplates)
        XMLIssueReport.report(reader.issues, in: input, log: log)
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
        return processor.wantsText(redirect: page.redirect)
    }

    /// Processes one finished page: on the pool's workers when there is a pool (outcomes are applied in page order
    /// as they come), else here.
    private func process(_ page: MediaWikiPage, input: InputFile, pool: WikiPagePool?, state: inout FileState, log: DiagnosticLog,
                         emit: (Record) throws -> Void) throws {
        guard let title = page.title, options.namespaces.contains(state.namespace(of: page)) else { return }
        let text = WikiPageText(title: title, id: page.id, namespace: String(state.namespace(of: page)), timestamp: page.timestamp,
                                text: page.text ?? "", line: page.line, textLine: page.textLine, redirect: page.redirect)
        guard let pool else { return try processor.process(text, input: input, tally: &state.tally, log: log, emit: emit) }
        try pool.submit(text) { try $0.apply(input: input, tally: &state.tally, log: log, emit: emit) }
    }
}

/// One `<page>` of an export as it is read.
private struct MediaWikiPage {
    package var depth: Int
    package var line = 0
    package var title: String?
    package var namespace: Int?
    package var id: String?
    package var redirect: String?
    package var timestamp: String?
    package var text: String?
    package var textLine = 0
}

/// What a reader keeps while it reads one file.
private struct FileState {
    /// Namespace names from `<siteinfo>`, for old exports whose pages have no `<ns>`.
    package var namespacePrefixes: [String: Int] = [:]
    /// What the file's listings left out, and how many pages it read.
    package var tally = WikiFileTally()
    /// `<page>` elements, whatever their namespace.
    package var pagesSeen = 0

    package func namespace(of page: MediaWikiPage) -> Int {
        if let namespace = page.namespace { return namespace }
        guard let title = page.title, let colon = title.firstIndex(of: ":") else { return 0 }
        return namespacePrefixes[String(title[..<colon])] ?? 0
    }
}

/// `#REDIRECT [[Target]]` (any language's magic word: `#WEITERLEITUNG`, `#REDIRECTION`) at the start of a page.
package enum RedirectLine {
    /// The target's title, or `nil` when the text does not start with a redirect.
    package static func target(in text: String) -> String? {
        let head = text.prefix(300).drop { $0.isWhitespace }
        guard head.first == "#", let open = head.range(of: "[["), let close = head[open.upperBound...].range(of: "]]") else { return nil }
        let word = head[head.index(after: head.startIndex)..<open.lowerBound].trimmingCharacters(in: .whitespaces)
        guard !word.isEmpty, word.dropLast(word.hasSuffix(":") ? 1 : 0).allSatisfy({ $0.isLetter }) else { return nil }
        let target = head[open.upperBound..<close.lowerBound].split(separator: "|", maxSplits: 1).first.map(String.init) ?? ""
        let title = WikiName.title(target.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "")
        return title.isEmpty ? nil : title
    }
}
