import Foundation
import Synchronization
import KilnC

/// Durable, atomic file replacement: fsync the new file, rename it over the old one, fsync the folder.
package enum FileSync {
    /// Moves `temporary` to `destination` in one step, so that readers see the old file or the new one, never a part.
    /// - Throws: `KilnError.io` when syncing or renaming fails (the temporary file is left for the caller to remove).
    package static func replace(_ destination: URL, with temporary: URL) throws {
        try fsync(temporary)
        try move(temporary, to: destination)
    }

    /// Writes `destination` whole or not at all: `write` fills a temporary file beside it (registered with
    /// `TemporaryFiles`, and removed whatever happens), which is then synced and renamed over it (`replace`).
    /// - Returns: what `write` returns.
    /// - Throws: what `write` throws, or `KilnError.io` when syncing or renaming fails; `destination` is then as it was.
    @discardableResult
    package static func write<Result>(_ destination: URL, through write: (URL) throws -> Result) throws -> Result {
        let temporary = AtomicFile.temporary(for: destination)
        TemporaryFiles.shared.register(temporary)
        defer {
            try? FileManager.default.removeItem(at: temporary)
            TemporaryFiles.shared.unregister(temporary)
        }
        try? FileManager.default.removeItem(at: temporary)
        let result = try write(temporary)
        try replace(destination, with: temporary)
        return result
    }

    /// `replace` for a `temporary` file already synced (`BackgroundSync`): renames it and syncs the folder. Every
    /// file Kiln writes ends in this rename, so it is where the output guard stands: the destination must be a regular
    /// file or nothing, and none of the files the command reads (`ProtectedFiles`).
    /// - Throws: `KilnError.io` when the destination is not Kiln's to replace or renaming fails.
    /// A large file replaced keeps a second name until `LaterRemovals` removes it on a thread of its own: the
    /// system frees a file's blocks when its last name goes, which for a bundle of 350 MB took 0.3 s inside the
    /// rename. `syncingFolder` false leaves the folder's sync to the caller (`syncFileSystem`, once for many files).
    package static func move(_ temporary: URL, to destination: URL, syncingFolder: Bool = true) throws {
        try checkReplaceable(destination)
        var aside: URL?
        if let size = FileStatus(path: destination.path, followingLinks: false)?.size, size >= largeFileBytes {
            let name = KilnFileNames.replaced(for: destination)
            FileCalls.unlink(name.path)
            if FileCalls.link(destination.path, as: name.path) {
                TemporaryFiles.shared.register(name)
                aside = name
            }
        }
        guard FileCalls.rename(temporary.path, to: destination.path) else {
            let failure = IOFailure.lastSystemError("cannot move the new file to \(destination.path)", path: destination.path, operation: .rename)
            if let aside { LaterRemovals.shared.remove(aside) }
            throw KilnError.io(failure)
        }
        if let aside { LaterRemovals.shared.remove(aside) }
        if syncingFolder { try? fsync(destination.deletingLastPathComponent()) }
    }

    /// Puts `body` at `destination` without syncing (a fetch syncs the file system once at its end) and starts its
    /// writeback. An unnamed body is linked there when the name is free: one call on the folder, and nothing replaced.
    /// Otherwise — a named body at `temporary`, or a name already taken — the body is renamed into place from
    /// `temporary` under `move`'s guard.
    /// - Throws: `KilnError.io` when `destination` is not Kiln's to replace or the link or rename fails.
    package static func place(_ body: HTTPBodyFile, at destination: URL, through temporary: URL) throws {
        if body.isUnnamed {
            try checkReplaceable(destination)
            if body.link(as: destination.path) {
                body.startWriteback()
                return
            }
            guard errno == EEXIST else { throw KilnError.io(.lastSystemError("cannot save \(destination.path)", path: destination.path, operation: .write)) }
            FileCalls.unlink(temporary.path)
            guard body.link(as: temporary.path) else { throw KilnError.io(.lastSystemError("cannot write \(temporary.path)", path: temporary.path, operation: .write)) }
        }
        do {
            try move(temporary, to: destination, syncingFolder: false)
        } catch {
            if body.isUnnamed { FileCalls.unlink(temporary.path) }
            throw error
        }
        body.startWriteback()
    }

    /// Puts the folder `filled` (a sibling of `destination`, its files synced) where the folder `destination` is: a
    /// rename when there is none, a swap in one step (`FileCalls.exchange`) when there is, after which `filled` holds
    /// the old files. The guard of `move` applies to each of `members` in `destination`, the files this replaces.
    /// - Returns: false, with nothing changed, when the file system cannot swap folders there (a mount point, a file
    ///   system without the exchange).
    /// - Throws: `KilnError.io` when a member is not Kiln's to replace or the rename fails.
    package static func moveFolder(_ filled: URL, to destination: URL, replacing members: [String]) throws -> Bool {
        for name in members { try checkReplaceable(destination.appendingPathComponent(name)) }
        try fsync(filled)
        let swapped: Bool
        if OutputPath.entryKind(destination) == nil {
            swapped = FileCalls.rename(filled.path, to: destination.path)
        } else {
            swapped = FileCalls.exchange(filled.path, destination.path)
            if !swapped, [EINVAL, ENOSYS, EXDEV, EPERM, ENOTSUP].contains(errno) { return false }
        }
        guard swapped else { throw KilnError.io(.lastSystemError("cannot put the new \(destination.path) in place", path: destination.path, operation: .rename)) }
        try? fsync(destination.deletingLastPathComponent())
        return true
    }

    /// The size from which a replaced file is removed after the rename rather than by it.
    static let largeFileBytes: Int64 = 64 << 20

    /// Refuses a destination that is not a regular file (a device, a symbolic link, a FIFO, a socket, a folder) or
    /// that is one of the command's protected files.
    /// - Throws: `KilnError.io` with one sentence naming the path and what it is.
    package static func checkReplaceable(_ destination: URL) throws {
        if let kind = OutputPath.entryKind(destination), kind != .regular {
            throw KilnError.io(IOFailure("\(destination.path) is \(kind.phrase); Kiln replaces only regular files", path: destination.path, operation: .write))
        }
        if let role = ProtectedFiles.shared.role(of: destination) {
            throw KilnError.io(IOFailure("\(destination.path) is \(role); it would be overwritten", path: destination.path, operation: .write))
        }
    }

    /// Starts writing what is written of the file at `url` to disk, without waiting, so that its fsync later has less
    /// to wait for (a bundle's tables, each as soon as it is written). Nothing happens when it cannot be opened.
    package static func startWriteback(_ url: URL) {
        let descriptor = FileCalls.open(url.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = DescriptorSync.startWriteback(descriptor)
    }

    /// Syncs the whole file system that holds `url` (`syncfs`): after many small files were renamed into place
    /// without an fsync each (`kiln fetch`), one call makes them all durable.
    /// - Throws: `KilnError.io` when it cannot be opened or synced.
    package static func syncFileSystem(containing url: URL) throws {
        let descriptor = FileCalls.open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw KilnError.io(.lastSystemError("cannot open \(url.path) to sync it", path: url.path, operation: .open)) }
        defer { close(descriptor) }
        guard DescriptorSync.syncFileSystem(descriptor) else {
            throw KilnError.io(.lastSystemError("cannot sync the file system of \(url.path)", path: url.path, operation: .sync))
        }
    }

    /// Calls `fsync` on the file or folder at `url`.
    /// - Throws: `KilnError.io` when it cannot be opened or synced.
    package static func fsync(_ url: URL) throws {
        let descriptor = FileCalls.open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw KilnError.io(.lastSystemError("cannot open \(url.path) to sync it", path: url.path, operation: .open)) }
        defer { close(descriptor) }
        guard DescriptorSync.sync(descriptor) else { throw KilnError.io(.lastSystemError("cannot sync \(url.path)", path: url.path, operation: .sync)) }
    }
}

