import Foundation
import KilnC
import KilnCore

/// URLs a source does not list but derives from data already fetched (a source's `fetch` with `template` and `from`,
/// or with `links`): `kiln fetch` fetches the source it depends on first, reads that source's files, and makes this
/// source's URLs from what it finds.
public enum DerivedURLs: Sendable, Equatable {
    /// `{ template: "https://…/line-{id}.html", from: "lines" }`: one URL per record of source `from` (as its reader
    /// reads it, the records a build sees), each `{field}` replaced by that record's field, percent-encoded as an RFC
    /// 6570 simple expansion.
    case template(URLTemplate, from: String)
    /// `{ links: { from: "index", css: "a.timetable", allow: "…" } }`: the links of source `from`'s fetched pages.
    case links(LinkSelection)
    /// `{ sitemap: { url: "https://…/sitemap.xml", allow: "…" } }`: the locations a sitemap lists, its index followed.
    case sitemap(SitemapSelection)

    /// The source whose files the URLs come from; `nil` for a sitemap, which `kiln fetch` fetches itself.
    public var from: String? {
        switch self {
        case .template(_, let from): return from
        case .links(let links): return links.from
        case .sitemap: return nil
        }
    }

    /// True for `template` (with `from`), false for `links`.
    public var isTemplate: Bool {
        if case .template = self { return true }
        return false
    }

    /// How the derivation reads, for messages and `--dry-run` (`template https://…/{id}.html over the records of lines`).
    public var phrase: String {
        switch self {
        case .template(let template, let from): return "one URL per record of source \"\(from)\" by the template \(template.text)"
        case .links(let links): return "the links \(links.phrase) of source \"\(links.from)\"'s pages"
        case .sitemap(let sitemap): return "the locations \(sitemap.phrase)"
        }
    }
}

/// A URL template with `{field}` placeholders (RFC 6570, level 1): each is replaced by a field's value with every
/// character but the unreserved ones (letters, digits, `-._~`) percent-encoded as UTF-8.
public struct URLTemplate: Sendable, Equatable {
    /// The template as the manifest writes it.
    public let text: String
    /// The field each placeholder names, in order of appearance, each once.
    public let fields: [String]

    /// Parses `text`.
    /// - Throws: `ValueProblem` for a template without a placeholder, an unclosed or empty `{`, or one that would
    ///   not make an http(s) URL whatever the values.
    public init(_ text: String) throws {
        var fields: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw ValueProblem(message: "the template \"\(text)\" opens a { it does not close")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard !name.isEmpty, !name.contains("{") else {
                throw ValueProblem(message: "the template \"\(text)\" has an empty or nested placeholder; write {field}")
            }
            if !fields.contains(name) { fields.append(name) }
            rest = rest[rest.index(after: close)...]
        }
        guard !fields.isEmpty else {
            throw ValueProblem(message: "the template \"\(text)\" has no {field} placeholder: list one URL with url instead")
        }
        self.text = text
        self.fields = fields
        if let problem = FetchURL.problem(try expand { _ in "x" }) {
            throw ValueProblem(message: "the template \"\(text)\" does not make a URL to fetch: \(problem)")
        }
    }

    /// The URL for one record: each placeholder replaced by `value(field)`, percent-encoded.
    /// - Throws: `ValueProblem` naming the field `value` has no value for (`nil` or empty).
    public func expand(_ value: (String) -> String?) throws -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            guard let field = value(name), !field.isEmpty else { throw ValueProblem(message: "no value for {\(name)}") }
            result += field.addingPercentEncoding(withAllowedCharacters: URLTemplate.unreserved) ?? field
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// RFC 3986's unreserved characters, the only ones a simple expansion leaves as they are.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// Which links of a source's fetched pages become URLs (`links`): the elements a CSS selector or an XPath picks (their
/// `href`, else `src`; an XPath may pick attributes or text itself), resolved against the page's URL and its
/// `<base href>`, kept when they match `allow` and not `deny`, as Scrapy's LinkExtractor and wget's
/// `--accept-regex`/`--reject-regex` do. A page that is a sitemap (`<urlset>` or `<sitemapindex>`) gives its `<loc>`
/// URLs.
public struct LinkSelection: Sendable, Equatable, Decodable {
    /// The source whose fetched files hold the links.
    public var from: String
    /// The elements picked: CSS (`a.timetable`) or XPath (`//td[@class='lines']//a`); `nil` with neither: every
    /// `<a href>` and `<area href>` (a sitemap's every `<loc>`).
    public var css: String?
    public var xpath: String?
    /// A regular expression (PCRE2) each absolute link must match somewhere to be kept (`nil`: all kept).
    public var allow: String?
    /// A regular expression a kept link must not match.
    public var deny: String?

