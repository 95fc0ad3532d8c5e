import Foundation
import CSQLite

/// A value as SQLite stores it.
public enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The value as text, the way a message or an export shows it; `nil` for NULL.
    public var textValue: String? {
        switch self {
        case .null: return nil
        case .integer(let value): return String(value)
        case .real(let value): return SQLValue.format(value)
        case .text(let value): return value
        case .blob(let bytes): return Hexadecimal.text(of: bytes)
        }
    }

    /// The bytes of a blob; `nil` for every other value.
    public var blobBytes: [UInt8]? {
        if case .blob(let bytes) = self { return bytes }
        return nil
    }

    /// Shortest decimal text that reads back as the same double, never in exponent form for ordinary coordinates.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) + ".0" }
        return "\(value)"
    }
}

/// An SQLite failure: the result code, SQLite's own message and the SQL that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary or extended result code, as in `sqlite3.h`.
    public let code: Int32
    /// SQLite's message for the failure.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?
    /// True when `Database.prepareQuery` refused the statement because its result would not be decided by the data
    /// (`random()`, the clock).
    public var isNotDeterministic = false

    /// SQLite's result `code` and `message` for the statement `sql` (when there was one).
    public init(code: Int32, message: String, sql: String?) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        return text
    }

    /// True when the failure means the disk or the file system refused the write.
    public var isStorageFailure: Bool {
        let primary = code & 0xff
        return primary == SQLITE_FULL || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN
            || primary == SQLITE_READONLY || primary == SQLITE_PERM
    }

    /// True when SQLite found no room on a disk (the database's, or its temporary folder's).
    public var isDiskFull: Bool { code & 0xff == SQLITE_FULL }

    /// True when a time limit (`Database.withTimeLimit`) stopped the statement.
    public var isInterrupted: Bool { code & 0xff == SQLITE_INTERRUPT }

    /// True when another process holds a lock on the database (or a file beside it).
    public var isLocked: Bool {
        let primary = code & 0xff
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED
    }

    /// True when the file is not a database at all or is damaged.
    public var isNotADatabase: Bool {
        let primary = code & 0xff
        return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
    }
}

/// A flag that one thread raises to stop the SQL another thread runs under `Database.stopping(when:)`.
public final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false

    public init() {}

    /// Stops the SQL run under this signal.
    public func raise() {
        lock.lock()
        raised = true
        lock.unlock()
    }

    /// True once the signal was raised.
    public var isRaised: Bool {
        lock.lock()
        defer { lock.unlock() }
        return raised
    }
}

/// One open SQLite connection. Not `Sendable`: a connection is used from one thread at a time.
public final class Database {
    /// The connection; read by the other SQLite wrapper files (`SQLite+Session.swift`), never outside CWrappers.
    private(set) var handle: OpaquePointer?
    /// The path the connection was opened on.
    public let path: String
    /// What a sandboxed connection may do, and what it did; kept alive here for SQLite's callbacks.
    private var sandbox: SandboxState?
    /// What the authorizer and the progress handler read and record (passed to their C callbacks).
    private let guards = SQLGuards()

    /// How a database file is opened.
    public enum Mode { case readOnly, readWrite, create }

