import Foundation
import KilnC

/// The temporary files a run has created and not yet removed or renamed into place: the staging database, the lock
/// file, a bundle or report before its rename, export files being written, a patch folder being filled (a folder
/// goes once the files registered in it are gone). When the run is interrupted by a signal,
/// the command line removes them all (`removeAll`) before it exits, so that an interrupted build leaves what a
/// finished one leaves. Registration is cheap and thread-safe; the library registers whether or not anyone listens.
///
/// Unchecked Sendable: the registry is read and written under `lock` only.
package final class TemporaryFiles: @unchecked Sendable {
    /// The process's registry.
    package static let shared = TemporaryFiles()

    private let lock = NSLock()
    private var paths: [String: Int] = [:]
    private var retained: [AnyObject] = []

    /// Adds `url` to the files to remove on interruption (several registrations of one path count).
    package func register(_ url: URL) {
        lock.withLock { paths[url.path, default: 0] += 1 }
    }

    /// Removes `url` from the registry once it is removed or in place.
    package func unregister(_ url: URL) {
        lock.withLock {
            guard let count = paths[url.path] else { return }
            paths[url.path] = count > 1 ? count - 1 : nil
        }
    }

    /// Removes every registered file that exists and returns their paths, sorted, for a process about to exit: the
    /// registry stays locked from then on, so a thread still running waits at its next registration instead of
    /// creating another temporary file; `removeAgain()` catches a registered file such a thread re-created
    /// meanwhile (SQLite re-creates a missing database it attaches).
    package func removeAll() -> [String] {
        lock.lock()  // never unlocked: the process exits
        removedAtExit = paths.keys.sorted()
        removedAtExit += removedAtExit.flatMap(TemporaryFiles.libraryTemporaries)
        removedAtExit.sort()
        // A folder being filled (`AtomicFolder`) goes after the files in it, which sort after it.
        return removedAtExit.reversed().filter(TemporaryFiles.remove).reversed()
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
        for path in removedAtExit.reversed() { _ = TemporaryFiles.remove(path) }
    }

    /// The files `removeAll()` removed (read and written only by the thread that holds the lock for good).
    private var removedAtExit: [String] = []

    /// Keeps `object` alive as long as the process (e.g. the signal sources that call `removeAll`).
    package func retain(_ object: AnyObject) {
        lock.withLock { retained.append(object) }
    }
}
