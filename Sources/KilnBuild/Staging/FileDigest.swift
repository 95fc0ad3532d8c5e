import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// SHA-256 of whole files, streamed.
package enum FileDigest {
    /// The lowercase hexadecimal SHA-256 of the file at `url`.
    /// - Throws: `KilnError.io` when the file cannot be read.
    package static func sha256(of url: URL) throws -> String {
        try start(url).digest.wait()
    }

    /// Bytes read at a time; a file longer than one chunk is digested on a thread of its own.
    package static let chunkSize = 1 << 20

    /// A digest being computed: finished already (a file of one chunk), or on its own thread.
    package final class Pending: Sendable {
        private let work: BackgroundThread<String>

        package init(finished digest: String) {
            work = BackgroundThread(finished: digest)
        }

        /// Goes on digesting `handle` from where it is, on a new thread, then closes it.
        package init(continuing digest: SHA256Digest, from handle: FileHandle, url: URL) {
            // The handle and the digest's state go to the digest thread, which alone uses them.
            let state = Handoff((digest: digest, handle: handle))
            work = BackgroundThread(name: "kiln digest") {
                defer { try? state.value.handle.close() }
                return try FileDigest.digestRest(of: state.value.handle, into: state.value.digest, url: url)
            }
        }

        /// The lowercase hexadecimal SHA-256, waiting for it.
        /// - Throws: `KilnError.io` when the file could not be read.
        package func wait() throws -> String {
            try work.wait()
        }
    }

    /// Starts the digest of the file at `url` and returns its first `InputFile.headLength` bytes, which readers check
    /// before they read: a file of one chunk is digested at once, a longer one beside the caller's reading of it.
    /// - Throws: `KilnError.io` when the file cannot be read.
    package static func start(_ url: URL) throws -> (head: [UInt8], digest: Pending) {
        let digest = SHA256Digest()
        let handle = try InputIdentity.shared.open(url, name: url.path)
        do {
            let first = try handle.read(upToCount: chunkSize) ?? Data()
            digest.update(first)
            let head = [UInt8](first.prefix(InputFile.headLength))
            guard first.count == chunkSize else {
                try? handle.close()
                return (head, Pending(finished: digest.hexDigest()))
            }
            return (head, Pending(continuing: digest, from: handle, url: url))
        } catch {
            throw CannotRead.error(url, error)
        }
    }

    private static func digestRest(of handle: FileHandle, into digest: SHA256Digest, url: URL) throws -> String {
        do {
            while let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty { digest.update(chunk) }
        } catch {
            throw CannotRead.error(url, error)
        }
        return digest.hexDigest()
    }
}