    /// Opens (or creates) the database at `path`, offering `functions` to its SQL besides SQLite's own. With
    /// `readOnlyAttachments`, the connection may attach files read-only (`attachReadOnly`: SQLite reads `ATTACH`'s
    /// file name as a URI then; `path` itself is a URI only if it starts with `file:`, which an absolute path never does).
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String, mode: Mode = .create, functions: [SQLFunction] = [], readOnlyAttachments: Bool = false) throws {
        _ = Database.libraryConfigured
        self.path = path
        var flags: Int32 = SQLITE_OPEN_NOMUTEX
        if readOnlyAttachments { flags |= SQLITE_OPEN_URI }
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        if result != SQLITE_OK {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            handle = nil
            throw SQLiteError(code: result, message: message, sql: nil)
        }
        sqlite3_extended_result_codes(handle, 1)
        let registered = Database.register(functions, on: handle)
        if registered != SQLITE_OK {
            let failure = error(registered, sql: nil)
            sqlite3_close_v2(handle)
            handle = nil
            throw failure
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// The process-wide SQLite settings, applied once before the first connection: no memory statistics.
    private static let libraryConfigured: Void = { _ = kiln_sqlite3_disable_memory_statistics() }()

    /// Attaches the database file at `path` as `schema`, read-only: SQLite refuses any write to it
    /// (`SQLITE_READONLY`). The connection must have been opened with `readOnlyAttachments`.
    /// - Throws: `SQLiteError` when SQLite refuses the attachment (no such file, or inside a transaction).
    public func attachReadOnly(_ path: String, as schema: String) throws {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~".utf8)
        let escaped = path.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
        try execute("ATTACH DATABASE \(quoteLiteral("file:\(escaped)?mode=ro")) AS \(quoteIdentifier(schema))")
    }

    /// Refuses from now on the SQL that reaches other files, `ATTACH` and `VACUUM INTO` (SQLite authorizes both as
    /// an attach): for connections that run SQL a manifest wrote, which must read and write nothing else.
    public func refuseOtherFiles() {
        guards.refusesOtherFiles = true
        installAuthorizer()
    }

    private func installAuthorizer() {
        sqlite3_set_authorizer(handle, { userData, action, first, second, _, _ in
            let guards = Unmanaged<SQLGuards>.fromOpaque(userData!).takeUnretainedValue()
            return guards.authorize(action, first.map { String(cString: $0) }, second.map { String(cString: $0) })
        }, Unmanaged.passUnretained(guards).toOpaque())
    }

    /// Compiles SQL a manifest wrote (a query table, an `sql` rule, an export query): it must be exactly one
    /// statement that only reads. An authorizer allows only reading tables and views and calling functions
    /// (SQLite's and Kiln's, not `load_extension`) while it is compiled; `sqlite3_stmt_readonly` confirms it, and
    /// anything after the first statement but white space, `;` and comments is refused.
    /// - Throws: `SQLiteError` (code `SQLITE_AUTH` for SQL that is not one read-only statement) with a sentence
    ///   saying what was refused.
    ///
    /// It must also give the same result in every build: a call to `random()`, `randomblob()`, `changes()`,
    /// `total_changes()` or `CURRENT_DATE`/`CURRENT_TIME`/`CURRENT_TIMESTAMP`, and a date and time function in SQL
    /// holding the text `'now'`, `'localtime'` or `'utc'`, are refused here; from the first query on, the date and
    /// time functions of this connection refuse the clock and the time zone as they run too (a `'now'` that reaches
    /// them from a table, or `date()` without arguments): `ClockFreeDates`.
    public func prepareQuery(_ sql: String) throws -> Statement {
        try refuseTheClockInQueries()
        guards.readOnly = true
        guards.resetRefusal()
        installAuthorizer()
        defer { guards.readOnly = false }
        let statement: Statement
        do {
            statement = try compileOne(sql)
        } catch is SQLiteError where guards.refusedFunction != nil {
            var refusal = SQLiteError(code: SQLITE_AUTH, message: ClockFreeDates.refusal("\(guards.refusedFunction ?? "")()", in: .manifest), sql: sql)
            refusal.isNotDeterministic = true
            throw refusal
        } catch let error as SQLiteError where guards.refused != nil || error.code & 0xff == SQLITE_AUTH {
            let what = guards.refused ?? "a statement that does not only read"
            throw SQLiteError(code: SQLITE_AUTH, message: "manifest SQL may only read, but this one holds \(what)", sql: sql)
        }
        if let function = guards.calledDates.sorted().first, let word = ClockFreeDates.clockWord(inLiteralsOf: sql) {
            var refusal = SQLiteError(code: SQLITE_AUTH, message: ClockFreeDates.refusal("\(function)(…'\(word)'…)", in: .manifest), sql: sql)
            refusal.isNotDeterministic = true
            throw refusal
        }
        guard sqlite3_stmt_readonly(statement.handle) != 0 else {
            let keyword = sql.trimmingCharacters(in: .whitespacesAndNewlines).prefix { $0.isLetter }.uppercased()
            throw SQLiteError(code: SQLITE_AUTH, message: "manifest SQL may only read, but this statement (\(keyword)) writes", sql: sql)
        }
        return statement
    }

    /// Replaces this connection's date and time functions with `ClockFreeDates`'s, once: for SQL a manifest wrote.
    private func refuseTheClockInQueries() throws {
        guard !guards.clockRefused, let handle else { return }
        try ClockFreeDates.register(on: handle, for: .manifest)
        guards.clockRefused = true
    }

    /// Compiles exactly one statement; text after it other than white space, `;` and comments is an error.
    /// - Throws: `SQLiteError` with SQLite's message, or saying that more than one statement was given.
    public func prepareSingle(_ sql: String) throws -> Statement {
        try compileOne(sql)
    }

    private func compileOne(_ sql: String) throws -> Statement {
        let first = prepareFirst(Array(sql.utf8))
        guard first.result == SQLITE_OK, let statement = first.statement else {
            sqlite3_finalize(first.statement)
            throw error(first.result, sql: sql)
        }
        let compiled = Statement(statement, database: self, sql: sql)
        // What follows is compiled only to find out whether it is a statement, never run: with the usual authorizer.
        let readOnly = guards.readOnly
        guards.readOnly = false
        defer { guards.readOnly = readOnly }
        var remaining = first.rest
        while !remaining.isEmpty {
            let next = prepareFirst(remaining)
            sqlite3_finalize(next.statement)
            if next.result != SQLITE_OK || next.statement != nil {
                let extra = String(decoding: remaining, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                throw SQLiteError(code: SQLITE_ERROR, message: "only one statement is allowed, but text follows the first: \"\(extra.prefix(80))\"", sql: sql)
            }
            if next.rest.count >= remaining.count { break }
            remaining = next.rest
        }
        return compiled
    }

    /// Compiles the first statement of `bytes`: SQLite's result, the statement (`nil` when there was only white space
    /// or comments; the caller finalizes it) and the bytes after it.
    private func prepareFirst(_ bytes: [UInt8]) -> (result: Int32, statement: OpaquePointer?, rest: [UInt8]) {
        var statement: OpaquePointer?
        var rest: [UInt8] = []
        let result: Int32 = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                var tail: UnsafePointer<CChar>?
                let result = sqlite3_prepare_v2(handle, text.baseAddress, Int32(text.count), &statement, &tail)
                if let tail, let base = text.baseAddress { rest = Array(bytes[(tail - base)...]) }
                return result
            }
        }
        return (result, statement, rest)
    }

    /// Runs `body` with a limit of `seconds` per call: a statement still running then is stopped and fails with an
    /// `SQLiteError` whose `isInterrupted` is true. A limit of 0 or less means none.
    public func withTimeLimit<T>(_ seconds: Double, _ body: () throws -> T) rethrows -> T {
        guard seconds > 0 else { return try body() }
        let previous = guards.deadline
        guards.deadline = min(previous, DispatchTime.now().uptimeNanoseconds + UInt64(min(seconds, 1e9) * 1e9))
        installProgressHandler()
        defer {
            guards.deadline = previous
            installProgressHandler()
        }
        return try body()
    }

    /// Limits every statement from now until the connection closes to `seconds` in all: one still running then, and
    /// every later one, fails with an `SQLiteError` whose `isInterrupted` is true. For a connection on a file the
    /// caller did not write, whose tables may be views or triggers that never end. `withTimeLimit` inside it can
    /// only shorten it; `pausingTimeLimit` stops its clock. A limit of 0 or less means none.
    public func limitLifetime(toSeconds seconds: Double) {
        guard seconds > 0 else { return }
        guards.deadline = min(guards.deadline, DispatchTime.now().uptimeNanoseconds + UInt64(min(seconds, 1e9) * 1e9))
        installProgressHandler()
    }

    /// Runs `body` with the clock of the current time limit (`withTimeLimit`) stopped: no limit applies inside, and
    /// the time `body` takes is added to the limit's deadline. For work a limited task needs but does not own, such
    /// as an index built for it once.
    public func pausingTimeLimit<T>(_ body: () throws -> T) rethrows -> T {
        let paused = guards.deadline
        guard paused != .max else { return try body() }
        let started = DispatchTime.now().uptimeNanoseconds
        guards.deadline = .max
        installProgressHandler()
        defer {
            let elapsed = DispatchTime.now().uptimeNanoseconds - started
            guards.deadline = paused >= .max - elapsed ? .max - 1 : paused + elapsed
            installProgressHandler()
        }
        return try body()
    }

    /// Runs `body` so that raising `signal` (from any thread) stops the statement running then and every later one:
    /// they fail with an `SQLiteError` whose `isInterrupted` is true. For work that another thread may find useless
    /// before it ends (full-text indexes built while the rules run, which then find errors).
    public func stopping<T>(when signal: StopSignal, _ body: () throws -> T) rethrows -> T {
        let previous = guards.stop
        guards.stop = signal
        installProgressHandler()
        defer {
            guards.stop = previous
            installProgressHandler()
        }
        return try body()
    }

    /// SQLite's progress handler, set while a time limit or a stop signal applies (`SQLGuards.shouldStop`).
    private func installProgressHandler() {
        guard guards.deadline != .max || guards.stop != nil else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            return
        }
        sqlite3_progress_handler(handle, 10_000, { userData in
            Unmanaged<SQLGuards>.fromOpaque(userData!).takeUnretainedValue().shouldStop ? 1 : 0
        }, Unmanaged.passUnretained(guards).toOpaque())
    }

    /// Closes the connection; any later use of it fails.
    /// - Throws: `SQLiteError` when SQLite refuses to close.
    public func close() throws {
        guard let current = handle else { return }
        let result = sqlite3_close_v2(current)
        guard result == SQLITE_OK else { throw error(result, sql: nil) }
        handle = nil
    }

    /// Runs one or more statements that return no rows.
    /// - Throws: `SQLiteError` with the failing SQL.
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        if result != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Compiles one statement for repeated use.
    /// - Throws: `SQLiteError` with SQLite's message and the SQL.
    public func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(result, sql: sql) }
        return Statement(statement, database: self, sql: sql)
    }

    /// Runs a query and returns every row, each as its values in column order.
    /// - Throws: `SQLiteError` with the failing SQL.
    public func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        var rows: [Row] = []
        while let row = try statement.step() { rows.append(row) }
        return rows
    }

    /// Runs a query and hands each row to `body` as it is read, so that memory does not grow with the result.
    /// - Throws: `SQLiteError` with the failing SQL, or what `body` throws.
    public func forEachRow(_ sql: String, _ arguments: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while let row = try statement.step() { try body(row) }
    }

    /// Runs `body` inside one transaction, committed when it returns and rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    fileprivate func error(_ result: Int32, sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
        let code = handle.map { sqlite3_extended_errcode($0) } ?? result
        return SQLiteError(code: code, message: message, sql: sql)
    }
}

