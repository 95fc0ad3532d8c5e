import Foundation
import KilnC

/// An exclusive advisory lock (`flock`) on a file beside a bundle, held while a build writes that bundle, so that two
/// builds of it take turns instead of racing for the same temporary files. The kernel drops the lock when its process
/// ends, even on SIGKILL, so a killed build never blocks the next one. The file is removed on release; a waiting
/// build that then holds a removed file tries again on the file now at the path. On a file system that has no locks,
/// builds go on unlocked.
/// Not `Sendable`: it owns a file descriptor.
package final class BuildLock {
    /// The lock file.
    package let url: URL
    private var descriptor: Int32 = -1

    /// Takes the lock on `url`, waiting up to `timeout` seconds while another process holds it; `waiting` is called
    /// once when it has to wait.
    /// - Throws: `KilnError.io` when the lock file cannot be created or locked, or is still held after `timeout`.
    package init(_ url: URL, timeout: TimeInterval, waiting: (() -> Void)? = nil) throws {
        self.url = url
        let deadline = Date().addingTimeInterval(timeout)
        var waited = false
        while true {
            let candidate = FileCalls.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o644)
            guard candidate >= 0 else { throw KilnError.io(.lastSystemError("cannot create the lock file \(url.path)", path: url.path, operation: .create)) }
            if flock(candidate, LOCK_EX | LOCK_NB) == 0 {
                if BuildLock.isStillAtPath(candidate, url.path) {
                    descriptor = candidate
                    return
                }
                close(candidate)
                continue
            }
            let failure = errno
            if [ENOLCK, EOPNOTSUPP, EINVAL].contains(failure) {
                // A file system without locks (some network ones): build unlocked rather than not at all.
                descriptor = candidate
                return
            }
            close(candidate)
            guard failure == EWOULDBLOCK || failure == EINTR else {
                throw KilnError.io(IOFailure("cannot lock \(url.path): \(SystemError.message(failure))", path: url.path, operation: .lock, errno: failure))
            }
            guard Date() < deadline else {
                throw KilnError.io(IOFailure("another build is writing the same bundle (\(url.path) is locked); waited \(Int(timeout)) s",
                                             path: url.path, operation: .lock, errno: failure, heldElsewhere: true))
            }
            if !waited {
                waited = true
                waiting?()
            }
            usleep(20_000)
        }
    }

    deinit { release() }

    /// Removes the lock file and releases the lock; later calls do nothing.
    package func release() {
        guard descriptor >= 0 else { return }
        FileCalls.unlink(url.path)
        close(descriptor)
        descriptor = -1
    }

    /// True when `path` still names the file open as `descriptor` (the holder before may have removed it).
    private static func isStillAtPath(_ descriptor: Int32, _ path: String) -> Bool {
        guard let held = FileKey(descriptor: descriptor) else { return false }
        return held == FileKey(URL(fileURLWithPath: path))
    }
}
