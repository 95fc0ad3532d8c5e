import KilnManifest

/// A source's reader as its manifest configures it, decoded and checked once: the format's own options, the kinds
/// of record to emit and the limits per file. `Sendable`, so the threads that read a source share it; a reader
/// keeps compiled patterns and match buffers, so each thread makes its own from it (`instantiate()`), without
/// decoding the manifest's options again.
package struct ReaderPlan: Sendable {
    private let options: any ReaderOptions
    /// The kinds of record the readers emit (`RecordReader.restricted(to:)`); `nil` for every kind.
    private var kinds: Set<String>?
    /// The manifest's limits the readers are bounded by (`RecordReader.limited(by:)`); `nil` for none.
    private var limits: ManifestLimits?

    init(options: any ReaderOptions) {
        self.options = options
    }

    /// This plan, its readers emitting only the kinds named in `kinds`.
    package func restricted(to kinds: Set<String>) -> ReaderPlan {
        var plan = self
        plan.kinds = kinds
        return plan
    }

    /// This plan, its readers bounded by `limits`.
    package func limited(by limits: ManifestLimits) -> ReaderPlan {
        var plan = self
        plan.limits = limits
        return plan
    }

    /// A new reader of this plan, sharing nothing with any other: it compiles its own patterns from the decoded options.
    /// - Throws: `KilnError`, `RegexCompileError`, `EncodingError`, `XPathError` or `ValueProblem` when an option is
    ///   refused (a pattern that does not compile…); never for options a reader of this plan was once made from.
    package func instantiate() throws -> RecordReader {
        applied(to: try options.makeReader())
    }

    /// `reader`, made from this plan's options, restricted and limited as the plan says.
    package func applied(to reader: RecordReader) -> RecordReader {
        var reader = reader
        if let kinds { reader = reader.restricted(to: kinds) }
        if let limits { reader = reader.limited(by: limits) }
        return reader
    }
}

/// A reader format's options, decoded: what makes a reader of that format.
protocol ReaderOptions: Sendable {
    /// A new reader built from these options.
    func makeReader() throws -> RecordReader
}

/// The decoded options of readers of type `Reader`.
struct DecodedOptions<Reader: ConfigurableReader>: ReaderOptions {
    let options: Reader.Options

    func makeReader() throws -> RecordReader { try Reader(options: options) }
}
