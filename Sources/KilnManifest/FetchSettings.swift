import Foundation
import KilnC
import KilnCore

/// How `kiln fetch` behaves towards every site (the manifest's top-level `fetch`): who it says it is, how politely it
/// asks, and what it accepts. A source's own `fetch` may override the limits (`SourceFetch`), not the politeness.
public struct FetchSettings: Sendable, Equatable {
    /// The `User-Agent` sent with every request: who is asking, and how to reach them.
    public var userAgent = FetchSettings.defaultUserAgent
    /// The least time between the starts of two requests to one host, in seconds (robots.txt's `Crawl-delay` may
    /// ask for more).
    public var delay = 1.0
    /// The requests in flight to one host at once.
    public var concurrency = 2
    /// How many times a request that timed out, was reset or got a 5xx (or a 429) is tried again.
    public var retries = 3
    /// A request's time limit, in seconds.
    public var timeout = 30.0
    /// The largest body accepted, as transferred and once decoded.
    public var maxBytes = ByteSize(bytes: 50_000_000)
    /// Whether robots.txt is obeyed (`"obey"`, the default) or not (`"ignore"`, with a `reason`).
    public var robots = RobotsChoice.obey
    /// Why robots.txt is ignored (required with `robots: "ignore"`); recorded with the captures.
    public var reason: String?
    /// The longest `Retry-After` waited for, in seconds; a server asking for longer fails the URL.
    public var maxRetryAfter = 300.0
    /// The most redirects followed for one URL.
    public var maxRedirects = 5
    /// A new body smaller than this share of the saved copy's size is refused as a page that lost most of itself
    /// (0 turns the check off).
    public var minSizeShare = 0.5

    /// What Kiln sends when the manifest names no `userAgent`.
    public static let defaultUserAgent = "kiln/\(KilnVersion.current)"

    public init() {}
}

/// Whether `kiln fetch` obeys robots.txt.
public enum RobotsChoice: String, Sendable, Equatable, Decodable, CaseIterable {
    case obey, ignore
}

/// Where a source's files come from (a source's `fetch`): one URL saved as the file `path` names, or several saved in
/// the folder of `path`, each under a file name made from its URL (`FetchFileName`) — listed, or derived from data
/// already fetched — and the limits that override the manifest's `fetch` for this source.
public struct SourceFetch: Sendable, Equatable {
    /// The URLs, in the manifest's order (none for derived URLs).
    public var urls: [String]
    /// True when the source named one `url`: it is saved as the file `path` names.
    public var single: Bool
    /// How the source's URLs are derived from another source's fetched files (`template` with `from`, or `links`);
    /// `nil` for listed URLs.
    public var derived: DerivedURLs? = nil
    /// Overrides of the manifest's settings for this source's requests (`nil`: the manifest's).
    public var retries: Int?
    public var timeout: Double?
    public var maxBytes: ByteSize?
    public var minSizeShare: Double?
    /// The media types a response may have (`text/html`, `application/xml`, …; `*` after a slash matches any subtype);
    /// `nil`: those that fit the source's format (`ReaderRegistry.acceptedMediaTypes(for:)`).
    public var contentTypes: [String]?
    /// For a large download (`url` only): the checksum file its publisher puts beside it. The download resumes with
    /// `Range` after a broken transfer and replaces the saved file only once its digest matches.
    public var checksum: PublishedChecksum?

    /// The settings for this source's requests: the manifest's, with this source's overrides.
    public func settings(_ defaults: FetchSettings) -> FetchSettings {
        var settings = defaults
        if let retries { settings.retries = retries }
        if let timeout { settings.timeout = timeout }
        if let maxBytes { settings.maxBytes = maxBytes }
        if let minSizeShare { settings.minSizeShare = minSizeShare }
        return settings
    }
}

/// The media types a response may have, by family of format; each reader declares its family
/// (`ConfigurableReader.acceptedMediaTypes`), and a source that names no `contentTypes` accepts its reader's.
public enum MediaTypes {
    /// Markup (XML, KML, HTML, a MediaWiki dump): a server that says `text/html` for an XML file is wrong, but
    /// common, so markup formats accept both.
    public static let markup = ["text/html", "application/xhtml+xml", "text/xml", "application/xml", "application/*+xml", "application/vnd.google-earth.kml+xml", "text/plain", "application/octet-stream", "application/x-gzip", "application/gzip", "application/x-bzip2", "application/x-xz", "application/zstd"]
    /// JSON documents.
    public static let json = ["application/json", "application/*+json", "text/json", "text/plain", "application/octet-stream", "application/gzip", "application/x-gzip"]
    /// iCalendar files.
    public static let calendar = ["text/calendar", "text/plain", "application/octet-stream"]
    /// Line-based text (delimited, extracted, wikitext).
    public static let text = ["text/*", "application/csv", "application/octet-stream", "application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz", "application/zstd"]
    /// Anything (images, SQLite files, a format Kiln does not know).
    public static let any = ["*/*"]
}

