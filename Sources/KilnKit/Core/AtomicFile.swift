import Foundation

/// Writes whole files atomically: through a hidden temporary file beside the destination, synced, then renamed over it.
enum AtomicFile {
    /// The temporary file this process writes before replacing `destination` (`KilnFileNames.temporary`).
    static func temporary(for destination: URL) -> URL { KilnFileNames.temporary(for: destination) }

    /// Replaces `destination` with `data`; readers see the old file or the new one, never a part.
    /// - Throws: `KilnError.io` naming the file and the system's reason; the temporary file is removed.
    static func write(_ data: Data, to destination: URL) throws {
        let temporary = temporary(for: destination)
        TemporaryFiles.shared.register(temporary)
        defer { TemporaryFiles.shared.unregister(temporary) }
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: temporary)
            try FileSync.replace(destination, with: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? KilnError { throw error }
            throw KilnError.io("cannot write \(destination.path): \(error.localizedDescription)")
        }
    }
}
