import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads a site's information pages, one `page` record per HTML file: its slug (the file name without extension),
/// title, the sanitized HTML an app's web view shows offline (`HTMLSanitizer`), and its plain text for full-text
/// search. In the same pass it emits a `link` record per link (internal links become `page:SLUG`, so rules can check
/// that the target is in the bundle) and an `image` record per image (to check against the shipped assets).
public struct WebPageReader: ConfigurableReader {
    public static let format = "webpage"
    public static let acceptedMediaTypes = MediaTypes.markup

    /// The options a manifest gives a `webpage` source.
    public struct Options: Decodable, Sendable {
        /// The page's content element (default: the body); navigation and footers of the site template stay out.
        package var content: NodeSelector = .xpath("//body")
        /// The title (default: the content's first `h1`, else the document's `<title>`).
        package var title: NodeSelector?
        /// Hosts whose links are links to the site's own pages.
        package var siteHosts: [String] = []
        package var encoding: String?

        package enum CodingKeys: String, CodingKey, CaseIterable { case content, title, siteHosts, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            content = try c.decodeIfPresent(NodeSelector.self, forKey: .content) ?? .xpath("//body")
            title = try c.decodeIfPresent(NodeSelector.self, forKey: .title)
            siteHosts = try c.decodeIfPresent([String].self, forKey: .siteHosts) ?? []
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
        }
    }

    public static let pageKind = RecordKind("page", fields: ["slug", "title", "html", "text", "file"])
    public static let linkKind = RecordKind("link", fields: ["page", "href", "url", "kind", "target", "fragment"])
    public static let imageKind = RecordKind("image", fields: ["page", "src", "alt"])

    public let kinds = [WebPageReader.pageKind, WebPageReader.linkKind, WebPageReader.imageKind]
    private let options: Options
    private let content: XPathExpression
    private let title: XPathExpression
    private let fallbackTitle: XPathExpression
    private let declarations = EncodingMismatch.Declarations()
    private let pages = HTMLPages()

    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        content = try options.content.compile()
        let contentPath = try options.content.xpathText()
        title = try options.title?.compile() ?? XPathExpression("(\(contentPath)//h1)[1]")
        fallbackTitle = try XPathExpression("//title")
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        guard let document = try HTMLPage.open(input, encoding: options.encoding, maxPageBytes: HTMLReader.defaultMaxPageBytes,
                                           consequence: "the page is not shipped", declarations: declarations, pages: pages, log: log) else { return }
        let slug = input.nameStem.lowercased()
        guard let root = document.select(content).first else {
            log.report(.htmlNoContent, "the page has no content element (\(try options.content.xpathText())); it is not shipped", at: input.at(nil))
            return
        }
        let sanitizer = HTMLSanitizer(siteHosts: Set(options.siteHosts.map { $0.lowercased() }))
        let result = sanitizer.sanitize(root)
        for removal in result.removals {
            let code: DiagnosticCode = [.image, .unsupportedLink, .unresolvedLink].contains(removal.kind) ? .htmlContentRemoved : .htmlSanitized
            let what: String
            switch removal.kind {
            case .image: what = "an image that is not a shipped file (\(removal.detail)) removed"
            case .unsupportedLink: what = "a link the app cannot open offline (\(removal.detail)) removed; its text is kept"
            case .unresolvedLink: what = "a link whose page cannot be told from its address (\(removal.detail): a query without a title) removed; its text is kept"
            case .javascriptLink: what = "a javascript: link removed; its text is kept"
            case .emptyLink: what = "a link to \"#\" (a script's placeholder) removed; its text is kept"
            default: what = "\(removal.kind.rawValue) \(removal.detail) removed"
            }
            log.report(code, what, at: input.at(removal.line))
        }
        if !result.unwrapped.isEmpty {
            let list = result.unwrapped.keys.sorted().map { "\($0)×\(result.unwrapped[$0]!)" }.joined(separator: ", ")
            log.report(.htmlUnwrapped, "markup outside the shipped subset unwrapped, text kept: \(list)", at: input.at(nil))
        }
        let line: Int
        if case .element(_, _, let start, _) = root { line = start } else { line = 1 }
        var page = Record(WebPageReader.pageKind, line: line)
        page["slug"] = slug
        let text = MarkupText()
        page["title"] = (text.pageValue(title, in: document) ?? text.pageValue(fallbackTitle, in: document)).flatMap { $0.isEmpty ? nil : $0 }
        page["html"] = result.html
        page["text"] = result.text
        page["file"] = input.relativePath
        try emit(page)
        for link in result.links {
            var record = Record(WebPageReader.linkKind, line: link.line)
            record["page"] = slug
            record["href"] = link.href
            record["url"] = HTMLSanitizer.rewritten(link.target)
            switch link.target {
            case .page(let target, let fragment):
                record["kind"] = "page"
                record["target"] = target
                record["fragment"] = fragment
            case .external:
                record["kind"] = "external"
            case .fragment(let name):
                record["kind"] = "fragment"
                record["fragment"] = name
            }
            try emit(record)
        }
        for image in result.images {
            var record = Record(WebPageReader.imageKind, line: image.line)
            record["page"] = slug
            record["src"] = image.src
            record["alt"] = image.alt
            try emit(record)
        }
    }
}
