import Foundation
import KilnC

/// The folder SQLite puts its temporary files in (sorts, indexes, large transactions), and what a full disk there
/// looks like: SQLite says "database or disk is full" for the database it was writing, though the disk with no room
/// may be this folder's (a small `/tmp` or `TMPDIR`), not the bundle's.
package enum TemporaryFolder {
    /// SQLite's choice on Unix (`unixTempFileDir`): `SQLITE_TMPDIR`, `TMPDIR`, then `/var/tmp`, `/usr/tmp`, `/tmp`,
    /// the first that is a folder it can write; with the variable that chose it, for messages.
    package static func sqlite(environment: [String: String] = ProcessInfo.processInfo.environment) -> (path: String, source: String)? {
        let candidates = [(environment["SQLITE_TMPDIR"], "SQLITE_TMPDIR"), (environment["TMPDIR"], "TMPDIR"),
                          ("/var/tmp", "the system's"), ("/usr/tmp", "the system's"), ("/tmp", "the system's")]
        for (path, source) in candidates {
            guard let path, !path.isEmpty, OutputPath.entryKind(URL(fileURLWithPath: path), followingLinks: true) == .folder,
                  FileManager.default.isWritableFile(atPath: path) else { continue }
            return (path, source)
        }
        return nil
    }

    /// The free bytes and the device of the file system holding `path`, or `nil` when the system does not say.
    package static func space(at path: String) -> (free: Int64, device: Int)? {
        guard let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path),
              let free = (attributes[.systemFreeSize] as? NSNumber)?.int64Value,
              let device = (attributes[.systemNumber] as? NSNumber)?.intValue else { return nil }
        return (free, device)
    }

    /// SQLite's `error` while writing `what` (a database in `folder`), as a write failure whose path is the folder
    /// with no room: when SQLite says the disk is full and its temporary folder lies on another file system with less
    /// room than `folder`, the failure is that folder's, and its sentence says how to choose another, instead of
    /// leaving the bundle's disk to blame.
    package static func storageFailure(_ error: SQLiteError, writing what: String, in folder: URL,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> IOFailure {
        let text = "cannot write \(what): \(error.message)"
        guard error.isDiskFull, let temporary = sqlite(environment: environment),
              let folderSpace = space(at: folder.path),
              let temporarySpace = space(at: temporary.path),
              temporarySpace.device != folderSpace.device, temporarySpace.free < folderSpace.free else {
            return IOFailure(text, path: folder.path, operation: .write, sqlite: error)
        }
        let variable = temporary.source == "the system's" ? "the system's temporary folder" : temporary.source
        return IOFailure(text + ": the disk with no room is SQLite's temporary folder \(temporary.path) (\(variable), \(temporarySpace.free) bytes free), "
                         + "not the bundle's (\(folderSpace.free) bytes free); set TMPDIR to a folder with room", path: temporary.path, operation: .write, sqlite: error)
    }
}
