import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The one owner of a build's staging file: who may touch it, and when, is decided here rather than by the order of
/// calls in `Builder.build` (docs/CONCURRENCY.md, "The staging file"). Access comes in two kinds of phase:
///
/// - a **write phase**: one connection writes, the owner's (`write`), on the owner's thread or lent for the phase
///   to the staging writer's thread (`lendForWriting`). It starts only once every read lease is returned, and no
///   lease is handed out while it lasts. Outside write phases the owner's connection is `query_only`, so a write
///   there fails at once (`SQLITE_READONLY`) instead of racing a reader.
/// - **read leases** (`lease`): another thread's connection attaches the file read-only (`StagingLease.attach`) and
///   reads it; any number at once, beside the owner's own reads. A lease asked for during a write phase waits for
///   the phase to end; a write phase asked for while leases are out (or asked for) waits until they are returned.
///
/// So no two connections ever hold conflicting locks on the file, and no busy timeout is needed: SQLite's "database
/// is locked" cannot happen between Kiln's own connections. A thread must not ask for a write phase while it holds
/// a lease, nor for a lease while it holds one (it would wait for itself); the threads that take leases (the
/// bundle's, the full-text indexes') take one at a time and wait for nothing while they hold it.
///
/// Unchecked Sendable: phase and leases under `state`; the connection is the owner's thread's, or the borrower's while lent.
package final class StagingDatabase: @unchecked Sendable {
    /// The staging file.
    package let url: URL
    /// The one connection that writes the file; in `query_only` mode outside write phases.
    private let connection: Database
    /// The phase and the leases.
    private struct State {
        /// True while a write phase lasts.
        var writing = false
        /// True while a write phase lends the connection to another thread.
        var lent = false
        /// Read leases handed out and not yet returned.
        var leases = 0
        /// Threads waiting for a lease: a write phase lets them go first.
        var waitingForLeases = 0
    }

    private let state = ConditionLock(State())
    /// True when the file started as a copy of a seed database.
    package let seeded: Bool

    /// Creates the staging file at `url` (replacing any file there) with the owner's connection: empty, or a copy of
    /// the database `seed` when it is given and can be copied (`seeded` says whether it was).
    /// - Throws: `SQLiteError` when the file cannot be created.
    package init(url: URL, seed: URL? = nil) throws {
        try? FileManager.default.removeItem(at: url)
        seeded = seed.map { (try? FileManager.default.copyItem(at: $0, to: url)) != nil } ?? false
        if seed != nil, !seeded { try? FileManager.default.removeItem(at: url) }
        self.url = url
        connection = try Database(path: url.path, functions: KilnSQLFunctions.all)
        try connection.execute("PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16384; PRAGMA threads = 2; PRAGMA query_only = 1")
    }

    /// The owner's connection, for reading on the owner's thread between write phases (rules, counts, order checks)
    /// and for closing once the build is done with staging. Asking for it while a write phase lends it to another
    /// thread is a programming error.
    package var database: Database {
        let lentOut = state.withLock { $0.lent }
        precondition(!lentOut, "the staging connection is lent to the staging writer for a write phase")
        return connection
    }

    /// True while a write phase lasts (for tests and preconditions).
    package var isWriting: Bool {
        state.withLock { $0.writing }
    }

    /// Read leases handed out and not yet returned (for tests).
    package var outstandingLeases: Int {
        state.withLock { $0.leases }
    }

    /// Runs `body` in a write phase on the calling (owner's) thread, with the owner's connection writable: waits
    /// until every lease is returned (and those asked for are served), and hands out none until `body` returns.
    /// - Throws: what `body` throws, or `SQLiteError` when the connection's mode cannot be changed.
    package func write<T>(_ body: (Database) throws -> T) throws -> T {
        try inWritePhase(lending: false) { try body(connection) }
    }

    /// Runs `body` in a write phase whose connection is lent to another thread (the staging writer's): `body` gets
    /// it in a `Handoff`, and must wait for the borrowing thread to be done with it before it returns (the owner's
    /// `database` refuses meanwhile).
    /// - Throws: what `body` throws, or `SQLiteError` when the connection's mode cannot be changed.
    package func lendForWriting<T>(_ body: (Handoff<Database>) throws -> T) throws -> T {
        try inWritePhase(lending: true) { try body(Handoff(connection)) }
    }

    private func inWritePhase<T>(lending: Bool, _ body: () throws -> T) throws -> T {
        precondition(!state.withLock { $0.writing }, "a write phase of the staging database was asked for inside another")
        state.wait(until: { $0.leases == 0 && $0.waitingForLeases == 0 }) { $0.writing = true }
        defer {
            state.change { state in
                state.writing = false
                state.lent = false
            }
        }
        try connection.execute("PRAGMA query_only = 0")
        defer { try? connection.execute("PRAGMA query_only = 1") }
        if lending { state.withLock { $0.lent = true } }
        let value = try body()
        state.withLock { $0.lent = false }
        return value
    }

    /// A read lease on the file, for a connection of the calling thread (`StagingLease.attach`); waits while a
    /// write phase lasts. Return it (`StagingLease.release`) as soon as the reading is done: the next write phase
    /// waits for it.
    package func lease() -> StagingLease {
        state.withLock { $0.waitingForLeases += 1 }
        state.wait(until: { !$0.writing }) { state in
            state.waitingForLeases -= 1
            state.leases += 1
            self.state.broadcast()
        }
        return StagingLease(owner: self)
    }

    /// Takes back a lease (`StagingLease.release`).
    fileprivate func returnLease() {
        state.change { state in
            precondition(state.leases > 0, "a staging lease was returned twice")
            state.leases -= 1
        }
    }
}

/// Leave to read the staging file from a connection other than its owner's, until `release` (or until the lease is
/// dropped: an error path cannot keep the owner's next write phase waiting). Made by `StagingDatabase.lease`.
package final class StagingLease: Sendable {
    private let owner: StagingDatabase
    /// True once returned.
    private let returned = Mutex(false)

    fileprivate init(owner: StagingDatabase) {
        self.owner = owner
    }

    /// Attaches the staging file read-only to `database` (opened with `readOnlyAttachments: true`) as `schema`.
    /// - Throws: `SQLiteError` when SQLite refuses the attachment.
    package func attach(to database: Database, as schema: String) throws {
        try database.attachReadOnly(owner.url.path, as: schema)
    }

    /// Detaches `schema` from `database` (when given) and returns the lease; calling it again does nothing.
    /// - Throws: `SQLiteError` when the detachment fails (the lease is returned all the same).
    package func release(detaching schema: String? = nil, from database: Database? = nil) throws {
        defer { giveBack() }
        if let schema, let database { try database.execute("DETACH DATABASE \(quoteIdentifier(schema))") }
    }

    private func giveBack() {
        let first = returned.withLock { wasReturned in
            defer { wasReturned = true }
            return !wasReturned
        }
        if first { owner.returnLease() }
    }

    deinit { giveBack() }
}
