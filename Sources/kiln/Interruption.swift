import Dispatch
import Foundation
import KilnC
import KilnKit

/// SIGINT (Ctrl-C), SIGTERM and SIGHUP during a command: the temporary files the run registered
/// (`TemporaryFiles`) are removed, stderr says so, and the process exits with the signal's status (`ExitStatus`: 128 +
/// the signal's number). A thread the machine cannot start (`ResourceExhaustion`) ends the same way, with exit 74. A bundle is only ever put in place by one rename, so the one in place is whole: the previous
/// or the new.
enum Interruption {
    /// The signals handled, with their names and the status each exits with.
    static let signals: [(number: Int32, name: String, status: ExitStatus)] = [
        (SIGINT, "SIGINT", .interrupted), (SIGTERM, "SIGTERM", .terminated), (SIGHUP, "SIGHUP", .hangUp),
    ]

    /// Replaces the default action of each signal (which would leave the temporary files) with the cleanup, and
    /// ignores SIGPIPE and SIGXFSZ, whose default action kills the process mid-write: a closed pipe or a file-size
    /// limit (`ulimit -f`) then fails the write that hit it (`EPIPE`, `EFBIG`), an I/O error (74) that removes the
    /// temporary files and the lock like any other.
    static func install() {
        ProcessSignals.ignore(SIGPIPE)
        ProcessSignals.ignore(SIGXFSZ)
        for (number, name, status) in signals {
            ProcessSignals.ignore(number)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let removed = TemporaryFiles.shared.removeAll().map { URL(fileURLWithPath: $0).lastPathComponent }
                let what = removed.isEmpty ? "no temporary file was left" : "removed the temporary files \(removed.joined(separator: ", "))"
                let text = "kiln: interrupted by \(name): \(what); the bundle in place, if any, is whole (the previous one or the new one)\n"
                StandardError.write(TerminalText.sanitize(text))
                TemporaryFiles.shared.removeAgain()
                ProcessSignals.exitNow(status.rawValue)
            }
            source.resume()
            TemporaryFiles.shared.retain(source as AnyObject)
        }
        ResourceExhaustion.install { message in
            let removed = TemporaryFiles.shared.removeAll().map { URL(fileURLWithPath: $0).lastPathComponent }
            let what = removed.isEmpty ? "" : " (removed the temporary files \(removed.joined(separator: ", ")))"
            StandardError.write(TerminalText.sanitize("Error: \(message): the machine's memory limit is reached; nothing was changed\(what)\n"))
            TemporaryFiles.shared.removeAgain()
            ProcessSignals.exitNow(ExitStatus.io.rawValue)
        }
    }
}
