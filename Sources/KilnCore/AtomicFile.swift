import Foundation
import KilnC

/// Writes whole files atomically: through a hidden temporary file beside the destination, synced, then renamed over it.
package enum AtomicFile {
    /// The temporary file this process writes before replacing `destination` (`KilnFileNames.temporary`).
    package static func temporary(for destination: URL) -> URL { KilnFileNames.temporary(for: destination) }

    /// Replaces `destination` with `data`; readers see the old file or the new one, never a part.
    /// - Throws: `KilnError.io` naming the file and the system's reason; the temporary file is removed.
    package static func write(_ data: Data, to destination: URL) throws {
        try Prepared(data, for: destination).install()
    }

    /// A new file written to its temporary and synced, put in place by `install` — after another file it belongs
    /// with (a report after its bundle) — or dropped by `discard`, leaving the old file as it was.
    package final class Prepared {
        package let destination: URL
        private let temporary: URL
        private var pending = true

        /// Writes `data` to the temporary file of `destination` and syncs it.
        /// - Throws: `KilnError.io` naming the file and the system's reason; the temporary file is removed.
        package init(_ data: Data, for destination: URL) throws {
            self.destination = destination
            temporary = AtomicFile.temporary(for: destination)
            TemporaryFiles.shared.register(temporary)
            do {
                try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: temporary)
                try FileSync.fsync(temporary)
            } catch {
                discard()
                if let error = error as? KilnError { throw error }
                throw KilnError.io(.foundation("cannot write \(destination.path)", path: destination.path, operation: .write, error))
            }
        }

        /// Renames the file into place.
        /// - Throws: `KilnError.io` when the destination is not Kiln's to replace or the rename fails; the temporary
        ///   file is removed.
        package func install() throws {
            guard pending else { return }
            defer { discard() }
            try FileSync.move(temporary, to: destination)
            pending = false
            TemporaryFiles.shared.unregister(temporary)
        }

        /// Removes the temporary file, if it is still there.
        package func discard() {
            guard pending else { return }
            pending = false
            try? FileManager.default.removeItem(at: temporary)
            TemporaryFiles.shared.unregister(temporary)
        }

        deinit { discard() }
    }
}
