import Foundation
import KilnC

/// A failure that stops a command, by kind; only the command-line tool maps kinds to exit codes. Each kind carries
/// what went wrong as data (`IOFailure`, `ValidationFailure`, `ManifestIssue`), and its sentence for people in
/// `description`; code that makes a finding or a decision from an error reads the data, never the sentence.
public enum KilnError: Error, CustomStringConvertible, Sendable {
    /// The command line or a call's arguments are wrong: the sentence the tool prints above its usage.
    case usage(String)
    /// The manifest is wrong at a key path and manifest line.
    case manifest(ManifestIssue)
    /// The inputs or the bundle failed validation.
    case validation(ValidationFailure)
    /// A file could not be read or written.
    case io(IOFailure)

    /// An I/O error known only by its sentence (no path, operation or system error to tell).
    public static func io(_ message: String) -> KilnError { .io(IOFailure(message)) }

    /// A validation error known only by its sentence.
    public static func validation(_ message: String) -> KilnError { .validation(ValidationFailure(message)) }

    public var description: String {
        switch self {
        case .usage(let message): return message
        case .validation(let failure): return failure.message
        case .io(let failure): return failure.message
        case .manifest(let issue): return issue.description
        }
    }
}

/// What Kiln was doing to a file when the system refused it: opening, reading, writing, creating (a folder, a lock
/// file), renaming into place, removing, syncing to disk, locking, copying.
public enum IOOperation: String, Sendable {
    case open, read, write, create, rename, remove, sync, lock, copy
}

/// A file that could not be read or written: the file, the operation, the system's `errno` when there was one, and the
/// sentence a user reads.
public struct IOFailure: Error, CustomStringConvertible, Sendable {
    /// The sentence, e.g. `cannot read raw/a.csv: permission denied`.
    public var message: String
    /// The file or folder the operation was on, as Kiln gave it to the system (the sentence may show it relative to
    /// the current folder); `nil` when there is no one file.
    public var path: String?
    /// What was being done; `nil` when the sentence is all that is known.
    public var operation: IOOperation?
    /// The system's error number (`ENOENT`, `EACCES`, `ENOSPC`…) when the system gave one.
    public var errno: Int32?
    /// True when another process holds the file (a bundle open in an app, another build's lock).
    public var heldElsewhere: Bool
    /// SQLite's error, when SQLite was the one refused.
    package var sqlite: SQLiteError?

    /// The failure `message` of `operation` on `path`, with the system's `errno` and SQLite's error when known.
    package init(_ message: String, path: String? = nil, operation: IOOperation? = nil, errno: Int32? = nil,
                 heldElsewhere: Bool = false, sqlite: SQLiteError? = nil) {
        self.message = message
        self.path = path
        self.operation = operation
        self.errno = errno
        self.heldElsewhere = heldElsewhere
        self.sqlite = sqlite
    }

    public var description: String { message }

    /// The failure of the system call just made, `operation` on `path`: `what`, a colon and the system's sentence for
    /// `errno` (read before anything else can change it).
    package static func lastSystemError(_ what: String, path: String, operation: IOOperation) -> IOFailure {
        let code = Foundation.errno
        return IOFailure("\(what): \(SystemError.message(code))", path: path, operation: operation, errno: code)
    }

    /// The failure `what` of `operation` on `path` (`nil`: standard output) after a write's `failure`: its sentence
    /// after a colon, and its `errno`.
    package static func written(_ what: String, path: String?, _ failure: DescriptorWrite.Failure) -> IOFailure {
        IOFailure("\(what): \(failure.message)", path: path, operation: .write, errno: failure.code)
    }

    /// The failure `what` of `operation` on `path` after Foundation's `error`: its sentence after a colon, and the
    /// system's error number inside it when there is one.
    package static func foundation(_ what: String, path: String, operation: IOOperation, _ error: Error) -> IOFailure {
        IOFailure("\(what): \(error.localizedDescription)", path: path, operation: operation, errno: systemCode(error))
    }

    /// The POSIX error number of `error` (an `IOFailure`'s own) or of the error under it (Foundation's file errors
    /// hold the system's as a `POSIXError`), if there is one.
    package static func systemCode(_ error: Error?) -> Int32? {
        guard let error else { return nil }
        if case KilnError.io(let failure) = error { return failure.errno }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? Error, case let inner = underlying as NSError, inner.domain == NSPOSIXErrorDomain {
            return Int32(inner.code)
        }
        return nil
    }
}

/// Inputs or a bundle that failed validation: the sentence, and where known the file, line and column, and the value
/// expected and the one found.
public struct ValidationFailure: Error, CustomStringConvertible, Sendable {
    /// The sentence a user reads.
    public var message: String
    /// The file that failed, as the sentence names it.
    public var file: String?
    /// The 1-based line in `file`, when one line is at fault.
    public var line: Int?
    /// The 1-based column on `line`.
    public var column: Int?
    /// What was expected there (a bundle name, a digest, a version).
    public var expected: String?
    /// What was found instead.
    public var found: String?
    /// The kind of finding the failure is, when it has one (`sql.time-limit` for a read the time limit stopped).
    public var code: DiagnosticCode?

    /// The failure `message` in `file` at `line`/`column`, `expected` and `found`, and its finding's `code`, when known.
    package init(_ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil,
                 expected: String? = nil, found: String? = nil, code: DiagnosticCode? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.expected = expected
        self.found = found
        self.code = code
    }

    /// Where the failure is, as a finding's provenance: `file` at `line` and `column`; `nil` without a file.
    public var provenance: Provenance? { file.map { Provenance(file: $0, line: line, column: column) } }

    public var description: String { message }
}

/// A mistake in a manifest: the file, the line, the key path and what was expected.
public struct ManifestIssue: Error, CustomStringConvertible, Sendable {
    /// The manifest file.
    public var file: String
    /// The 1-based manifest line of the offending key or value, when it could be located.
    public var line: Int?
    /// The key path, e.g. `sources[2].options.separator`.
    public var keyPath: String
    /// What is wrong, as a sentence.
    public var message: String

    /// The mistake `message` at `keyPath`, on `line` of `file` when it could be located.
    public init(file: String, line: Int?, keyPath: String, message: String) {
        self.file = file
        self.line = line
        self.keyPath = keyPath
        self.message = message
    }

    /// The issue as a user reads it, the manifest's path from the current folder (`displayPath`).
    public var description: String {
        let shown = file.hasPrefix("/") ? relativePath(file, from: FileManager.default.currentDirectoryPath) : file
        let place = line.map { "\(shown):\($0)" } ?? shown
        let path = keyPath.isEmpty ? "" : " at \(keyPath)"
        return "\(place): manifest error\(path): \(message)"
    }
}
