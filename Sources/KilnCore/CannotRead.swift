import Foundation
import KilnC

/// The one wording of a file Kiln cannot read: `cannot read PATH: REASON`, the path from the current folder
/// (`displayPath`) and the reason in the file system's words — there is no such file, it is a folder, permission
/// denied — or the system's sentence for the error (`strerror`), never Foundation's "The operation could not be
/// completed"; the error carries the path, the operation and the system's error number (`ENOENT`, `EISDIR`, `EACCES`…).
package enum CannotRead {
    /// The I/O error for `url`, after `error` (if any) from the call that failed.
    package static func error(_ url: URL, _ error: Error? = nil) -> KilnError {
        self.error(url, named: displayPath(url), error)
    }

    /// The I/O error for `url`, which messages call `name` (an input's path in its pipeline folder).
    package static func error(_ url: URL, named name: String, _ error: Error? = nil) -> KilnError {
        let cause = cause(url, error)
        return .io(IOFailure("cannot read \(name): \(cause.reason)", path: url.path, operation: .read, errno: cause.code))
    }

    /// `cannot read PATH: REASON`.
    package static func message(_ url: URL, _ error: Error? = nil) -> String {
        "cannot read \(displayPath(url)): \(reason(url, error))"
    }

    /// Why `url` cannot be read: what the file system says of it, else the error's POSIX sentence.
    package static func reason(_ url: URL, _ error: Error?) -> String { cause(url, error).reason }

    /// The system's error number and the reason in words, from the file system's state first, then from `error`.
    private static func cause(_ url: URL, _ error: Error?) -> (code: Int32?, reason: String) {
        if !FileManager.default.fileExists(atPath: url.path) { return (ENOENT, "there is no such file") }
        if (try? url.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true { return (EISDIR, "it is a folder, not a file") }
        if !FileManager.default.isReadableFile(atPath: url.path) { return (EACCES, "permission denied") }
        if let code = IOFailure.systemCode(error) { return (code, SystemError.message(code).lowercasedFirst) }
        if let error { return (nil, "\(error)") }
        return (nil, "the file could not be opened")
    }
}

private extension String {
    /// The sentence with its first letter lowered, to follow a colon: `No space left on device` → `no space…`.
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
