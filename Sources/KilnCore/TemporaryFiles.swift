import Foundation
import KilnC

/// The temporary files a run has created and not yet removed or renamed into place: the staging database, the lock
/// file, a bundle or report before its rename, export files being written, a patch folder being filled (a folder
/// goes once the files registered in it are gone). When the run is interrupted by a signal,
/// the command line removes them all (`removeAll`) before it exits, so that an interrupted build leaves what a
/// finished one leaves. Registration is cheap and thread-safe; the library registers whether or not anyone listens.
/// Once `removeAll` has begun, the registry is closed for good: a thread that registers or unregisters then waits
/// (for a change that never comes; the process exits) instead of creating another temporary file.
package final class TemporaryFiles: Sendable {
    /// The process's registry.
    package static let shared = TemporaryFiles()

    private struct State {
        var paths: [String: Int] = [:]
        var retained: [AnyObject] = []
        /// True once `removeAll` has begun.
        var closed = false
        /// The files `removeAll()` removed.
        var removedAtExit: [String] = []
    }

    private let state = ConditionLock(State())

    /// Adds `url` to the files to remove on interruption (several registrations of one path count).
    package func register(_ url: URL) {
        state.wait(until: { !$0.closed }) { $0.paths[url.path, default: 0] += 1 }
    }

    /// Removes `url` from the registry once it is removed or in place.
    package func unregister(_ url: URL) {
        state.wait(until: { !$0.closed }) { state in
            guard let count = state.paths[url.path] else { return }
            state.paths[url.path] = count > 1 ? count - 1 : nil
        }
    }

    /// Removes every registered file that exists and returns their paths, sorted, for a process about to exit: the
    /// registry is closed from then on, so a thread still running waits at its next registration instead of
    /// creating another temporary file; `removeAgain()` catches a registered file such a thread re-created
    /// meanwhile (SQLite re-creates a missing database it attaches).
    package func removeAll() -> [String] {
        var removed = state.withLock { state in
            state.closed = true
            return state.paths.keys.sorted()
        }
        removed += removed.flatMap(TemporaryFiles.libraryTemporaries)
        removed.sort()
        state.withLock { $0.removedAtExit = removed }
        // A folder being filled (`AtomicFolder`) goes after the files in it, which sort after it.
        return removed.reversed().filter(TemporaryFiles.remove).reversed()
    }

    /// Removes the file, or the empty folder, at `path`; true when it was there.
    private static func remove(_ path: String) -> Bool {
        FileCalls.unlink(path) || FileCalls.removeFolder(path)
    }

    /// The files a C library writes beside `path`: libzip's `<path>.XXXXXX` before renaming it to `path`, SQLite's
    /// journal `<path>-journal` (`-wal`, `-shm`) while it changes the database at `path` (`kiln apply`).
    private static func libraryTemporaries(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let prefix = url.lastPathComponent + "."
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        let companions = Set(KilnFileNames.sqliteCompanions.map { url.lastPathComponent + $0 })
        return entries.filter { ($0.hasPrefix(prefix) && $0.count == prefix.count + 6) || companions.contains($0) }
            .map { url.deletingLastPathComponent().appendingPathComponent($0).path }
    }

    /// Removes again the files `removeAll()` removed, right before the process exits.
    package func removeAgain() {
        for path in state.withLock({ $0.removedAtExit }).reversed() { _ = TemporaryFiles.remove(path) }
    }

    /// Keeps `object` alive as long as the process (e.g. the signal sources that call `removeAll`).
    package func retain(_ object: AnyObject) {
        state.wait(until: { !$0.closed }) { $0.retained.append(object) }
    }
}
