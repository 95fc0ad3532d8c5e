/// A failure that stops a command, with the exit code it maps to.
public enum KilnError: Error, CustomStringConvertible, Sendable {
    /// The command line or the manifest is wrong (exit 64).
    case usage(String)
    /// The manifest is wrong at a key path and manifest line (exit 64).
    case manifest(ManifestIssue)
    /// Validation found errors (exit 1).
    case validation(String)
    /// A file could not be read or written (exit 74).
    case io(String)

    public var description: String {
        switch self {
        case .usage(let message), .validation(let message), .io(let message): return message
        case .manifest(let issue): return issue.description
        }
    }

    /// The process exit code: 1 validation, 64 usage or manifest, 74 I/O.
    public var exitCode: Int32 {
        switch self {
        case .usage, .manifest: return 64
        case .validation: return 1
        case .io: return 74
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

    public var description: String {
        let place = line.map { "\(file):\($0)" } ?? file
        let path = keyPath.isEmpty ? "" : " at \(keyPath)"
        return "\(place): manifest error\(path): \(message)"
    }
}
