import Foundation
import KilnC
import KilnCore
import KilnManifest

extension InputFile {
    /// The file's bytes as its reader parses them (decompressed when compressed); a damaged archive is reported to
    /// `log`.
    /// - Throws: `KilnError.io` when the file cannot be opened.
    package func bytes(log: DiagnosticLog?) throws -> InputBytes {
        try InputBytes(self, log: log)
    }
}

extension InputBytes {
    /// Opens `input` as its reader sees it.
    package convenience init(_ input: InputFile, log: DiagnosticLog?) throws {
        try self.init(url: input.url, name: input.relativePath, log: log, threaded: input.threads.decompressionThread)
    }
}
