import Foundation
import KilnC

/// The process's standard output as the one way Kiln prints data (reports, tables, JSON, help). A write that fails
/// — a full disk (`/dev/full`), a closed descriptor, a closed pipe, a file-size limit — is a `KilnError.io` naming
/// standard output, which the CLI turns into exit 74, instead of a crash or output lost under exit 0.
package enum StandardOutput {
    /// Writes `data` to descriptor 1.
    /// - Throws: `KilnError.io` when the system refuses the write.
    package static func write(_ data: Data) throws {
        do {
            try DescriptorWrite.write(data, to: 1)
        } catch {
            throw KilnError.io(.written("cannot write to standard output", path: nil, error))
        }
    }

    /// Writes `text` as UTF-8 to descriptor 1.
    /// - Throws: `KilnError.io` when the system refuses the write.
    package static func write(_ text: String) throws {
        try write(Data(text.utf8))
    }
}

/// The process's standard error, for messages. A message that cannot be written (stderr on a full disk or closed) is
/// dropped: there is nowhere left to say so, and the exit code still tells.
package enum StandardError {
    /// Writes `text` as UTF-8 to descriptor 2, ignoring a failure.
    package static func write(_ text: String) {
        try? DescriptorWrite.write(Data(text.utf8), to: 2)
    }
}