/// Files removed on threads of their own, so that freeing their blocks does not hold up the command (`FileSync.move`);
/// the command line waits for them before the process exits (`wait`). A run killed first leaves the file's second
/// name (`.<name>.<pid>.old.tmp`), which the next build of that file removes (`BuildFiles.removeStale`).
package final class LaterRemovals: Sendable {
    package static let shared = LaterRemovals()
    private let pending = Mutex<[BackgroundThread<Void>]>([])

    /// Starts removing `url` (registered with `TemporaryFiles`, which forgets it once it is gone).
    package func remove(_ url: URL) {
        let removal = BackgroundThread(name: "kiln remove") {
            FileCalls.unlink(url.path)
            TemporaryFiles.shared.unregister(url)
        }
        pending.withLock { $0.append(removal) }
    }

    /// Waits for every removal started so far.
    package func wait() {
        for removal in pending.withLock({ removals in defer { removals = [] }; return removals }) { try? removal.wait() }
    }
}

/// The fsync of a finished file, run on a thread of its own from the moment it is made, so that the disk writes
/// while the caller goes on (a build writes its report meanwhile); `wait` gives its outcome.
package final class BackgroundSync: Sendable {
    private let work: BackgroundThread<Void>

    /// Starts syncing `url`.
    package init(_ url: URL) {
        work = BackgroundThread(name: "kiln sync") { try FileSync.fsync(url) }
    }

    /// Waits for the sync; calling it again returns (or throws) the same at once.
    /// - Throws: `KilnError.io` when the file could not be synced.
    package func wait() throws {
        try work.wait()
    }
}

/// A number as SQL and messages write it: `0` and `180` for whole numbers, `38.19` otherwise.
package func sqlNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
}