/// What a connection's authorizer and progress handler read: whether manifest SQL is being compiled (only reads
/// allowed), whether other files are refused, what was refused last, and when a time limit ends.
/// Not `Sendable`: it belongs to its connection.
private final class SQLGuards {
    var readOnly = false
    var refusesOtherFiles = false
    var refused: String?
    /// When statements are stopped (`Database.withTimeLimit`); `.max` for never.
    var deadline: UInt64 = .max
    /// The signal that stops statements when raised (`Database.stopping(when:)`).
    var stop: StopSignal?

    /// True once the deadline has passed or the stop signal was raised.
    var shouldStop: Bool {
        (deadline != .max && DispatchTime.now().uptimeNanoseconds > deadline) || stop?.isRaised == true
    }

    /// The function whose result is not decided by its arguments that the query being compiled calls, if any.
    var refusedFunction: String?
    /// The date and time functions the query being compiled calls.
    var calledDates: Set<String> = []
    /// True once the connection's date and time functions refuse the clock (`Database.prepareQuery`).
    var clockRefused = false

    func resetRefusal() {
        refused = nil
        refusedFunction = nil
        calledDates = []
    }

    /// Actions that read and nothing else.
    private static let reads: Set<Int32> = [SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE]
    /// Functions refused even in reads.
    private static let refusedFunctions: Set<String> = ["load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"]

    func authorize(_ action: Int32, _ first: String?, _ second: String?) -> Int32 {
        guard readOnly else { return refusesOtherFiles && action == SQLITE_ATTACH ? SQLITE_DENY : SQLITE_OK }
        if SQLGuards.reads.contains(action) {
            guard action == SQLITE_FUNCTION, let name = second?.lowercased() else { return SQLITE_OK }
            if SandboxState.nonDeterministicFunctions.contains(name) {
                refusedFunction = refusedFunction ?? name
                return SQLITE_DENY
            }
            if ClockFreeDates.names.contains(name) { calledDates.insert(name) }
            guard SQLGuards.refusedFunctions.contains(name) else { return SQLITE_OK }
            refused = "a call to \(name)()"
            return SQLITE_DENY
        }
        if refused == nil {
            // A statement that changes the schema asks to write sqlite_master first.
            let schemaWrite = ["sqlite_master", "sqlite_temp_master"].contains(first ?? "")
            refused = schemaWrite ? "a change to the schema (CREATE, DROP or ALTER)" : SQLGuards.describe(action, first)
        }
        return SQLITE_DENY
    }