extension FetchSettings {
    /// Whether `contentType` (a `Content-Type` header, parameters included; `nil` when the server sent none) is one of
    /// `accepted`.
    public static func accepts(_ contentType: String?, _ accepted: [String]) -> Bool {
        guard let contentType else { return true }
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if type.isEmpty { return true }
        return accepted.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern == "*/*" || pattern == type { return true }
            if pattern.hasSuffix("/*") { return type.hasPrefix(String(pattern.dropLast())) }
            if let star = pattern.range(of: "/*+") {
                // application/*+xml: any application subtype with the +xml suffix.
                return type.hasPrefix(pattern[..<star.lowerBound] + "/") && type.hasSuffix(String(pattern[pattern.index(star.upperBound, offsetBy: -1)...]))
            }
            return false
        }
    }
}

extension FetchSettings: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case userAgent, delay, concurrency, retries, timeout, maxBytes, robots, reason, maxRetryAfter, maxRedirects, minSizeShare
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        if let agent = try c.decodeIfPresent(String.self, forKey: .userAgent) {
            guard !agent.trimmingCharacters(in: .whitespaces).isEmpty, !agent.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.userAgent],
                                                        debugDescription: "expected a User-Agent on one line, such as \"MyApp-data/1 (+mailto:data@example.org)\""))
            }
            userAgent = agent
        }
        delay = try c.seconds(.delay, allowingZero: true) ?? delay
        timeout = try c.seconds(.timeout, allowingZero: false) ?? timeout
        maxRetryAfter = try c.seconds(.maxRetryAfter, allowingZero: true) ?? maxRetryAfter
        concurrency = try c.count(.concurrency, least: 1) ?? concurrency
        retries = try c.count(.retries, least: 0) ?? retries
        maxRedirects = try c.count(.maxRedirects, least: 0) ?? maxRedirects
        maxBytes = try c.decodeIfPresent(ByteSize.self, forKey: .maxBytes) ?? maxBytes
        minSizeShare = try c.share(.minSizeShare) ?? minSizeShare
        robots = try c.decodeIfPresent(RobotsChoice.self, forKey: .robots) ?? .obey
        reason = try c.decodeIfPresent(String.self, forKey: .reason)
        if robots == .ignore, (reason ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.robots],
                                                    debugDescription: "robots: \"ignore\" needs a reason (fetch.reason), which is recorded with the captures, e.g. \"the site's owner allowed it by mail of 2026-01-05\""))
        }
    }
}

extension SourceFetch: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case url, urls, template, from, links, sitemap, retries, timeout, maxBytes, minSizeShare, contentTypes, checksum }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let one = try c.decodeIfPresent(String.self, forKey: .url)
        let many = try c.decodeIfPresent([String].self, forKey: .urls)
        let given = [CodingKeys.url, .urls, .template, .links, .sitemap].filter { c.contains($0) }
        if given.count > 1 {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [given[1]], debugDescription: "give one of url, urls, template (with from), links or sitemap, not \(given.map(\.rawValue).joined(separator: " and "))"))
        }
        if let text = try c.decodeIfPresent(String.self, forKey: .template) {
            guard let from = try c.decodeIfPresent(String.self, forKey: .from) else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.template], debugDescription: "a template needs from: the source whose records fill its {field} placeholders"))
            }
            do {
                derived = .template(try URLTemplate(text), from: from)
            } catch let problem as ValueProblem {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.template], debugDescription: problem.message))
            }
        } else if c.contains(.from) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.from], debugDescription: "from goes with template (links name their own from)"))
        }
        if let links = try c.decodeIfPresent(LinkSelection.self, forKey: .links) { derived = .links(links) }
        if let sitemap = try c.decodeIfPresent(SitemapSelection.self, forKey: .sitemap) { derived = .sitemap(sitemap) }
        switch (one, many) {
        case (nil, nil) where derived != nil:
            urls = []
            single = false
        case (let url?, nil):
            urls = [url]
            single = true
        case (nil, let list?):
            guard !list.isEmpty else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.urls], debugDescription: "expected at least one URL"))
            }
            urls = list
            single = false
        case (nil, nil):
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "a source's fetch needs url (saved as the file path names), urls (saved in the folder of path), or URLs derived from data: template with from, links, or sitemap"))
        case (_?, _?):
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.urls], debugDescription: "give url or urls, not both"))
        }
        for (index, url) in urls.enumerated() {
            if let problem = FetchURL.problem(url) {
                let key: [CodingKey] = single ? [CodingKeys.url] : [CodingKeys.urls, AnyKey(intValue: index)]
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + key, debugDescription: problem))
            }
        }
        if !single, let repeated = Dictionary(grouping: urls, by: { $0 }).filter({ $0.value.count > 1 }).keys.sorted().first {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.urls], debugDescription: "\"\(repeated)\" is listed twice"))
        }
        retries = try c.count(.retries, least: 0)
        timeout = try c.seconds(.timeout, allowingZero: false)
        maxBytes = try c.decodeIfPresent(ByteSize.self, forKey: .maxBytes)
        minSizeShare = try c.share(.minSizeShare)
        contentTypes = try c.decodeIfPresent([String].self, forKey: .contentTypes)
        checksum = try c.decodeIfPresent(PublishedChecksum.self, forKey: .checksum)
        if checksum != nil, !single {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.checksum], debugDescription: "a checksum goes with one url (a dump), not with urls, a template, links or a sitemap"))
        }
    }
}

