import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Keeps the full-text indexes a build made (`FullTextBuild`'s scratch databases) in the build cache, so that a later
/// build whose full-text table would hold the same rows copies the index kept instead of indexing every row again.
/// A table's rows are decided by the sources that fill it: the index is reused when each of them has the same key as
/// its source cache entry would (`SourceCache.key`) and the same files with the same SHA-256, in the same order, and
/// the table and full-text declarations are the same. The bundle then gets the shadow rows the same index build
/// wrote, copied the same way, so its bytes are those of a full build. Query tables are not kept (SQL over other
/// tables decides their rows). An entry is written like a source entry (the database synced and renamed into place,
/// then its checksummed record); one whose record or database does not match is a `build.cache` info and the index
/// is built again. Not `Sendable`: one build uses it on its own thread.
package final class FullTextCache {
    /// The format of the entries this Kiln writes (`CacheEntryRecord.format`); an entry of another is built again.
    package static let currentFormat = 1
    /// The entries: `<bundle folder>/.kiln-cache/<bundle file>/fulltext`.
    private let entries: CacheEntryFolder
    private let pipeline: CompiledPipeline
    private let examplesPerCode: Int
    /// The full-text indexes this build took from the cache, by full-text table name.
    package private(set) var reused: [String] = []
    /// True when an entry was found damaged: the build says so (a `build.cache` info).
    package private(set) var foundDamaged = false

    package init(cache: BuildCache, pipeline: CompiledPipeline, examplesPerCode: Int) {
        entries = CacheEntryFolder("fulltext", of: cache, format: FullTextCache.currentFormat)
        self.pipeline = pipeline
        self.examplesPerCode = examplesPerCode
    }

    /// The key of the index `fullText` of `table` once the sources filling it are staged with the files `digests`
    /// gives (SHA-256 by relative path); `nil` for a query table, a table no source fills, or a file without a digest.
    package func key(_ fullText: FullTextSpec, of table: TableSpec, digests: [String: String]) -> String? {
        guard let rows = SourceCache.rowsDescription(of: table, in: pipeline, digests: digests, examplesPerCode: examplesPerCode) else { return nil }
        let lines = ["kiln full-text cache \(FullTextCache.currentFormat)", BuildCache.environment,
                     "table \(String(reflecting: table))", "fulltext \(String(reflecting: fullText))"] + rows
        return SHA256Digest.hex(of: Data(lines.joined(separator: "\n").utf8))
    }

    /// The database of the kept index of `name` when its entry has the key `key` and its database is the one recorded;
    /// `nil` otherwise (a damaged entry is reported into `log`). The database is only read, never moved.
    package func reusable(_ name: String, key: String, log: DiagnosticLog) -> URL? {
        switch entries.lookup(name, key: key) {
        case .absent: return nil
        case .damaged(let file, let why):
            reportDamaged(name, file, why, log)
            return nil
        case .found(let database):
            reused.append(name)
            return database
        }
    }

    private func reportDamaged(_ name: String, _ file: URL, _ why: String, _ log: DiagnosticLog) {
        foundDamaged = true
        log.report(.buildCache, "the build cache entry \(displayPath(file)) of the full-text index \"\(name)\" is damaged or was edited (\(why)): "
                       + "the index was built again")
    }

    /// Keeps the index of `name`, built in `scratch` for rows whose key is `key`, as its entry: the database is
    /// synced and renamed into place (so `scratch` is gone afterwards), then its record written. An index that cannot
    /// be kept leaves no entry (its next build indexes the rows again).
    package func keep(_ name: String, key: String, scratch: URL) {
        entries.store(name, key: key) { database in try FileSync.replace(database, with: scratch) }
    }
}