    private static func describe(_ action: Int32, _ argument: String?) -> String {
        let names: [Int32: String] = [
            SQLITE_INSERT: "an INSERT", SQLITE_UPDATE: "an UPDATE", SQLITE_DELETE: "a DELETE", SQLITE_PRAGMA: "a PRAGMA",
            SQLITE_ATTACH: "an ATTACH or VACUUM INTO", SQLITE_DETACH: "a DETACH", SQLITE_TRANSACTION: "a transaction",
            SQLITE_SAVEPOINT: "a SAVEPOINT", SQLITE_ANALYZE: "an ANALYZE", SQLITE_ALTER_TABLE: "an ALTER TABLE",
            SQLITE_REINDEX: "a REINDEX", SQLITE_CREATE_TABLE: "a CREATE TABLE", SQLITE_CREATE_TEMP_TABLE: "a CREATE TABLE",
            SQLITE_CREATE_VIEW: "a CREATE VIEW", SQLITE_CREATE_TEMP_VIEW: "a CREATE VIEW", SQLITE_CREATE_INDEX: "a CREATE INDEX",
            SQLITE_CREATE_TRIGGER: "a CREATE TRIGGER", SQLITE_CREATE_TEMP_TRIGGER: "a CREATE TRIGGER",
            SQLITE_CREATE_VTABLE: "a CREATE VIRTUAL TABLE", SQLITE_DROP_TABLE: "a DROP TABLE", SQLITE_DROP_VIEW: "a DROP VIEW",
            SQLITE_DROP_INDEX: "a DROP INDEX", SQLITE_DROP_TRIGGER: "a DROP TRIGGER", SQLITE_DROP_VTABLE: "a DROP TABLE",
        ]
        let name = names[action] ?? "an action other than reading (SQLite authorizer code \(action))"
        guard let argument, action != SQLITE_TRANSACTION, action != SQLITE_ATTACH else { return name }
        return "\(name) (\(argument))"
    }
}

/// One result row: column names and values, in the order the query selected them.
public struct Row: Sendable {
    /// The result column names.
    public let columns: [String]
    /// The values, aligned with `columns`.
    public let values: [SQLValue]

    /// The value of the named column, or `.null` when the query has no such column.
    public subscript(name: String) -> SQLValue {
        guard let index = columns.firstIndex(of: name) else { return .null }
        return values[index]
    }
}

/// A compiled statement. Not `Sendable`: it belongs to its connection's thread.
public final class Statement {
    fileprivate let handle: OpaquePointer
    private let database: Database
    /// The statement's SQL text.
    public let sql: String
    /// The names of the result columns.
    public let columnNames: [String]
    /// How many parameters the statement takes.
    private let parameterCount: Int

    fileprivate init(_ handle: OpaquePointer, database: Database, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
        columnNames = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
        parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, in order.
    /// - Throws: `SQLiteError` when a value cannot be bound.
    public func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        // Binding every parameter replaces every earlier value: clearing them first would be wasted work.
        if values.count != parameterCount { sqlite3_clear_bindings(handle) }
        for (offset, value) in values.enumerated() {
            let result = bindCopy(value, at: Int32(offset + 1))
            guard result == SQLITE_OK else { throw database.error(result, sql: sql) }
        }
    }

    /// Binds `value` (SQLite copies texts and blobs) to parameter `index`; returns SQLite's result code.
    private func bindCopy(_ value: SQLValue, at index: Int32) -> Int32 {
        switch value {
        case .null: return sqlite3_bind_null(handle, index)
        case .integer(let number): return sqlite3_bind_int64(handle, index, number)
        case .real(let number): return sqlite3_bind_double(handle, index, number)
        case .text(let text):
            return text.withCString { kiln_sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count)) }
        case .blob(let bytes):
            return bytes.withUnsafeBytes { kiln_sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count)) }
        }
    }

    /// Resets the statement and binds named parameters (`:name` in the SQL) from `values`; parameters the
    /// statement does not use are ignored, and those it uses but `values` lacks stay NULL.
    /// - Throws: `SQLiteError` when a value cannot be bound.
    public func bind(named values: [String: SQLValue]) throws {
        var ordered = [SQLValue](repeating: .null, count: Int(sqlite3_bind_parameter_count(handle)))
        for (name, value) in values {
            let index = Int(sqlite3_bind_parameter_index(handle, ":" + name))
            if index > 0 { ordered[index - 1] = value }
        }
        try bind(ordered)
    }

    /// The names of the statement's parameters (`:name`, without the colon), in order; unnamed ones are skipped.
    public var parameterNames: [String] {
        let count = sqlite3_bind_parameter_count(handle)
        guard count > 0 else { return [] }
        return (1...count).compactMap { index in
            guard let name = sqlite3_bind_parameter_name(handle, index) else { return nil }
            let text = String(cString: name)
            return text.hasPrefix(":") ? String(text.dropFirst()) : nil
        }
    }

    /// Advances to the next row; `nil` when the statement is done.
    /// - Throws: `SQLiteError` with the statement's SQL.
    public func step() throws -> Row? {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW:
            return Row(columns: columnNames, values: (0..<Int32(columnNames.count)).map(value(at:)))
        case SQLITE_DONE:
            return nil
        default:
            throw database.error(result, sql: sql)
        }
    }

    /// Binds `values` and runs the statement to completion, for inserts and updates.
    /// - Throws: `SQLiteError` with the statement's SQL.
    public func run(_ values: [SQLValue]) throws {
        var bytes: [UInt8] = []
        swap(&bytes, &textBytes)
        defer { swap(&bytes, &textBytes) }
        bytes.removeAll(keepingCapacity: true)
        for value in values {
            guard case .text(let text) = value else { continue }
            if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
                bytes.append(contentsOf: text.utf8)
            }
        }
        guard !bytes.isEmpty else {
            try bind(values)
            while try step() != nil {}
            return
        }
        // The texts are bound in place (SQLITE_STATIC), not copied by SQLite one by one: that saves an allocation
        // per text. No binding outlives the buffer: they are cleared before it is let go.
        try bytes.withUnsafeBufferPointer { buffer in
            defer { sqlite3_clear_bindings(handle) }
            sqlite3_reset(handle)
            var offset = 0
            for (position, value) in values.enumerated() {
                let index = Int32(position + 1)
                let result: Int32
                if case .text(let text) = value, !text.isEmpty {
                    let count = text.utf8.count
                    let start = UnsafeRawPointer(buffer.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
                    result = sqlite3_bind_text(handle, index, start, Int32(count), nil)
                    offset += count
                } else {
                    result = bindCopy(value, at: index)
                }
                guard result == SQLITE_OK else { throw database.error(result, sql: sql) }
            }
            while try step() != nil {}
        }
    }

    /// The UTF-8 of the texts `run` binds, reused from one row to the next.
    private var textBytes: [UInt8] = []

    private func value(at index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(handle, index)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }
}

