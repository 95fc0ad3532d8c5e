import Foundation
import KilnC

/// A failure that stops a command, by kind; only the command-line tool maps kinds to exit codes.
public enum KilnError: Error, CustomStringConvertible, Sendable {
    /// The command line or a call's arguments are wrong.
    case usage(String)
    /// The manifest is wrong at a key path and manifest line.
    case manifest(ManifestIssue)
    /// The inputs or the bundle failed validation.
    case validation(String)
    /// A file could not be read or written.
    case io(String)

    public var description: String {
        switch self {
        case .usage(let message), .validation(let message), .io(let message): return message
        case .manifest(let issue): return issue.description
        }
    }
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
