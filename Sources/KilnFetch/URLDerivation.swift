import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders
import KilnBuild

/// Makes a source's derived URLs (`DerivedURLs`) from the files of the source they derive from, as they are in the
/// pipeline folder: a template filled from that source's records, read by its own reader (the records a build sees),
/// or the links selected in its pages. What cannot become a URL is a finding, never left out silently.
enum URLDerivation {
    /// What a derivation found: the URLs (each once, in the order first found) and the findings about values or
    /// links that made no URL, or about finding none at all.
    struct Outcome: Sendable {
        var urls: [String] = []
        var problems: [Diagnostic] = []
        /// True when the source derived from has no file to read yet.
        var unread = false
    }

    /// Checks what can be checked before any file is read: a template's placeholders are fields of the source it
    /// reads, and a selector compiles.
    /// - Throws: `KilnError.manifest` naming the source and the key.
    static func check(_ derived: DerivedURLs, of source: String, manifest: Manifest) throws {
        func issue(_ key: String, _ message: String) -> KilnError {
            let index = manifest.sources.firstIndex { $0.name == source } ?? 0
            return .manifest(ManifestIssue(file: manifest.file.path, line: nil, keyPath: "sources[\(index)].fetch.\(key)", message: message))
        }
        switch derived {
        case .template(let template, let from):
            guard let spec = manifest.sources.first(where: { $0.name == from }) else { return }
            if let mismatch = template.mismatch(source: from, format: spec.format, reader: try makeReader(spec, manifest: manifest)) {
                throw issue("template", mismatch)
            }
        case .sitemap:
            return
        case .links(let links):
            do {
                _ = try selection(links)
            } catch let problem as ValueProblem {
                throw issue("links.css", problem.message)
            } catch let error as XPathError {
                throw issue("links.xpath", error.description)
            }
        }
    }