/// Quotes an identifier for SQL built from manifest names (which are also checked to be plain identifiers).
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Quotes a string literal for SQL.
public func quoteLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

// MARK: - Sandbox

/// What a sandboxed connection may run (see `Database.sandboxed(deserializing:seconds:)`).
public enum SandboxPolicy: Sendable {
    /// A legacy script: `CREATE TABLE` (with deterministic `DEFAULT` and `CHECK` expressions), `CREATE INDEX`, `INSERT`
    /// (of values, or of rows of its own tables) and transactions; nothing else.
    case script
    /// Queries: `SELECT` reading tables and calling SQLite's built-in functions; nothing else.
    case query
    /// Anything but `ATTACH`, for Kiln's own statements between the two.
    case kiln
}

/// The sandbox's state, reached from SQLite's C callbacks through an unmanaged pointer.
private final class SandboxState {
    var policy = SandboxPolicy.script
    var deadline: UInt64
    var timedOut = false
    var denied: [String] = []
    var inserted: [(table: String, rowid: Int64)] = []

    init(deadline: UInt64) { self.deadline = deadline }

    /// SQLite's built-in functions whose result is not decided by their arguments (sqlite.org/deterministic.html):
    /// a script's `DEFAULT (random())` or a database file's view calling them would ship different values from the
    /// same input. The date and time functions are non-deterministic only with `'now'` (or a time zone), which the
    /// authorizer cannot see: `ClockFreeDates` refuses those calls.
    static let nonDeterministicFunctions: Set<String> = [
        "random", "randomblob", "changes", "total_changes", "current_date", "current_time", "current_timestamp",
    ]

    /// Each of `nonDeterministicFunctions` with its number of arguments.
    static let nonDeterministicFunctionArities: [(String, Int32)] = [
        ("random", 0), ("randomblob", 1), ("changes", 0), ("total_changes", 0), ("current_date", 0), ("current_time", 0),
        ("current_timestamp", 0),
    ]

    /// The non-deterministic function the last refused call named, for the message.
    var refusedFunction: String?

    func allows(_ action: Int32, _ first: String?, _ second: String?) -> Bool {
        if policy != .kiln, action == SQLITE_FUNCTION, let name = second?.lowercased(), SandboxState.nonDeterministicFunctions.contains(name) {
            refusedFunction = name
            return false
        }
        switch policy {
        case .kiln:
            return action != SQLITE_ATTACH && action != SQLITE_DETACH
        case .query:
            return [SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE].contains(action)
        case .script:
            switch action {
            // A multi-row `VALUES (…), (…)` is compiled as a SELECT of its rows; a CHECK reads its table's columns;
            // DEFAULT and CHECK expressions call functions (only deterministic ones, above). Reading reaches only the
            // script's own tables: the connection holds nothing else.
            case SQLITE_CREATE_TABLE, SQLITE_CREATE_INDEX, SQLITE_TRANSACTION, SQLITE_INSERT, SQLITE_SELECT, SQLITE_FUNCTION,
                 SQLITE_READ:
                return true
            // CREATE TABLE … PRIMARY KEY/UNIQUE updates SQLite's own schema table.
            case SQLITE_UPDATE: return first == "sqlite_master" || first == "sqlite_schema"
            default: return false
            }
        }
    }

    /// The name of an authorizer action code, for messages.
    static func actionName(_ action: Int32) -> String {
        let names: [Int32: String] = [
            SQLITE_ATTACH: "ATTACH", SQLITE_DETACH: "DETACH", SQLITE_PRAGMA: "PRAGMA", SQLITE_DELETE: "DELETE",
            SQLITE_UPDATE: "UPDATE", SQLITE_DROP_TABLE: "DROP TABLE", SQLITE_CREATE_TRIGGER: "CREATE TRIGGER",
            SQLITE_CREATE_VIEW: "CREATE VIEW", SQLITE_SELECT: "SELECT", SQLITE_READ: "reading a table",
            SQLITE_FUNCTION: "a function call", SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE", SQLITE_ALTER_TABLE: "ALTER TABLE",
            SQLITE_INSERT: "INSERT", SQLITE_CREATE_TABLE: "CREATE TABLE", SQLITE_CREATE_INDEX: "CREATE INDEX",
            SQLITE_ANALYZE: "ANALYZE", SQLITE_REINDEX: "REINDEX", SQLITE_SAVEPOINT: "SAVEPOINT",
            SQLITE_CREATE_TEMP_TABLE: "CREATE TEMP TABLE", SQLITE_DROP_INDEX: "DROP INDEX", SQLITE_TRANSACTION: "a transaction",
        ]
        return names[action] ?? "action \(action)"
    }
}

/// SQLite's date and time functions for a sandboxed connection: the results of SQLite's own (computed by a plain
/// connection of their own), except for a call whose result is decided by the clock — `'now'`, or no time value
/// at all (`date()`) — or by the machine's time zone (the `'localtime'` and `'utc'` modifiers): it fails, naming
/// itself, so that two builds of the same input cannot differ. SQLite compiles a column's DEFAULT and a stored
/// view without asking the authorizer, and reads `'now'` from the arguments' values at run time, so only the
/// functions themselves can refuse.
private final class ClockFreeDates {
    /// SQLite's date and time functions (sqlite.org/lang_datefunc.html, SQLite 3.40).
    static let names = ["date", "time", "datetime", "julianday", "unixepoch", "strftime"]

    /// The plain connection that computes the results.
    private let helper: Database
    /// A prepared `SELECT name(?, …)` by function name and number of arguments.
    private var statements: [String: OpaquePointer] = [:]

    /// Whose SQL the functions serve.
    let reader: Reader

    private init(_ reader: Reader) throws {
        self.reader = reader
        helper = try Database(path: ":memory:")
    }

    deinit { for statement in statements.values { sqlite3_finalize(statement) } }

    /// One function's name, as its C callback's user data.
    private final class Function {
        let name: String
        let dates: ClockFreeDates
        init(_ name: String, _ dates: ClockFreeDates) { self.name = name; self.dates = dates }
    }

