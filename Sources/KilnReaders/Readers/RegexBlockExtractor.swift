import KilnC
import KilnCore
import KilnManifest

/// The `extract` options of `html` and `text` sources: patterns applied to a page's lines of text.
public struct ExtractOptions: Decodable, Sendable {
    /// Heading patterns, outermost first. A matching heading sets its named groups as carried fields and clears
    /// those of the headings after it (a line heading clears the day heading).
    package var headings: [String] = []
    /// The data-row pattern; its named groups become fields of each record, with the carried fields.
    package var row: String
    /// Lines that look like data; one no pattern captured is reported as `extract.unmatched`.
    package var candidate: String = #"\d{1,2}[:.]\d{2}"#
    /// Lines to pass over without a finding (column headings, notes).
    package var skip: [String] = []
    /// The most backtracking steps one match may take before it is reported and the line passed over.
    package var matchLimit: UInt32 = 1_000_000

    package enum CodingKeys: String, CodingKey, CaseIterable { case headings, row, candidate, skip, matchLimit }

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
    package var minRows: Int?
    /// The most unmatched candidate lines a page may have.
    package var maxUnmatched: Int?
    /// Blocks every page must have: some record whose `field` matches `pattern` — for each value of `per` when given
    /// (e.g. every line has a weekday block).
    package var requireBlocks: [BlockRequirement] = []

