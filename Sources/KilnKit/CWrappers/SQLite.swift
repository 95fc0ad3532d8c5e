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
        case .blob(let bytes): return bytes.map { String(format: "%02x", $0) }.joined()
        }
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

    /// True when the file is not a database at all or is damaged.
    public var isNotADatabase: Bool {
        let primary = code & 0xff
        return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
    }
}

/// One open SQLite connection. Not `Sendable`: a connection is used from one thread at a time.
public final class Database {
    private var handle: OpaquePointer?
    /// The path the connection was opened on.
    public let path: String

    /// How a database file is opened.
    public enum Mode { case readOnly, readWrite, create }

    /// Opens (or creates) the database at `path`.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String, mode: Mode = .create) throws {
        self.path = path
        var flags: Int32 = SQLITE_OPEN_NOMUTEX
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
        let registered = KilnSQLFunctions.register(on: handle)
        if registered != SQLITE_OK {
            let failure = error(registered, sql: nil)
            sqlite3_close_v2(handle)
            handle = nil
            throw failure
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// Refuses from now on the SQL that reaches other files, `ATTACH` and `VACUUM INTO` (SQLite authorizes both as
    /// an attach): for connections that run SQL a manifest wrote, which must read and write nothing else.
    public func refuseOtherFiles() {
        sqlite3_set_authorizer(handle, { _, action, _, _, _, _ in action == SQLITE_ATTACH ? SQLITE_DENY : SQLITE_OK }, nil)
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
    private let handle: OpaquePointer
    private let database: Database
    /// The statement's SQL text.
    public let sql: String
    /// The names of the result columns.
    public let columnNames: [String]

    fileprivate init(_ handle: OpaquePointer, database: Database, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
        columnNames = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, in order.
    /// - Throws: `SQLiteError` when a value cannot be bound.
    public func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                result = text.withCString { kiln_sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count)) }
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { kiln_sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count)) }
            }
            guard result == SQLITE_OK else { throw database.error(result, sql: sql) }
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
        try bind(values)
        while try step() != nil {}
    }

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

// MARK: - Kiln's SQL functions

/// SQL functions every Kiln connection has, for manifest rules and query tables (and `kiln check`, which runs the
/// same rules on a bundle). Both are deterministic:
/// - `kiln_distance_km(lat1, lon1, lat2, lon2)`: the great-circle distance in kilometres between two points in
///   decimal degrees (haversine formula, mean Earth radius 6371.0088 km); NULL when an argument is NULL or not a
///   number.
/// - `kiln_orthodox_easter(year)`: Orthodox Easter Sunday of an integer year as `YYYY-MM-DD` (see `OrthodoxEaster`);
///   NULL for anything else.
/// - `kiln_median(x)`, an aggregate: the median of the numbers among `x` (the mean of the two middle ones for an
///   even count); NULL when there are none. It holds one group's numbers in memory while the group is read.
enum KilnSQLFunctions {
    /// The mean Earth radius (IUGG), in kilometres.
    static let earthRadius = 6371.0088

    /// Registers the functions on a connection; returns SQLite's result code.
    fileprivate static func register(on handle: OpaquePointer?) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let distance = sqlite3_create_function_v2(handle, "kiln_distance_km", 4, flags, nil, { context, count, arguments in
            guard let arguments, count == 4 else { return sqlite3_result_null(context) }
            var degrees: [Double] = []
            for index in 0..<4 {
                let type = sqlite3_value_numeric_type(arguments[index])
                guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return sqlite3_result_null(context) }
                degrees.append(sqlite3_value_double(arguments[index]))
            }
            sqlite3_result_double(context, KilnSQLFunctions.distance(degrees[0], degrees[1], degrees[2], degrees[3]))
        }, nil, nil, nil)
        guard distance == SQLITE_OK else { return distance }
        let easter = sqlite3_create_function_v2(handle, "kiln_orthodox_easter", 1, flags, nil, { context, count, arguments in
            guard let arguments, count == 1, sqlite3_value_numeric_type(arguments[0]) == SQLITE_INTEGER,
                  let date = OrthodoxEaster.isoDate(year: Int(sqlite3_value_int64(arguments[0]))) else {
                return sqlite3_result_null(context)
            }
            kiln_sqlite3_result_text(context, date, Int32(date.utf8.count))
        }, nil, nil, nil)
        guard easter == SQLITE_OK else { return easter }
        return sqlite3_create_function_v2(handle, "kiln_median", 1, flags, nil, nil, { context, count, arguments in
            guard let arguments, count == 1 else { return }
            let type = sqlite3_value_numeric_type(arguments[0])
            guard type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return }
            guard let raw = sqlite3_aggregate_context(context, Int32(MemoryLayout<MedianState>.stride)) else {
                return sqlite3_result_error_nomem(context)
            }
            let state = raw.bindMemory(to: MedianState.self, capacity: 1)
            if state.pointee.count == state.pointee.capacity {
                let capacity = max(16, state.pointee.capacity * 2)
                guard let grown = sqlite3_realloc64(state.pointee.values, UInt64(capacity * MemoryLayout<Double>.stride)) else {
                    return sqlite3_result_error_nomem(context)
                }
                state.pointee.values = grown.bindMemory(to: Double.self, capacity: capacity)
                state.pointee.capacity = capacity
            }
            state.pointee.values![state.pointee.count] = sqlite3_value_double(arguments[0])
            state.pointee.count += 1
        }, { context in
            guard let raw = sqlite3_aggregate_context(context, 0) else { return sqlite3_result_null(context) }
            let state = raw.bindMemory(to: MedianState.self, capacity: 1)
            defer { sqlite3_free(state.pointee.values); state.pointee.values = nil }
            guard let values = state.pointee.values, state.pointee.count > 0 else { return sqlite3_result_null(context) }
            var numbers = UnsafeMutableBufferPointer(start: values, count: state.pointee.count)
            numbers.sort()
            let middle = numbers.count / 2
            sqlite3_result_double(context, numbers.count % 2 == 1 ? numbers[middle] : (numbers[middle - 1] + numbers[middle]) / 2)
        }, nil)
    }

    /// The great-circle distance in kilometres between two points given in decimal degrees.
    static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude1 * radians, phi2 = latitude2 * radians
        let halfDeltaPhi = (latitude2 - latitude1) * radians / 2, halfDeltaLambda = (longitude2 - longitude1) * radians / 2
        let a = sin(halfDeltaPhi) * sin(halfDeltaPhi) + cos(phi1) * cos(phi2) * sin(halfDeltaLambda) * sin(halfDeltaLambda)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// What `kiln_median` keeps for one group, in SQLite's zeroed aggregate memory (so it starts empty).
    private struct MedianState {
        var values: UnsafeMutablePointer<Double>?
        var count: Int
        var capacity: Int
    }
}
