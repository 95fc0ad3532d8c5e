import Foundation
internal import CSQLite

/// What SQL run by `Database.changingRowsOnly` may change: rows of some tables of `main`, nothing else (a patch
/// downloaded beside a bundle: it may not write another file, change the schema or the database's settings).
package struct RowWriteScope: Sendable, Equatable {
    /// The tables of `main` whose rows may be inserted, updated and deleted (a virtual table's shadow tables among
    /// them, which the virtual table writes).
    package var tables: Set<String>
    /// The virtual tables of `main` that may be dropped and created again (a full-text index rebuilt), with the
    /// shadow tables of theirs that `tables` holds.
    package var rebuildable: Set<String>

    package init(tables: Set<String>, rebuildable: Set<String> = []) {
        self.tables = tables
        self.rebuildable = rebuildable
    }

    /// The PRAGMA allowed with a value: it changes nothing but when the transaction checks foreign keys.
    static let settablePragmas: Set<String> = ["defer_foreign_keys"]
    /// SQLite's schema tables, which SQLite writes as it creates or drops a table and which ordinary SQL cannot
    /// write (without `PRAGMA writable_schema`, refused).
    static let schemaTables: Set<String> = ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"]

    /// True when `table` is a shadow table of a rebuildable virtual table.
    func isRebuildableShadow(_ table: String) -> Bool {
        tables.contains(table) && rebuildable.contains { table.hasPrefix($0 + "_") }
    }

    /// Whether SQLite's authorizer may allow `action` with its arguments `first` and `second` on schema `schema`.
    func allows(_ action: Int32, _ first: String?, _ second: String?, schema: String?) -> Bool {
        let name = first ?? ""
        switch action {
        case SQLITE_SELECT, SQLITE_READ, SQLITE_RECURSIVE, SQLITE_TRANSACTION, SQLITE_FUNCTION:
            return true
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            // The connection's own temporary tables are scratch space that goes with the connection.
            return schema == "temp" || RowWriteScope.schemaTables.contains(name) || (schema == "main" && tables.contains(name))
        case SQLITE_CREATE_TEMP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_DROP_TEMP_INDEX:
            return true
        case SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            return schema == "main" && rebuildable.contains(name)
        case SQLITE_CREATE_TABLE, SQLITE_DROP_TABLE:
            return schema == "main" && isRebuildableShadow(name)
        case SQLITE_CREATE_INDEX:
            return schema == "main" && isRebuildableShadow(second ?? "")
        case SQLITE_PRAGMA:
            let pragma = name.lowercased()
            return RowWriteScope.settablePragmas.contains(pragma) || (second == nil && ReadingActions.readPragmas.contains(pragma))
        default:
            return false
        }
    }
}

/// Authorizer actions that read although their codes are those of writes: SQLite compiling a virtual table's
/// declaration (an FTS5 table's, a pragma function's) asks to UPDATE its schema table, which ordinary SQL cannot
/// write (without `PRAGMA writable_schema`, never allowed), and FTS5 and the pragma functions
/// (`pragma_table_info('t')`) read through PRAGMAs that only report.
enum ReadingActions {
    /// PRAGMAs that only report, whatever their argument (a table's or an index's name).
    static let reportingPragmas: Set<String> = [
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    ]
    /// PRAGMAs that only read when they have no value (with one, they set it).
    static let readPragmas: Set<String> = ["data_version", "page_size"]

    /// True when `action` with its arguments `first` and `second` only reads.
    static func allows(_ action: Int32, _ first: String?, _ second: String?) -> Bool {
        switch action {
        case SQLITE_UPDATE: return RowWriteScope.schemaTables.contains(first ?? "")
        case SQLITE_PRAGMA:
            let pragma = (first ?? "").lowercased()
            return reportingPragmas.contains(pragma) || (second == nil && readPragmas.contains(pragma))
        default: return false
        }
    }
}

