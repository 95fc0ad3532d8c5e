import Foundation
internal import CSQLite

/// What a connection's authorizer and progress handler read: whether manifest SQL is being compiled (only reads
/// allowed), whether other files are refused, what was refused last, and when a time limit ends.
/// Not `Sendable`: it belongs to its connection.
package final class SQLGuards {
    package var readOnly = false
    package var refusesOtherFiles = false
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

    /// Actions that read and nothing else.
    private static let reads: Set<Int32> = [SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE]
    /// Functions refused even in reads.
    private static let refusedFunctions: Set<String> = ["load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"]

    package func authorize(_ action: Int32, _ first: String?, _ second: String?) -> Int32 {
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
