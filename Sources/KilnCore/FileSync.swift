import Foundation
import KilnC

/// Durable, atomic file replacement: fsync the new file, rename it over the old one, fsync the folder.
package enum FileSync {
    /// Moves `temporary` to `destination` in one step, so that readers see the old file or the new one, never a part.
    /// - Throws: `KilnError.io` when syncing or renaming fails (the temporary file is left for the caller to remove).
    package static func replace(_ destination: URL, with temporary: URL) throws {
        try fsync(temporary)
        try move(temporary, to: destination)
    }

    /// `replace` for a `temporary` file already synced (`BackgroundSync`): renames it and syncs the folder. Every
    /// file Kiln writes ends in this rename, so it is where the output guard stands: the destination must be a regular
    /// file or nothing, and none of the files the command reads (`ProtectedFiles`).
    /// - Throws: `KilnError.io` when the destination is not Kiln's to replace or renaming fails.
    package static func move(_ temporary: URL, to destination: URL) throws {
        try checkReplaceable(destination)
        guard FileCalls.rename(temporary.path, to: destination.path) else {
            throw KilnError.io("cannot move the new file to \(destination.path): \(SystemError.lastMessage)")
        }
        try? fsync(destination.deletingLastPathComponent())
    }

    /// Refuses a destination that is not a regular file (a device, a symbolic link, a FIFO, a socket, a folder) or
    /// that is one of the command's protected files.
    /// - Throws: `KilnError.io` with one sentence naming the path and what it is.
    package static func checkReplaceable(_ destination: URL) throws {
        if let kind = OutputPath.entryKind(destination), kind != .regular {
            throw KilnError.io("\(destination.path) is \(kind.phrase); Kiln replaces only regular files")
        }
        if let role = ProtectedFiles.shared.role(of: destination) {
            throw KilnError.io("\(destination.path) is \(role); it would be overwritten")
        }
    }

    /// Calls `fsync` on the file or folder at `url`.
    /// - Throws: `KilnError.io` when it cannot be opened or synced.
    package static func fsync(_ url: URL) throws {
        let descriptor = FileCalls.open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw KilnError.io("cannot open \(url.path) to sync it: \(SystemError.lastMessage)") }
        defer { close(descriptor) }
        guard DescriptorSync.sync(descriptor) else { throw KilnError.io("cannot sync \(url.path): \(SystemError.lastMessage)") }
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