    /// The URLs `derived` makes from the files of its source in `directory` (the capture record gives each page's URL,
    /// against which relative links resolve).
    /// - Throws: `KilnError.io` when a file cannot be read.
    static func urls(_ derived: DerivedURLs, of source: String, manifest: Manifest, captures: CaptureRecord) throws -> Outcome {
        var outcome = Outcome()
        guard let from = derived.from, let spec = manifest.sources.first(where: { $0.name == from }) else { return outcome }
        let files: [InputFile]
        do {
            files = try InputResolver(directory: manifest.directory, allowedPaths: []).resolve(spec.path) { KilnError.io($0) }
        } catch let error as KilnError {
            outcome.unread = true
            outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "source \"\(source)\" derives its URLs from source \"\(from)\", which has no file to read (\(error.description))\(spec.fetch == nil ? "" : ": fetch it first"); no URL of \"\(source)\" is fetched", provenance: Provenance(file: spec.path)))
            return outcome
        }
        var seen = Set<String>()
        func add(_ url: String) {
            if seen.insert(url).inserted { outcome.urls.append(url) }
        }
        switch derived {
        case .template(let template, _):
            let reader = try makeReader(spec, manifest: manifest)
            guard let kind = template.kind(in: reader) else { return outcome }
            let positions = Dictionary(uniqueKeysWithValues: template.fields.map { ($0, kind.position(of: $0)!) })
            let log = DiagnosticLog()
            try Extraction.forEachItem(in: files.map(\.url), displayNames: files.map(\.relativePath), kind: kind.name, reader: reader, log: log) { item in
                do {
                    let url = try template.expand { field in positions[field].flatMap { $0 < item.values.count ? item.values[$0] : nil } }
                    if let problem = FetchURL.problem(url) {
                        outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "the record makes no URL to fetch for source \"\(source)\": \(problem)", provenance: Provenance(file: item.file, line: item.line)))
                    } else {
                        add(url)
                    }
                } catch let problem as ValueProblem {
                    outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "the record makes no URL for source \"\(source)\" by the template \(template.text): \(problem.message)", provenance: Provenance(file: item.file, line: item.line)))
                }
            }
            // A file the reader could not read whole derives fewer URLs than it should: said, not passed over.
            for finding in log.sorted where finding.severity == .error {
                var problem = finding
                problem.code = DiagnosticCode.fetchDerivation.rawValue
                problem.message = "reading source \"\(from)\" for the URLs of \"\(source)\": " + finding.message
                outcome.problems.append(problem)
            }
        case .sitemap:
            return outcome
        case .links(let links):
            let (selector, fields) = try selection(links)
            let allow = try links.allow.map { try RegexPattern($0) }
            let deny = try links.deny.map { try RegexPattern($0) }
            let byFile = captures.byFile
            for file in files {
                let page = byFile[file.relativePath].map { $0.finalURL ?? $0.url }
                for (line, link) in try self.links(in: file, selector: selector, fields: fields, page: page) {
                    let place = Provenance(file: file.relativePath, line: line, url: page)
                    guard let url = link.url else {
                        outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "\(link.text) makes no URL for source \"\(source)\"\(page == nil ? " (the file was not fetched, so relative links have nothing to resolve against)" : "")", provenance: place))
                        continue
                    }
                    guard try allow?.matches(url) ?? true, try !(deny?.matches(url) ?? false) else { continue }
                    if let problem = FetchURL.problem(url) {
                        outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "a link selected for source \"\(source)\" is no URL to fetch: \(problem)", provenance: place))
                    } else {
                        add(url)
                    }
                }
            }
        }
        if outcome.urls.isEmpty {
            outcome.problems.append(Diagnostic(code: .fetchDerivation, message: "source \"\(source)\" derives no URL from the \(files.count) file\(files.count == 1 ? "" : "s") of source \"\(from)\" (\(derived.phrase)): has the site's layout changed? The earlier files of \"\(source)\" are kept", provenance: Provenance(file: files.first?.relativePath ?? spec.path)))
        }
        return outcome
    }

    /// What one fetched sitemap lists (`file`, relative to `directory`, fetched from `page`): the sitemaps of an index,
    /// and the page locations that `sitemap`'s `allow` and `deny` keep; a location that is no URL to fetch is a finding.
    /// A sitemap saved compressed (`sitemap.xml.gz`, served as a file) is read decompressed, at most `maxBytes` of it;
    /// one that is damaged or inflates past that lists nothing, and says so in a finding naming its URL.
    /// A file that is not there (its fetch failed with no earlier copy, reported already) lists nothing.
    static func sitemapEntries(_ file: String, in directory: URL, page: String, sitemap: SitemapSelection, source: String, maxBytes: Int) throws
        -> (sitemaps: [String], locations: [String], problems: [Diagnostic]) {
        let input = InputFile(url: directory.appendingPathComponent(file), relativePath: file)
        guard FileManager.default.fileExists(atPath: input.url.path) else { return ([], [], []) }
        let bytes: [UInt8]
        switch try decodedBytes(of: input, maxBytes: maxBytes) {
        case .success(let decoded):
            bytes = decoded
        case .failure(let problem):
            return ([], [], [Diagnostic(code: .fetchDerivation, message: "the sitemap \(page) of source \"\(source)\" cannot be read: \(problem.message); no location it lists is fetched",
                                        provenance: Provenance(file: file, url: page))])
        }
        let fields = try ["@href", "@src", "self::*", ".", "self::loc"].map { try XPathExpression($0) }
        let allow = try sitemap.allow.map { try RegexPattern($0) }
        let deny = try sitemap.deny.map { try RegexPattern($0) }
        var result: (sitemaps: [String], locations: [String], problems: [Diagnostic]) = ([], [], [])
        for (isIndex, path) in [(true, "//sitemap/loc"), (false, "//url/loc")] {
            for (line, link) in links(in: bytes, named: file, selector: try XPathExpression(path), fields: fields, page: page) {
                guard let url = link.url, FetchURL.problem(url) == nil else {
                    let problem = link.url.flatMap { FetchURL.problem($0) } ?? "it makes no URL"
                    result.problems.append(Diagnostic(code: .fetchDerivation, message: "\(link.text) in a sitemap of source \"\(source)\" is no URL to fetch: \(problem)",
                                                      provenance: Provenance(file: file, line: line, url: page)))
                    continue
                }
                if isIndex {
                    result.sitemaps.append(url)
                } else if try allow?.matches(url) ?? true, try !(deny?.matches(url) ?? false) {
                    result.locations.append(url)
                }
            }
        }
        return result
    }

    /// Why a saved file's bytes cannot be read whole.
    struct UnreadableBytes: Error {
        var message: String
    }

    /// The bytes of a saved file as the readers see them (`InputBytes`: decompressed when its first bytes are a
    /// compression format's, up to `maxBytes`); a damaged archive, or one that inflates past `maxBytes`, is a failure
    /// saying so.
    /// - Throws: `KilnError.io` when the file cannot be opened or read.
    static func decodedBytes(of input: InputFile, maxBytes: Int) throws -> Result<[UInt8], UnreadableBytes> {
        let log = DiagnosticLog()
        let source = try InputBytes(url: input.url, name: input.relativePath, log: log, threaded: false)
        guard let bytes = try source.readAll(limit: maxBytes), !source.isDamaged else {
            return .failure(UnreadableBytes(message: log.sorted.first?.message ?? "the compressed data is damaged"))
        }
        return .success(bytes)
    }

    /// The links of one page: `links(in:named:...)` of its bytes as saved.
    private static func links(in file: InputFile, selector: XPathExpression, fields: [XPathExpression], page: String?) throws -> [(Int, (text: String, url: String?))] {
        guard let bytes = FileManager.default.contents(atPath: file.url.path) else {
            throw KilnError.io(IOFailure("cannot read \(file.relativePath)", path: file.url.path, operation: .read))
        }
        return links(in: Array(bytes), named: file.relativePath, selector: selector, fields: fields, page: page)
    }

    /// The links of one page (or sitemap), `bytes` the file named `name`: each with its line, the text found, and the
    /// absolute URL it makes (`nil` when it makes none).
    private static func links(in bytes: [UInt8], named name: String, selector: XPathExpression, fields: [XPathExpression], page: String?) -> [(Int, (text: String, url: String?))] {
        // A file libxml2 makes nothing of (an empty one) is said, not passed over.
        guard let document = try? HTMLDocument(bytes: bytes, encoding: nil, name: name) else {
            return [(1, ("the file (empty, or no markup libxml2 can parse)", nil))]
        }
        let pageURL = page.flatMap { URL(string: $0) }
        // <base href> decides what relative links resolve against, itself resolved against the page's URL.
        let base = (try? XPathExpression("//base/@href")).flatMap { document.string($0) }
            .flatMap { URL(string: $0.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: pageURL)?.absoluteURL } ?? pageURL
        return document.records(selector, fields: fields).compactMap { line, _, values in
            // @href, @src, self::* (set for an element), the node's string value, self::loc (a sitemap's URL element).
            let valueIsLink = values[2] == nil || values[4] != nil
            guard let text = (values[0] ?? values[1] ?? (valueIsLink ? values[3] : nil))?.trimmingCharacters(in: .whitespacesAndNewlines) else {
                return (line, ("an element with neither href nor src", nil))
            }
            if text.isEmpty || text.hasPrefix("#") { return nil }
            let hasScheme = URLComponents(string: text)?.scheme != nil
            var resolved = hasScheme ? URL(string: text) : base.flatMap { URL(string: text, relativeTo: $0)?.absoluteURL }
            if var components = resolved.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: true) }) {
                components.fragment = nil
                resolved = components.url
            }
            return (line, ("the link \"\(text)\"", resolved?.absoluteString))
        }
    }

    /// The compiled selection of `links` and the fields read on each node it picks: `@href`, `@src`, whether it is an
    /// element, and its string value. Without a selector: every `<a href>`, `<area href>` and sitemap `<loc>`.
    private static func selection(_ links: LinkSelection) throws -> (XPathExpression, [XPathExpression]) {
        let selector: XPathExpression
        if let css = links.css {
            selector = try XPathExpression(CSSSelector.xpath(css))
        } else {
            selector = try XPathExpression(links.xpath ?? "//a[@href] | //area[@href] | //loc")
        }
        return (selector, try ["@href", "@src", "self::*", ".", "self::loc"].map { try XPathExpression($0) })
    }

    private static func makeReader(_ spec: SourceSpec, manifest: Manifest) throws -> RecordReader {
        do {
            return try ReaderRegistry.makeReader(format: spec.format, options: spec.options, codingPath: []).limited(by: manifest.limits)
        } catch {
            throw KilnError.usage("cannot read source \"\(spec.name)\" to derive URLs from it: \(error)")
        }
    }
}
