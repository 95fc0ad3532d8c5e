import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads bare wikitext files (`Roppongi.wikicode`, `Thouars.wiki`): one page per file, as copied from a wiki's edit
/// box or fetched with `action=raw`. It emits the same kinds of record as `mediawiki` (`page`, `section`, `listing`,
/// `alias` for a file holding only `#REDIRECT [[…]]`) with the same options (`WikiConventionOptions`). The page's
/// title is the manifest's `title`, else the file name without its extension (`_` read as a space); its id is the
/// manifest's `pageid`, else a stable number made from the title (as listing ids are), so that ids do not change
/// with the order of files.
public struct WikitextReader: ConfigurableReader {
    public static let format = "wikitext"
    public static let acceptedMediaTypes = MediaTypes.text

    /// The options a manifest gives a `wikitext` source: `title`, `pageid`, `namespace`, `encoding`, and the
    /// conventions every wikitext reader shares.
    public struct Options: Decodable, Sendable {
        package var title: String?
        package var pageID: Int64?
        package var namespace = 0
        package var encoding: String?
        package var conventions: WikiConventionOptions

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            conventions = try WikiConventionOptions(c, readerKeys: ["title", "pageid", "namespace", "encoding"])
            title = try c.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "title"))
            pageID = try c.decodeIfPresent(Int64.self, forKey: AnyKey(stringValue: "pageid"))
            namespace = try c.decodeIfPresent(Int.self, forKey: AnyKey(stringValue: "namespace")) ?? 0
            encoding = try c.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "encoding"))
        }
    }

    public let kinds = WikiPageProcessor.kinds
    private let options: Options
    private var processor: WikiPageProcessor

    /// Builds the reader.
    /// - Throws: `EncodingError` for an unknown `encoding`.
    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        processor = try WikiPageProcessor(conventions: options.conventions)
    }

    public func restricted(to kinds: Set<String>) -> RecordReader {
        var copy = self
        copy.processor.wanted = kinds
        return copy
    }

    /// The title of the page in `input`: the manifest's, else the file name without its extension (and a compressed
    /// file's `.gz`, `.bz2`, `.xz`, `.zst`), percent-escapes decoded (`Tokyo%2FRoppongi.wikicode` is `Tokyo/Roppongi`, as a wiki's URLs write it).
    package func title(of input: InputFile) -> String {
        if let title = options.title { return title }
        let name = input.nameStem
        return WikiName.title(name.removingPercentEncoding ?? name)
    }

    /// Reads the file as one page and emits its records; lines that are not valid text in the file's encoding are
    /// reported and left out. A file without text is reported (`LineChecks`) and makes no page.
    /// - Throws: `KilnError.io` when the file cannot be read; whatever `emit` throws.
    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        var lines: [String] = []
        try LineReader.forEachLine(of: input, encoding: options.encoding ?? "utf-8", log: log) { number, text in
            // A line left out (reported) stays as an empty line, so that later lines keep their numbers.
            while lines.count < number - 1 { lines.append("") }
            lines.append(text)
        }
        let title = title(of: input)
        guard lines.contains(where: { $0.contains { !$0.isWhitespace } }) else { return }
        let id = options.pageID.map(String.init) ?? String(StableListingID.make(page: title, path: [], name: nil, ordinal: 0))
        let page = WikiPageText(title: title, id: id, namespace: String(options.namespace), timestamp: nil,
                                text: lines.joined(separator: "\n"), line: 1, textLine: 1, redirect: nil)
        var tally = WikiFileTally()
        try processor.process(page, input: input, tally: &tally, log: log, emit: emit)
        tally.report(in: input, log: log, listingsWanted: processor.wanted.contains("listing"),
                           ignoredTemplates: processor.conventions.listings.ignoredTemplates)
    }
}