    package enum CodingKeys: String, CodingKey, CaseIterable { case from, css, xpath, allow, deny }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        from = try c.decode(String.self, forKey: .from)
        css = try c.decodeIfPresent(String.self, forKey: .css)
        xpath = try c.decodeIfPresent(String.self, forKey: .xpath)
        (allow, deny) = try urlPatterns(c, allow: .allow, deny: .deny)
        if css != nil, xpath != nil {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.xpath], debugDescription: "give css or xpath, not both"))
        }
    }

    /// `selected by css "a.timetable" matching "…"`, for messages.
    public var phrase: String {
        let selection = css.map { "selected by css \"\($0)\"" } ?? xpath.map { "selected by xpath \"\($0)\"" } ?? "(every <a href>)"
        return selection + patternPhrase(allow: allow, deny: deny)
    }
}

/// A sitemap to take URLs from (`sitemap`, sitemaps.org's protocol): `kiln fetch` fetches it (politely, conditionally,
/// with a capture of its own), follows a sitemap index to the sitemaps it lists (at most `maxDepth` levels, as
/// Scrapy's SitemapSpider does), and keeps each `<loc>` that matches `allow` and not `deny`.
public struct SitemapSelection: Sendable, Equatable, Decodable {
    /// The sitemap or sitemap index.
    public var url: String
    /// A regular expression (PCRE2) a location must match somewhere to be kept (`nil`: all kept).
    public var allow: String?
    /// A regular expression a kept location must not match.
    public var deny: String?

    /// How many levels of sitemaps are fetched: the sitemap, and sitemaps an index lists, and so on.
    public static let maxDepth = 3
    /// The most sitemaps one source fetches in all.
    public static let maxSitemaps = 1000

    package enum CodingKeys: String, CodingKey, CaseIterable { case url, allow, deny }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        if let problem = FetchURL.problem(url) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.url], debugDescription: problem))
        }
        (allow, deny) = try urlPatterns(c, allow: .allow, deny: .deny)
    }

    /// `in https://…/sitemap.xml matching "…"`, for messages.
    public var phrase: String {
        "in the sitemap \(url)" + patternPhrase(allow: allow, deny: deny)
    }
}

/// The `allow` and `deny` patterns of a `links` or `sitemap`, each checked to compile (PCRE2).
private func urlPatterns<Key: CodingKey>(_ c: KeyedDecodingContainer<Key>, allow: Key, deny: Key) throws -> (String?, String?) {
    let patterns = (try c.decodeIfPresent(String.self, forKey: allow), try c.decodeIfPresent(String.self, forKey: deny))
    for (key, pattern) in [(allow, patterns.0), (deny, patterns.1)] {
        guard let pattern else { continue }
        do { _ = try RegexPattern(pattern) } catch let error as RegexCompileError {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key], debugDescription: error.description))
        }
    }
    return patterns
}

/// ` matching "…" not matching "…"`, for messages.
private func patternPhrase(allow: String?, deny: String?) -> String {
    (allow.map { " matching \"\($0)\"" } ?? "") + (deny.map { " not matching \"\($0)\"" } ?? "")
}
