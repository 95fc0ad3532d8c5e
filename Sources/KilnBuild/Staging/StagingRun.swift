import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What reading and staging a pipeline took, without rules or a bundle.
package struct StagingStatistics: Sendable {
    /// Records staged, over all sources.
    package var records: Int
    /// Bytes of input read.
    package var bytes: Int
    /// Findings the readers reported.
    package var diagnostics: Int
}

extension CompiledPipeline {
    /// Reads every source and stages its records in a database at `url` (replaced, then left for inspection),
    /// without running the rules or writing a bundle: the first two stages alone, for measuring readers and
    /// shaping (`scripts/bench`) and for looking at staged rows while writing a manifest, under `threads`.
    /// - Throws: `KilnError.io` when inputs cannot be read, `SQLiteError` when staging fails.
    package func stage(into url: URL, threads: ThreadSettings = ThreadSettings()) throws -> StagingStatistics {
        let log = DiagnosticLog(overrides: manifest.severity)
        let staging = try StagingArea(url: url, pipeline: self, threads: threads)
        for source in sources { _ = try staging.load(source, log: log) }
        try staging.fillQueryTables()
        var records = 0
        for table in manifest.tables {
            let rows = try staging.database.rows("SELECT count(*) FROM \(quoteIdentifier(table.name))")
            records += Int(rows.first?.values.first?.number ?? 0)
        }
        try staging.database.close()
        let bytes = sources.flatMap(\.files).reduce(0) { total, file in
            total + (file.sizeOnDisk ?? 0)
        }
        return StagingStatistics(records: records, bytes: bytes, diagnostics: log.diagnostics.count + log.tally.totalNotStored)
    }
}