    /// Whose SQL the functions serve, for their messages.
    enum Reader {
        /// SQL an input file holds (the `sqlite` reader's sandbox).
        case file
        /// SQL a manifest wrote (query tables, rules, export queries).
        case manifest
    }

    /// The message refusing `call` in SQL of `reader`.
    static func refusal(_ call: String, in reader: Reader) -> String {
        switch reader {
        case .file:
            return "\(call) is not allowed in data read from a file: its result is decided by the clock or the machine's time zone, not by the input"
        case .manifest:
            return "\(call) is not allowed in manifest SQL: its result is decided by chance, the clock or the machine's time zone, not by the data, "
                + "so two builds of the same input would differ (compare with a date the data holds, or a parameter)"
        }
    }

    /// The first of `now`, `localtime` and `utc` that a string literal of `sql` holds (as SQLite would read the
    /// literal, around white space and in any case), else `nil`; comments and quoted identifiers are passed over.
    static func clockWord(inLiteralsOf sql: String) -> String? {
        let bytes = Array(sql.utf8)
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "'"):
                var literal: [UInt8] = []
                index += 1
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "'") {
                        if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") { literal.append(bytes[index]); index += 2; continue }
                        break
                    }
                    literal.append(bytes[index])
                    index += 1
                }
                let word = String(decoding: literal, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
                if ["now", "localtime", "utc"].contains(word) { return word }
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let close = bytes[index] == UInt8(ascii: "[") ? UInt8(ascii: "]") : bytes[index]
                index += 1
                while index < bytes.count, bytes[index] != close { index += 1 }
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 1
            default: break
            }
            index += 1
        }
        return nil
    }

    /// Replaces the date and time functions on the connection `handle`, for SQL of `reader`.
    /// - Throws: `SQLiteError` when SQLite refuses.
    static func register(on handle: OpaquePointer, for reader: Reader = .file) throws {
        let dates = try ClockFreeDates(reader)
        for name in names {
            let function = Unmanaged.passRetained(Function(name, dates)).toOpaque()
            let result = sqlite3_create_function_v2(handle, name, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, function, { context, count, values in
                guard let context, let data = sqlite3_user_data(context) else { return }
                let function = Unmanaged<Function>.fromOpaque(data).takeUnretainedValue()
                let arguments = (0..<Int(count)).map { values?[$0] }
                let texts = arguments.map { value -> String? in
                    let type = sqlite3_value_type(value)
                    guard type == SQLITE_TEXT || type == SQLITE_BLOB else { return nil }
                    let length = Int(sqlite3_value_bytes(value))
                    guard let bytes = sqlite3_value_blob(value), length > 0 else { return "" }
                    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
                }
                if let call = ClockFreeDates.clockCall(function.name, texts) {
                    sqlite3_result_error(context, ClockFreeDates.refusal(call, in: function.dates.reader), -1)
                    return
                }
                function.dates.compute(function.name, arguments, into: context)
            }, nil, nil, { data in
                if let data { Unmanaged<Function>.fromOpaque(data).release() }
            })
            guard result == SQLITE_OK else { throw SQLiteError(code: result, message: String(cString: sqlite3_errmsg(handle)), sql: nil) }
        }
    }

    /// The call as a message shows it (`date('now')`) when its result is not decided by its arguments, else `nil`;
    /// `texts` are the arguments that are text (`nil` for the others).
    static func clockCall(_ name: String, _ texts: [String?]) -> String? {
        let first = name == "strftime" ? 1 : 0
        guard texts.count > first else { return "\(name)()" }
        for text in texts[first...] {
            guard let word = text?.trimmingCharacters(in: .whitespaces).lowercased() else { continue }
            if word == "now" { return "\(name)('now')" }
            if word == "localtime" || word == "utc" { return "\(name)(…, '\(word)')" }
        }
        return nil
    }

    /// Computes `name(arguments…)` with SQLite's own function and gives the result to `context`.
    private func compute(_ name: String, _ arguments: [OpaquePointer?], into context: OpaquePointer) {
        let key = "\(name)/\(arguments.count)"
        if statements[key] == nil {
            let sql = "SELECT \(name)(\(Array(repeating: "?", count: arguments.count).joined(separator: ", ")))"
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(helper.handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                sqlite3_result_error(context, sqlite3_errmsg(helper.handle), -1)
                return
            }
            statements[key] = statement
        }
        guard let statement = statements[key] else { return }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in arguments.enumerated() { sqlite3_bind_value(statement, Int32(index + 1), value) }
        if sqlite3_step(statement) == SQLITE_ROW {
            sqlite3_result_value(context, sqlite3_column_value(statement, 0))
        } else {
            sqlite3_result_error(context, sqlite3_errmsg(helper.handle), -1)
        }
    }
}

