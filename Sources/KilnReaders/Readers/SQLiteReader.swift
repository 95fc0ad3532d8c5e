import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads what a hand-made database holds: an SQL script of `CREATE TABLE` and `INSERT` statements (the way a legacy
/// app's author typed the data in), or an SQLite database file. Either is loaded into an in-memory database that can
/// reach nothing else — an authorizer allows a script only `CREATE TABLE`, `CREATE INDEX`, `INSERT` and transactions,
/// and the query only reading (never `ATTACH`, `PRAGMA` or a file), and every statement is interrupted once
/// `seconds` have passed. Then `query` selects the records: the fields are its result columns named in `fields`.
///
/// A script's statements run one by one, as SQLite's shell cuts them: one that fails or is refused is a finding at
/// its line (`sql.statement`, `sql.denied`) and the rest still run. Each inserted row's line is in the temporary
/// table `kiln_row_line(table_name, row_id, line)`; a query column named `_line` gives the record's line.
public struct SQLiteReader: ConfigurableReader {
    public static let format = "sqlite"
    public static let acceptedMediaTypes = MediaTypes.any

    /// The options a manifest gives an `sqlite` source.
    public struct Options: Decodable, Sendable {
        package var query: String
        package var fields: [String]
        package var seconds: Double = 10
        package var encoding: String = "utf-8"

        package enum CodingKeys: String, CodingKey, CaseIterable { case query, fields, seconds, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            query = try c.decode(String.self, forKey: .query)
            fields = try c.decode([String].self, forKey: .fields)
            seconds = try c.decodeIfPresent(Double.self, forKey: .seconds) ?? 10
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding) ?? "utf-8"
            guard seconds > 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.seconds],
                                                        debugDescription: "expected a positive number of seconds"))
            }
            guard !fields.isEmpty, Set(fields).count == fields.count, !fields.contains("_line") else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.fields],
                                                        debugDescription: "expected the query's result column names, each once (not _line)"))
            }
        }
    }

    /// The first bytes of every SQLite database file.
    package static let databaseHeader = Array("SQLite format 3\0".utf8)

    public var kinds: [RecordKind] { [RecordKind(fields: options.fields)] }
    private let options: Options

    public init(options: Options) throws {
        try LegacyTextDecoder.check(options.encoding)
        self.options = options
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        // A compressed database or script is read decompressed, like every input (the header too).
        let source = try input.bytes(log: log)
        var header: [UInt8] = []
        while header.count < SQLiteReader.databaseHeader.count,
              try source.read(into: &header, upTo: SQLiteReader.databaseHeader.count - header.count) > 0 {}
        let database: Database
        var lines: [(table: String, rowid: Int64, line: Int)] = []
        do {
            if header == SQLiteReader.databaseHeader {
                guard let rest = try source.readAll() else { return }
                let bytes = header + rest
                database = try Database.sandboxed(deserializing: bytes, seconds: options.seconds, functions: KilnSQLFunctions.all)
            } else {
                source.close()
                database = try Database.sandboxed(seconds: options.seconds, functions: KilnSQLFunctions.all)
                guard try runScript(input, in: database, log: log, lines: &lines) else { return }
            }
        } catch let error as SQLiteError {
            log.report(.sqlUnreadable, "\(input.relativePath) cannot be loaded: \(error.message)", at: input.at(nil))
            return
        }
        do {
            database.setPolicy(.kiln)
            try database.execute("CREATE TEMP TABLE kiln_row_line (table_name TEXT, row_id INTEGER, line INTEGER, PRIMARY KEY (table_name, row_id))")
            let insert = try database.prepare("INSERT OR REPLACE INTO kiln_row_line VALUES (?, ?, ?)")
            for entry in lines { try insert.run([.text(entry.table), .integer(entry.rowid), .integer(Int64(entry.line))]) }
        } catch let error as SQLiteError {
            log.report(.sqlUnreadable, "\(input.relativePath): \(error.message)", at: input.at(nil))
            return
        }
        database.setPolicy(.query)
        do {
            let statement = try database.prepare(options.query)
            let columns = statement.columnNames
            let missing = options.fields.filter { !columns.contains($0) }
            guard missing.isEmpty else {
                log.report(.sqlQuery, "the query gives no column \(missing.map { "\"\($0)\"" }.joined(separator: ", ")); "
                               + "it gives: \(columns.joined(separator: ", "))", at: input.at(nil))
                return
            }
            let indexes = options.fields.map { columns.firstIndex(of: $0)! }
            let lineIndex = columns.firstIndex(of: "_line")
            var rows = 0
            while let row = try statement.step() {
                rows += 1
                var line = 1
                if let lineIndex, case .integer(let number) = row.values[lineIndex] { line = Int(number) }
                var record = Record(kinds[0], values: indexes.map { row.values[$0].blobBytes == nil ? row.values[$0].textValue : nil }, line: line)
                for (position, index) in indexes.enumerated() {
                    if let bytes = row.values[index].blobBytes { record.setBinary(bytes, at: position) }
                }
                try emit(record)
                // The time limit holds for the whole read: SQLite's progress handler sees only its own steps, not
                // the work each row costs after them (a generated zeroblob(6e7) column made 60 MB rows for minutes).
                if database.checkDeadline() {
                    log.report(.sqlTimeLimit, "the source's query on \(input.relativePath) ran longer than \(options.seconds) s "
                                   + "(the source's \"seconds\") and was stopped after \(rows) row\(rows == 1 ? "" : "s"); the rest is not read",
                               at: input.at(line))
                    return
                }
            }
        } catch let error as SQLiteError {
            let denied = database.takeDeniedActions()
            let reason = database.timedOut ? "stopped after \(options.seconds) s (the source's \"seconds\")"
                : denied.isEmpty ? error.message
                : denied[0].hasSuffix("()") ? "refused: it calls \(denied[0]), whose result is not decided by the input (a query may call only deterministic functions)"
                : "refused: \(denied[0]) (a query may only read tables)"
            log.report(database.timedOut ? .sqlTimeLimit : .sqlQuery, "the source's query failed on \(input.relativePath): \(reason)",
                       at: input.at(nil))
        }
    }

    /// Runs a script statement by statement, reporting those that fail at their line; returns false when the time ran
    /// out (reported), so that nothing is read from a half-loaded database.
    private func runScript(_ input: InputFile, in database: Database, log: DiagnosticLog,
                           lines: inout [(table: String, rowid: Int64, line: Int)]) throws -> Bool {
        database.setPolicy(.script)
        var pending = ""
        var pendingStart = 0
        var stopped = false
        func run() throws {
            defer { pending = ""; pendingStart = 0 }
            guard !stopped, pending.contains(where: { !$0.isWhitespace }) else { return }
            let chunk = pending, startLine = pendingStart
            try database.executeEach(chunk) { offset, error in
                // SQLite compiles the comments before a statement with it; the message names the statement.
                let start = SQLiteReader.statementStart(after: offset, in: chunk)
                let line = startLine + SQLiteReader.lineOffset(of: start, in: chunk)
                let statement = excerpt(TextFolding.collapseSpaces(String(decoding: Array(chunk.utf8)[start...], as: UTF8.self)), limit: 60)
                let denied = database.takeDeniedActions()
                if database.timedOut {
                    log.report(.sqlTimeLimit, "the script ran longer than \(options.seconds) s (the source's \"seconds\") "
                                   + "and was stopped here; nothing is read from it", at: input.at(line))
                    stopped = true
                } else if !denied.isEmpty {
                    log.report(.sqlDenied, SQLiteReader.refusal(of: statement, denied: denied) + "; statement not run: \(statement)",
                               at: input.at(line))
                } else {
                    log.report(.sqlStatement, "statement failed: \(error.message): \(statement)", at: input.at(line))
                }
            }
            for row in database.takeInsertedRows() { lines.append((row.table, row.rowid, startLine)) }
        }
        try LineReader.forEachLine(of: input, encoding: options.encoding, log: log) { number, text in
            if stopped { return }
            if pending.isEmpty {
                guard text.contains(where: { !$0.isWhitespace }) else { return }
                pendingStart = number
            }
            pending += text + "\n"
            if Database.isComplete(pending) { try run() }
        }
        try run()
        return !stopped
    }

    /// Why the sandbox refused a script's statement, from what it refused (`denied`): a non-deterministic function
    /// (`random()`), a step an allowed statement needs (an `INSERT … SELECT` reading a table), or the statement itself.
    package static func refusal(of statement: String, denied: [String]) -> String {
        let verb = verb(of: statement)
        if let function = denied.first(where: { $0.hasSuffix("()") }) {
            return "\(verb) calls \(function), whose result is not decided by the input: a script read as data may call only deterministic functions"
        }
        if ["INSERT", "CREATE TABLE", "CREATE INDEX", "CREATE UNIQUE INDEX", "BEGIN", "COMMIT", "END"].contains(verb) {
            return "\(verb) needs \(denied[0]), which a script read as data may not do (CREATE TABLE, CREATE INDEX, INSERT of values and transactions run)"
        }
        return "\(verb) is not allowed in a script read as data (only CREATE TABLE, CREATE INDEX, INSERT and transactions run)"
    }

    /// What a statement does, as its first words say (`DROP TABLE`, `ATTACH`, `PRAGMA`), for messages: SQLite's
    /// authorizer sees the steps (a `DROP TABLE` first deletes from the schema table), not the statement.
    package static func verb(of statement: String) -> String {
        let words = statement.split(whereSeparator: { $0.isWhitespace || $0 == "(" || $0 == ";" }).prefix(3).map { $0.uppercased() }
        guard let first = words.first else { return "an empty statement" }
        if ["CREATE", "DROP", "ALTER"].contains(first), words.count > 1 {
            return words[1] == "TEMP" || words[1] == "TEMPORARY" || words[1] == "VIRTUAL" || words[1] == "UNIQUE"
                ? words.prefix(3).joined(separator: " ") : words.prefix(2).joined(separator: " ")
        }
        return first
    }

    /// The UTF-8 offset of the first character at or after `offset` in `text` that is neither white space nor part of
    /// a comment (`-- …` to the line's end, `/* … */`), or `offset` when only those follow.
    package static func statementStart(after offset: Int, in text: String) -> Int {
        let bytes = Array(text.utf8)
        var index = offset
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C:
                index += 1
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count, bytes[index] != 0x0A { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 2
            default:
                return index
            }
        }
        return offset
    }

    /// The number of line breaks before the first non-blank character at or after `offset` (UTF-8) in `text`.
    package static func lineOffset(of offset: Int, in text: String) -> Int {
        var breaks = 0
        for (index, byte) in text.utf8.enumerated() {
            if index >= offset && !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D) { break }
            if byte == 0x0A { breaks += 1 }
        }
        return breaks
    }
}
