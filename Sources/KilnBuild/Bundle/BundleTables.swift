import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What the bundle's thread does with its file once a table and those declared before it are written
/// (`BundleTables.prefix`): start from `kept`, a file an earlier build kept at that point with the same rows in
/// those tables (the builder's build cache decides that), instead of writing them; or, when there is none, hand the
/// file to `keep`, which copies it before the next table changes it.
package struct TablePrefix: Sendable {
    package let kept: URL?
    package let keep: (@Sendable (URL) -> Void)?

    package init(kept: URL?, keep: (@Sendable (URL) -> Void)?) {
        self.kept = kept
        self.keep = keep
    }
}

/// A bundle's tables being written on a thread of their own (`BundleWriter.startTables`), each once the builder says
/// it is staged: the open database, complete, and the row count of each table once done, or the error that stopped
/// it; then, on the same thread while the builder measures the bundle, the bundles of its targets (`targets`).
package final class BundleTables: Sendable {
    /// The bundle's temporary file.
    package let temporary: URL
    /// Where the bundle goes once committed.
    package let destination: URL
    /// Stops the SQL writing a table (`discard()` raises it).
    package let stop = StopSignal()

    /// What the builder said is staged, where the writing thread is, and what it returns.
    private struct State {
        /// The tables staged before the others, each with whether its staged rows are already in the bundle's order
        /// and the file that holds them besides staging, if any.
        var stagedTables: [String: (inOrder: Bool, copy: URL?)] = [:]
        /// What the builder said of the bundle's file once a table is written (`prefix`), by table name.
        var prefixes: [String: TablePrefix] = [:]
        /// Once every table is staged: the tables already in the bundle's order, and each input's SHA-256 (for the
        /// bundle's metadata).
        var allStagedInOrder: Set<String>?
        var stagedInputs: [String: String] = [:]
        /// Further `kiln_metadata` entries that only staging can say (`FetchedInputs.metadata`).
        var stagedMetadata: [String: String] = [:]
        /// Whether no two staged rows of a table share its primary key, for each table the writing thread sorted on
        /// the key first (`keyFound`).
        var uniqueKeys: [String: Bool] = [:]
        var cancelled = false
        /// The tables' outcome, once the thread is done with them: the open database and the row counts.
        var result: Result<(Database, [(String, Int)]), Error>?
        var handedOver = false
        /// True once the thread is done with the targets' bundles too (or wrote none); their outcome, if it wrote them.
        var targetsEnded = false
        var targetsResult: Result<TargetBundles, Error>?
        var targetsHandedOver = false
    }

    private let state = ConditionLock(State())

    package init(temporary: URL, destination: URL) {
        self.temporary = temporary
        self.destination = destination
    }

    /// Runs `work` (the tables, then the bundle completed) on the thread, then `targets` with the complete bundle's
    /// file when `work` succeeded, unless the bundle was discarded meanwhile.
    package func start(_ work: @escaping @Sendable () throws -> (Database, [(String, Int)]),
                       then targets: @escaping @Sendable () throws -> TargetBundles) {
        DetachedThread.start(name: "kiln bundle tables") { [self] in
            let result = Result { try work() }
            state.change { $0.result = result }
            let succeeded = if case .success = result { true } else { false }
            let targetsResult = succeeded && !stop.isRaised ? Result { try targets() } : nil
            state.change { state in
                state.targetsResult = targetsResult
                state.targetsEnded = true
            }
        }
    }

    /// Says that `table`'s sources are all staged (no later source fills it) and whether its rows are already in the
    /// bundle's order (`StagedRowOrder.isInOrder`): it may be written once the tables declared before it are. `copy`
    /// names a database that holds the table's staged rows as staging does, with the same rowids, and that nothing
    /// writes during the build (the build cache's entry staging was seeded from): the table is read from there,
    /// without a lease of staging, so that staging's next write phase need not wait for it.
    package func staged(_ table: String, inOrder: Bool, copy: URL? = nil) {
        state.change { $0.stagedTables[table] = (inOrder, copy) }
    }

    /// Says what to do with the bundle's file once `table` (and those declared before it) is written: start from a
    /// file kept by an earlier build instead, or keep it for later ones. Said before the last of those tables is
    /// staged (`staged`), so the writing thread finds it when it comes to `table`.
    package func prefix(_ table: String, _ prefix: TablePrefix) {
        state.withLock { $0.prefixes[table] = prefix }
    }

    /// Says that staging is complete (query tables included), which tables are in the bundle's order, each
    /// input's SHA-256 and the further metadata entries staging found: every table may be written, and the bundle
    /// completed.
    package func allStaged(inOrder: Set<String>, inputs: [String: String], metadata: [String: String] = [:]) {
        state.change { state in
            state.allStagedInOrder = inOrder
            state.stagedInputs = inputs
            state.stagedMetadata = metadata
        }
    }

    /// On the writing thread: waits until staging is complete (`allStaged`); returns each input's SHA-256 and the
    /// further metadata entries.
    /// - Throws: `KilnError.validation` when the bundle was discarded meanwhile.
    package func waitUntilAllStaged() throws -> (inputs: [String: String], metadata: [String: String]) {
        try state.waitFor { state in
            if state.cancelled { throw KilnError.validation("the bundle was discarded") }
            if state.allStagedInOrder != nil { return .ready((state.stagedInputs, state.stagedMetadata)) }
            return .wait
        }
    }

    /// On the writing thread: waits until `table` is staged; returns whether its rows are in the bundle's order,
    /// the database to read them from instead of staging, if any (`staged`), and what to do with the bundle's file
    /// once it is written (`prefix`).
    /// - Throws: `KilnError.validation` when the bundle was discarded meanwhile.
    package func waitUntilStaged(_ table: String) throws -> (inOrder: Bool, copy: URL?, prefix: TablePrefix?) {
        try state.waitFor { state in
            if state.cancelled { throw KilnError.validation("the bundle was discarded") }
            if let staged = state.stagedTables[table] { return .ready((staged.inOrder, staged.copy, state.prefixes[table])) }
            if let inOrder = state.allStagedInOrder { return .ready((inOrder.contains(table), nil, state.prefixes[table])) }
            return .wait
        }
    }

    /// On the writing thread: says whether the bundle's key of `table` refused none of its staged rows sorted on it
    /// (then no two share it) or refused one.
    package func keyFound(_ table: String, unique: Bool) {
        state.withLock { $0.uniqueKeys[table] = unique }
    }

    /// True when no two staged rows of `table` share its primary key, false when two do, `nil` while the writing
    /// thread has not found out (it finds out only for tables it sorts, once their rows are written).
    package func keyIsUnique(_ table: String) -> Bool? {
        state.withLock { $0.uniqueKeys[table] }
    }

    /// Waits for the tables; returns the database, still open, and the row counts.
    /// - Throws: what stopped the writing.
    package func wait() throws -> (Database, [(String, Int)]) {
        try state.wait(until: { $0.result != nil }) { $0.result! }.get()
    }

    /// The file now belongs to a `PendingBundle`: `discard` leaves it.
    package func handOver() { state.withLock { $0.handedOver = true } }

    /// Waits for the targets' bundles the thread writes once the bundle is complete; they now belong to the caller
    /// (`discard` leaves them).
    /// - Throws: what stopped their writing.
    package func targets() throws -> TargetBundles {
        let targetsResult = state.wait(until: \.targetsEnded) { state in
            state.targetsHandedOver = true
            return state.targetsResult
        }
        guard let targetsResult else { throw KilnError.validation("the bundle was discarded") }
        return try targetsResult.get()
    }

    /// Stops the writing (a table not yet staged is never written; one being written stops, and so do the targets'
    /// bundles unless taken), waits for its thread, removes the targets' bundles not taken, closes the database and
    /// removes the temporary file (unless handed over). Calling it again does nothing more.
    package func discard() {
        state.change { state in
            if !state.handedOver { state.cancelled = true }
            // The targets' bundles not taken yet are not wanted either: their SQL stops too, also once the bundle
            // itself was handed over (a build whose last checks failed).
            if !state.handedOver || !state.targetsHandedOver { stop.raise() }
        }
        let (result, handedOver, targetsResult, targetsHandedOver) = state.wait(until: { $0.result != nil && $0.targetsEnded }) {
            ($0.result, $0.handedOver, $0.targetsResult, $0.targetsHandedOver)
        }
        if !targetsHandedOver, case .success(let targets) = targetsResult { targets.discard() }
        guard !handedOver else { return }
        if case .success(let (database, _)) = result { try? database.close() }
        try? FileManager.default.removeItem(at: temporary)
        TemporaryFiles.shared.unregister(temporary)
    }
}
