import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What the staging writer learned about a table's rows while it inserted them (`StagedRowRecorder`), so that the
/// checks that would scan the staged table again need not: which columns received a NULL, whether each row sorts
/// strictly after the one before it in the bundle's order (`StagedRowOrder`), and how many leading order columns two
/// neighbouring rows shared at most. Only a table filled by sources has facts; a query table's rows come from SQL.
package struct StagedTableFacts: Sendable {
    /// The table's columns, in declaration order.
    package let columns: [String]
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
    /// The previous row's values and where its order columns are among them (`nil` for a column it did not bind).
    private var previous: (values: [SQLValue], orderSlots: [Int?])?

    package init(columns: [String]) {
        self.columns = columns
        nullableColumns = Array(repeating: false, count: columns.count)
    }

    /// The facts of a table some of whose rows were copied without being seen (from the build cache, `SourceCache`):
    /// any column may hold NULL and the order is for SQL to tell.
    package static func unknown(columns: [String]) -> StagedTableFacts {
        var facts = StagedTableFacts(columns: columns)
        facts.nullableColumns = Array(repeating: true, count: columns.count)
        facts.inOrder = nil
        return facts
    }

    /// True when some row may hold NULL in `column` (or the table has no such column).
    package func mayHoldNull(_ column: String) -> Bool {
        guard let position = columns.firstIndex(of: column) else { return true }
        return nullableColumns[position]
    }

    /// Takes in the next inserted row: `values` as bound, with `plan` saying where each column is among them.
    package mutating func record(_ values: [SQLValue], _ plan: StagedRowRecorder.TargetPlan) {
        rows += 1
        for (column, slot) in plan.columnSlots.enumerated() where !nullableColumns[column] {
            if let slot, !values[slot].mayBeStoredAsNull { continue }
            nullableColumns[column] = true
        }
        if inOrder == true, let previous {
            compare(previous, (values, plan.orderSlots), types: plan.orderTypes)
        }
        previous = (values, plan.orderSlots)
    }

    /// Compares the row `b` with the row `a` inserted before it, column by column in the bundle's order, until the
    /// first column that differs: it must sort after. Counts the leading columns they share.
    private mutating func compare(_ a: (values: [SQLValue], orderSlots: [Int?]), _ b: (values: [SQLValue], orderSlots: [Int?]),
                                  types: [ColumnType]) {
        var shared = 0
        var sharing = true
        for (position, type) in types.enumerated() {
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

/// Keeps the `StagedTableFacts` of the tables one source fills, row by row, on the thread that inserts the rows.
package struct StagedRowRecorder: Sendable {
    /// Where one target's inserted values go in its table.
    package struct TargetPlan: Sendable {
        /// The table's position in `tables`.
        package let table: Int
        /// For each of the table's columns, its position among the inserted values; `nil` when not inserted (NULL).
        package let columnSlots: [Int?]
        /// For each of the table's order columns (`SchemaSQL.rowOrderColumns`), its position among the values.
        package let orderSlots: [Int?]
        /// The declared type of each order column, which decides how SQLite stores what is bound to it.
        package let orderTypes: [ColumnType]
    }

    /// The facts of the tables the targets fill, in the order they were first met.
    package private(set) var tables: [StagedTableFacts]
    /// The names of `tables`.
    package let tableNames: [String]
    private let plans: [TargetPlan]

    /// A recorder for `targets` (each inserting its mappings' columns, then `_file` and `_line`), continuing the
    /// facts `known` holds for tables that earlier sources filled.
    package init(targets: [CompiledTarget], continuing known: [String: StagedTableFacts]) {
        var names: [String] = []
        var tables: [StagedTableFacts] = []
        var plans: [TargetPlan] = []
        for target in targets {
            let table = target.table
            let position: Int
            if let index = names.firstIndex(of: table.name) {
                position = index
            } else {
                position = names.count
                names.append(table.name)
                tables.append(known[table.name] ?? StagedTableFacts(columns: table.columns.map(\.name)))
            }
            let inserted = target.mappings.map(\.column.name)
            let orderColumns = table.rowOrderColumnNames
            plans.append(TargetPlan(table: position,
                                    columnSlots: table.columns.map { inserted.firstIndex(of: $0.name) },
                                    orderSlots: orderColumns.map { inserted.firstIndex(of: $0) },
                                    orderTypes: orderColumns.map { name in table.column(name)?.type ?? .blob }))
        }
        self.tableNames = names
        self.tables = tables
        self.plans = plans
    }

    /// Takes in a row just inserted for `target`.
    package mutating func record(_ values: [SQLValue], target: Int) {
        let plan = plans[target]
        tables[plan.table].record(values, plan)
    }

    /// The facts by table name, for the next source's recorder and for the checks.
    package var facts: [String: StagedTableFacts] {
        Dictionary(uniqueKeysWithValues: zip(tableNames, tables))
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
