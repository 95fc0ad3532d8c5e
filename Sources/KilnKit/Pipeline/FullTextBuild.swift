import Foundation

/// Builds the FTS5 indexes of a bundle's full-text tables on a thread of their own, one after the other in
/// declaration order, each in a scratch database beside the bundle, from the staged rows in the order the bundle
/// holds them; the bundle's connection then copies each index's shadow tables in (`copy(_:into:)`). FTS5 indexing is
/// the longest step of writing a bundle with a large full-text table (2 000 000 stops: 10 s of one core): this way
/// it runs while the bundle's tables are written, and the rules checked, on the other threads. The shadow tables'
/// rows are the ones FTS5 writes when it indexes the bundle's table in place. One thread, one index at a time, so
/// that memory stays flat however many full-text tables a manifest declares.
final class FullTextBuild: @unchecked Sendable {
    private struct Index {
        let table: TableSpec
        let fullText: FullTextSpec
        let scratch: URL
        let done = DispatchSemaphore(value: 0)
    }

    private let indexes: [Index]
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failures: [String: Error] = [:]

    /// Stops the indexing (`discard()` raises it).
    private let stop = StopSignal()

    /// Starts indexing the full-text tables of `tables` (those with a `fullText` declaration) from the rows staged in
    /// `staging`, into scratch databases named after `destination`; `inOrder` names the tables whose staged rows are
    /// already in the bundle's order (`StagedRowOrder`). The staging database must not change until `discard()`.
    init(tables: [TableSpec], staging: URL, inOrder: Set<String>, destination: URL) {
        indexes = tables.compactMap { table in table.fullText.map { (table, $0) } }.enumerated().map { number, declared in
            Index(table: declared.0, fullText: declared.1, scratch: KilnFileNames.fullTextScratch(for: destination, number: number + 1))
        }
        for index in indexes {
            try? FileManager.default.removeItem(at: index.scratch)
            TemporaryFiles.shared.register(index.scratch)
        }
        guard !indexes.isEmpty else {
            finished.signal()
            return
        }
        let stop = stop
        let thread = Thread { [self] in
            defer { finished.signal() }
            for index in indexes {
                do {
                    let database = try Database(path: index.scratch.path)
                    defer { try? database.close() }
                    try database.stopping(when: stop) {
                        try FullTextBuild.build(index.table, index.fullText, from: staging, inOrder: inOrder.contains(index.table.name), in: database)
                    }
                } catch {
                    lock.lock()
                    failures[index.fullText.name] = error
                    lock.unlock()
                }
                index.done.signal()
            }
        }
        thread.name = "kiln full-text indexes"
        thread.start()
    }

    /// Creates the FTS5 table in `database` and fills it from the attached staging database: the rows the bundle's
    /// table holds, in its order (`StagedRowOrder.rows`), which is the order the bundle's table is filled in and so
    /// the rowids the index would get there.
    private static func build(_ table: TableSpec, _ fullText: FullTextSpec, from staging: URL, inOrder: Bool, in database: Database) throws {
        // Small caches: the index is written while the rules, then the bundle, hold theirs.
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
        try database.execute("ATTACH DATABASE \(quoteLiteral(staging.path)) AS staging")
        try database.execute("PRAGMA staging.cache_size = -4096")
        let indexed = (fullText.columns + fullText.unindexed).map(quoteIdentifier).joined(separator: ", ")
        try database.transaction {
            try database.execute(SchemaSQL.createFullText(fullText))
            try database.execute("INSERT INTO \(quoteIdentifier(fullText.name)) (\(indexed)) \(StagedRowOrder.rows(of: table, selecting: indexed, inOrder: inOrder))")
        }
        try database.execute("DETACH DATABASE staging")
    }

    /// Waits for the index of the full-text table `name`, then copies it into `database`, where the same FTS5 table
    /// was just created (empty) and no transaction is open: each shadow table's rows, in name order, replacing the
    /// few rows its creation wrote.
    /// - Throws: the index build's `SQLiteError`, or the copy's.
    func copy(_ name: String, into database: Database) throws {
        guard let index = indexes.first(where: { $0.fullText.name == name }) else {
            preconditionFailure("no full-text table \(name) was declared")
        }
        index.done.wait()
        index.done.signal()
        lock.lock()
        let failure = failures[name]
        lock.unlock()
        if let failure { throw failure }
        try database.execute("ATTACH DATABASE \(quoteLiteral(index.scratch.path)) AS kiln_fulltext")
        let prefix = name + "_"
        let shadows = try database.rows("SELECT name FROM kiln_fulltext.sqlite_schema WHERE type = 'table' AND substr(name, 1, ?) = ? ORDER BY name",
                                        [.integer(Int64(prefix.unicodeScalars.count)), .text(prefix)]).compactMap { $0.values.first?.textValue }
        try database.transaction {
            for shadow in shadows {
                try database.execute("INSERT OR REPLACE INTO main.\(quoteIdentifier(shadow)) SELECT * FROM kiln_fulltext.\(quoteIdentifier(shadow))")
            }
        }
        try database.execute("DETACH DATABASE kiln_fulltext")
        try? FileManager.default.removeItem(at: index.scratch)
    }

    /// Stops the indexing (the bundle is not needed after all, or is complete), waits for its thread and removes the
    /// scratch databases. Calling it again does nothing more.
    func discard() {
        stop.raise()
        finished.wait()
        finished.signal()
        for index in indexes {
            try? FileManager.default.removeItem(at: index.scratch)
            TemporaryFiles.shared.unregister(index.scratch)
        }
    }
}
