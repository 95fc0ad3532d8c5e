/// The `extract` options of `html` and `text` sources: patterns applied to a page's lines of text.
public struct ExtractOptions: Decodable, Sendable {
    /// Heading patterns, outermost first. A matching heading sets its named groups as carried fields and clears
    /// those of the headings after it (a line heading clears the day heading).
    var headings: [String] = []
    /// The data-row pattern; its named groups become fields of each record, with the carried fields.
    var row: String
    /// Lines that look like data; one no pattern captured is reported as `extract.unmatched`.
    var candidate: String = #"\d{1,2}[:.]\d{2}"#
    /// Lines to pass over without a finding (column headings, notes).
    var skip: [String] = []
    /// The most backtracking steps one match may take before it is reported and the line passed over.
    var matchLimit: UInt32 = 1_000_000

    enum CodingKeys: String, CodingKey, CaseIterable { case headings, row, candidate, skip, matchLimit }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        headings = try c.decodeIfPresent([String].self, forKey: .headings) ?? []
        row = try c.decode(String.self, forKey: .row)
        candidate = try c.decodeIfPresent(String.self, forKey: .candidate) ?? candidate
        skip = try c.decodeIfPresent([String].self, forKey: .skip) ?? []
        matchLimit = try c.decodeIfPresent(UInt32.self, forKey: .matchLimit) ?? matchLimit
    }
}

/// What every page of a source must yield; a failed expectation is an `extract.expectation` error.
public struct ExpectOptions: Decodable, Sendable {
    /// The fewest records a page may give.
    var minRows: Int?
    /// The most unmatched candidate lines a page may have.
    var maxUnmatched: Int?
    /// Blocks every page must have: some record whose `field` matches `pattern` — for each value of `per` when given
    /// (e.g. every line has a weekday block).
    var requireBlocks: [BlockRequirement] = []

    struct BlockRequirement: Decodable, Sendable {
        var field: String
        var pattern: String
        var per: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case field, pattern, per }

        init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            field = try c.decode(String.self, forKey: .field)
            pattern = try c.decode(String.self, forKey: .pattern)
            per = try c.decodeIfPresent(String.self, forKey: .per)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case minRows, maxUnmatched, requireBlocks }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        minRows = try c.decodeIfPresent(Int.self, forKey: .minRows)
        maxUnmatched = try c.decodeIfPresent(Int.self, forKey: .maxUnmatched)
        requireBlocks = try c.decodeIfPresent([BlockRequirement].self, forKey: .requireBlocks) ?? []
    }
}

/// Regex extraction in block mode, shared by the `html` and `text` formats: headings open blocks and carry fields,
/// rows inherit them, and every line that looks like data but was not captured is reported — what the pattern
/// missed matters as much as what it found. Not `Sendable`: its patterns reuse match data.
final class RegexBlockExtractor {
    /// Page fields first, then the headings' groups, then the row's, without repeats.
    let fieldNames: [String]
    private let headings: [RegexPattern]
    private let row: RegexPattern
    private let candidate: RegexPattern
    private let skip: [RegexPattern]
    private let expect: ExpectOptions?
    private let requirements: [(BlockRequirement, RegexPattern)]
    private let pageFieldCount: Int
    typealias BlockRequirement = ExpectOptions.BlockRequirement

    /// - Throws: `RegexCompileError` for a pattern PCRE2 refuses, `KilnError.usage` for a requirement naming no field.
    init(options: ExtractOptions, expect: ExpectOptions?, pageFields: [String]) throws {
        headings = try options.headings.map { try RegexPattern($0, matchLimit: options.matchLimit) }
        row = try RegexPattern(options.row, matchLimit: options.matchLimit)
        candidate = try RegexPattern(options.candidate, matchLimit: options.matchLimit)
        skip = try options.skip.map { try RegexPattern($0, matchLimit: options.matchLimit) }
        var names = pageFields
        for name in headings.flatMap(\.groupNames) + row.groupNames where !names.contains(name) { names.append(name) }
        guard !row.groupNames.isEmpty else { throw KilnError.usage("the row pattern needs named groups (?<name>…): they become the fields") }
        fieldNames = names
        pageFieldCount = pageFields.count
        self.expect = expect
        requirements = try (expect?.requireBlocks ?? []).map { requirement in
            for name in [requirement.field] + (requirement.per.map { [$0] } ?? []) where !names.contains(name) {
                throw KilnError.usage("requireBlocks names the field \"\(name)\", which no pattern captures; fields: \(names.joined(separator: ", "))")
            }
            return (requirement, try RegexPattern(requirement.pattern))
        }
    }

