import Foundation
internal import CSQLite

/// What a sandboxed connection may run (see `Database.sandboxed(deserializing:seconds:)`).
package enum SandboxPolicy: Sendable {
    /// A legacy script: `CREATE TABLE` (with deterministic `DEFAULT` and `CHECK` expressions), `CREATE INDEX`, `INSERT`
    /// (of values, or of rows of its own tables) and transactions; nothing else.
    case script
    /// Queries: `SELECT` reading tables and calling SQLite's built-in functions; nothing else.
    case query
    /// Anything but `ATTACH`, for Kiln's own statements between the two.
    case kiln
}

/// The sandbox's state, reached from SQLite's C callbacks through an unmanaged pointer.
package final class SandboxState {
    package var policy = SandboxPolicy.script
    package var deadline: UInt64
    package var timedOut = false
    package var denied: [String] = []
    package var inserted: [(table: String, rowid: Int64)] = []
    /// The indexes the statement being compiled creates: SQLite asks the authorizer for a REINDEX of each while it
    /// fills it, which a script's `CREATE INDEX` needs and a script's own `REINDEX` statement does not get.
    package var indexesBeingCreated: Set<String> = []

    package init(deadline: UInt64) { self.deadline = deadline }

    /// SQLite's built-in functions whose result is not decided by their arguments (sqlite.org/deterministic.html):
    /// a script's `DEFAULT (random())` or a database file's view calling them would ship different values from the
    /// same input. The date and time functions are non-deterministic only with `'now'` (or a time zone), which the
    /// authorizer cannot see: `ClockFreeDates` refuses those calls.
    package static let nonDeterministicFunctions: Set<String> = [
        "random", "randomblob", "changes", "total_changes", "current_date", "current_time", "current_timestamp",
    ]

    /// Each of `nonDeterministicFunctions` with its number of arguments.
    package static let nonDeterministicFunctionArities: [(String, Int32)] = [
        ("random", 0), ("randomblob", 1), ("changes", 0), ("total_changes", 0), ("current_date", 0), ("current_time", 0),
        ("current_timestamp", 0),
    ]

    /// The non-deterministic function the last refused call named, for the message.
    package var refusedFunction: String?

    package func allows(_ action: Int32, _ first: String?, _ second: String?) -> Bool {
        if policy != .kiln, action == SQLITE_FUNCTION, let name = second?.lowercased(), SandboxState.nonDeterministicFunctions.contains(name) {
            refusedFunction = name
            return false
        }
        switch policy {
        case .kiln:
            return action != SQLITE_ATTACH && action != SQLITE_DETACH
        case .query:
            return [SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE].contains(action) || ReadingActions.allows(action, first, second)
        case .script:
            switch action {
            // A multi-row `VALUES (…), (…)` is compiled as a SELECT of its rows; a CHECK reads its table's columns;
            // DEFAULT and CHECK expressions call functions (only deterministic ones, above). Reading reaches only the
            // script's own tables: the connection holds nothing else.
            case SQLITE_CREATE_INDEX:
                if let first { indexesBeingCreated.insert(first) }
                return true
            // Filling the index a `CREATE INDEX` of the same statement creates; a REINDEX statement is refused.
            case SQLITE_REINDEX: return first.map { indexesBeingCreated.contains($0) } ?? false
            case SQLITE_CREATE_TABLE, SQLITE_TRANSACTION, SQLITE_INSERT, SQLITE_SELECT, SQLITE_FUNCTION,
                 SQLITE_READ:
                return true
            // CREATE TABLE … PRIMARY KEY/UNIQUE updates SQLite's own schema table.
            case SQLITE_UPDATE: return first == "sqlite_master" || first == "sqlite_schema"
            default: return false
            }
        }
    }

    /// The name of an authorizer action code, for messages.
    package static func actionName(_ action: Int32) -> String {
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
package final class ClockFreeDates {
    /// SQLite's date and time functions (sqlite.org/lang_datefunc.html, SQLite 3.40).
    package static let names = ["date", "time", "datetime", "julianday", "unixepoch", "strftime"]

    /// The plain connection that computes the results.
    private let helper: Database
    /// A prepared `SELECT name(?, …)` by function name and number of arguments.
    private var statements: [String: OpaquePointer] = [:]

    /// Whose SQL the functions serve.
    package let reader: Reader

    private init(_ reader: Reader) throws {
        self.reader = reader
        helper = try Database(path: ":memory:")
    }

    deinit { for statement in statements.values { sqlite3_finalize(statement) } }

    /// One function's name, as its C callback's user data.
    private final class Function {
        package let name: String
        package let dates: ClockFreeDates
        package init(_ name: String, _ dates: ClockFreeDates) { self.name = name; self.dates = dates }
    }

    /// Whose SQL the functions serve, for their messages.
    package enum Reader {
        /// SQL an input file holds (the `sqlite` reader's sandbox).
        case file
        /// SQL a manifest wrote (query tables, rules, export queries).
        case manifest
    }

    /// The message refusing `call` in SQL of `reader`.
    package static func refusal(_ call: String, in reader: Reader) -> String {
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
    package static func clockWord(inLiteralsOf sql: String) -> String? {
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
    package static func register(on handle: OpaquePointer, for reader: Reader = .file) throws {
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
    package static func clockCall(_ name: String, _ texts: [String?]) -> String? {
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
    package static func sandboxed(deserializing bytes: [UInt8]? = nil, seconds: Double, functions: [SQLFunction] = []) throws -> Database {
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
    package func setPolicy(_ policy: SandboxPolicy) { sandbox?.policy = policy }

    /// True when a sandboxed connection's time ran out (its statements are then interrupted).
    package var timedOut: Bool { sandbox?.timedOut ?? false }

    /// Asks the clock whether a sandboxed connection's time ran out, between statements or rows (where SQLite's
    /// progress handler does not run: the caller's work on a row, such as staging a 60 MB blob); true from then on.
    package func checkDeadline() -> Bool {
        guard let sandbox else { return false }
        if DispatchTime.now().uptimeNanoseconds > sandbox.deadline { sandbox.timedOut = true }
        return sandbox.timedOut
    }

    /// The actions the sandbox refused since the last call, named (`PRAGMA`, `ATTACH`…), and forgets them.
    package func takeDeniedActions() -> [String] {
        defer { sandbox?.denied = [] }
        return sandbox?.denied ?? []
    }

    /// The rows inserted since the last call, as table name and rowid, in order, and forgets them.
    package func takeInsertedRows() -> [(table: String, rowid: Int64)] {
        defer { sandbox?.inserted = [] }
        return sandbox?.inserted ?? []
    }

    /// True when `sql` ends with a complete statement (SQLite's `sqlite3_complete`: a `;` outside literals,
    /// comments and trigger bodies) — how SQLite's own shell cuts a script into statements line by line.
    package static func isComplete(_ sql: String) -> Bool { sqlite3_complete(sql) != 0 }

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
    package func executeEach(_ sql: String, failed: (_ offset: Int, _ error: SQLiteError) throws -> Void) throws {
        let bytes = Array(sql.utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { start in
                var offset = 0
                while offset < buffer.count {
                    var statement: OpaquePointer?
                    var tail: UnsafePointer<CChar>?
                    sandbox?.indexesBeingCreated = []
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
