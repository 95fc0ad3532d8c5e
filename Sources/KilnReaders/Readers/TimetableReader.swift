import KilnC
import KilnCore
import KilnManifest

/// Reads blank-line-separated timetable blocks, as in the Patras app's `Timetables_UTF8.txt`:
///
///     1.1 Τερψιθέα - Εγλυκάδα          ← line id and name
///     Σάββατο - Κυριακή                ← day heading: one or several day names
///     Από  Εώς  Συχνότητα              ← column heading
///     06:00  08:00  20                 ← from, until, every N minutes
///
/// The day names, the separators between them and the column heading come from the manifest. Each data row becomes
/// a record: `line`, `name`, `days` (day codes in the manifest's order, joined by `,`), `dayMask` (bit *i* set for
/// the manifest's *i*-th day), `from` and `until` in minutes after midnight, `every`, and `heading` (the heading's text). An `until` before `overnightBefore` that is
/// not after `from` runs past midnight (1440 is added); any other `until` not after `from` is an error.
public struct TimetableReader: ConfigurableReader {
    public static let format = "timetable"
    public static let acceptedMediaTypes = MediaTypes.text

    /// The options a manifest gives a `timetable` source.
    public struct Options: Decodable, Sendable {
        package var days: [Term]
        package var daySeparator: String = TermSet.defaultSeparator
        package var columnHeading: String
        package var row: String = #"^\s*(?<from>\d{1,2}:\d{2})\s+(?<until>\d{1,2}:\d{2})\s+(?<every>\d{1,3})\s*$"#
        package var candidate: String = #"\d{1,2}[:.]\d{2}"#
        package var overnightBefore: String = "04:00"
        package var encoding: String = "utf-8"

        package enum CodingKeys: String, CodingKey, CaseIterable {
            case days, daySeparator, columnHeading, row, candidate, overnightBefore, encoding
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            days = try c.decode([Term].self, forKey: .days)
            daySeparator = try c.decodeIfPresent(String.self, forKey: .daySeparator) ?? daySeparator
            columnHeading = try c.decode(String.self, forKey: .columnHeading)
            row = try c.decodeIfPresent(String.self, forKey: .row) ?? row
            candidate = try c.decodeIfPresent(String.self, forKey: .candidate) ?? candidate
            overnightBefore = try c.decodeIfPresent(String.self, forKey: .overnightBefore) ?? overnightBefore
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding) ?? "utf-8"
        }
    }

    public let kinds = [RecordKind(fields: ["line", "name", "days", "dayMask", "from", "until", "every", "heading"])]
    private let options: Options
    private let days: TermSet
    private let columnHeading: RegexPattern
    private let row: RegexPattern
    private let candidate: RegexPattern
    private let overnightBefore: Int
    /// The CPU time the patterns may spend on one file (`limits.regexSecondsPerFile`).
    private var regexSecondsPerFile = ManifestLimits.defaultRegexSecondsPerFile

    public func limited(by limits: ManifestLimits) -> RecordReader {
        var copy = self
        copy.regexSecondsPerFile = limits.regexSecondsPerFile
        return copy
    }

    public init(options: Options) throws {
        try LegacyTextDecoder.check(options.encoding)
        self.options = options
        days = try TermSet(terms: options.days, separator: options.daySeparator)
        columnHeading = try RegexPattern(options.columnHeading, options: .caseInsensitive)
        row = try RegexPattern(options.row)
        candidate = try RegexPattern(options.candidate)
        for group in ["from", "until", "every"] where !row.groupNames.contains(group) {
            throw KilnError.usage("the timetable row pattern needs a named group (?<\(group)>…)")
        }
        guard case .success(let limit) = ClockTime.minutes(options.overnightBefore) else {
            throw KilnError.usage("overnightBefore must be a time like 04:00, not \"\(options.overnightBefore)\"")
        }
        overnightBefore = limit
    }

    private enum State {
        case betweenBlocks
        case inBlock(line: String, name: String, days: TermSet.Selection?, heading: String?)
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        var state = State.betweenBlocks
        var budget = RegexBudget(seconds: regexSecondsPerFile)
        defer { budget.report(input, code: .regexBudget, log: log) }
        try LineReader.forEachLine(of: input, encoding: options.encoding, log: log) { number, text in
            guard budget.admits(line: number) else { return }
            do {
                let trimmed = text.trimmingSpaces
                if trimmed.isEmpty {
                    state = .betweenBlocks
                    return
                }
                guard case .inBlock(let line, let name, let days, let heading) = state else {
                    let parts = trimmed.splitOnFirstSpace()
                    state = .inBlock(line: parts.head, name: parts.rest, days: nil, heading: nil)
                    return
                }
                if let match = try row.firstMatch(in: text) {
                    guard let days else {
                        if heading == nil {
                            log.report(.timetableNoHeading, "row of line \(line) before any day heading; expected a heading such as \"\(self.days.names.first ?? "")\"",
                                       at: input.at(number))
                        }
                        return
                    }
                    if let record = makeRecord(match, line: line, name: name, days: days, heading: heading ?? "",
                                               number: number, input: input, log: log) {
                        try emit(record)
                    }
                    return
                }
                if try columnHeading.matches(trimmed) { return }
                if try candidate.matches(trimmed) {
                    log.report(.timetableRow, "line \(line): cannot read the row \"\(excerpt(trimmed))\"; expected FROM UNTIL EVERY, e.g. \"06:00  08:00  20\"",
                               at: input.at(number))
                    return
                }
                let parsed = try self.days.parse(trimmed)
                if parsed == nil {
                    log.report(.timetableUnknownDay, "line \(line): unknown day heading \"\(excerpt(trimmed))\"; expected day names from: "
                                   + self.days.names.joined(separator: ", ") + " (the rows under it are skipped)",
                               at: input.at(number))
                }
                state = .inBlock(line: line, name: name, days: parsed, heading: trimmed)
            } catch let error as RegexMatchError {
                log.report(.timetableMatchLimit, "\(error.description) on the line \"\(excerpt(text))\"; the line is passed over", at: input.at(number))
            }
        }
    }

    private func makeRecord(_ match: RegexMatch, line: String, name: String, days: TermSet.Selection, heading: String,
                            number: Int, input: InputFile, log: DiagnosticLog) -> Record? {
        switch ClockTime.span(from: match["from"] ?? "", until: match["until"] ?? "", overnightBefore: overnightBefore) {
        case .success(let span):
            var record = Record(kinds[0], line: number)
            record["line"] = line
            record["name"] = name
            record["days"] = days.codes
            record["dayMask"] = String(days.mask)
            record["from"] = String(span.from)
            record["until"] = String(span.until)
            record["every"] = match["every"]
            record["heading"] = heading
            return record
        case .failure(let problem):
            log.report(problem.code == .valueTimeOrder ? .timetableTimeOrder : .timetableTime,
                       "line \(line): \(problem.message)", at: input.at(number))
            return nil
        }
    }
}