    /// Extraction state for one page.
    final class Page {
        private let extractor: RegexBlockExtractor
        private let input: InputFile
        private let log: DiagnosticLog
        private var carried: [String?]
        private var records: [Record] = []
        private var unmatched = 0

        fileprivate init(_ extractor: RegexBlockExtractor, pageValues: [String?], input: InputFile, log: DiagnosticLog) {
            self.extractor = extractor
            self.input = input
            self.log = log
            carried = pageValues + Array(repeating: nil, count: extractor.fieldNames.count - pageValues.count)
        }

        /// Takes one line of the page: a row gives a record, a heading changes the carried fields, a line that looks
        /// like data and matched nothing is reported.
        func feed(_ text: String, line: Int, emit: (Record) throws -> Void) throws {
            do {
                if let match = try extractor.row.firstMatch(in: text) {
                    var values = carried
                    for (index, name) in extractor.fieldNames.enumerated() where extractor.row.groupNames.contains(name) {
                        values[index] = match[name]
                    }
                    let record = Record(values: values, line: line)
                    records.append(record)
                    try emit(record)
                    return
                }
                for (level, heading) in extractor.headings.enumerated() {
                    guard let match = try heading.firstMatch(in: text) else { continue }
                    let inner = Set(extractor.headings.dropFirst(level + 1).flatMap(\.groupNames))
                    for (index, name) in extractor.fieldNames.enumerated() where index >= extractor.pageFieldCount {
                        if heading.groupNames.contains(name) { carried[index] = match[name] } else if inner.contains(name) { carried[index] = nil }
                    }
                    return
                }
                for pattern in extractor.skip where try pattern.matches(text) { return }
                if try extractor.candidate.matches(text) {
                    unmatched += 1
                    log.report("extract.unmatched", .warning, "no row pattern captured this line that looks like data: \"\(excerpt(text))\"",
                               at: input.at(line))
                }
            } catch let error as RegexMatchError {
                log.report("extract.match-limit", .error, "\(error.description) on the line \"\(excerpt(text))\"; the line is passed over",
                           at: input.at(line))
            }
        }

        /// Checks the page against the source's expectations.
        func finish() throws {
            guard let expect = extractor.expect else { return }
            let place = input.at(nil)
            if let minimum = expect.minRows, records.count < minimum {
                log.report("extract.expectation", .error, "the page gave \(records.count) rows; expected at least \(minimum)", at: place)
            }
            if let maximum = expect.maxUnmatched, unmatched > maximum {
                log.report("extract.expectation", .error, "the page has \(unmatched) lines no pattern captured; at most \(maximum) allowed", at: place)
            }
            for (requirement, pattern) in extractor.requirements {
                let field = extractor.fieldNames.firstIndex(of: requirement.field)!
                let group = requirement.per.flatMap { extractor.fieldNames.firstIndex(of: $0) }
                var groups: [String: Bool] = [:]
                var order: [String] = []
                for record in records {
                    let key = group.flatMap { record.values[$0] } ?? ""
                    if groups[key] == nil { order.append(key) }
                    let found = try record.values[field].map { try pattern.matches($0) } ?? false
                    groups[key] = (groups[key] ?? false) || found
                }
                if order.isEmpty { order = [""] }
                for key in order where groups[key] != true {
                    let owner = requirement.per.map { " for \($0) \(key.isEmpty ? "(none)" : key)" } ?? ""
                    log.report("extract.expectation", .error,
                               "no block whose \(requirement.field) matches /\(requirement.pattern)/\(owner)", at: place)
                }
            }
        }
    }

    /// Starts a page whose page-level fields have `pageValues`.
    func page(_ pageValues: [String?], input: InputFile, log: DiagnosticLog) -> Page {
        Page(self, pageValues: pageValues, input: input, log: log)
    }
}
