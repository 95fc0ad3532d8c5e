import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A bundle file on disk: opened read-only after checking that it is a whole SQLite database, so that an empty,
/// foreign, truncated or damaged file is refused in one sentence instead of failing somewhere later.
package enum BundleFile {
    /// The 16 bytes every SQLite 3 database starts with.
    private static let header = Array("SQLite format 3\0".utf8)

    /// Opens the bundle at `url` read-only, with `other` attached as schema `schema` when given (checked as `url`
    /// is). The connection's statements stop once they have run as long as `BundleReadLimit.current` gives the files
    /// it reads: a statement stopped then fails with an `SQLiteError` whose `isInterrupted` is true, which
    /// `BundleReadLimit.stopped` makes one sentence.
    /// - Throws: `KilnError.io` when the file does not exist or cannot be read, or another process holds it
    ///   (`BundleSideFiles.refuseIfHeld`); `KilnError.validation` with one
    ///   sentence naming the file when it is empty, not an SQLite database, truncated or damaged.
    package static func open(_ url: URL, attaching other: URL? = nil, as schema: String = "new") throws -> Database {
        let database = try open(url, mode: .readOnly, limitedFor: [url] + (other.map { [$0] } ?? []))
        if let other {
            _ = try open(other, mode: .readOnly, limitedFor: [other])
            do {
                try database.execute("ATTACH DATABASE \(quoteLiteral(other.path)) AS \(quoteIdentifier(schema))")
            } catch let error as SQLiteError {
                throw KilnError.validation("\(other.relativePath) cannot be read beside \(url.relativePath) (\(error.message))")
            }
        }
        return database
    }

    /// Opens for writing `copy`, a copy this process made of bundles it did not build (`originals`: the scratch copy
    /// `kiln patch` and `kiln apply` change): its triggers run as the copy changes, so it has the time limit of
    /// reading `originals` (`open`).
    /// - Throws: as `open`.
    package static func openCopy(_ copy: URL, of originals: [URL]) throws -> Database {
        try open(copy, mode: .readWrite, limitedFor: originals)
    }

    private static func open(_ url: URL, mode: Database.Mode, limitedFor files: [URL]) throws -> Database {
        try inspect(url)
        try BundleSideFiles.refuseIfHeld(url)
        do {
            let database = try Database(path: url.path, mode: mode, functions: KilnSQLFunctions.all)
            database.limitLifetime(toSeconds: BundleReadLimit.current.budget(for: files))
            _ = try database.rows("SELECT count(*) FROM sqlite_schema")
            return database
        } catch let error as SQLiteError {
            if error.isLocked { throw BundleSideFiles.lockedError(url) }
            if let stopped = BundleReadLimit.current.stopped(error, reading: [url]) { throw stopped }
            throw KilnError.validation("\(url.relativePath) is not an SQLite database (\(error.message))")
        }
    }

    /// The bundle name recorded in a bundle's metadata.
    /// - Throws: as `open`, and `KilnError.validation` when the file is not a Kiln bundle.
    package static func name(of url: URL) throws -> String {
        let database = try open(url)
        let read: [String: String]?
        do { read = try metadata(of: database) } catch { throw BundleReadLimit.current.stopped(error, reading: [url]) ?? error }
        guard let entries = read else {
            throw KilnError.validation("\(url.relativePath) is not a Kiln bundle: it has no \(BundleWriter.metadataTable) table naming its bundle")
        }
        guard let name = entries["bundle.name"] else {
            throw KilnError.validation("\(url.relativePath) is not a Kiln bundle: its \(BundleWriter.metadataTable) table names no bundle (no bundle.name entry\(entries.isEmpty ? "; the table is empty" : ""))")
        }
        return name
    }

    /// The error for the bundle at `url`, which records the bundle name `name`, given to `manifest`, which builds
    /// another.
    package static func foreign(_ url: URL, name: String, manifest: Manifest) -> KilnError {
        .validation(ValidationFailure("\(url.relativePath) is a bundle of pipeline \"\(name)\", not of \"\(manifest.bundle)\" (\(displayPath(manifest.file)))",
                                      file: url.relativePath, expected: manifest.bundle, found: name))
    }

    /// Where the pipeline of bundle `name` lives by convention: `raw/<name>`, relative to the current folder.
    package static func conventionalPipeline(named name: String) -> String {
        "raw/" + name
    }

    /// The `kiln_metadata` entries by key, or `nil` when the database has no readable metadata table.
    /// - Throws: the `SQLiteError` of a statement the time limit stopped (`open`): a metadata view that never ends.
    package static func metadata(of database: Database, schema: String = "main") throws -> [String: String]? {
        let rows: [Row]
        do {
            rows = try database.rows("SELECT key, value FROM \(quoteIdentifier(schema)).\(BundleWriter.metadataTable)")
        } catch let error as SQLiteError where !error.isInterrupted {
            return nil
        }
        var entries: [String: String] = [:]
        for row in rows {
            if let key = row.values[0].textValue { entries[key] = row.values[1].textValue ?? "" }
        }
        return entries
    }

    /// Reads the file's size and SQLite header: empty, foreign and truncated files are named before SQLite sees them.
    private static func inspect(_ url: URL) throws {
        // Opening a FIFO would wait for a writer; a folder or a device is no bundle either.
        if let kind = OutputPath.entryKind(url, followingLinks: true), kind != .regular {
            throw KilnError.io("\(url.relativePath) is \(kind.phrase), not a bundle file")
        }
        guard FileManager.default.isReadableFile(atPath: url.path),
              let handle = FileHandle(forReadingAtPath: url.path) else {
            throw CannotRead.error(url)
        }
        defer { try? handle.close() }
        let size: UInt64
        let bytes: [UInt8]
        do {
            size = try handle.seekToEnd()
            try handle.seek(toOffset: 0)
            bytes = [UInt8](try handle.read(upToCount: 100) ?? Data())
        } catch {
            throw CannotRead.error(url, error)
        }
        let name = url.relativePath
        if size == 0 { throw KilnError.validation(ValidationFailure("\(name) is empty (0 bytes), not an SQLite database", file: name, found: "0 bytes")) }
        guard bytes.count == 100, Array(bytes[0..<16]) == header else {
            throw KilnError.validation(ValidationFailure("\(name) is not an SQLite database (it does not start with the SQLite header)", file: name,
                                                         expected: "the SQLite header"))
        }
        func number(_ offset: Int, _ count: Int) -> UInt64 {
            bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let pageSize = number(16, 2) == 1 ? 65536 : number(16, 2)
        let pageCount = number(28, 4)
        // The page count in the header is valid only when the "version valid for" number matches the change counter.
        guard pageSize >= 512, number(92, 4) == number(24, 4), pageCount > 0 else { return }
        if size < pageSize * pageCount {
            throw KilnError.validation(ValidationFailure("\(name) is truncated: it holds \(size) bytes, but its header declares \(pageCount) pages of \(pageSize) bytes (\(pageSize * pageCount) bytes)",
                                                         file: name, expected: "\(pageSize * pageCount) bytes", found: "\(size) bytes"))
        }
    }
}
