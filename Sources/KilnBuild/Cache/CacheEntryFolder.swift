import Foundation
import KilnC
import KilnCore
import KilnManifest

/// The record of one entry of the build cache (a source's staged rows, `SourceCache`; a full-text index,
/// `FullTextCache`), `<id>.json` beside its database `<id>.sqlite`: the entry's name, the key of everything that
/// decided what the database holds, and the database's SHA-256 and stamp.
package struct CacheEntryRecord: ChecksummedRecord {
    package var format: Int
    /// The source's or the full-text table's name.
    package var name: String
    package var key: String
    package var databaseSHA256: String
    /// The database's stamp when it was written: a database with another stamp is hashed again before it is trusted.
    package var databaseStamp: FileStamp?
    package var checksum = ""
}

/// One folder of build cache entries (`sources/`, `fulltext/`), each a database and its checksummed record named
/// after the first 16 hex digits of the SHA-256 of the entry's name. It finds the entry whose record and database can
/// be trusted, and replaces one so that a build killed at any point leaves the old entry, no entry, or a database
/// whose digest does not match its record — never a record describing a database that was not written whole.
package struct CacheEntryFolder {
    package let folder: URL
    /// The entries' format: a record of another one was written by another Kiln, and is passed over like one of
    /// another key.
    package let format: Int
    /// False when the cache or this folder is not a folder (a link, a file): then nothing is read or written there.
    package let usable: Bool

    /// The folder `name` of the build cache `cache`, holding entries of `format`.
    package init(_ name: String, of cache: BuildCache, format: Int) {
        folder = cache.folder.appendingPathComponent(name)
        self.format = format
        usable = cache.isUsable && [nil, .folder].contains(OutputPath.entryKind(folder))
        // A build killed while writing an entry left its temporary files (`.<id>.sqlite.<pid>.tmp`,
        // `.<id>.json.<pid>.tmp`): removed once here, not once per entry written (a listing of the folder each time
        // made a build of thousands of sources quadratic).
        if usable, OutputPath.entryKind(folder) == .folder { BuildFiles.removeStaleTemporaries(in: folder) }
    }

    /// True when the folder can hold entries to look up: usable and there.
    package var hasEntries: Bool { usable && OutputPath.entryKind(folder) == .folder }

    /// What `lookup` found.
    package enum Lookup {
        /// The entry's database, trusted.
        case found(URL)
        /// No entry for this name, format and key.
        case absent
        /// An entry whose record or database is not what it says: `file` is the one that is not, `why` says how.
        case damaged(file: URL, why: String)
    }

    /// The record and database of the entry named `name`.
    package func files(_ name: String) -> (record: URL, database: URL) {
        let id = String(SHA256Digest.hex(of: Data(name.utf8)).prefix(16))
        return (folder.appendingPathComponent("\(id).json"), folder.appendingPathComponent("\(id).sqlite"))
    }

    /// The entry named `name` when its record is intact and of this format, holds `key`, and its database is the one
    /// recorded (by stamp, else by SHA-256).
    package func lookup(_ name: String, key: String) -> Lookup {
        guard hasEntries else { return .absent }
        let (recordURL, databaseURL) = files(name)
        guard OutputPath.entryKind(recordURL) == .regular, let data = FileManager.default.contents(atPath: recordURL.path) else { return .absent }
        if let written = try? JSONDecoder().decode(Format.self, from: data), written.format != format { return .absent }
        guard let entry = CacheEntryRecord.verified(data), entry.format == format else {
            return .damaged(file: recordURL, why: "its record's checksum does not match")
        }
        guard entry.key == key, entry.name == name else { return .absent }
        guard OutputPath.entryKind(databaseURL) == .regular,
              FileStamp(databaseURL).map({ $0 == entry.databaseStamp }) == true
                || (try? FileDigest.sha256(of: databaseURL)) == entry.databaseSHA256 else {
            return .damaged(file: databaseURL, why: "its SHA-256 is not the one recorded")
        }
        return .found(databaseURL)
    }

    /// The format alone of a record, read before the rest: one of another format need not have this one's fields.
    private struct Format: Decodable {
        var format: Int
    }

    /// Replaces the entry named `name` with one for `key`: its record is removed first, then `write` puts the
    /// complete database at the URL it is given (synced and renamed into place), then the new record is written.
    /// An entry that cannot be written is left without a record (the next build does the work again); nothing is
    /// written in a folder that is not `usable`.
    package func store(_ name: String, key: String, writing write: (URL) throws -> Void) {
        guard usable else { return }
        let (recordURL, databaseURL) = files(name)
        if OutputPath.entryKind(recordURL) == .regular { FileCalls.unlink(recordURL.path) }
        do {
            guard [nil, .folder].contains(OutputPath.entryKind(folder)), [nil, .regular].contains(OutputPath.entryKind(databaseURL)) else {
                throw KilnError.io("the build cache folder \(folder.path) is not a folder")
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try write(databaseURL)
            var entry = CacheEntryRecord(format: format, name: name, key: key, databaseSHA256: try FileDigest.sha256(of: databaseURL),
                                         databaseStamp: FileStamp(databaseURL))
            entry.checksum = try entry.computedChecksum()
            try AtomicFile.write(try KilnJSON.encode(entry), to: recordURL)
        } catch {
            FileCalls.unlink(recordURL.path)
        }
    }
}
