import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What the staging writer learned about a table's rows while it inserted them (`StagedRowRecorder`), so that the
/// checks that would scan the staged table again need not: which columns received a NULL, whether each row sorts
/// strictly after the one before it in the bundle's order (`StagedRowOrder`), and how many leading order columns two
/// neighbouring rows shared at most. Only a table filled by sources has facts; a query table's rows come from SQL.
///
/// The facts of a run of rows compose: with the first and last row's order values kept, the facts of rows A then B
/// are `facts(A).appending(facts(B))`, exactly what taking in A's rows and then B's gives. So the build cache keeps
/// each file's facts (`Segment`) and a build that copies files from it knows what reading them would have told.
package struct StagedTableFacts: Sendable {
    /// The table's columns, in declaration order.
    package let columns: [String]
    /// The declared type of each order column (`TableSpec.rowOrderColumnNames`), which decides how SQLite stores
    /// what is bound to it.
    package let orderTypes: [ColumnType]
    /// Rows inserted.
    package private(set) var rows = 0
    /// For each column (declaration order), whether some row left it NULL or bound a value SQLite may store as NULL.
    private var nullableColumns: [Bool]
    /// True while every row sorted strictly after the one before it (as `StagedRowOrder.isInOrder` compares them);
    /// false once one did not; `nil` once a compared value's stored form or order could not be told from the value
    /// alone (text bound to a numeric column, a number bound to a text one, a huge integer beside a real): then only
    /// the SQL check can tell.
    package private(set) var inOrder: Bool? = true
    /// The most leading order columns two neighbouring rows shared, each equal and not NULL (`=` in SQL): a key made
    /// of the first k order columns has two neighbours alike exactly when this is at least k. Meaningful while
    /// `inOrder` is true.
    package private(set) var longestSharedPrefix = 0
    /// The first row's order values, as bound (NULL for a column it did not bind); `nil` before the first row.
    package private(set) var first: [SQLValue]?
    /// The previous row's values and where its order columns are among them (`nil` for a column it did not bind).
    private var previous: (values: [SQLValue], orderSlots: [Int?])?

    /// No rows yet of `table`.
    package init(table: TableSpec) {
        columns = table.columns.map(\.name)
        orderTypes = table.rowOrderColumnNames.map { name in table.column(name)?.type ?? .blob }
        nullableColumns = Array(repeating: false, count: columns.count)
    }

    /// True when some row may hold NULL in `column` (or the table has no such column).
    package func mayHoldNull(_ column: String) -> Bool {
        guard let position = columns.firstIndex(of: column) else { return true }
        return nullableColumns[position]
    }

    /// The last row's order values, as bound; `nil` before the first row.
    package var last: [SQLValue]? {
        previous.map { row in row.orderSlots.map { $0.map { row.values[$0] } ?? .null } }
    }

    /// Takes in the next inserted row: `values` as bound, with `plan` saying where each column is among them.
    package mutating func record(_ values: [SQLValue], _ plan: StagedRowRecorder.TargetPlan) {
        rows += 1
        for (column, slot) in plan.columnSlots.enumerated() where !nullableColumns[column] {
            if let slot, !values[slot].mayBeStoredAsNull { continue }
            nullableColumns[column] = true
        }
        if let previous {
            if inOrder == true { compare(previous, (values, plan.orderSlots)) }
        } else {
            first = plan.orderSlots.map { $0.map { values[$0] } ?? .null }
        }
        previous = (values, plan.orderSlots)
    }

    /// The facts of these rows followed by `next`'s (of the same table): what `record` would have learned taking in
    /// `next`'s rows after these. The last row here is compared with `next`'s first as `record` compares neighbours.
    package func appending(_ next: StagedTableFacts) -> StagedTableFacts {
        var facts = self
        facts.rows += next.rows
        for (column, nullable) in next.nullableColumns.enumerated() where nullable { facts.nullableColumns[column] = true }
        if facts.inOrder == true {
            if let previous, let following = next.first {
                facts.compare(previous, (following, following.indices.map { $0 }))
            }
            if facts.inOrder == true {
                facts.inOrder = next.inOrder
                facts.longestSharedPrefix = max(facts.longestSharedPrefix, next.longestSharedPrefix)
            }
        }
        if facts.first == nil { facts.first = next.first }
        if let last = next.previous { facts.previous = last }
        return facts
    }

    /// Compares the row `b` with the row `a` inserted before it, column by column in the bundle's order, until the
    /// first column that differs: it must sort after. Counts the leading columns they share.
    private mutating func compare(_ a: (values: [SQLValue], orderSlots: [Int?]), _ b: (values: [SQLValue], orderSlots: [Int?])) {
        var shared = 0
        var sharing = true
        for (position, type) in orderTypes.enumerated() {
            let first = a.orderSlots[position].map { a.values[$0] } ?? .null
            let second = b.orderSlots[position].map { b.values[$0] } ?? .null
            guard let order = StagedValueOrder.compare(first, second, storedAs: type) else {
                inOrder = nil
                return
            }
            switch order {
            case .orderedAscending:
                longestSharedPrefix = max(longestSharedPrefix, shared)
                return
            case .orderedDescending:
                inOrder = false
                return
            case .orderedSame:
                if sharing, first != .null { shared += 1 } else { sharing = false }
            }
        }
        // Every order column alike: two equal rows, which `SELECT DISTINCT` would merge.
        inOrder = false
    }
}