/// What a connection's authorizer and progress handler read: whether manifest SQL is being compiled (only reads
/// allowed), whether other files are refused, whether only rows may change, what was refused last, and when a time
/// limit ends.
/// Not `Sendable`: it belongs to its connection.
package final class SQLGuards {
    package var readOnly = false
    package var refusesOtherFiles = false
    /// The tables SQL may change the rows of, and nothing else (`Database.changingRowsOnly`); `nil` when not limited.
    package var rowScope: RowWriteScope?
    package var refused: String?
    /// When statements are stopped (`Database.withTimeLimit`); `.max` for never.
    package var deadline: UInt64 = .max
    /// The signal that stops statements when raised (`Database.stopping(when:)`).
    package var stop: StopSignal?

    /// True once the deadline has passed or the stop signal was raised.
    package var shouldStop: Bool {
        (deadline != .max && DispatchTime.now().uptimeNanoseconds > deadline) || stop?.isRaised == true
    }

    /// The function whose result is not decided by its arguments that the query being compiled calls, if any.
    package var refusedFunction: String?
    /// The date and time functions the query being compiled calls.
    package var calledDates: Set<String> = []
    /// True once the connection's date and time functions refuse the clock (`Database.prepareQuery`).
    package var clockRefused = false

    package func resetRefusal() {
        refused = nil
        refusedFunction = nil
        calledDates = []
    }

    /// Actions that read and nothing else (and `SQLITE_FUNCTION`, which `authorizeFunction` decides).
    private static let reads: Set<Int32> = [SQLITE_SELECT, SQLITE_READ, SQLITE_RECURSIVE]
    /// Functions refused even in reads.
    private static let refusedFunctions: Set<String> = ["load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"]

    /// SQLite's authorizer: `action` with its arguments `first` and `second`, on schema `schema` (`main`, `temp`…).
    package func authorize(_ action: Int32, _ first: String?, _ second: String?, schema: String? = nil) -> Int32 {
        if let rowScope, !readOnly {
            if action == SQLITE_FUNCTION { return authorizeFunction(second) }
            if rowScope.allows(action, first, second, schema: schema) { return SQLITE_OK }
            refused = refused ?? SQLGuards.describe(action, first, second)
            return SQLITE_DENY
        }
        guard readOnly else { return refusesOtherFiles && action == SQLITE_ATTACH ? SQLITE_DENY : SQLITE_OK }
        if action == SQLITE_FUNCTION { return authorizeFunction(second) }
        if SQLGuards.reads.contains(action) || ReadingActions.allows(action, first, second) { return SQLITE_OK }
        if refused == nil {
            // A statement that changes the schema asks to write sqlite_master first.
            let schemaWrite = ["sqlite_master", "sqlite_temp_master"].contains(first ?? "")
            refused = schemaWrite ? "a change to the schema (CREATE, DROP or ALTER)" : SQLGuards.describe(action, first, second)
        }
        return SQLITE_DENY
    }

    /// A call to the function `second`: refused when its result is not decided by its arguments, or when it reaches
    /// outside the database (`refusedFunctions`).
    private func authorizeFunction(_ second: String?) -> Int32 {
        guard let name = second?.lowercased() else { return SQLITE_OK }
        if SandboxState.nonDeterministicFunctions.contains(name) {
            refusedFunction = refusedFunction ?? name
            return SQLITE_DENY
        }
        if ClockFreeDates.names.contains(name) { calledDates.insert(name) }
        guard SQLGuards.refusedFunctions.contains(name) else { return SQLITE_OK }
        refused = "a call to \(name)()"
        return SQLITE_DENY
    }

    /// What a refused action is, for messages: its statement and what it names (an ALTER TABLE's and a SAVEPOINT's
    /// in `second`; an ATTACH's file is not shown).
    private static func describe(_ action: Int32, _ first: String?, _ second: String?) -> String {
        let argument = action == SQLITE_ALTER_TABLE || action == SQLITE_SAVEPOINT ? second : first
        let names: [Int32: String] = [
            SQLITE_INSERT: "an INSERT", SQLITE_UPDATE: "an UPDATE", SQLITE_DELETE: "a DELETE", SQLITE_PRAGMA: "a PRAGMA",
            SQLITE_ATTACH: "an ATTACH or VACUUM INTO", SQLITE_DETACH: "a DETACH", SQLITE_TRANSACTION: "a transaction",
            SQLITE_SAVEPOINT: "a SAVEPOINT", SQLITE_ANALYZE: "an ANALYZE", SQLITE_ALTER_TABLE: "an ALTER TABLE",
            SQLITE_REINDEX: "a REINDEX", SQLITE_CREATE_TABLE: "a CREATE TABLE", SQLITE_CREATE_TEMP_TABLE: "a CREATE TABLE",
            SQLITE_CREATE_VIEW: "a CREATE VIEW", SQLITE_CREATE_TEMP_VIEW: "a CREATE VIEW", SQLITE_CREATE_INDEX: "a CREATE INDEX",
            SQLITE_CREATE_TRIGGER: "a CREATE TRIGGER", SQLITE_CREATE_TEMP_TRIGGER: "a CREATE TRIGGER",
            SQLITE_CREATE_VTABLE: "a CREATE VIRTUAL TABLE", SQLITE_DROP_TABLE: "a DROP TABLE", SQLITE_DROP_VIEW: "a DROP VIEW",
            SQLITE_DROP_INDEX: "a DROP INDEX", SQLITE_DROP_TRIGGER: "a DROP TRIGGER", SQLITE_DROP_VTABLE: "a DROP TABLE",
            SQLITE_CREATE_TEMP_INDEX: "a CREATE INDEX", SQLITE_DROP_TEMP_INDEX: "a DROP INDEX", SQLITE_DROP_TEMP_TABLE: "a DROP TABLE",
            SQLITE_DROP_TEMP_TRIGGER: "a DROP TRIGGER", SQLITE_DROP_TEMP_VIEW: "a DROP VIEW",
        ]
        let name = names[action] ?? "an action other than reading (SQLite authorizer code \(action))"
        guard let argument, action != SQLITE_TRANSACTION, action != SQLITE_ATTACH else { return name }
        return "\(name) (\(argument))"
    }
}
