import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln apply`: applies a patch `kiln patch` wrote to a bundle, as an app would, after checking the patch file's
/// SHA-256 and the bundle's content digest against the update manifest; atomic like a build (a patched copy beside
/// the bundle, checked against the manifest's to-digest, renamed over it).
public enum PatchApplier {
    /// What `apply` did.
    public struct Outcome: Sendable {
        /// The patch's kind: `sql` or `changeset`.
        public let kind: String
        /// The bundle's digest before and after.
        public let from: String, to: String
    }

    /// Applies `patch` to `bundle`; `manifest` is the update manifest (default: `update.json` beside the patch).
    /// - Throws: `KilnError.validation` with one sentence when the manifest does not describe the patch (another
    ///   file, or the same one truncated or edited), when the bundle is of another bundle or schema version, or its
    ///   digest is not the manifest's from-digest (another version, or the patch is already applied), or when the
    ///   patched copy is not the manifest's to-digest; `KilnError.io` when a file cannot be read or written, or when
    ///   a build or another apply of the bundle still holds its lock after `lockTimeout` seconds. The bundle is left
    ///   as it was then.
    ///
    /// It holds the lock a build of the bundle holds (`BuildFiles.lock`), from before it reads the bundle until the
    /// patched copy is in place, waiting for it as a build does (`waiting` is called once then), and removes what an
    /// apply or a build killed before left beside the bundle.
    /// `standardInput`: the patch was read from standard input into `patch` (a temporary file), so it has no name of
    /// its own: the manifest's entry is the one with its SHA-256, and messages call it "standard input".
    public static func apply(bundle: URL, patch: URL, manifest manifestURL: URL? = nil, standardInput: Bool = false,
                             names: OutputNames = OutputNames(output: "the bundle"), lockTimeout: TimeInterval = 600,
                             waiting: (() -> Void)? = nil) throws -> Outcome {
        do {
            // A bundle that is not there, or not a file, is refused by `applying` without a lock file beside it.
            guard OutputPath.entryKind(bundle) == .regular else {
                return try applying(bundle: bundle, patch: patch, manifest: manifestURL, standardInput: standardInput, names: names)
            }
            let files = BuildFiles(destination: bundle)
            let lock = try files.lock(timeout: lockTimeout, waiting: waiting)
            defer { files.unlock(lock) }
            return try applying(bundle: bundle, patch: patch, manifest: manifestURL, standardInput: standardInput, names: names)
        } catch {
            throw BundleReadLimit.current.stopped(error, reading: [bundle]) ?? error
        }
    }

    private static func applying(bundle: URL, patch: URL, manifest manifestURL: URL?, standardInput: Bool, names: OutputNames) throws -> Outcome {
        let manifestURL = manifestURL ?? patch.deletingLastPathComponent().appendingPathComponent(UpdateManifest.fileName)
        let manifest = try UpdateManifest.read(manifestURL)
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: patch)) } catch { throw CannotRead.error(patch, error) }
        let shown = standardInput ? "standard input" : patch.relativePath
        let patchDigest = SHA256Digest.hex(of: Data(bytes))
        guard let entry = manifest.patches.first(where: { standardInput ? $0.sha256 == patchDigest : $0.file == patch.lastPathComponent }),
              let kind = PatchKind(rawValue: entry.kind) else {
            if standardInput {
                throw KilnError.validation("standard input is none of the patches \(manifestURL.relativePath) lists (\(manifest.patches.map(\.file).joined(separator: ", "))): its SHA-256 is \(patchDigest) (\(bytes.count) bytes); it is truncated, edited or another update's")
            }
            throw KilnError.validation("\(manifestURL.relativePath) lists no patch named \(patch.lastPathComponent) (it lists \(manifest.patches.map(\.file).joined(separator: ", ")))")
        }
        try OutputPath.checkFile(bundle, named: names.output, protected: [.init(patch, "the patch"), .init(manifestURL, "the update manifest")])
        let described = UpdateManifest.PatchFile.describe(entry.file, kind, bytes)
        guard described.sha256 == entry.sha256 else {
            throw KilnError.validation(ValidationFailure("\(shown) is not the patch \(manifestURL.relativePath) describes: its SHA-256 is \(described.sha256) (\(bytes.count) bytes), the manifest says \(entry.sha256) (\(entry.bytes) bytes); it is truncated or edited, download it again",
                                                         file: shown, expected: entry.sha256, found: described.sha256))
        }
        let name = try BundleFile.name(of: bundle)
        guard name == manifest.bundle else {
            throw KilnError.validation(ValidationFailure("\(shown) is a patch for bundle \"\(manifest.bundle)\", but \(bundle.relativePath) is a bundle of \"\(name)\"",
                                                         file: bundle.relativePath, expected: manifest.bundle, found: name))
        }
        let reader = try BundleFile.open(bundle)
        let layout = try BundleLayout(reader, userFilled: Set(manifest.userFilled))
        guard layout.userVersion == manifest.schemaVersion else {
            throw KilnError.validation(ValidationFailure("\(shown) is a patch for schema version \(manifest.schemaVersion), but \(bundle.relativePath) has schema version \(layout.userVersion)",
                                                         file: bundle.relativePath, expected: "\(manifest.schemaVersion)", found: "\(layout.userVersion)"))
        }
        let covered = layout.tables.filter { table in manifest.tables.contains { $0.name == table.name } }
        let digest = try ContentDigest.of(covered, in: reader)
        try reader.close()
        guard digest == manifest.from.digest, covered.count == manifest.tables.count else {
            let already = digest == manifest.to.digest ? ": the patch is already applied" : ""
            throw KilnError.validation(ValidationFailure("\(bundle.relativePath) is not the version \(shown) starts from (its content digest is \(digest), the patch starts from \(manifest.from.digest))\(already); nothing was changed",
                                                         file: bundle.relativePath, expected: manifest.from.digest, found: digest))
        }

        // The patched copy replaces the bundle only once its content digest is the manifest's.
        return try FileSync.write(bundle) { temporary in
            do { try FileManager.default.copyItem(at: bundle, to: temporary) } catch {
                throw KilnError.io(.foundation("cannot copy \(bundle.path) to patch it", path: bundle.path, operation: .copy, error))
            }
            let database = try BundleFile.openCopy(temporary, of: [bundle])
            do {
                try kind.apply(bytes, to: database, layout: layout)
            } catch let error as KilnError {
                throw error
            } catch let error as SQLiteError where error.isInterrupted {
                throw error
            } catch {
                let reason = (error as? SQLiteError).map { $0.isRefused ? "the patch \($0.message)" : $0.message } ?? "\(error)"
                throw KilnError.validation("\(shown) does not apply to \(bundle.relativePath) (\(reason)); nothing was changed")
            }
            let patchedLayout = try BundleLayout(database, userFilled: Set(manifest.userFilled))
            // A patch may drop a full-text table to create it again, and nothing else of the schema.
            guard patchedLayout.schema == layout.schema, patchedLayout.userVersion == layout.userVersion else {
                throw KilnError.validation("\(shown) changes the schema of \(bundle.relativePath) (\(patchedLayout.schemaChanges(from: layout).joined(separator: ", "))), which no patch does; nothing was changed")
            }
            let patched = try ContentDigest.of(patchedLayout.tables, in: database)
            try database.close()
            guard patched == manifest.to.digest else {
                throw KilnError.validation(ValidationFailure("\(bundle.relativePath) patched with \(shown) has the content digest \(patched), not the manifest's \(manifest.to.digest); nothing was changed",
                                                             file: bundle.relativePath, expected: manifest.to.digest, found: patched))
            }
            try BundleSideFiles.settle(beside: bundle)
            return Outcome(kind: kind.rawValue, from: digest, to: patched)
        }
    }
}
