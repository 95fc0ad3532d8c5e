import KilnC
import KilnCore
import KilnManifest



/// Reads plain text files line by line through regex extraction in block mode (see `HTMLReader`'s extract mode).
public struct TextExtractReader: ConfigurableReader {
    public static let format = "text"
    public static let acceptedMediaTypes = MediaTypes.text

    /// The options a manifest gives a `text` source.
    public struct Options: Decodable, Sendable {
        package var extract: ExtractOptions
        package var expect: ExpectOptions?
        package var encoding: String = "utf-8"

        package enum CodingKeys: String, CodingKey, CaseIterable { case extract, expect, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            extract = try c.decode(ExtractOptions.self, forKey: .extract)
            expect = try c.decodeIfPresent(ExpectOptions.self, forKey: .expect)
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding) ?? "utf-8"
        }
    }

    public var kinds: [RecordKind] { [extractor.kind] }
    private let options: Options
    private let extractor: RegexBlockExtractor
    /// The CPU time the patterns may spend on one file (`limits.regexSecondsPerFile`).
    private var regexSecondsPerFile = ManifestLimits.defaultRegexSecondsPerFile

    public init(options: Options) throws {
        try LegacyTextDecoder.check(options.encoding)
        self.options = options
        extractor = try RegexBlockExtractor(options: options.extract, expect: options.expect, pageFields: [])
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        let page = extractor.page([], input: input, log: log)
        var budget = RegexBudget(seconds: regexSecondsPerFile)
        try LineReader.forEachLineUTF8(of: input, encoding: options.encoding, log: log) { number, line in
            guard budget.admits(line: number) else { return }
            try page.feed(line, line: number, emit: emit)
        }
        budget.report(input, code: .regexBudget, log: log)
        try page.finish()
    }

    public func limited(by limits: ManifestLimits) -> RecordReader {
        var copy = self
        copy.regexSecondsPerFile = limits.regexSecondsPerFile
        return copy
    }
}