/// A checksum file published beside a download (`{ url: "https://…/sha1sums.txt", algorithm: "sha1" }`): lines of
/// `DIGEST  FILENAME`, as `sha1sum` writes them; the line whose file name is the download's last path segment (or the
/// only line) is its digest.
public struct PublishedChecksum: Sendable, Equatable, Decodable {
    /// Where the checksum file is.
    public var url: String
    /// The digest it lists.
    package var algorithm: ChecksumAlgorithm

    package enum CodingKeys: String, CodingKey, CaseIterable { case url, algorithm }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        if let problem = FetchURL.problem(url) {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.url], debugDescription: problem))
        }
        algorithm = try c.decode(ChecksumAlgorithm.self, forKey: .algorithm)
    }

    /// The digest `text` (a checksum file) lists for the file named `name`, in lower case; `nil` when it lists none.
    public func digest(in text: String, for name: String) -> String? {
        var entries: [(digest: String, file: String)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = parts.first, first.count == algorithm.hexLength, first.allSatisfy(\.isHexDigit) else { continue }
            // `sha1sum` marks a binary file's name with `*`.
            let file = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces).drop { $0 == "*" } : ""
            entries.append((first.lowercased(), String(file)))
        }
        if let entry = entries.first(where: { $0.file == name || $0.file.hasSuffix("/" + name) }) { return entry.digest }
        return entries.count == 1 ? entries[0].digest : nil
    }
}

/// The URLs `kiln fetch` accepts: absolute `http` or `https` URLs with a host, without user information.
public enum FetchURL {
    /// What is wrong with `text` as a URL to fetch, or `nil` when nothing is.
    public static func problem(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return "expected an absolute http or https URL, found \"\(text)\""
        }
        guard scheme == "http" || scheme == "https" else {
            return "\"\(text)\" is a \(scheme) URL; kiln fetch speaks http and https only"
        }
        guard let host = components.host, !host.isEmpty else { return "\"\(text)\" names no host" }
        guard components.user == nil, components.password == nil else {
            return "\"\(text)\" carries a user name or password; credentials do not belong in a manifest"
        }
        return nil
    }

    /// The scheme, host and port of `url` (`https://example.org:8443`), the unit robots.txt, the delay and the
    /// concurrency apply to; `nil` for a URL `problem` refuses.
    public static func origin(_ url: String) -> String? {
        guard problem(url) == nil, let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased() else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }
}

private extension KeyedDecodingContainer where Key: CaseIterable {
    func seconds(_ key: Key, allowingZero: Bool) throws -> Double? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard value.isFinite, allowingZero ? value >= 0 : value > 0, value <= 86_400 else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key],
                                                    debugDescription: "expected a number of seconds \(allowingZero ? "from 0" : "above 0") up to 86400, found \(value)"))
        }
        return value
    }

    func count(_ key: Key, least: Int) throws -> Int? {
        guard contains(key) else { return nil }
        let value = try decodeWholeNumber(forKey: key)
        guard value >= least, value <= 1000 else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "expected a whole number from \(least) to 1000, found \(value)"))
        }
        return value
    }

    func share(_ key: Key) throws -> Double? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard text.hasSuffix("%"), let percent = Double(text.dropLast().trimmingCharacters(in: .whitespaces)), percent >= 0, percent <= 100 else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "expected a share from \"0%\" (no check) to \"100%\", found \"\(text)\""))
        }
        return percent / 100
    }
}
