import Foundation
import Synchronization
import KilnC

/// The file each input path named when the manifest was loaded and its inputs checked (inside the pipeline folder,
/// a regular file), by device and inode. Every reading of an input opens it through `open`, which checks the open
/// descriptor against that record: an input swapped for a link to another file (or replaced) after its path was
/// checked is refused, instead of shipping what the link leads to. The path is looked up once, at the open; what is
/// read is what was checked.
package final class InputIdentity: Sendable {
    /// The process's registry.
    package static let shared = InputIdentity()

    private let identities = Mutex<[String: FileKey]>([:])

    /// Records the file `url` names now (following links, as reading does).
    package func record(_ url: URL) {
        guard let identity = FileKey(url) else { return }
        record(url, identity: identity)
    }

    /// Records that `url` names `identity` now (what `stat` just said of it).
    package func record(_ url: URL, identity: FileKey) {
        let path = InputIdentity.key(url)
        identities.withLock { $0[path] = identity }
    }

    /// Opens the input at `url` (named `name` in messages) for reading, and checks that the file opened is the one
    /// recorded for that path, if any.
    /// - Throws: `KilnError.io` when it cannot be opened or is no longer the file that was checked.
    package func open(_ url: URL, name: String) throws -> FileHandle {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: url) } catch {
            throw CannotRead.error(url, named: name, error)
        }
        let path = InputIdentity.key(url)
        guard let expected = identities.withLock({ $0[path] }) else { return handle }
        guard FileKey(descriptor: handle.fileDescriptor) == expected else {
            try? handle.close()
            let now = OutputPath.entryKind(url).map { $0 == .symbolicLink ? "a symbolic link to \(url.resolvingSymlinksInPath().path)" : $0.phrase } ?? "gone"
            throw KilnError.io(IOFailure("input \(name) changed after it was checked: it is now \(now), not the file the build started with; nothing of it is read",
                                         path: url.path, operation: .open))
        }
        return handle
    }

    /// The path `url` is recorded under: its absolute path without `.` and `..` components or doubled slashes.
    /// Foundation's `standardizedFileURL` is asked only for a path that has one of them (it costs more than the
    /// `stat` of the file, and inputs are rarely written that way).
    static func key(_ url: URL) -> String {
        let path = url.path
        return isStandard(path) ? path : url.standardizedFileURL.path
    }

    /// Whether `path` is absolute and has no empty, `.` or `..` component (a trailing slash aside), scanned
    /// byte by byte: `String.contains` on a substring goes through Foundation's UTF-16 search, which was a sixth
    /// of a no-change rebuild.
    static func isStandard(_ path: String) -> Bool {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        var bytes = path.utf8.makeIterator()
        guard bytes.next() == slash else { return false }
        // The bytes of the current component so far: 0 none, 1 ".", 2 "..", 3 anything else.
        var component = 0
        var componentLength = 0
        while let byte = bytes.next() {
            if byte == slash {
                if componentLength == 0 || component == 1 || component == 2 { return false }
                component = 0
                componentLength = 0
                continue
            }
            componentLength += 1
            if byte == dot, component == componentLength - 1, componentLength <= 2 { component = componentLength } else { component = 3 }
        }
        return component != 1 && component != 2
    }
}
