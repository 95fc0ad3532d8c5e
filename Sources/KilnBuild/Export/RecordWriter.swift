import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Turns query rows into the lines of one text format; the inverse of a reader. Rows arrive in order, one at a time.
package protocol RecordWriter {
    /// The format name used in manifests.
    static var format: String { get }
    /// Builds the writer from an export file's options.
    /// - Throws: `ValueProblem` or `DecodingError` for a bad option.
    init(options: JSONValue, manifest: Manifest) throws
    /// Checks that the query returns the columns this writer needs.
    /// - Throws: `ValueProblem` naming the missing columns.
    func check(columns: [String]) throws
    /// Takes one row.
    /// - Throws: `KilnError.io` when writing fails.
    func add(_ row: Row, to sink: TextFileSink) throws
    /// Writes whatever the last rows left pending.
    /// - Throws: `KilnError.io` when writing fails.
    func finish(_ sink: TextFileSink) throws
}

extension RecordWriter {
    package func require(_ needed: [String], in columns: [String]) throws {
        let missing = needed.filter { !columns.contains($0) }
        if !missing.isEmpty {
            throw ValueProblem(message: "the \(Self.format) writer needs the query to return columns \(needed.joined(separator: ", ")); missing: \(missing.joined(separator: ", "))")
        }
    }
}

/// Writes `a; b; c` lines. With `group`, consecutive rows that share their first `group` columns become one line
/// that lists the last column of each (`stop; line; line;`).
package final class DelimitedWriter: RecordWriter {
    package static let format = "delimited"

    package struct Options: Decodable {
        package var separator: String = "; "
        package var terminator: String = ""
        package var group: Int?

        package enum CodingKeys: String, CodingKey, CaseIterable { case separator, terminator, group }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            separator = try c.decodeIfPresent(String.self, forKey: .separator) ?? "; "
            terminator = try c.decodeIfPresent(String.self, forKey: .terminator) ?? ""
            group = try c.decodeIfPresent(Int.self, forKey: .group)
        }
    }

    private let options: Options
    private var pending: (key: [String], items: [String])?

    package init(options: JSONValue, manifest: Manifest) throws {
        self.options = try options.decode(Options.self, codingPath: [])
    }

    package func check(columns: [String]) throws {
        if let group = options.group, columns.count != group + 1 {
            throw ValueProblem(message: "with group \(group) the query must return \(group + 1) columns, not \(columns.count)")
        }
    }

    package func add(_ row: Row, to sink: TextFileSink) throws {
        let texts = row.values.map { $0.textValue ?? "" }
        guard let group = options.group else {
            try sink.line(texts.joined(separator: options.separator) + options.terminator)
            return
        }
        let key = Array(texts.prefix(group))
        if let current = pending, current.key == key {
            pending?.items.append(texts[group])
            return
        }
        try finish(sink)
        pending = (key, [texts[group]])
    }

    package func finish(_ sink: TextFileSink) throws {
        guard let current = pending else { return }
        try sink.line((current.key + current.items).joined(separator: options.separator) + options.terminator)
        pending = nil
    }
}

/// Writes two-line route records (`LINE NAME`, then `0 CODE! 1 CODE!`) from rows of line, name, position, stop.
package final class RoutesWriter: RecordWriter {
    package static let format = "routes"
    private var pending: (line: String, name: String, items: [String])?
    private let separator: String

    package init(options: JSONValue, manifest: Manifest) throws {
        if case .object(let values) = options, let separator = values["itemSeparator"]?.scalarText {
            self.separator = separator
        } else {
            separator = "!"
        }
    }

    package func check(columns: [String]) throws { try require(["line", "name", "position", "stop"], in: columns) }

    package func add(_ row: Row, to sink: TextFileSink) throws {
        let line = row["line"].textValue ?? "", name = row["name"].textValue ?? ""
        let item = (row["position"].textValue ?? "") + " " + (row["stop"].textValue ?? "") + separator
        if pending?.line == line {
            pending?.items.append(item)
            return
        }
        try finish(sink)
        pending = (line, name, [item])
    }

    package func finish(_ sink: TextFileSink) throws {
        guard let current = pending else { return }
        try sink.line(current.line + " " + current.name)
        try sink.line(current.items.joined(separator: " "))
        pending = nil
    }
}

/// Writes timetable blocks from rows of line, name, days, from, until, every (ordered by line, then section).
/// Day codes become headings with the day vocabulary of the timetable source named by `source`.
package final class TimetableWriter: RecordWriter {
    package static let format = "timetable"

    package struct Options: Decodable {
        package var source: String
        package var columnHeading: String
        package var headingSeparator: String = " - "
        package var columnSeparator: String = "  "

        package enum CodingKeys: String, CodingKey, CaseIterable { case source, columnHeading, headingSeparator, columnSeparator }

        package init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            source = try c.decode(String.self, forKey: .source)
            columnHeading = try c.decode(String.self, forKey: .columnHeading)
            headingSeparator = try c.decodeIfPresent(String.self, forKey: .headingSeparator) ?? " - "
            columnSeparator = try c.decodeIfPresent(String.self, forKey: .columnSeparator) ?? "  "
        }
    }

    private let options: Options
    private let headings: [String: String]
    private var currentLine: String?
    private var currentDays: String?

    package init(options: JSONValue, manifest: Manifest) throws {
        let options = try options.decode(Options.self, codingPath: [])
        guard let source = manifest.sources.first(where: { $0.name == options.source && $0.format == TimetableReader.format }) else {
            throw ValueProblem(message: "no timetable source named \"\(options.source)\" to take the day headings from")
        }
        let readerOptions = try source.options.decode(TimetableReader.Options.self, codingPath: [])
        self.options = options
        headings = Dictionary(readerOptions.days.map { ($0.code, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    package func check(columns: [String]) throws { try require(["line", "name", "days", "from", "until", "every"], in: columns) }

    package func add(_ row: Row, to sink: TextFileSink) throws {
        let line = row["line"].textValue ?? "", days = row["days"].textValue ?? ""
        if line != currentLine {
            if currentLine != nil { try sink.line("") }
            try sink.line(line + " " + (row["name"].textValue ?? ""))
            currentLine = line
            currentDays = nil
        }
        if days != currentDays {
            let names = try days.split(separator: ",").map { code -> String in
                guard let heading = headings[String(code)] else { throw ValueProblem(message: "no day heading for the code \"\(code)\"") }
                return heading
            }
            try sink.line(names.joined(separator: options.headingSeparator))
            try sink.line(options.columnHeading)
            currentDays = days
        }
        let from = Int(row["from"].number ?? 0), until = Int(row["until"].number ?? 0)
        try sink.line([ClockTime.text(from), ClockTime.text(until), row["every"].textValue ?? ""].joined(separator: options.columnSeparator))
    }

    package func finish(_ sink: TextFileSink) throws {
        if currentLine != nil { try sink.line("") }
    }
}
