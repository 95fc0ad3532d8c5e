import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The update manifest `kiln patch` writes beside its patches (`update.json`): what an app reads to decide whether a
/// patch applies to the bundle it has, and to check what it downloaded. Keys sorted, no time stamps: the same OLD and
/// NEW give the same bytes.
public struct UpdateManifest: Codable, Equatable, Sendable {
    /// `kiln-update-1`.
    public var format: String
    /// The bundle's name (`bundle.name` in `kiln_metadata`).
    public var bundle: String
    /// The schema version (`PRAGMA user_version`) of both bundles.
    public var schemaVersion: Int
    /// The bundle the patches start from.
    public var from: Version
    /// The bundle they give.
    public var to: Version
    /// The tables the patches change and the digests cover, by name, with what changed in each.
    public var tables: [TableChange]
    /// The tables the app fills: never touched by a patch, left out of the digests.
    public var userFilled: [String]
    /// What the SQL patch does to the R*Tree and FTS5 tables it changes row by row (not covered by the digests: an FTS5
    /// table's rowids may differ from NEW's, its rows and search results do not).
    public var indexes: [TableChange]
    /// The full-text tables the SQL patch rebuilds from their table (their rows changed or moved).
    public var rebuiltFullText: [String]
    /// The largest patch allowed, in bytes.
    public var limitBytes: Int
    /// The patch files: the SQL patch, then the changeset unless it is over the limit.
    public var patches: [PatchFile]

    /// One version of the bundle.
    public struct Version: Codable, Equatable, Sendable {
        /// The content digest (`ContentDigest`): SHA-256 over the covered tables' rows.
        public var digest: String
        /// The bundle file's size in bytes.
        public var bytes: Int
    }

    /// The rows one table had and has, and the patch's statements on it.
    public struct TableChange: Codable, Equatable, Sendable {
        public var name: String
        /// Rows in OLD and in NEW.
        public var oldRows: Int
        public var newRows: Int
        /// Rows the patch deletes, changes (an UPDATE, or a DELETE and an INSERT) and inserts.
        public var deleted: Int
        public var updated: Int
        public var inserted: Int
    }

    /// A patch file: its name beside the manifest, its kind (`sql` or `changeset`), size and SHA-256.
    public struct PatchFile: Codable, Equatable, Sendable {
        public var file: String
        public var kind: String
        public var bytes: Int
        public var sha256: String
    }

    /// The manifest's file name.
    public static let fileName = "update.json"
    /// The SQL patch's file name.
    public static let sqlFileName = "patch.sql"
    /// The changeset's file name.
    public static let changesetFileName = "patch.changeset"

    /// Reads the manifest at `url`.
    /// - Throws: `KilnError.io` when it cannot be read; `KilnError.validation` when it is not an update manifest.
    public static func read(_ url: URL) throws -> UpdateManifest {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw CannotRead.error(url, error) }
        guard let manifest = try? JSONDecoder().decode(UpdateManifest.self, from: data), manifest.format == "kiln-update-1" else {
            throw KilnError.validation("\(url.relativePath) is not a Kiln update manifest (kiln-update-1 JSON as kiln patch writes it)")
        }
        return manifest
    }
}