extension Database {
    /// An in-memory connection for SQL an input file holds, which must touch nothing else: hardened (defensive mode,
    /// untrusted schema, no extensions, texts and blobs of at most 64 MiB), with an authorizer that allows only what `setPolicy` says (`ATTACH` never)
    /// and a progress handler that interrupts any statement once `seconds` have passed since opening. With `bytes`,
    /// the connection holds a copy of that SQLite database file (read by the caller; SQLite opens no file), read-only.
    /// - Throws: `SQLiteError` when SQLite refuses (e.g. the bytes are not a database: that shows at the first query).
    public static func sandboxed(deserializing bytes: [UInt8]? = nil, seconds: Double, functions: [SQLFunction] = []) throws -> Database {
        let database = try Database(path: ":memory:", functions: functions)
        guard let handle = database.handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "closed", sql: nil) }
        let hardened = kiln_sqlite3_harden(handle)
        guard hardened == SQLITE_OK else { throw database.error(hardened, sql: nil) }
        // No single text or blob over 64 MiB (the default is 1 GB): `zeroblob` and recursive queries stay bounded.
        sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 64 << 20)
        // The authorizer refuses a call to a non-deterministic function where SQLite asks it (a statement's own
        // expressions); a column's DEFAULT and a stored view are compiled without asking, so the functions
        // themselves are replaced by ones that fail, naming themselves.
        for (name, arguments) in SandboxState.nonDeterministicFunctionArities {
            let result = sqlite3_create_function_v2(handle, name, arguments, SQLITE_UTF8 | SQLITE_INNOCUOUS, strdup(name), { context, _, _ in
                let name = sqlite3_user_data(context).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "a function"
                let message = "\(name)() is not allowed in data read from a file: its result is not decided by the input"
                sqlite3_result_error(context, message, -1)
            }, nil, nil, { free($0) })
            guard result == SQLITE_OK else { throw database.error(result, sql: nil) }
        }
        try ClockFreeDates.register(on: handle)
        if let bytes {
            guard let buffer = sqlite3_malloc64(UInt64(max(bytes.count, 1))) else {
                throw SQLiteError(code: SQLITE_NOMEM, message: "out of memory for a \(bytes.count)-byte database", sql: nil)
            }
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY)
            let result = sqlite3_deserialize(handle, "main", buffer.assumingMemoryBound(to: UInt8.self),
                                             Int64(bytes.count), Int64(bytes.count), flags)
            guard result == SQLITE_OK else { throw database.error(result, sql: nil) }
        }
        let nanoseconds = UInt64(max(0, min(seconds, 86_400)) * 1e9)
        let state = SandboxState(deadline: DispatchTime.now().uptimeNanoseconds + nanoseconds)
        database.sandbox = state
        let context = Unmanaged.passUnretained(state).toOpaque()
        sqlite3_set_authorizer(handle, { context, action, first, second, _, _ in
            guard let context else { return SQLITE_DENY }
            let state = Unmanaged<SandboxState>.fromOpaque(context).takeUnretainedValue()
            if state.allows(action, first.map { String(cString: $0) }, second.map { String(cString: $0) }) { return SQLITE_OK }
            if action == SQLITE_FUNCTION, let name = state.refusedFunction {
                state.denied.append("\(name)()")
                state.refusedFunction = nil
            } else {
                state.denied.append(SandboxState.actionName(action))
            }
            return SQLITE_DENY
        }, context)
        sqlite3_progress_handler(handle, 1000, { context in
            guard let context else { return 1 }
            let state = Unmanaged<SandboxState>.fromOpaque(context).takeUnretainedValue()
            if DispatchTime.now().uptimeNanoseconds > state.deadline { state.timedOut = true }
            return state.timedOut ? 1 : 0
        }, context)
        sqlite3_update_hook(handle, { context, operation, _, table, rowid in
            guard let context, operation == SQLITE_INSERT, let table else { return }
            Unmanaged<SandboxState>.fromOpaque(context).takeUnretainedValue().inserted.append((String(cString: table), rowid))
        }, context)
        return database
    }

    /// Changes what a sandboxed connection may run from now on.
    public func setPolicy(_ policy: SandboxPolicy) { sandbox?.policy = policy }

    /// True when a sandboxed connection's time ran out (its statements are then interrupted).
    public var timedOut: Bool { sandbox?.timedOut ?? false }

    /// Asks the clock whether a sandboxed connection's time ran out, between statements or rows (where SQLite's
    /// progress handler does not run: the caller's work on a row, such as staging a 60 MB blob); true from then on.
    public func checkDeadline() -> Bool {
        guard let sandbox else { return false }
        if DispatchTime.now().uptimeNanoseconds > sandbox.deadline { sandbox.timedOut = true }
        return sandbox.timedOut
    }

    /// The actions the sandbox refused since the last call, named (`PRAGMA`, `ATTACH`…), and forgets them.
    public func takeDeniedActions() -> [String] {
        defer { sandbox?.denied = [] }
        return sandbox?.denied ?? []
    }

    /// The rows inserted since the last call, as table name and rowid, in order, and forgets them.
    public func takeInsertedRows() -> [(table: String, rowid: Int64)] {
        defer { sandbox?.inserted = [] }
        return sandbox?.inserted ?? []
    }

    /// True when `sql` ends with a complete statement (SQLite's `sqlite3_complete`: a `;` outside literals,
    /// comments and trigger bodies) — how SQLite's own shell cuts a script into statements line by line.
    public static func isComplete(_ sql: String) -> Bool { sqlite3_complete(sql) != 0 }

    /// The offset just past the first `;` after `offset` that ends a complete statement, or `nil` when none does.
    private static func endOfStatement(_ bytes: [UInt8], from offset: Int) -> Int? {
        var index = offset
        while let semicolon = bytes[index...].firstIndex(of: 0x3B) {
            if isComplete(String(decoding: bytes[offset...semicolon], as: UTF8.self)) { return semicolon + 1 }
            index = semicolon + 1
        }
        return nil
    }

    /// Runs the statements of `sql` one by one. A statement that fails is passed to `failed` with the UTF-8 byte
    /// offset where it starts; when it fails to compile, the rest runs from the next `;` that ends a complete
    /// statement (`sqlite3_complete`), so that a refused statement does not take the ones after it on its line.
    /// - Throws: whatever `failed` throws.
    public func executeEach(_ sql: String, failed: (_ offset: Int, _ error: SQLiteError) throws -> Void) throws {
        let bytes = Array(sql.utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { start in
                var offset = 0
                while offset < buffer.count {
                    var statement: OpaquePointer?
                    var tail: UnsafePointer<CChar>?
                    let result = sqlite3_prepare_v2(handle, start + offset, Int32(buffer.count - offset), &statement, &tail)
                    guard result == SQLITE_OK else {
                        try failed(offset, error(result, sql: String(decoding: bytes[offset...], as: UTF8.self)))
                        guard let end = Database.endOfStatement(bytes, from: offset) else { return }
                        offset = end
                        continue
                    }
                    let next = tail.map { $0 - start } ?? buffer.count
                    guard let statement else { offset = max(next, offset + 1); continue }
                    let text = String(decoding: bytes[offset..<next], as: UTF8.self)
                    var step = sqlite3_step(statement)
                    while step == SQLITE_ROW { step = sqlite3_step(statement) }
                    let stepError = step == SQLITE_DONE ? nil : error(step, sql: text)
                    sqlite3_finalize(statement)
                    if let stepError { try failed(offset, stepError) }
                    offset = max(next, offset + 1)
                }
            }
        }
    }
}

