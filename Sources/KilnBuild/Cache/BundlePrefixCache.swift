import Foundation
import KilnC
import KilnCore
import KilnManifest
import Synchronization

/// Keeps the bundle's file as it stood once its first tables were written, so that a later build whose first tables
/// would hold the same rows starts from a copy of it instead of writing them again (`TablePrefix`): after one of
/// 50 000 timetable pages changed, the 2 M stops before them are not written again. The bundle is written one
/// transaction per table, in declaration order, with no journal, so the file after table k is a function of the
/// tables up to k alone, and writing on from a copy of it gives the bytes of a full build.
///
/// An entry is named after the last table it holds (`through <table>`); its key covers Kiln's environment and, for
/// each shipped table up to that one, its declaration, whether its rows came in key order, and what decides its
/// rows (`SourceCache.rowsDescription`: the sources that fill it, by key, and their files' SHA-256). A query table
/// has no such key, so no entry reaches past one. A file is kept after a table only when a later table may change
/// without it (one filled by a source that fills none of the tables so far, or a query table); after the last
/// table, nothing is kept. Entries are written like the other cache entries (`CacheEntryFolder`: the copy synced and
/// renamed into place, then its checksummed record) on a thread of their own; one whose record or file does not
/// match is a `build.cache` info and its tables are written again.
///
/// Unchecked Sendable: the bundle's thread calls `keep`, which touches only `storing` (a `Mutex`); the rest is the builder's.
package final class BundlePrefixCache: @unchecked Sendable {
    /// The format of the entries this Kiln writes; an entry of another is written again.
    package static let currentFormat = 1
    /// The entries: `<bundle folder>/.kiln-cache/<bundle file>/tables`.
    private let entries: CacheEntryFolder
    private let pipeline: CompiledPipeline
    private let examplesPerCode: Int
    /// The shipped tables, in declaration order.
    private let shipped: [TableSpec]
    /// The threads writing entries, waited for by `wait`.
    private let storing = Mutex<[BackgroundThread<Void>]>([])
    /// The shipped tables this build's bundle took from kept files instead of writing them, in declaration order:
    /// those up to the last table of the longest entry it found.
    package var reused: [String] { shipped.prefix(reusedCount).map(\.name) }
    private var reusedCount = 0
    /// True when an entry was found damaged: the build says so (a `build.cache` info).
    package private(set) var foundDamaged = false
    /// What each shipped table's rows are decided by, by table name, once it is staged (`nil` when no key can say).
    private var described: [String: [String]?] = [:]
    /// How many of the first shipped tables were decided (`decide`), and the key of the file after the last of them
    /// (`nil` once a table without a key came).
    private var decided = 0
    private var runningKey: String? = "kiln bundle tables cache \(BundlePrefixCache.currentFormat)\n\(BuildCache.environment)"

    package init(cache: BuildCache, pipeline: CompiledPipeline, examplesPerCode: Int) {
        entries = CacheEntryFolder("tables", of: cache, format: BundlePrefixCache.currentFormat)
        self.pipeline = pipeline
        self.examplesPerCode = examplesPerCode
        shipped = pipeline.manifest.tables.filter(\.ship)
    }

    /// Notes that `table` is staged (its rows in key order or not, its sources' files digested as `digests` says) and
    /// returns what the bundle's thread is to do after each shipped table that this completes, in declaration order
    /// (`BundleTables.prefix`): every table before it staged too. `useCache` false (`--no-cache`) looks nothing up
    /// but still keeps; a damaged entry is reported into `log`.
    package func staged(_ table: TableSpec, inOrder: Bool, digests: [String: String], useCache: Bool,
                        log: DiagnosticLog) -> [(table: String, prefix: TablePrefix)] {
        let rows = SourceCache.rowsDescription(of: table, in: pipeline, digests: digests, examplesPerCode: examplesPerCode)
        described[table.name] = .some(rows.map { ["in order \(inOrder)"] + $0 })
        var decisions: [(table: String, prefix: TablePrefix)] = []
        while decided < shipped.count, let rows = described[shipped[decided].name] {
            let position = decided
            let table = shipped[position]
            decided += 1
            guard let rows, let previous = runningKey else {
                runningKey = nil
                continue
            }
            let key = SHA256Digest.hex(of: Data(([previous, "table \(String(reflecting: table))"] + rows).joined(separator: "\n").utf8))
            runningKey = key
            let name = "through \(table.name)"
            if useCache, let kept = reusable(name, key: key, log: log) {
                reusedCount = position + 1
                decisions.append((table.name, TablePrefix(kept: kept, keep: nil)))
            } else if worthKeeping(after: position) {
                decisions.append((table.name, TablePrefix(kept: nil, keep: { [self] file in keep(name, key: key, copying: file) })))
            }
        }
        return decisions
    }

    /// True when a table after the shipped table at `position` may change while the tables up to it do not.
    private func worthKeeping(after position: Int) -> Bool {
        guard position + 1 < shipped.count else { return false }
        let fillers = { (table: TableSpec) in
            Set(self.pipeline.sources.filter { $0.targets.contains { $0.table.name == table.name } }.map(\.spec.name))
        }
        let sofar = shipped[...position].reduce(into: Set<String>()) { $0.formUnion(fillers($1)) }
        return shipped[(position + 1)...].contains { $0.query != nil || !fillers($0).isSubset(of: sofar) }
    }

    private func reusable(_ name: String, key: String, log: DiagnosticLog) -> URL? {
        switch entries.lookup(name, key: key) {
        case .absent: return nil
        case .damaged(let file, let why):
            foundDamaged = true
            log.report(.buildCache, "the build cache entry \(displayPath(file)) of the bundle's tables \(name) is damaged or was edited (\(why)): "
                           + "those tables were written again")
            return nil
        case .found(let database):
            return database
        }
    }

    /// On the bundle's thread: copies `file` (the bundle, complete through the table `name` names) at once, then
    /// stores the copy as that entry on a thread of its own. A file that cannot be copied leaves no entry.
    private func keep(_ name: String, key: String, copying file: URL) {
        guard entries.usable else { return }
        let scratch = KilnFileNames.temporary(for: entries.files(name).database)
        TemporaryFiles.shared.register(scratch)
        do {
            try FileManager.default.createDirectory(at: entries.folder, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: scratch)
            try FileManager.default.copyItem(at: file, to: scratch)
        } catch {
            try? FileManager.default.removeItem(at: scratch)
            TemporaryFiles.shared.unregister(scratch)
            return
        }
        let entries = entries
        let thread = BackgroundThread(name: "kiln kept tables") {
            ThreadPriority.stepBack()
            defer {
                try? FileManager.default.removeItem(at: scratch)
                TemporaryFiles.shared.unregister(scratch)
            }
            entries.store(name, key: key) { database in try FileSync.replace(database, with: scratch) }
        }
        storing.withLock { $0.append(thread) }
    }

    /// Waits for the entries being written.
    package func wait() {
        for thread in storing.withLock({ $0 }) { try? thread.wait() }
    }
}
