import Foundation
import Synchronization
import KilnC

/// The files the running command reads and must never replace — the manifest, every input, the report `kiln report`
/// reads — by identity (device and inode, so no other name for them gets through). `FileSync.move`, the one rename
/// every file Kiln writes ends in, refuses to put a file over any of them, whatever its caller checked before.
package final class ProtectedFiles: Sendable {
    /// The process's registry.
    package static let shared = ProtectedFiles()

    /// Each protected file's identity, with the path it was protected at and its role.
    private let roles = Mutex<[FileKey: (path: String, role: String)]>([:])

    /// Protects the file at `url`, described as `role` in messages ("the manifest", "the input in.txt"); a path where
    /// nothing exists is not recorded (there is nothing to destroy).
    package func protect(_ url: URL, as role: String) {
        guard let identity = FileKey(url) else { return }
        protect(url, identity: identity, as: role)
    }

    /// Protects the file at `url`, which `stat` just said is `identity` (one `stat` for all that is recorded of it).
    package func protect(_ url: URL, identity: FileKey, as role: String) {
        roles.withLock { roles in
            // An entry for a file since removed (whose inode this file was given) is replaced.
            if let entry = roles[identity], FileKey(URL(fileURLWithPath: entry.path)) == identity { return }
            roles[identity] = (url.path, role)
        }
    }

    /// What `url` is when it is a protected file, else `nil`. A protected file since removed or replaced no longer
    /// counts (its inode may be given to a new file): the entry holds only while its path still names that file.
    package func role(of url: URL) -> String? {
        guard let identity = FileKey(url) else { return nil }
        return roles.withLock { roles in
            guard let entry = roles[identity] else { return nil }
            guard FileKey(URL(fileURLWithPath: entry.path)) == identity else {
                roles[identity] = nil
                return nil
            }
            return entry.role
        }
    }
}