    package struct BlockRequirement: Decodable, Sendable {
        package var field: String
        package var pattern: String
        package var per: String?

        package enum CodingKeys: String, CodingKey, CaseIterable { case field, pattern, per }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            field = try c.decode(String.self, forKey: .field)
            pattern = try c.decode(String.self, forKey: .pattern)
            per = try c.decodeIfPresent(String.self, forKey: .per)
        }
    }

    package enum CodingKeys: String, CodingKey, CaseIterable { case minRows, maxUnmatched, requireBlocks }

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
package final class RegexBlockExtractor {
    /// The records it emits: page fields first, then the headings' groups, then the row's, without repeats.
    package let kind: RecordKind
    package var fieldNames: [String] { kind.fieldNames }
    private let headings: [RegexPattern]
    private let row: RegexPattern
    private let candidate: RegexPattern
    private let skip: [RegexPattern]
    private let expect: ExpectOptions?
    private let requirements: [(BlockRequirement, RegexPattern)]
    private let pageFieldCount: Int
    /// The fields the row pattern fills: field index and group number, resolved once.
    private let rowFields: [(field: Int, group: Int)]
    /// For each heading: the fields it sets (field index, group number) and the fields of later headings it clears.
    private let headingEffects: [(sets: [(field: Int, group: Int)], clears: [Int])]
    package typealias BlockRequirement = ExpectOptions.BlockRequirement

    /// - Throws: `RegexCompileError` for a pattern PCRE2 refuses, `KilnError.usage` for a requirement naming no field.
    package init(options: ExtractOptions, expect: ExpectOptions?, pageFields: [String]) throws {
        headings = try options.headings.map { try RegexPattern($0, matchLimit: options.matchLimit) }
        row = try RegexPattern(options.row, matchLimit: options.matchLimit)
        candidate = try RegexPattern(options.candidate, matchLimit: options.matchLimit)
        skip = try options.skip.map { try RegexPattern($0, matchLimit: options.matchLimit) }
        var names = pageFields
        for name in headings.flatMap(\.groupNames) + row.groupNames where !names.contains(name) { names.append(name) }
        guard !row.groupNames.isEmpty else { throw KilnError.usage("the row pattern needs named groups (?<name>…): they become the fields") }
        kind = RecordKind(fields: names)
        pageFieldCount = pageFields.count
        let row = self.row, headings = self.headings
        rowFields = names.indices.compactMap { index in row.groupNumber(of: names[index]).map { (field: index, group: $0) } }
        headingEffects = headings.enumerated().map { level, heading in
            let sets = names.indices.compactMap { index in
                index >= pageFields.count ? heading.groupNumber(of: names[index]).map { (field: index, group: $0) } : nil
            }
            let inner = Set(headings.dropFirst(level + 1).flatMap(\.groupNames)).subtracting(heading.groupNames)
            return (sets, names.indices.filter { $0 >= pageFields.count && inner.contains(names[$0]) })
        }
        self.expect = expect
        requirements = try (expect?.requireBlocks ?? []).map { requirement in
            for name in [requirement.field] + (requirement.per.map { [$0] } ?? []) where !names.contains(name) {
                throw KilnError.usage("requireBlocks names the field \"\(name)\", which no pattern captures; fields: \(names.joined(separator: ", "))")
            }
            return (requirement, try RegexPattern(requirement.pattern))
        }
    }

    /// Extraction state for one page.
    package final class Page {
        private let extractor: RegexBlockExtractor
        private let input: InputFile
        private let log: DiagnosticLog
        private var carried: [String?]
        /// The array the last record's values were written into, reused while the consumer lets records go.
        private struct ReusedValues {
            var values: [String?] = []
            /// The token of the records emitted from `values` (see `RecordReuseToken`).
            var token = RecordReuseToken()
            /// True when `values` no longer holds the carried fields (a heading changed them since it was filled).
            var stale = true
        }

        /// `feed` is the only code that touches it, and no record consumer can reach this page: its accesses need no
        /// run-time exclusivity check (one per access and per line otherwise).
        @exclusivity(unchecked) private var reuse = ReusedValues()
        /// The rows given so far, counted when the source expects a least number (`minRows`).
        private var rowCount = 0
        /// For each required block: whether it was found, by value of its `per` field, in first-seen order. Only this
        /// is kept, not the records, so a page of any length is checked in bounded memory.
        private var blocks: [(found: [String: Bool], order: [String])]
        private var unmatched = 0

        fileprivate init(_ extractor: RegexBlockExtractor, pageValues: [String?], input: InputFile, log: DiagnosticLog) {
            self.extractor = extractor
            self.input = input
            self.log = log
            carried = pageValues + Array(repeating: nil, count: extractor.fieldNames.count - pageValues.count)
            blocks = extractor.requirements.map { _ in ([:], []) }
        }

        /// Takes one line of the page: a row gives a record, a heading changes the carried fields, a line that looks
        /// like data and matched nothing is reported.
        package func feed(_ text: String, line: Int, emit: (Record) throws -> Void) throws {
            try feedLine(text, line: line, emit: emit)
        }

        /// As `feed(_:line:emit:)`, for a line's bytes: strings are made only for the captured fields.
        package func feed(_ utf8: ValidUTF8, line: Int, emit: (Record) throws -> Void) throws {
            try feedLine(utf8, line: line, emit: emit)
        }

        private func feedLine(_ subject: some ExtractedLine, line: Int, emit: (Record) throws -> Void) throws {
            do {
                let row = extractor.row
                if let groups = try row.match(subject) {
                    try withReuse { reuse in try emitRow(subject, groups, line: line, into: &reuse, emit: emit) }
                    return
                }
                for (level, heading) in extractor.headings.enumerated() {
                    guard let groups = try heading.match(subject) else { continue }
                    let effect = extractor.headingEffects[level]
                    for (field, group) in effect.sets { carried[field] = heading.group(group, of: subject, in: groups) }
                    for field in effect.clears { carried[field] = nil }
                    withReuse { $0.stale = true }
                    return
                }
                for pattern in extractor.skip where try pattern.matches(subject) { return }
                if try extractor.candidate.matches(subject) {
                    unmatched += 1
                    log.report(.extractUnmatched, "no row pattern captured this line that looks like data: \"\(excerpt(subject.lineText))\"",
                               at: input.at(line))
                }
            } catch let error as RegexMatchError {
                log.report(.extractMatchLimit, "\(error.description) on the line \"\(excerpt(subject.lineText))\"; the line is passed over",
                           at: input.at(line))
            }
        }

        /// The record of a row the row pattern matched, its values written into `reuse.values` while the consumer
        /// lets records go.
        private func emitRow(_ subject: some ExtractedLine, _ groups: RegexGroups, line: Int, into reuse: inout ReusedValues,
                             emit: (Record) throws -> Void) throws {
            let row = extractor.row
            if !isKnownUniquelyReferenced(&reuse.token) {
                // A consumer keeps an earlier record: a fresh array, its values appended one by one rather
                // than copied whole (an array of optionals copied in one go goes through the runtime's
                // generic per-element copy). The token stays: it is unique again once the consumer lets
                // every record go.
                var fresh: [String?] = []
                fresh.reserveCapacity(carried.count)
                for value in carried { fresh.append(value) }
                reuse.values = fresh
            } else if reuse.stale {
                if reuse.values.count != carried.count {
                    reuse.values = carried
                } else {
                    for (field, value) in carried.enumerated() { reuse.values[field] = value }
                }
            }
            reuse.stale = false
            for (field, group) in extractor.rowFields { reuse.values[field] = row.group(group, of: subject, in: groups) }
            if extractor.expect?.minRows != nil { rowCount += 1 }
            if !extractor.requirements.isEmpty { try note(reuse.values) }
            try emit(Record(extractor.kind, values: reuse.values, line: line, reuseToken: reuse.token))
        }

        /// The one access to `reuse`: `@exclusivity(unchecked)` is memory-unsafe only when two accesses overlap, and
        /// only `feed` makes them.
        private func withReuse<Result>(_ body: (inout ReusedValues) throws -> Result) rethrows -> Result {
            try unsafe body(&reuse)
        }

        /// Records which required blocks a row satisfies.
        private func note(_ values: [String?]) throws {
            for (index, (requirement, pattern)) in extractor.requirements.enumerated() {
                let field = extractor.fieldNames.firstIndex(of: requirement.field)!
                let key = requirement.per.flatMap { extractor.fieldNames.firstIndex(of: $0) }.flatMap { values[$0] } ?? ""
                if blocks[index].found[key] == nil { blocks[index].order.append(key) }
                let found = try values[field].map { try pattern.matches($0) } ?? false
                blocks[index].found[key] = (blocks[index].found[key] ?? false) || found
            }
        }

        /// Checks the page against the source's expectations.
        package func finish() throws {
            guard let expect = extractor.expect else { return }
            let place = input.at(nil)
            if let minimum = expect.minRows, rowCount < minimum {
                log.report(.extractExpectation, "the page gave \(rowCount) rows; expected at least \(minimum)", at: place)
            }
            if let maximum = expect.maxUnmatched, unmatched > maximum {
                log.report(.extractExpectation, "the page has \(unmatched) lines no pattern captured; at most \(maximum) allowed", at: place)
            }
            for ((requirement, _), block) in zip(extractor.requirements, blocks) {
                let order = block.order.isEmpty ? [""] : block.order
                for key in order where block.found[key] != true {
                    let owner = requirement.per.map { " for \($0) \(key.isEmpty ? "(none)" : key)" } ?? ""
                    log.report(.extractExpectation, "no block whose \(requirement.field) matches /\(requirement.pattern)/\(owner)", at: place)
                }
            }
        }
    }

    /// Starts a page whose page-level fields have `pageValues`.
    package func page(_ pageValues: [String?], input: InputFile, log: DiagnosticLog) -> Page {
        Page(self, pageValues: pageValues, input: input, log: log)
    }
}

/// A line the extractor takes: the text its patterns run over, and that text as a string for messages.
package protocol ExtractedLine: RegexSubject {
    /// The line's text (made on each call).
    var lineText: String { get }
}

extension String: ExtractedLine {
    package var lineText: String { self }
}

extension ValidUTF8: ExtractedLine {
    package var lineText: String { text }
}