extension StagedTableFacts {
    /// The facts of a run of rows as the build cache keeps them for each file (`SourceCache`), every value exact:
    /// `nullable` one `0`/`1` per column; `edges` the order values of the first and then the last row, each a
    /// `SQLValue.factsToken` written as its UTF-8 length, `:` and the token (empty when there are no rows).
    package struct Segment: Equatable, Sendable {
        package var rows: Int
        package var nullable: String
        package var inOrder: Bool?
        package var longestSharedPrefix: Int
        package var edges: String
    }

    /// These facts as a `Segment`.
    package var segment: Segment {
        let edges = ((first ?? []) + (last ?? [])).map { value in
            let token = value.factsToken
            return "\(token.utf8.count):" + token
        }
        return Segment(rows: rows, nullable: String(nullableColumns.map { $0 ? "1" : "0" }), inOrder: inOrder,
                       longestSharedPrefix: longestSharedPrefix, edges: edges.joined())
    }

    /// The facts `segment` describes, of the table of these facts (which hold no rows); `nil` when it does not fit
    /// the table (another number of columns or of order values, a value that is no token).
    package func restoring(_ segment: Segment) -> StagedTableFacts? {
        let flags = Array(segment.nullable.utf8)
        guard rows == 0, segment.rows >= 0, segment.longestSharedPrefix >= 0, flags.count == columns.count,
              flags.allSatisfy({ $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") }),
              let values = StagedTableFacts.values(segment.edges, count: segment.rows == 0 ? 0 : 2 * orderTypes.count) else { return nil }
        var facts = self
        facts.rows = segment.rows
        facts.nullableColumns = flags.map { $0 == UInt8(ascii: "1") }
        facts.inOrder = segment.inOrder
        facts.longestSharedPrefix = segment.longestSharedPrefix
        if segment.rows > 0 {
            facts.first = Array(values[..<orderTypes.count])
            let last = Array(values[orderTypes.count...])
            facts.previous = (last, last.indices.map { $0 })
        }
        return facts
    }

    /// The `count` values `edges` (`Segment.edges`) holds; `nil` unless it holds exactly that many tokens.
    private static func values(_ edges: String, count: Int) -> [SQLValue]? {
        let bytes = Array(edges.utf8)
        var values: [SQLValue] = []
        var index = 0
        while index < bytes.count {
            var length = 0, digits = 0
            while index < bytes.count, digits < 10, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                length = length * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            guard digits > 0, index < bytes.count, bytes[index] == UInt8(ascii: ":"), length <= bytes.count - index - 1,
                  let token = String(validating: bytes[(index + 1)..<(index + 1 + length)], as: UTF8.self),
                  let value = SQLValue(factsToken: token) else { return nil }
            values.append(value)
            index += 1 + length
        }
        return values.count == count ? values : nil
    }
}

extension SQLValue {
    /// The value as one exact token: `n` (NULL), `i` and the integer, `r` and the real's bit pattern (so NaN and -0
    /// survive), `t` and the text, `b` and the bytes in hexadecimal.
    package var factsToken: String {
        switch self {
        case .null: return "n"
        case .integer(let value): return "i\(value)"
        case .real(let value): return "r\(value.bitPattern)"
        case .text(let value): return "t" + value
        case .blob(let bytes): return "b" + Hexadecimal.text(of: bytes)
        }
    }

    /// The value `token` (`factsToken`) stands for; `nil` for anything else.
    package init?(factsToken token: String) {
        // The tag is one ASCII byte: the text after it may start with a combining mark, which `Character`s would join to it.
        guard let tag = token.utf8.first.map({ Character(Unicode.Scalar($0)) }) else { return nil }
        let rest = String(decoding: token.utf8.dropFirst(), as: UTF8.self)
        switch tag {
        case "n" where rest.isEmpty: self = .null
        case "i": guard let value = Int64(rest) else { return nil }; self = .integer(value)
        case "r": guard let bits = UInt64(rest) else { return nil }; self = .real(Double(bitPattern: bits))
        case "t": self = .text(rest)
        case "b":
            guard let bytes = Hexadecimal.bytes(of: token.utf8.dropFirst()) else { return nil }
            self = .blob(bytes)
        default: return nil
        }
    }
}

/// Keeps the `StagedTableFacts` of the tables one source fills, row by row, on the thread that inserts the rows, and
/// each file's own facts (`fileFacts`): the rows of each file come one after the other, told apart by their `_file`.
package struct StagedRowRecorder: Sendable {
    /// Where one target's inserted values go in its table.
    package struct TargetPlan: Sendable {
        /// The table's position in `tables`.
        package let table: Int
        /// For each of the table's columns, its position among the inserted values; `nil` when not inserted (NULL).
        package let columnSlots: [Int?]
        /// For each of the table's order columns (`SchemaSQL.rowOrderColumns`), its position among the values.
        package let orderSlots: [Int?]
        /// The position of `_file` among the values.
        package let fileSlot: Int
    }

    /// The names of the tables the targets fill, in the order they were first met.
    package let tableNames: [String]
    /// The facts of each table up to the file being inserted.
    private var before: [StagedTableFacts]
    /// The facts of each table's rows of the file being inserted.
    private var current: [StagedTableFacts]
    /// No rows yet, for each table.
    private let empty: [StagedTableFacts]
    /// The `_file` of the rows being inserted (`nil` before the first).
    private var file: String?
    /// The facts of each file done, in order, by table name (tables it has rows of), when the recorder keeps them.
    private var filesDone: [(path: String, tables: [String: StagedTableFacts])] = []
    private let keepsFiles: Bool
    private let plans: [TargetPlan]

    /// A recorder for `targets` (each inserting its mappings' columns, then `_file` and `_line`), continuing the
    /// facts `known` holds for tables that earlier sources filled; with `keepingFiles`, each file's facts are kept.
    package init(targets: [CompiledTarget], continuing known: [String: StagedTableFacts], keepingFiles: Bool = false) {
        var names: [String] = []
        var tables: [StagedTableFacts] = []
        var empty: [StagedTableFacts] = []
        var plans: [TargetPlan] = []
        for target in targets {
            let table = target.table
            let position: Int
            if let index = names.firstIndex(of: table.name) {
                position = index
            } else {
                position = names.count
                names.append(table.name)
                empty.append(StagedTableFacts(table: table))
                tables.append(known[table.name] ?? empty[position])
            }
            let inserted = target.mappings.map(\.column.name)
            plans.append(TargetPlan(table: position,
                                    columnSlots: table.columns.map { inserted.firstIndex(of: $0.name) },
                                    orderSlots: table.rowOrderColumnNames.map { inserted.firstIndex(of: $0) },
                                    fileSlot: inserted.count))
        }
        self.tableNames = names
        self.before = tables
        self.current = empty
        self.empty = empty
        self.plans = plans
        keepsFiles = keepingFiles
    }

    /// Takes in a row just inserted for `target`.
    package mutating func record(_ values: [SQLValue], target: Int) {
        let plan = plans[target]
        if case .text(let path) = values[plan.fileSlot], path == file {} else { startFile(values[plan.fileSlot]) }
        current[plan.table].record(values, plan)
    }

    /// Ends the facts of the file being inserted: the next rows are those of the file `value` names.
    private mutating func startFile(_ value: SQLValue) {
        if let file, keepsFiles {
            filesDone.append((file, Dictionary(uniqueKeysWithValues: zip(tableNames, current).filter { $0.1.rows > 0 })))
        }
        for index in current.indices where current[index].rows > 0 {
            before[index] = before[index].appending(current[index])
            current[index] = empty[index]
        }
        if case .text(let path) = value { file = path } else { file = nil }
    }

    /// The facts by table name, for the next source's recorder and for the checks.
    package var facts: [String: StagedTableFacts] {
        Dictionary(uniqueKeysWithValues: zip(tableNames, zip(before, current).map { $0.appending($1) }))
    }

    /// The facts of each file's rows, in the order they came, by table name (the tables it has rows of); empty unless
    /// the recorder keeps them.
    package var fileFacts: [(path: String, tables: [String: StagedTableFacts])] {
        guard keepsFiles, let file else { return filesDone }
        return filesDone + [(file, Dictionary(uniqueKeysWithValues: zip(tableNames, current).filter { $0.1.rows > 0 }))]
    }
}

/// The order SQLite's `ORDER BY` gives two values bound to a column of a declared type (BINARY collation, NULL
/// first, then numbers, texts and blobs), decided from the values alone when their stored form is certain.
package enum StagedValueOrder {
    /// How `a` compares with `b` once stored in a column of `type`; `nil` when a value's stored form or the order is
    /// not certain from the value: a number in a text column or text in a numeric one (SQLite's affinity may convert
    /// them), a NaN (stored as NULL) or an empty blob, an integer beyond 2^53 beside a real.
    package static func compare(_ a: SQLValue, _ b: SQLValue, storedAs type: ColumnType) -> ComparisonResult? {
        guard let rankA = rank(a, type), let rankB = rank(b, type) else { return nil }
        if rankA != rankB { return rankA < rankB ? .orderedAscending : .orderedDescending }
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.real(let x), .real(let y)): return order(x, y)
        case (.integer(let x), .real(let y)): return exactDouble(x).map { order($0, y) }
        case (.real(let x), .integer(let y)): return exactDouble(y).map { order(x, $0) }
        case (.text(let x), .text(let y)): return bytes(x.utf8, y.utf8)
        case (.blob(let x), .blob(let y)): return bytes(x, y)
        default: return nil
        }
    }

