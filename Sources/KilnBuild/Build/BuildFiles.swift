import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The hidden files a build of one bundle file writes in its folder: the lock (`.<name>.lock`), the staging database
/// (`.<name>.staging.<pid>.sqlite`) and the full-text scratch databases (`.<name>.staging.<pid>.fts<n>.sqlite`), and
/// the finished bundle before its rename (`.<name>.<pid>.tmp`), named by
/// `KilnFileNames`. A build removes its own; one killed first leaves them behind, and the
/// next build of the same file removes them (`removeStale`) while it holds the lock.
package struct BuildFiles {
    /// The bundle, or the report, the files belong to.
    package let destination: URL

    package var folder: URL { destination.deletingLastPathComponent() }
    private var name: String { destination.lastPathComponent }

    /// The lock serializing builds of `destination`.
    package var lock: URL { KilnFileNames.lock(for: destination) }

    /// This process's staging database.
    package var staging: URL { KilnFileNames.staging(for: destination) }

    /// Takes the lock serializing the commands that replace `destination` (a build, `kiln apply`), waiting up to
    /// `timeout` seconds while another process holds it (`waiting` is called once then), registers the lock file for
    /// removal on interruption, and removes what processes no longer running left behind (`removeStale`). Release it
    /// with `unlock`.
    /// - Throws: `KilnError.io` when the lock cannot be taken (still held after `timeout`).
    package func lock(timeout: TimeInterval, waiting: (() -> Void)?) throws -> BuildLock {
        let held = try BuildLock(lock, timeout: timeout, waiting: waiting)
        TemporaryFiles.shared.register(lock)
        removeStale()
        return held
    }

    /// Releases a lock `lock(timeout:waiting:)` took.
    package func unlock(_ held: BuildLock) {
        held.release()
        TemporaryFiles.shared.unregister(lock)
    }

    /// Removes the temporary files of `destination` that processes no longer running left behind, and returns them.
    /// Call it while holding the lock: then no build of `destination` is under way.
    @discardableResult
    package func removeStale() -> [URL] {
        BuildFiles.removeStale(of: [destination])
    }

    /// `removeStale` for many files at once (the files `kiln fetch` saves): each folder is listed once.
    @discardableResult
    package static func removeStale(of destinations: [URL]) -> [URL] {
        Dictionary(grouping: destinations, by: { $0.deletingLastPathComponent() }).sorted(by: { $0.key.path < $1.key.path }).flatMap { folder, files in
            sweep(folder, names: Set(files.map(\.lastPathComponent)))
        }
    }

    /// Removes the staging databases of any bundle in the folder (`.<name>.staging.<pid>.sqlite` and its full-text
    /// scratch databases, names no other program uses) whose process is gone, and returns them: a build killed while
    /// writing another bundle of the same folder left them. A running build's are left alone.
    @discardableResult
    package func removeStaleStagingDatabases() -> [URL] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.sorted().compactMap { entry in
            guard entry.hasPrefix("."), let range = entry.range(of: ".staging.", options: .backwards) else { return nil }
            let rest = entry[range.upperBound...]
            guard let dot = rest.firstIndex(of: "."), BuildFiles.isStagingEnding(rest[rest.index(after: dot)...]),
                  let process = Int32(rest[..<dot]), !BuildFiles.isRunning(process) else { return nil }
            let url = folder.appendingPathComponent(entry)
            return (try? FileManager.default.removeItem(at: url)).map { url }
        }
    }

    /// Removes every temporary file in `folder` that a process no longer running left behind, whatever file it was
    /// for (a folder of build cache entries, swept once per build rather than once per entry written), and returns
    /// them.
    @discardableResult
    package static func removeStaleTemporaries(in folder: URL) -> [URL] {
        sweep(folder, names: nil)
    }

    /// Removes the temporary files in `folder` of the files `names` (any file: `nil`) whose process is gone.
    private static func sweep(_ folder: URL, names: Set<String>?) -> [URL] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var removed: [URL] = []
        for entry in entries.sorted() where entry.hasPrefix(".") {
            // The file's own name is what lies between the leading dot and one of the later dots.
            let candidates = names.map(Array.init) ?? entry.indices.dropFirst(2).filter { entry[$0] == "." }
                .map { String(entry[entry.index(after: entry.startIndex)..<$0]) }
            guard let process = candidates.lazy.compactMap({ owner(of: entry, name: $0) }).first, !isRunning(process) else { continue }
            let url = folder.appendingPathComponent(entry)
            if (try? FileManager.default.removeItem(at: url)) != nil { removed.append(url) }
        }
        return removed
    }

    /// The process id in the name of one of the temporary files of the file `name`, or `nil` for any other file.
    private static func owner(of entry: String, name: String) -> Int32? {
        let prefix = ".\(name)."
        guard entry.hasPrefix(prefix) else { return nil }
        var rest = Substring(entry.dropFirst(prefix.count))
        if rest.hasPrefix("staging.") {
            rest = rest.dropFirst("staging.".count)
            guard let dot = rest.firstIndex(of: "."), BuildFiles.isStagingEnding(rest[rest.index(after: dot)...]) else { return nil }
            return Int32(rest[..<dot])
        }
        // libzip writes an archive to `<its path>.XXXXXX` before its own rename: a killed export leaves that name.
        if let dot = rest.lastIndex(of: "."), rest[..<dot].hasSuffix(".tmp"), rest[rest.index(after: dot)...].count == 6 {
            rest = rest[..<dot]
        }
        // SQLite's journal beside a temporary bundle it was changing (`kiln apply` patches one).
        for journal in KilnFileNames.sqliteCompanions where rest.hasSuffix(".tmp" + journal) { rest = rest.dropLast(journal.count) }
        guard rest.hasSuffix(".tmp") else { return nil }
        rest = rest.dropLast(".tmp".count)
        // The second name of a large file replaced (`KilnFileNames.replaced`).
        if rest.hasSuffix(".old") { rest = rest.dropLast(".old".count) }
        return Int32(rest)
    }

    /// True for what follows `staging.<pid>.` in the name of a staging database, a full-text scratch database or
    /// their journals: `sqlite`, `fts<n>.sqlite`, each optionally with `-journal`.
    private static func isStagingEnding(_ ending: Substring) -> Bool {
        var rest = ending
        if rest.hasSuffix("-journal") { rest = rest.dropLast("-journal".count) }
        guard rest.hasSuffix("sqlite") else { return false }
        rest = rest.dropLast("sqlite".count)
        if rest.isEmpty { return true }
        guard rest.hasPrefix("fts"), rest.hasSuffix(".") else { return false }
        let number = rest.dropFirst(3).dropLast()
        return !number.isEmpty && number.allSatisfy(\.isASCIIDigitCharacter)
    }

    /// True unless the system says no process `process` exists.
    private static func isRunning(_ process: Int32) -> Bool {
        process > 0 && (kill(process, 0) == 0 || errno != ESRCH)
    }
}
