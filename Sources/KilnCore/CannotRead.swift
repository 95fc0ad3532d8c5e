import Foundation
import KilnC

/// The one wording of a file Kiln cannot read: `cannot read PATH: REASON`, the path from the current folder
/// (`displayPath`) and the reason in the file system's words — there is no such file, it is a folder, permission
/// denied — or the system's sentence for the error (`strerror`), never Foundation's "The operation could not be
/// completed".
package enum CannotRead {
    /// The I/O error for `url`, after `error` (if any) from the call that failed.
    package static func error(_ url: URL, _ error: Error? = nil) -> KilnError {
        .io(message(url, error))
    }

    /// The I/O error for `url`, which messages call `name` (an input's path in its pipeline folder).
    package static func error(_ url: URL, named name: String, _ error: Error? = nil) -> KilnError {
        .io("cannot read \(name): \(reason(url, error))")
    }

    /// `cannot read PATH: REASON`.
    package static func message(_ url: URL, _ error: Error? = nil) -> String {
        "cannot read \(displayPath(url)): \(reason(url, error))"
    }

    /// Why `url` cannot be read: what the file system says of it, else the error's POSIX sentence.
    package static func reason(_ url: URL, _ error: Error?) -> String {
        if !FileManager.default.fileExists(atPath: url.path) { return "there is no such file" }
        if (try? url.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true { return "it is a folder, not a file" }
        if !FileManager.default.isReadableFile(atPath: url.path) { return "permission denied" }
        if let code = posixCode(error) { return SystemError.message(code).lowercasedFirst }
        if let error { return "\(error)" }
        return "the file could not be opened"
    }

    /// The POSIX error code inside a Foundation error, if there is one.
    private static func posixCode(_ error: Error?) -> Int32? {
        guard let error else { return nil }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain { return Int32(underlying.code) }
        return nil
    }
}

private extension String {
    /// The sentence with its first letter lowered, to follow a colon: `No space left on device` → `no space…`.
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
