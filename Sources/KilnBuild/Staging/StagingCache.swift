import Foundation
import KilnCore

/// What staging asks the build cache (`SourceCache`), once for each source: where its rows come from. Staging acts
/// on the answer (`StagingArea.stage`) and hands back what it staged (`StagedSource`) for the source's next entry.
package protocol StagingCache: AnyObject {
    /// The source at `position`'s rows the cache supplies from its entry, with the runs of files to read between
    /// them; `nil` when every file is read.
    func rows(ofSource position: Int) -> CachedRows?
}

/// What staging put in for one source (`StagingArea.stage`): its files' SHA-256, and when a build cache asked for
/// them, the rowids, findings and facts its entry is written from (`SourceCache.keep`).
package struct StagedSource {
    /// Each file's SHA-256, by relative path.
    package var digests: [String: String] = [:]
    /// Each of the source's tables' last rowid before it was staged.
    package var before: [String: Int64] = [:]
    /// Each of the source's tables' last rowid once it was staged.
    package var after: [String: Int64] = [:]
    /// The findings reported meanwhile, each with the file being read.
    package var findings: [Finding] = []
    /// The facts of each file's rows (by path), by table name (the tables it has rows of).
    package var files: [String: [String: StagedTableFacts]] = [:]

    /// A finding as the build's log took it in while the source was staged.
    package struct Finding {
        /// The file whose records were coming in (`nil` before the first).
        package var file: String?
        /// The finding as reported.
        package var diagnostic: Diagnostic
        /// The key of a finding made once per source.
        package var once: String?
    }
}

/// The findings of the source being staged as the build's log takes them in, each with the file being read then
/// (from its records, or from a cache entry's findings replayed).
package final class StagedFindings {
    /// The file whose records (or replayed findings) are coming in.
    package var file: String?
    /// The findings so far, in the order the log took them in.
    package private(set) var findings: [StagedSource.Finding] = []

    /// Notes a finding of `file`.
    package func add(_ diagnostic: Diagnostic, once: String?) {
        findings.append(StagedSource.Finding(file: file, diagnostic: diagnostic, once: once))
    }
}
