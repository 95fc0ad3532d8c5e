import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The files SQLite keeps beside a database — `-wal`, `-shm` (write-ahead log) and `-journal` (rollback journal) —
/// for the bundle a build replaces. SQLite finds them by name, not by the database they belong to: left beside the old
/// bundle (by a database browser, or a writer that was killed), they would be applied to the new bundle once it is
/// renamed into place, and it would read as damaged, or with the browser's edits in it. So before the rename they are
/// settled: while another process holds the old bundle, the build stops; otherwise SQLite itself finishes or rolls
/// back what they hold in the old file (which is being replaced anyway) and removes them.
package enum BundleSideFiles {
    /// The suffixes of SQLite's files beside a database.
    package static let suffixes = ["-wal", "-shm", "-journal"]

    /// The side files of `database` that exist.
    package static func present(beside database: URL) -> [URL] {
        suffixes.map { URL(fileURLWithPath: database.path + $0) }.filter { OutputPath.entryKind($0) != nil }
    }

    /// Makes sure no side file of `destination` is left, so that the new bundle can be renamed over it.
    /// - Throws: `KilnError.io` saying that the bundle is locked by another process (nothing is changed then), or
    ///   naming a side file that cannot be removed.
    package static func settle(beside destination: URL) throws {
        try refuseIfHeld(destination)
        guard !present(beside: destination).isEmpty else { return }
        if OutputPath.entryKind(destination) == .regular {
            do {
                let database = try Database(path: destination.path, mode: .readWrite, functions: KilnSQLFunctions.all)
                // Reading rolls back a hot journal; leaving WAL mode checkpoints the log and needs every other
                // connection closed; an exclusive transaction needs every other process's lock released.
                _ = try database.rows("PRAGMA journal_mode = DELETE")
                try database.execute("BEGIN EXCLUSIVE; COMMIT")
                try database.close()
            } catch let error as SQLiteError where error.isLocked {
                throw lockedError(destination)
            } catch let error as SQLiteError where !error.isNotADatabase {
                throw KilnError.io(IOFailure("cannot settle the SQLite files beside \(destination.path) before replacing it: \(error.message)",
                                             path: destination.path, operation: .write, sqlite: error))
            } catch is SQLiteError {
                // The old file is not a database (or is damaged): its side files belong to nothing and are removed.
            }
        }
        for file in present(beside: destination) {
            guard FileCalls.unlink(file.path) || errno == ENOENT else {
                throw KilnError.io(.lastSystemError("cannot remove \(file.path), which SQLite would apply to the new bundle", path: file.path, operation: .remove))
            }
        }
    }

    /// Checks the bundle just renamed into place: no side file appeared beside it and SQLite reads it.
    /// - Throws: `KilnError.io` when another process wrote beside it in the meantime.
    package static func verify(_ destination: URL) throws {
        if let file = present(beside: destination).first {
            throw KilnError.io("\(file.path) appeared beside the new bundle while it was put in place: another process has \(destination.path) open; close it and build again")
        }
        do {
            let database = try Database(path: destination.path, mode: .readOnly, functions: KilnSQLFunctions.all)
            _ = try database.rows("SELECT count(*) FROM sqlite_schema")
            try database.close()
        } catch let error as SQLiteError {
            if error.isLocked { throw lockedError(destination) }
            throw KilnError.io(IOFailure("the new bundle \(destination.path) cannot be read back: \(error.message)", path: destination.path, operation: .read, sqlite: error))
        }
    }

    /// SQLite's lock bytes in a database file (rollback journal: `PENDING_BYTE`, the reserved byte and the 510 shared
    /// bytes after it), taken by a connection while it reads or writes.
    private static let databaseLockBytes: [(start: Int64, length: Int64)] = [(0x4000_0000, 512)]
    /// SQLite's lock bytes in a `-shm` file (write-ahead log: the writer, checkpointer, recovery and reader locks at
    /// 120–127, and at 128 the one every connection that has the database open holds).
    private static let sharedMemoryLockBytes: [(start: Int64, length: Int64)] = [(120, 9)]

    /// The one test of every command that reads or replaces a bundle (build, its baseline, check, diff, export, patch,
    /// apply, report): another process that writes `bundle` (a reserved, pending or exclusive lock: a write
    /// transaction, even a `BEGIN EXCLUSIVE` before its first change), or has it open in WAL mode, holds one of
    /// SQLite's locks on it; then `lockedError`. SQLite itself would go on: such a writer leaves no file beside the
    /// bundle, and readers of a WAL database read past an open writer. Another reader (a second `kiln export`) is
    /// no reason to stop: renaming over a file leaves its readers the old one. Call it before this process opens
    /// `bundle` (closing the descriptor the test uses drops this process's own locks on the file).
    /// - Throws: `lockedError(bundle)`.
    package static func refuseIfHeld(_ bundle: URL) throws {
        let held = (try? AdvisoryLocks.heldElsewhere(bundle.path, ranges: databaseLockBytes, writersOnly: true)) == true
            || (try? AdvisoryLocks.heldElsewhere(bundle.path + "-shm", ranges: sharedMemoryLockBytes)) == true
        if held { throw lockedError(bundle) }
    }

    /// The error for a bundle another process holds.
    package static func lockedError(_ url: URL) -> KilnError {
        .io(IOFailure("\(url.relativePath) is locked by another process (an app or a database browser has it open); close it and try again",
                      path: url.path, operation: .lock, heldElsewhere: true))
    }

    /// True for `lockedError`'s errors.
    package static func isLocked(_ error: KilnError) -> Bool {
        if case .io(let failure) = error { return failure.heldElsewhere }
        return false
    }
}
