import Foundation
internal import CSQLite

/// A SQL function a connection offers besides SQLite's own, written in Swift. It is registered deterministic and
/// innocuous (views, indexes and triggers may call it), so its result must depend on its arguments alone.
package struct SQLFunction: Sendable {
    /// What the function computes.
    package enum Body: Sendable {
        /// One value from one call's arguments.
        case scalar(@Sendable (SQLArguments) -> SQLValue)
        /// An aggregate: one value from the numbers among the first argument of a group's rows (an integer or a real,
        /// or a text that reads as one; anything else is skipped), in the order SQLite gave them. It holds one
        /// group's numbers in memory while the group is read.
        case numbers(@Sendable ([Double]) -> SQLValue)
    }

    /// The name SQL calls it by.
    package let name: String
    /// How many arguments it takes; -1 for any number.
    package let arity: Int32
    /// What it computes.
    package let body: Body

    /// A function called `name` with `arity` arguments (-1: any number) computing `body`.
    package init(name: String, arity: Int32, body: Body) {
        self.name = name
        self.arity = arity
        self.body = body
    }
}

/// The arguments of one call of a `SQLFunction`, read the way SQLite converts them. Valid only during the call.
package struct SQLArguments {
    private let values: UnsafeMutablePointer<OpaquePointer?>?
    /// How many arguments the call has.
    package let count: Int

    package init(_ values: UnsafeMutablePointer<OpaquePointer?>?, count: Int32) {
        self.values = values
        self.count = values == nil ? 0 : Int(count)
    }

    /// Argument `index` as a number when it is an integer, a real or a text that reads as one; `nil` otherwise.
    package func number(_ index: Int) -> Double? {
        guard index < count, let value = values?[index] else { return nil }
        let type = sqlite3_value_numeric_type(value)
        return type == SQLITE_INTEGER || type == SQLITE_FLOAT ? sqlite3_value_double(value) : nil
    }

    /// Argument `index` as an integer when it is one (or a text that reads as one); `nil` otherwise.
    package func integer(_ index: Int) -> Int64? {
        guard index < count, let value = values?[index], sqlite3_value_numeric_type(value) == SQLITE_INTEGER else { return nil }
        return sqlite3_value_int64(value)
    }

    /// Argument `index` as text (a number in SQLite's text form); `nil` for NULL.
    package func text(_ index: Int) -> String? {
        guard index < count, let value = values?[index], let text = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }
}

/// A registered function's body, kept alive for SQLite's callbacks until the connection drops the function.
package final class SQLFunctionBox {
    package let body: SQLFunction.Body
    package init(_ body: SQLFunction.Body) { self.body = body }
}

/// The numbers one group of an aggregate `SQLFunction` gathered so far.
package final class GatheredNumbers {
    package var values: [Double] = []
}

extension Database {
    /// Registers `functions` on this connection; returns SQLite's result code (the first failure stops).
    package static func register(_ functions: [SQLFunction], on handle: OpaquePointer?) -> Int32 {
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