// MARK: - Functions written in Swift

/// A SQL function a connection offers besides SQLite's own, written in Swift. It is registered deterministic and
/// innocuous (views, indexes and triggers may call it), so its result must depend on its arguments alone.
public struct SQLFunction: Sendable {
    /// What the function computes.
    public enum Body: Sendable {
        /// One value from one call's arguments.
        case scalar(@Sendable (SQLArguments) -> SQLValue)
        /// An aggregate: one value from the numbers among the first argument of a group's rows (an integer or a real,
        /// or a text that reads as one; anything else is skipped), in the order SQLite gave them. It holds one
        /// group's numbers in memory while the group is read.
        case numbers(@Sendable ([Double]) -> SQLValue)
    }

    /// The name SQL calls it by.
    public let name: String
    /// How many arguments it takes; -1 for any number.
    public let arity: Int32
    /// What it computes.
    public let body: Body

    /// A function called `name` with `arity` arguments (-1: any number) computing `body`.
    public init(name: String, arity: Int32, body: Body) {
        self.name = name
        self.arity = arity
        self.body = body
    }
}

/// The arguments of one call of a `SQLFunction`, read the way SQLite converts them. Valid only during the call.
public struct SQLArguments {
    private let values: UnsafeMutablePointer<OpaquePointer?>?
    /// How many arguments the call has.
    public let count: Int

    fileprivate init(_ values: UnsafeMutablePointer<OpaquePointer?>?, count: Int32) {
        self.values = values
        self.count = values == nil ? 0 : Int(count)
    }

    /// Argument `index` as a number when it is an integer, a real or a text that reads as one; `nil` otherwise.
    public func number(_ index: Int) -> Double? {
        guard index < count, let value = values?[index] else { return nil }
        let type = sqlite3_value_numeric_type(value)
        return type == SQLITE_INTEGER || type == SQLITE_FLOAT ? sqlite3_value_double(value) : nil
    }

    /// Argument `index` as an integer when it is one (or a text that reads as one); `nil` otherwise.
    public func integer(_ index: Int) -> Int64? {
        guard index < count, let value = values?[index], sqlite3_value_numeric_type(value) == SQLITE_INTEGER else { return nil }
        return sqlite3_value_int64(value)
    }

    /// Argument `index` as text (a number in SQLite's text form); `nil` for NULL.
    public func text(_ index: Int) -> String? {
        guard index < count, let value = values?[index], let text = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}

/// A registered function's body, kept alive for SQLite's callbacks until the connection drops the function.
private final class SQLFunctionBox {
    let body: SQLFunction.Body
    init(_ body: SQLFunction.Body) { self.body = body }
}

/// The numbers one group of an aggregate `SQLFunction` gathered so far.
private final class GatheredNumbers {
    var values: [Double] = []
}

extension Database {
    /// Registers `functions` on this connection; returns SQLite's result code (the first failure stops).
    fileprivate static func register(_ functions: [SQLFunction], on handle: OpaquePointer?) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        for function in functions {
            let box = Unmanaged.passRetained(SQLFunctionBox(function.body)).toOpaque()
            let destroy: @convention(c) (UnsafeMutableRawPointer?) -> Void = { box in
                if let box { Unmanaged<SQLFunctionBox>.fromOpaque(box).release() }
            }
            let result: Int32
            switch function.body {
            case .scalar:
                result = sqlite3_create_function_v2(handle, function.name, function.arity, flags, box, { context, count, arguments in
                    guard let data = sqlite3_user_data(context),
                          case .scalar(let compute) = Unmanaged<SQLFunctionBox>.fromOpaque(data).takeUnretainedValue().body else {
                        return sqlite3_result_null(context)
                    }
                    Database.setResult(compute(SQLArguments(arguments, count: count)), of: context)
                }, nil, nil, destroy)
            case .numbers:
                result = sqlite3_create_function_v2(handle, function.name, function.arity, flags, box, nil, { context, count, arguments in
                    guard let number = SQLArguments(arguments, count: count).number(0) else { return }
                    guard let slot = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.stride)) else {
                        return sqlite3_result_error_nomem(context)
                    }
                    let pointer = slot.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 1)
                    if pointer.pointee == nil { pointer.pointee = Unmanaged.passRetained(GatheredNumbers()).toOpaque() }
                    Unmanaged<GatheredNumbers>.fromOpaque(pointer.pointee!).takeUnretainedValue().values.append(number)
                }, { context in
                    var numbers: [Double] = []
                    if let slot = sqlite3_aggregate_context(context, 0) {
                        let pointer = slot.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 1)
                        if let gathered = pointer.pointee {
                            numbers = Unmanaged<GatheredNumbers>.fromOpaque(gathered).takeRetainedValue().values
                            pointer.pointee = nil
                        }
                    }
                    guard let data = sqlite3_user_data(context),
                          case .numbers(let compute) = Unmanaged<SQLFunctionBox>.fromOpaque(data).takeUnretainedValue().body else {
                        return sqlite3_result_null(context)
                    }
                    Database.setResult(compute(numbers), of: context)
                }, destroy)
            }
            guard result == SQLITE_OK else { return result }
        }
        return SQLITE_OK
    }

    /// Makes `value` the result of a function call.
    private static func setResult(_ value: SQLValue, of context: OpaquePointer?) {
        switch value {
        case .null: sqlite3_result_null(context)
        case .integer(let number): sqlite3_result_int64(context, number)
        case .real(let number): sqlite3_result_double(context, number)
        case .text(let text): kiln_sqlite3_result_text(context, text, Int32(text.utf8.count))
        case .blob(let bytes): bytes.withUnsafeBytes { kiln_sqlite3_result_blob(context, $0.baseAddress, Int32(bytes.count)) }
        }
    }
}

/// The SQLite library Kiln runs.
enum SQLiteLibrary {
    /// SQLite's version and source id, e.g. `3.40.1 2022-12-28 …` (the bundle's file format may change with it).
    static let version: String = String(cString: sqlite3_libversion()) + " " + String(cString: sqlite3_sourceid())
}
