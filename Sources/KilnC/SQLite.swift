// Over 500 lines on purpose: a connection's and a statement's calls into SQLite, which share its handle and its error
// mapping. The guards, the sandbox and Swift functions are in SQLite+Guards, SQLite+Sandbox and SQLite+Functions.
import Foundation
import Synchronization
internal import CSQLite

/// A value as SQLite stores it.
package enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The value as text, the way a message or an export shows it; `nil` for NULL.
    package var textValue: String? {
        switch self {
        case .null: return nil
        case .integer(let value): return String(value)
        case .real(let value): return SQLValue.format(value)
        case .text(let value): return value
        case .blob(let bytes): return Hexadecimal.text(of: bytes)
        }
    }

    /// The bytes of a blob; `nil` for every other value.
    package var blobBytes: [UInt8]? {
        if case .blob(let bytes) = self { return bytes }
        return nil
    }

    /// Shortest decimal text that reads back as the same double, never in exponent form for ordinary coordinates.
    package static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) + ".0" }
        return "\(value)"
    }
}

/// An SQLite failure: the result code, SQLite's own message and the SQL that failed.
package struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary or extended result code, as in `sqlite3.h`.
    package let code: Int32
    /// SQLite's message for the failure.
    package let message: String
    /// The statement that failed, when there was one.
    package let sql: String?
    /// True when `Database.prepareQuery` refused the statement because its result would not be decided by the data
    /// (`random()`, the clock).
    package var isNotDeterministic = false

    /// SQLite's result `code` and `message` for the statement `sql` (when there was one).
    package init(code: Int32, message: String, sql: String?) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    package var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        return text
    }

    /// True when the failure means the disk or the file system refused the write.
    package var isStorageFailure: Bool {
        let primary = code & 0xff
        return primary == SQLITE_FULL || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN
            || primary == SQLITE_READONLY || primary == SQLITE_PERM
    }

    /// True when SQLite could not allocate memory (`SQLITE_NOMEM`: a memory cap, or its soft heap limit reached).
    package var isOutOfMemory: Bool { code & 0xff == SQLITE_NOMEM }

    /// True when the machine, not the data, stopped SQLite: no room on a disk, a file system error, no memory.
    package var isOutOfResources: Bool { isStorageFailure || isOutOfMemory }

    /// True when a row broke a constraint (a key, `UNIQUE`, `NOT NULL`, `CHECK`).
    package var isConstraintViolation: Bool { code & 0xff == SQLITE_CONSTRAINT }

    /// True when SQLite found no room on a disk (the database's, or its temporary folder's).
    package var isDiskFull: Bool { code & 0xff == SQLITE_FULL }

    /// True when a time limit (`Database.withTimeLimit`) stopped the statement.
    package var isInterrupted: Bool { code & 0xff == SQLITE_INTERRUPT }

    /// True when another process holds a lock on the database (or a file beside it).
    package var isLocked: Bool {
        let primary = code & 0xff
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED
    }

    /// True when the connection's authorizer refused the statement (`Database.changingRowsOnly`, `prepareQuery`).
    package var isRefused: Bool { code & 0xff == SQLITE_AUTH }

    /// The table a statement names that the database does not have, or `nil` for any other failure. SQLite gives this
    /// failure no result code of its own (it is `SQLITE_ERROR`), so its sentence `no such table: NAME` is read here,
    /// the one place that knows SQLite's wording.
    package var missingTable: String? {
        let prefix = "no such table: "
        guard code & 0xff == SQLITE_ERROR, message.hasPrefix(prefix) else { return nil }
        return String(message.dropFirst(prefix.count))
    }

    /// True when the file is not a database at all or is damaged.
    package var isNotADatabase: Bool {
        let primary = code & 0xff
        return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
    }
}

/// A flag that one thread raises to stop the SQL another thread runs under `Database.stopping(when:)`.
package final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)

    package init() {}

    /// Stops the SQL run under this signal.
    package func raise() {
        raised.store(true, ordering: .releasing)
    }

    /// True once the signal was raised.
    package var isRaised: Bool {
        raised.load(ordering: .acquiring)
    }
}

