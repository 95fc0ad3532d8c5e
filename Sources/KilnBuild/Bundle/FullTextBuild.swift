import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Builds the FTS5 indexes of a bundle's full-text tables on a thread of their own, each in a scratch database
/// beside the bundle; the bundle's connection then copies each index's shadow tables in (`copy(_:into:)`). FTS5
/// indexing is the longest step of writing a bundle with a large full-text table (2 000 000 stops: 6 s of one core):
/// this way it runs while later sources are staged, the rules checked and the bundle's tables written, on the other
/// threads. A table's index starts as soon as the sources that fill it are staged (`start`): its rows, in the order
/// the bundle holds them, are first copied into its scratch database, so that staging goes on while it is indexed.
/// The index is built contentless (`content=''`) under the rowids the bundle's table gives its rows (its INTEGER key,
/// else its rows' positions): the bundle's FTS5 table reads its text from that table (external content), and its four
/// shadow tables come from here. Their rows are the ones FTS5 writes when it indexes the bundle's table in place
/// (`'rebuild'`). A scratch database outlives its copy, so that the build cache can keep it (`FullTextCache`); an
/// index the cache kept for the same rows is adopted instead of built (`adopt`). For a target whose SQLite lacks FTS5
/// (Android's), the FTS4 table its bundle gets instead is indexed from the same rows next, in a scratch database of its
/// own, and copied into that bundle (`targetIndexes(for:)`), so that it is not rebuilt after the main bundle is done.
/// One thread, one index at a time, so that memory stays flat however many full-text tables a manifest declares.
package final class FullTextBuild: Sendable {
    private struct Index: Sendable {
        package let table: TableSpec
        package let fullText: FullTextSpec
        package let scratch: URL
        /// True once the index is built, adopted or failed (`state` says which).
        package let done = ConditionLock(false)
        /// The FTS4 tables a target's bundle has instead of this FTS5 one (`TargetSQL.fullText4`), one per distinct
        /// declaration, indexed from the same rows once this index is done.
        package let targetIndexes: [TargetIndex]
    }

    /// An FTS4 index built for the targets whose bundles declare the full-text table as `declaration`, in a scratch
    /// database of its own (its shadow tables share names with the FTS5 table's).
    private final class TargetIndex: Sendable {
        let declaration: String
        let scratch: URL
        /// Once the thread is done with it: whether the index is complete.
        let built = ConditionLock<Bool?>(nil)

        init(declaration: String, scratch: URL) {
            self.declaration = declaration
            self.scratch = scratch
        }
    }

    private let indexes: [Index]
    /// Builds the indexes one after the other.
    private let indexing = SerialThread(name: "kiln full-text indexes")
    /// The tables whose index was started, the failure of each index that failed and the index each adopted one was
    /// taken from (`adopt`), by full-text table name.
    private let state = Mutex<(started: Set<String>, failures: [String: any Error & Sendable], adopted: [String: URL])>(([], [:], [:]))

    /// Stops the indexing (`discard()` raises it).
    private let stop = StopSignal()

    /// The scratch table holding the rows to index (no FTS5 table's shadow table can have this name: theirs hold a `_`).
    private static let rowsTable = "rows"
    /// Its column holding each row's rowid in the bundle, for a table whose rowids are its INTEGER key.
    private static let rowidColumn = "kiln rowid"

    /// Prepares the indexing of the full-text tables of `tables` (those with a `fullText` declaration), in scratch
    /// databases named after `destination`; `start` starts each. For each of `targets` whose SQLite has FTS4 but not
    /// FTS5, the FTS4 table its bundle gets instead is indexed from the same rows too, after the FTS5 index
    /// (`targetIndexes(for:)`), so that writing that bundle copies the index instead of rebuilding it.
    package init(tables: [TableSpec], destination: URL, targets: [SQLiteTarget] = []) {
        let declared = tables.compactMap { table in table.fullText.map { (table, $0) } }
        // The FTS5 indexes' scratch databases are numbered first, the targets' after them.
        var scratchNumber = declared.count
        func nextScratch() -> URL {
            scratchNumber += 1
            return KilnFileNames.fullTextScratch(for: destination, number: scratchNumber)
        }
        indexes = declared.enumerated().map { number, declared in
            let (table, fullText) = declared
            let scratch = KilnFileNames.fullTextScratch(for: destination, number: number + 1)
            var declarations: [String] = []
            for target in targets {
                if let declaration = TargetSQL.fullText4(fullText, of: table, target: target), !declarations.contains(declaration) {
                    declarations.append(declaration)
                }
            }
            return Index(table: table, fullText: fullText, scratch: scratch,
                         targetIndexes: declarations.map { TargetIndex(declaration: $0, scratch: nextScratch()) })
        }
        for scratch in indexes.flatMap({ [$0.scratch] + $0.targetIndexes.map(\.scratch) }) {
            try? FileManager.default.removeItem(at: scratch)
            TemporaryFiles.shared.register(scratch)
        }
    }

    /// True once `start` was called for `table`.
    package func hasStarted(_ table: String) -> Bool {
        state.withLock { $0.started.contains(table) }
    }

    /// Starts indexing `table`, whose sources are all staged, on the indexing thread: first its staged rows are
    /// copied from `staging` into its scratch database, under a read lease (`StagingDatabase.lease`: the copy waits
    /// for a write phase under way, and the next one waits for the copy), in the order the bundle holds them
    /// (`StagedRowOrder.rows`; `inOrder`: already in that order), then indexed there with the lease returned. The
    /// table's rows do not change once its sources are staged, so the copy reads the same rows whenever it runs. A
    /// failure is kept for `copy(_:into:)` to throw.
    package func start(_ table: String, staging: StagingDatabase, inOrder: Bool) {
        guard let index = indexes.first(where: { $0.table.name == table }) else { return }
        let first = state.withLock { $0.started.insert(table).inserted }
        guard first else { return }
        let stop = stop
        indexing.async { [self] in
            do {
                let database = try Database(path: index.scratch.path, functions: KilnSQLFunctions.all, readOnlyAttachments: true)
                defer { try? database.close() }
                try database.stopping(when: stop) {
                    try FullTextBuild.copyRows(index.table, index.fullText, from: staging, inOrder: inOrder, into: database)
                }
                try database.stopping(when: stop) { try FullTextBuild.build(index.fullText, of: index.table, in: database) }
            } catch let error as SQLiteError {
                fail(index, error)
                return
            } catch {
                fail(index, KilnError.validation("the full-text index \(index.fullText.name) could not be built: \(error)"))
                return
            }
            index.done.change { $0 = true }
            for targetIndex in index.targetIndexes {
                // A target's index that cannot be built is left to the target's bundle, which rebuilds it in place.
                let built = (try? FullTextBuild.buildTargetIndex(targetIndex, of: index, stop: stop)) != nil
                targetIndex.built.change { $0 = built }
            }
        }
    }

    /// Indexes the rows the FTS5 index of `index` was built from into the FTS4 table of `targetIndex`, under the
    /// same rowids, in their order: the shadow rows FTS4 writes when it rebuilds the table in a target's bundle.
    private static func buildTargetIndex(_ targetIndex: TargetIndex, of index: Index, stop: StopSignal) throws {
        let database = try Database(path: targetIndex.scratch.path, functions: KilnSQLFunctions.all, readOnlyAttachments: true)
        defer { try? database.close() }
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
        try database.execute("ATTACH DATABASE \(quoteLiteral(index.scratch.path)) AS kiln_rows")
        let columns = indexedColumns(index.fullText)
        let rowid = SchemaSQL.rowidColumn(of: index.table) == nil ? "rowid" : quoteIdentifier(rowidColumn)
        try database.stopping(when: stop) {
            try database.transaction {
                try database.execute(targetIndex.declaration)
                try database.execute("INSERT INTO main.\(quoteIdentifier(index.fullText.name)) (docid, \(columns)) SELECT \(rowid), \(columns) FROM kiln_rows.\(quoteIdentifier(rowsTable)) ORDER BY rowid")
            }
        }
        try database.execute("DETACH DATABASE kiln_rows")
    }

    /// The FTS4 indexes built for `target`'s bundle (`init`'s `targets`), by full-text table name, once each is
    /// complete: those a failure, an adopted FTS5 index or a build that never started left out are rebuilt in the
    /// target's bundle. Valid until `discard()`.
    package func targetIndexes(for target: SQLiteTarget) -> [String: URL] {
        var found: [String: URL] = [:]
        for index in indexes where hasStarted(index.table.name) {
            guard let declaration = TargetSQL.fullText4(index.fullText, of: index.table, target: target),
                  let targetIndex = index.targetIndexes.first(where: { $0.declaration == declaration }) else { continue }
            if targetIndex.built.waitForValue() { found[index.fullText.name] = targetIndex.scratch }
        }
        return found
    }

    /// Takes the index of `table` from `database`, an index a build of the same rows made earlier (`FullTextCache`),
    /// instead of building it: `copy(_:into:)` copies its shadow tables as it copies a new index's. The database is
    /// only read.
    package func adopt(_ table: String, index database: URL) {
        guard let index = indexes.first(where: { $0.table.name == table }) else { return }
        let first = state.withLock { state in
            guard state.started.insert(table).inserted else { return false }
            state.adopted[index.fullText.name] = database
            return true
        }
        guard first else { return }
        index.done.change { $0 = true }
        // The targets' bundles rebuild their FTS4 tables of an adopted index.
        for targetIndex in index.targetIndexes { targetIndex.built.change { $0 = false } }
    }

    /// The scratch database holding the index of the full-text table `name`, once this build built it without a
    /// failure; `nil` for an index not built here (adopted, failed, never started). Valid until `discard()`.
    package func builtIndex(_ name: String) -> URL? {
        guard let index = indexes.first(where: { $0.fullText.name == name }), hasStarted(index.table.name) else { return nil }
        index.done.wait(until: { $0 })
        return state.withLock { $0.failures[name] == nil && $0.adopted[name] == nil } ? index.scratch : nil
    }

    private func fail(_ index: Index, _ error: any Error & Sendable) {
        state.withLock { $0.failures[index.fullText.name] = error }
        index.done.change { $0 = true }
        for targetIndex in index.targetIndexes { targetIndex.built.change { $0 = false } }
    }

    /// Copies the indexed columns of the rows the bundle's table will hold, in its order (`StagedRowOrder.rows`), from
    /// the staging database into `rowsTable` of `database`: that order is the order the bundle's table is filled in,
    /// and so gives the rowids the index would get there. A table not in order is sorted on its key first, as the
    /// bundle's thread sorts it, and on every column only when two rows share the key.
    private static func copyRows(_ table: TableSpec, _ fullText: FullTextSpec, from staging: StagingDatabase, inOrder: Bool, into database: Database) throws {
        // Small caches: the index is written while staging, the rules, then the bundle hold theirs.
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
        let lease = staging.lease()
        try lease.attach(to: database, as: "staging")
        try database.execute("PRAGMA staging.cache_size = -4096")
        var selected = indexedColumns(fullText)
        if let key = SchemaSQL.rowidColumn(of: table) { selected = "\(quoteIdentifier(key)) AS \(quoteIdentifier(rowidColumn)), " + selected }
        let rows = quoteIdentifier(rowsTable)
        // Sorted on the key alone first, with the key beside the rows: when no two neighbours share it, no two rows do,
        // and these are the rows, in the order, that the sort on every column gives (`StagedRowOrder`).
        var copied = false
        if !inOrder, !table.primaryKey.isEmpty {
            try database.transaction { try database.execute("CREATE TABLE \(rows) AS \(StagedRowOrder.keyedRows(of: table, selecting: selected))") }
            copied = try !StagedRowOrder.repeatsKey(of: table, in: rowsTable, of: database)
            if !copied { try database.execute("DROP TABLE \(rows)") }
        }
        if !copied {
            try database.transaction {
                try database.execute("CREATE TABLE \(rows) AS \(StagedRowOrder.rows(of: table, selecting: selected, arrangement: inOrder ? .inOrder : .sorted))")
            }
        }
        try lease.release(detaching: "staging", from: database)
    }

    /// The FTS5 table's columns, indexed then unindexed, as an SQL list.
    private static func indexedColumns(_ fullText: FullTextSpec) -> String {
        (fullText.columns + fullText.unindexed).map(quoteIdentifier).joined(separator: ", ")
    }

    /// Creates the FTS5 table in `database`, contentless (the bundle's table holds the text), and indexes the rows of
    /// `rowsTable` in its order, under the rowids the bundle's table gives them (`SchemaSQL.rowidColumn`).
    private static func build(_ fullText: FullTextSpec, of table: TableSpec, in database: Database) throws {
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
        let indexed = indexedColumns(fullText)
        let rowid = SchemaSQL.rowidColumn(of: table) == nil ? "rowid" : quoteIdentifier(rowidColumn)
        try database.transaction {
            try database.execute(SchemaSQL.createFullText(fullText, content: nil))
            try database.execute("INSERT INTO \(quoteIdentifier(fullText.name)) (rowid, \(indexed)) SELECT \(rowid), \(indexed) FROM \(quoteIdentifier(rowsTable)) ORDER BY rowid")
        }
    }

    /// Waits for the index of the full-text table `name`, then copies it into `database`, where the same FTS5 table
    /// was created (reading its table's text) and no transaction is open: each shadow table of the contentless index,
    /// in name order, in place of the few rows its creation wrote.
    /// - Throws: the index build's `SQLiteError`, or the copy's.
    package func copy(_ name: String, into database: Database) throws {
        guard let index = indexes.first(where: { $0.fullText.name == name }), hasStarted(index.table.name) else {
            throw KilnError.validation("the full-text index \(name) was never built")
        }
        index.done.wait(until: { $0 })
        let (failure, adopted) = state.withLock { ($0.failures[name], $0.adopted[name]) }
        if let failure { throw failure }
        try database.execute("ATTACH DATABASE \(quoteLiteral((adopted ?? index.scratch).path)) AS kiln_fulltext")
        try database.transaction { try FullTextBuild.copyShadowTables(of: name, from: "kiln_fulltext", into: database) }
        try database.execute("DETACH DATABASE kiln_fulltext")
    }

    /// Replaces the rows of each shadow table of the full-text table `name` in the main schema of `database` by
    /// those of the same table in the attached schema `schema`, in name order. Run inside a transaction.
    package static func copyShadowTables(of name: String, from schema: String, into database: Database) throws {
        let prefix = name + "_"
        let shadows = try database.rows("SELECT name FROM \(quoteIdentifier(schema)).sqlite_schema WHERE type = 'table' AND substr(name, 1, ?) = ? ORDER BY name",
                                        [.integer(Int64(prefix.unicodeScalars.count)), .text(prefix)]).compactMap { $0.values.first?.textValue }
        for shadow in shadows {
            // Emptied first, so that SQLite copies the rows as they are stored (its transfer optimization), in the
            // order of their keys.
            try database.execute("DELETE FROM main.\(quoteIdentifier(shadow))")
            try database.execute("INSERT INTO main.\(quoteIdentifier(shadow)) SELECT * FROM \(quoteIdentifier(schema)).\(quoteIdentifier(shadow))")
        }
    }

    /// Stops the indexing (the bundle is not needed after all, or is complete), waits for its thread and removes the
    /// scratch databases the build cache did not take (`builtIndex`). Calling it again does nothing more.
    package func discard() {
        stop.raise()
        indexing.drain()
        for scratch in indexes.flatMap({ [$0.scratch] + $0.targetIndexes.map(\.scratch) }) {
            try? FileManager.default.removeItem(at: scratch)
            TemporaryFiles.shared.unregister(scratch)
        }
    }
}
