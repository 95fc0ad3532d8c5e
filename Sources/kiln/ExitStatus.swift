import KilnKit

/// The exit status of `kiln`, decided here and nowhere else: every command returns one, `main` exits with its
/// number. The numbers follow sysexits(3) for usage (64) and I/O (74) and the shells' 128 + the signal's number for
/// an interruption. docs/reference/commands.md's table lists exactly these cases, with `meaning` (`ExitStatusTests`),
/// and the manual page's EXIT STATUS section is printed from them.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// Validation errors, a threshold exceeded, a failed check, diff or test, a refused patch, a file that is not a
    /// Kiln bundle: the command ran, and its answer is no.
    case failed = 1
    /// A usage or manifest error (`EX_USAGE`).
    case usage = 64
    /// An I/O error (`EX_IOERR`).
    case io = 74
    /// Stopped by SIGHUP (128 + 1), the temporary files removed.
    case hangUp = 129
    /// Stopped by SIGINT (128 + 2).
    case interrupted = 130
    /// Stopped by SIGTERM (128 + 15).
    case terminated = 143

    /// What the status means, as the reference's table and the manual page say it.
    var meaning: String {
        switch self {
        case .success: return "success"
        case .failed: return "validation errors or a threshold exceeded, a failed check, diff or test, or a file that is not a Kiln bundle"
        case .usage: return "usage or manifest error"
        case .io: return "I/O error (also: the bundle is locked by another process)"
        case .hangUp: return "stopped by SIGHUP, the temporary files removed"
        case .interrupted: return "stopped by SIGINT (Ctrl-C), the temporary files removed"
        case .terminated: return "stopped by SIGTERM, the temporary files removed"
        }
    }

    /// `success` when the command's answer is yes (built, checked, no difference over a limit), else `failed`.
    init(passed: Bool) {
        self = passed ? .success : .failed
    }

    /// The status of each kind of failure: validation `failed`, usage and manifest `usage`, I/O `io`.
    init(_ error: KilnError) {
        switch error {
        case .usage, .manifest: self = .usage
        case .validation: self = .failed
        case .io: self = .io
        }
    }
}
