import Foundation
internal import CSQLite

/// SQLite's session extension (`sqlite3session_diff`, `sqlite3changeset_apply`): the changeset that turns tables of
/// one database into those of another, and applying one. Every C pointer of the extension stays in this file.
package enum SQLiteChangeset {
    /// The changeset that turns each of `tables` of the database attached to `database` as `fromSchema` into the
    /// same table of `database`'s main schema (`sqlite3session_diff`, one table after the other, in the given order).
    /// A table needs a primary key (the session extension ignores the others) and the same key on both sides.
    /// - Throws: `SQLiteError` with SQLite's message (and the table) when a session cannot be made or a diff fails.
    package static func diff(_ database: Database, from fromSchema: String, tables: [String]) throws -> [UInt8] {
        var session: OpaquePointer?
        let created = sqlite3session_create(database.handle, "main", &session)
        guard created == SQLITE_OK, let session else {
            throw SQLiteError(code: created, message: "cannot start an SQLite session: \(String(cString: sqlite3_errstr(created)))", sql: nil)
        }
        defer { sqlite3session_delete(session) }
        for table in tables {
            let attached = sqlite3session_attach(session, table)
            guard attached == SQLITE_OK else {
                throw SQLiteError(code: attached, message: "cannot follow table \(table) in an SQLite session: \(String(cString: sqlite3_errstr(attached)))", sql: nil)
            }
            var message: UnsafeMutablePointer<CChar>?
            let result = sqlite3session_diff(session, fromSchema, table, &message)
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_free(message)
            guard result == SQLITE_OK else {
                throw SQLiteError(code: result, message: "the session extension cannot compare table \(table): \(text)", sql: nil)
            }
        }
        var size: Int32 = 0
        var bytes: UnsafeMutableRawPointer?
        let result = sqlite3session_changeset(session, &size, &bytes)
        defer { sqlite3_free(bytes) }
        guard result == SQLITE_OK else {
            throw SQLiteError(code: result, message: "cannot write the changeset: \(String(cString: sqlite3_errstr(result)))", sql: nil)
        }
        guard let bytes, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(size)))
    }

    /// What stopped `apply`: the first conflict the changeset met (a row it deletes or changes that is not as it
    /// expects, a row it inserts whose key exists, a constraint, a foreign key), counted by kind.
    package struct Conflicts: Error, Sendable {
        /// Conflicts by kind (`data`, `not found`, `conflict`, `constraint`, `foreign key`).
        package var counts: [String: Int] = [:]
        /// The SQLite result when the changeset itself could not be read (truncated or damaged), else `nil`.
        package var failure: String?

        /// "2 rows not found" and the like, or SQLite's reason.
        package var description: String {
            if let failure { return failure }
            return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }
    }

    /// Applies `changeset` to `database`'s main schema in one go (SQLite's own savepoint): any conflict aborts it, and
    /// nothing is changed then.
    /// - Throws: `Conflicts` naming what did not match, or why the changeset cannot be read.
    package static func apply(_ changeset: [UInt8], to database: Database) throws {
        let recorder = ConflictRecorder()
        let context = Unmanaged.passUnretained(recorder).toOpaque()
        let result: Int32 = changeset.withUnsafeBytes { buffer in
            var bytes = [UInt8](buffer)
            return bytes.withUnsafeMutableBytes { mutable in
                sqlite3changeset_apply(database.handle, Int32(mutable.count), mutable.baseAddress, nil, { context, kind, _ in
                    let recorder = Unmanaged<ConflictRecorder>.fromOpaque(context!).takeUnretainedValue()
                    recorder.record(kind)
                    return SQLITE_CHANGESET_ABORT
                }, context)
            }
        }
        withExtendedLifetime(recorder) {}
        if result == SQLITE_OK && recorder.conflicts.counts.isEmpty { return }
        var conflicts = recorder.conflicts
        if conflicts.counts.isEmpty {
            conflicts.failure = "SQLite cannot apply the changeset (\(String(cString: sqlite3_errstr(result))))"
        }
        throw conflicts
    }

    /// The conflict handler's record (passed to the C callback as its context).
    private final class ConflictRecorder {
        package var conflicts = Conflicts()

        package func record(_ kind: Int32) {
            let name: String
            switch kind {
            case SQLITE_CHANGESET_DATA: name = "rows not as expected"
            case SQLITE_CHANGESET_NOTFOUND: name = "rows not found"
            case SQLITE_CHANGESET_CONFLICT: name = "rows already present"
            case SQLITE_CHANGESET_CONSTRAINT: name = "constraint failures"
            case SQLITE_CHANGESET_FOREIGN_KEY: name = "foreign key failures"
            default: name = "conflicts"
            }
            conflicts.counts[name, default: 0] += 1
        }
    }
}