/// One open SQLite connection. Not `Sendable`: a connection is used from one thread at a time.
package final class Database {
    /// The connection; read by the other SQLite wrapper files (`SQLite+Session.swift`), never outside KilnC.
    package private(set) var handle: OpaquePointer?
    /// The path the connection was opened on.
    package let path: String
    /// What a sandboxed connection may do, and what it did; kept alive here for SQLite's callbacks.
    package var sandbox: SandboxState?
    /// What the authorizer and the progress handler read and record (passed to their C callbacks).
    private let guards = SQLGuards()

    /// How a database file is opened.
    package enum Mode { case readOnly, readWrite, create }

    /// Opens (or creates) the database at `path`, offering `functions` to its SQL besides SQLite's own. With
    /// `readOnlyAttachments`, the connection may attach files read-only (`attachReadOnly`: SQLite reads `ATTACH`'s
    /// file name as a URI then; `path` itself is a URI only if it starts with `file:`, which an absolute path never does).
    /// - Throws: `SQLiteError` when the file cannot be opened.
    package init(path: String, mode: Mode = .create, functions: [SQLFunction] = [], readOnlyAttachments: Bool = false) throws {
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
    /// Under an address-space cap, SQLite's heap is held to a share of it: past an eighth it reuses its caches' pages
    /// rather than allocate, and past a quarter it fails with `SQLITE_NOMEM` (an error the build reports, exit 74)
    /// before the cap stops an allocation elsewhere, which the Swift runtime cannot survive. SQLite enforces the limits
    /// only with its memory statistics, which are off otherwise (they cost a lock per allocation).
    private static let libraryConfigured: Void = {
        guard let cap = ProcessHeap.addressSpaceLimit else {
            _ = kiln_sqlite3_disable_memory_statistics()
            return
        }
        _ = sqlite3_soft_heap_limit64(Int64(cap / 8))
        _ = sqlite3_hard_heap_limit64(Int64(cap / 4))
    }()

    /// Attaches the database file at `path` as `schema`, read-only: SQLite refuses any write to it
    /// (`SQLITE_READONLY`). The connection must have been opened with `readOnlyAttachments`.
    /// - Throws: `SQLiteError` when SQLite refuses the attachment (no such file, or inside a transaction).
    package func attachReadOnly(_ path: String, as schema: String) throws {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~".utf8)
        let escaped = path.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
        try execute("ATTACH DATABASE \(quoteLiteral("file:\(escaped)?mode=ro")) AS \(quoteIdentifier(schema))")
    }

    /// Refuses from now on the SQL that reaches other files, `ATTACH` and `VACUUM INTO` (SQLite authorizes both as
    /// an attach): for connections that run SQL a manifest wrote, which must read and write nothing else.
    package func refuseOtherFiles() {
        guards.refusesOtherFiles = true
        installAuthorizer()
    }

    private func installAuthorizer() {
        sqlite3_set_authorizer(handle, { userData, action, first, second, schema, _ in
            let guards = Unmanaged<SQLGuards>.fromOpaque(userData!).takeUnretainedValue()
            return guards.authorize(action, first.map { String(cString: $0) }, second.map { String(cString: $0) },
                                    schema: schema.map { String(cString: $0) })
        }, Unmanaged.passUnretained(guards).toOpaque())
    }

    /// Runs `body` with an authorizer that lets SQL change the rows of `scope`'s tables and nothing else: reading,
    /// calling deterministic functions, transactions, the connection's own temporary tables, and dropping and
    /// creating again `scope`'s rebuildable virtual tables are allowed; `ATTACH` and `VACUUM` (`INTO` a file or not),
    /// schema changes, PRAGMAs but `defer_foreign_keys`, `load_extension()` and the like are refused as SQLite
    /// compiles them, before they run. For SQL from a file downloaded beside the database (a patch).
    /// - Throws: what `body` throws; an `SQLiteError` with code `SQLITE_AUTH` and a message saying what was refused
    ///   when the authorizer refused something.
    package func changingRowsOnly<T>(_ scope: RowWriteScope, _ body: () throws -> T) throws -> T {
        let previous = guards.rowScope
        guards.rowScope = scope
        guards.resetRefusal()
        installAuthorizer()
        defer { guards.rowScope = previous }
        do {
            return try body()
        } catch let error as SQLiteError where guards.refused != nil || guards.refusedFunction != nil {
            let what = guards.refused ?? "a call to \(guards.refusedFunction ?? "")(), whose result is not decided by its arguments"
            throw SQLiteError(code: SQLITE_AUTH, message: "may only change rows of the database's own tables, but it holds \(what)", sql: error.sql)
        }
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
    package func prepareQuery(_ sql: String) throws -> Statement {
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
    package func prepareSingle(_ sql: String) throws -> Statement {
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
    package func withTimeLimit<T>(_ seconds: Double, _ body: () throws -> T) rethrows -> T {
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
    package func limitLifetime(toSeconds seconds: Double) {
        guard seconds > 0 else { return }
        guards.deadline = min(guards.deadline, DispatchTime.now().uptimeNanoseconds + UInt64(min(seconds, 1e9) * 1e9))
        installProgressHandler()
    }

    /// Runs `body` with the clock of the current time limit (`withTimeLimit`) stopped: no limit applies inside, and
    /// the time `body` takes is added to the limit's deadline. For work a limited task needs but does not own, such
    /// as an index built for it once.
    package func pausingTimeLimit<T>(_ body: () throws -> T) rethrows -> T {
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
    package func stopping<T>(when signal: StopSignal, _ body: () throws -> T) rethrows -> T {
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
    package func close() throws {
        guard let current = handle else { return }
        let result = sqlite3_close_v2(current)
        guard result == SQLITE_OK else { throw error(result, sql: nil) }
        handle = nil
    }

    /// Runs one or more statements that return no rows.
    /// - Throws: `SQLiteError` with the failing SQL.
    package func execute(_ sql: String) throws {
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
    package func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(result, sql: sql) }
        return Statement(statement, database: self, sql: sql)
    }

    /// Runs a query and returns every row, each as its values in column order.
    /// - Throws: `SQLiteError` with the failing SQL.
    package func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        var rows: [Row] = []
        while let row = try statement.step() { rows.append(row) }
        return rows
    }

    /// Runs a query and hands each row to `body` as it is read, so that memory does not grow with the result.
    /// - Throws: `SQLiteError` with the failing SQL, or what `body` throws.
    package func forEachRow(_ sql: String, _ arguments: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while let row = try statement.step() { try body(row) }
    }

    /// Runs `body` inside one transaction, committed when it returns and rolled back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
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

    package func error(_ result: Int32, sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
        let code = handle.map { sqlite3_extended_errcode($0) } ?? result
        return SQLiteError(code: code, message: message, sql: sql)
    }
}

/// One result row: column names and values, in the order the query selected them.
package struct Row: Sendable {
    /// The result column names.
    package let columns: [String]
    /// The values, aligned with `columns`.
    package let values: [SQLValue]

    /// The value of the named column, or `.null` when the query has no such column.
    package subscript(name: String) -> SQLValue {
        guard let index = columns.firstIndex(of: name) else { return .null }
        return values[index]
    }
}

/// A compiled statement. Not `Sendable`: it belongs to its connection's thread.
package final class Statement {
    package let handle: OpaquePointer
    private let database: Database
    /// The statement's SQL text.
    package let sql: String
    /// The names of the result columns.
    package let columnNames: [String]
    /// How many parameters the statement takes.
    private let parameterCount: Int

    package init(_ handle: OpaquePointer, database: Database, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
        // SQLite gives no name (NULL) when it cannot allocate one: the statement then fails at its first step.
        let names = (0..<sqlite3_column_count(handle)).map { sqlite3_column_name(handle, $0).map { String(cString: $0) } }
        columnNames = names.map { $0 ?? "" }
        namesMissing = names.contains(nil)
        parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    /// True when SQLite ran out of memory naming the result columns.
    private let namesMissing: Bool

    /// The failure of a value SQLite could not allocate (its text or BLOB pointer is NULL): never an empty value.
    private var outOfMemory: SQLiteError {
        SQLiteError(code: SQLITE_NOMEM, message: "out of memory", sql: sql)
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, in order.
    /// - Throws: `SQLiteError` when a value cannot be bound.
    package func bind(_ values: [SQLValue]) throws {
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
    package func bind(named values: [String: SQLValue]) throws {
        var ordered = [SQLValue](repeating: .null, count: Int(sqlite3_bind_parameter_count(handle)))
        for (name, value) in values {
            let index = Int(sqlite3_bind_parameter_index(handle, ":" + name))
            if index > 0 { ordered[index - 1] = value }
        }
        try bind(ordered)
    }

    /// The names of the statement's parameters (`:name`, without the colon), in order; unnamed ones are skipped.
    package var parameterNames: [String] {
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
    package func step() throws -> Row? {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW:
            if namesMissing { throw outOfMemory }
            return Row(columns: columnNames, values: try (0..<Int32(columnNames.count)).map(value(at:)))
        case SQLITE_DONE:
            return nil
        default:
            throw database.error(result, sql: sql)
        }
    }

    /// Binds `values` and runs the statement to completion, for inserts and updates.
    /// - Throws: `SQLiteError` with the statement's SQL.
    package func run(_ values: [SQLValue]) throws {
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

    /// The value of column `index` of the current row.
    /// - Throws: `SQLiteError` (`SQLITE_NOMEM`) when SQLite could not allocate the text or BLOB (a memory cap).
    private func value(at index: Int32) throws -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, index) else { throw outOfMemory }
            return .text(String(cString: text))
        case SQLITE_BLOB:
            // A BLOB's pointer is NULL when it is empty, or when SQLite could not allocate it.
            let pointer = sqlite3_column_blob(handle, index)
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0 else { return .blob([]) }
            guard let pointer else { throw outOfMemory }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }
}

/// Quotes an identifier for SQL built from manifest names (which are also checked to be plain identifiers).
package func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Quotes a string literal for SQL.
package func quoteLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

// MARK: - Functions written in Swift

/// The SQLite library Kiln runs.
package enum SQLiteLibrary {
    /// SQLite's version and source id, e.g. `3.40.1 2022-12-28 …` (the bundle's file format may change with it).
    package static let version: String = String(cString: sqlite3_libversion()) + " " + String(cString: sqlite3_sourceid())
}