    /// NULL 0, numbers 1, texts 2, blobs 3, as SQLite stores the value in a column of `type`; `nil` when not certain.
    private static func rank(_ value: SQLValue, _ type: ColumnType) -> Int? {
        switch value {
        case .null: return 0
        case .integer: return type == .text ? nil : 1
        case .real(let number): return type == .text || number.isNaN ? nil : 1
        case .text: return type == .integer || type == .real ? nil : 2
        case .blob(let bytes): return bytes.isEmpty ? nil : 3
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }

    /// `value` as a double when the conversion is exact.
    private static func exactDouble(_ value: Int64) -> Double? {
        value.magnitude <= 1 << 53 ? Double(value) : nil
    }

    /// Byte-wise comparison, a shorter prefix first (SQLite's BINARY collation, `memcmp`).
    private static func bytes<C: Collection>(_ x: C, _ y: C) -> ComparisonResult where C.Element == UInt8 {
        for (p, q) in zip(x, y) where p != q { return p < q ? .orderedAscending : .orderedDescending }
        return order(x.count, y.count)
    }
}

extension SQLValue {
    /// True for a value SQLite may store as NULL when bound: NULL itself, a NaN; an empty blob is counted too (once bound as NULL).
    package var mayBeStoredAsNull: Bool {
        switch self {
        case .null: return true
        case .real(let number): return number.isNaN
        case .blob(let bytes): return bytes.isEmpty
        case .integer, .text: return false
        }
    }
}
