import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Writes the shipped bundle from the staging area: the declared schema with its constraints, rows in key order,
/// indexes, FTS5 tables (indexed on threads of their own, `FullTextBuild`), the `kiln_metadata` table and `PRAGMA user_version`; then VACUUM when pages were left free, fsync and an atomic rename.
/// Nothing in it depends on time or on hash order, so the same inputs give the same bytes.
package struct BundleWriter {
    package let manifest: Manifest
    /// Kiln's version, recorded in the metadata.
    package static let kilnVersion = KilnVersion.current

    /// The metadata table's name.
    package static let metadataTable = "kiln_metadata"

    /// Starts writing the shipped tables (schema, rows in the bundle's order, indexes, spatial indexes, FTS5 tables)
    /// into a new temporary file beside `destination`, on a thread of their own: each table once it is staged
    /// (`BundleTables.staged`, `allStaged`) and those before it are written, so that a table filled by the first
    /// sources is written while later ones are read, and the rest while the rules are checked; staging is only read,
    /// each table under a read lease of its own (`StagingDatabase.lease`), so that staging's write phases come between.
    /// Tables are written in declaration order whatever the order they are staged in, so the bytes do not depend on
    /// timing. The full-text indexes (`fullTextBuild`, started for every full-text table) are copied in after the
    /// last table, as each is ready; then the bundle is completed (`complete`: nothing in it depends on the rules),
    /// and the bundles of the manifest's targets written from it (`TargetBundles`), while the rules are checked and
    /// the bundle measured. `finish` hands the bundle over; `BundleTables.discard` drops it.
    package func startTables(from staging: StagingDatabase, to destination: URL, fullTextBuild: FullTextBuild) -> BundleTables {
        let temporary = KilnFileNames.temporary(for: destination)
        let tables = BundleTables(temporary: temporary, destination: destination)
        let manifest = manifest
        tables.start {
            let folder = destination.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw KilnError.io(.foundation("cannot create the output folder \(folder.path)", path: folder.path, operation: .create, error))
            }
            try? FileManager.default.removeItem(at: temporary)
            TemporaryFiles.shared.register(temporary)
            let writer = BundleWriter(manifest: manifest)
            let (database, counts) = try writer.fillTables(staging: staging, as: tables)
            // What the tables' sorts and caches freed goes back to the system while the rules run.
            ProcessHeap.releaseFreeMemory()
            try writer.copyFullTextIndexes(database, from: fullTextBuild)
            let staged = try tables.waitUntilAllStaged()
            try writer.complete(database, counts: counts, inputs: staged.inputs, metadata: staged.metadata)
            FileSync.startWriteback(temporary)
            return (database, counts)
        } then: {
            try TargetBundles.write(from: temporary, destination: destination, manifest: manifest, fullTextBuild: fullTextBuild, stop: tables.stop)
        }
        return tables
    }

    /// Takes the bundle `tables` completed (metadata, schema version, foreign keys checked), once the rules passed
    /// (`fullTextBuild` is discarded when this throws; otherwise the caller discards it, once the build cache has kept
    /// what it built, `FullTextCache`), and leaves it in its temporary file, for the caller to inspect, then commit or
    /// discard. Returns the row count of each shipped table, in declaration order, with the pending bundle.
    /// - Throws: `KilnError.io` when the folder cannot be written (nothing is left behind),
    ///   `KilnError.validation` when rows break the declared schema (a rule was turned down to a warning);
    ///   the temporary file is removed when it throws.
    package func finish(_ tables: BundleTables, fullTextBuild: FullTextBuild) throws -> PendingBundle {
        do {
            let (database, counts) = try tables.wait()
            try database.close()
            tables.handOver()
            return PendingBundle(temporary: tables.temporary, destination: tables.destination, counts: counts)
        } catch {
            fullTextBuild.discard()
            tables.discard()
            guard let error = error as? SQLiteError else { throw error }
            if error.isOutOfResources { throw KilnError.io(TemporaryFolder.storageFailure(error, writing: tables.destination.path,
                                                                                            in: tables.destination.deletingLastPathComponent())) }
            throw KilnError.validation("the bundle cannot be written: \(error.message)")
        }
    }

    /// The page cache (KiB) of the bundle's connection, and the larger one while an R*Tree is filled.
    static let cacheKiB = 8192, spatialCacheKiB = 65536

    /// Opens the bundle's file at `url` for writing its tables; the page size, encoding and the rest apply to a new file.
    private static func open(_ url: URL) throws -> Database {
        let database = try Database(path: url.path, functions: KilnSQLFunctions.all, readOnlyAttachments: true)
        try database.execute("""
            PRAGMA page_size = 4096; PRAGMA auto_vacuum = NONE; PRAGMA encoding = 'UTF-8';
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -\(BundleWriter.cacheKiB); PRAGMA threads = 2
            """)
        return database
    }

    /// Writes every shipped table into `tables.temporary`, in declaration order, each once `tables` says it is
    /// staged, reading it from `staging` under a lease returned as soon as the table is written; returns the open
    /// database and each table's row count. Where `tables` names a file kept after a table (`TablePrefix`), the
    /// bundle starts again from a copy of it instead: each transaction leaves the whole bundle in the file (no
    /// journal, nothing cached that is not written), so a copy taken after a table and written on from there gives
    /// the bytes of a bundle written in one go.
    private func fillTables(staging: StagingDatabase, as tables: BundleTables) throws -> (Database, [(String, Int)]) {
        var database = try BundleWriter.open(tables.temporary)
        let shipped = manifest.tables.filter(\.ship)
        var counts: [(String, Int)] = []
        // A transaction per table; the full-text indexes, built meanwhile on their own thread, are copied in after
        // the last table (between transactions: ATTACH cannot run inside one), so that no table waits for them.
        for (position, table) in shipped.enumerated() {
            let (inOrder, copy, prefix) = try tables.waitUntilStaged(table.name)
            BuildMeter.shared.writing(table: table.name)
            defer { BuildMeter.shared.wroteTable() }
            if let kept = prefix?.kept {
                try database.close()
                try BundleWriter.replace(tables.temporary, with: kept)
                database = try BundleWriter.open(tables.temporary)
                counts = try shipped[...position].map { ($0.name, try BundleWriter.rowCount(of: $0.name, in: database)) }
                FileSync.startWriteback(tables.temporary)
                continue
            }
            // The rows are read from staging under a lease, or from the file that holds them besides, which nothing writes.
            let lease = copy == nil ? staging.lease() : nil
            if let copy { try database.attachReadOnly(copy.path, as: "staging") } else { try lease?.attach(to: database, as: "staging") }
            // The staging tables are read once, in rowid order or through SQLite's sorter (which may use a second
            // core): a small page cache will do, while the rules hold theirs.
            try database.execute("PRAGMA staging.cache_size = -4096")
            try database.stopping(when: tables.stop) {
                guard !inOrder, !table.primaryKey.isEmpty else {
                    counts.append((table.name, try write(table, arrangement: inOrder ? .inOrder : .sorted, into: database)))
                    return
                }
                // Sorted on its key alone when no two rows share it: the bundle's key then refuses none, and the rows
                // come in the order the full sort gives. A rollback journal in memory (it holds only the pages the
                // table's transaction changed, not those it appended) lets a refused row undo the table, which is then
                // sorted on every column, duplicates dropped. The bytes are those of a bundle written without a journal.
                try database.execute("PRAGMA main.journal_mode = MEMORY")
                do {
                    counts.append((table.name, try write(table, arrangement: .uniqueKey, into: database)))
                    tables.keyFound(table.name, unique: true)
                } catch let error as SQLiteError where error.isConstraintViolation {
                    tables.keyFound(table.name, unique: false)
                    counts.append((table.name, try write(table, arrangement: .sorted, into: database)))
                }
                try database.execute("PRAGMA main.journal_mode = OFF")
            }
            if let lease { try lease.release(detaching: "staging", from: database) } else { try database.execute("DETACH DATABASE staging") }
            prefix?.keep?(tables.temporary)
            // The disk writes the table while the next ones are written: the bundle's fsync waits for less.
            FileSync.startWriteback(tables.temporary)
            // The next table may wait for later sources: its pages need not be cached meanwhile.
            try database.execute("PRAGMA shrink_memory")
        }
        return (database, counts)
    }

    /// Writes `table` in one transaction: its schema, its rows from the attached `staging` as `arrangement` says, its
    /// indexes, its FTS5 table (left empty: `FullTextBuild` indexes it) and its R*Tree. Returns its row count.
    private func write(_ table: TableSpec, arrangement: StagedRowOrder.Arrangement, into database: Database) throws -> Int {
        try database.transaction {
            try database.execute(SchemaSQL.createTable(table))
            let columns = table.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
            try database.execute("INSERT INTO main.\(quoteIdentifier(table.name)) (\(columns)) \(StagedRowOrder.rows(of: table, selecting: columns, arrangement: arrangement))")
            for statement in SchemaSQL.createIndexes(table) { try database.execute(statement) }
            if let fullText = table.fullText {
                // The index itself comes from `FullTextBuild` after the last table; its text is this table's.
                try database.execute(SchemaSQL.createFullText(fullText, content: table.name))
            }
            if let spatial = table.spatial {
                try database.execute(SchemaSQL.createSpatial(spatial))
                // An R*Tree insert reads nodes all over the tree: with the tree larger than the page cache
                // each one is read again from the file (1.5 M listings: 60 MB of nodes, half the bundle's
                // writing). A larger cache for this statement only; the bytes do not depend on it.
                try database.execute("PRAGMA main.cache_size = -\(BundleWriter.spatialCacheKiB)")
                try database.execute(SchemaSQL.fillSpatial(spatial, of: table))
                try database.execute("PRAGMA main.cache_size = -\(BundleWriter.cacheKiB)")
            }
            return try BundleWriter.rowCount(of: table.name, in: database)
        }
    }

    private static func rowCount(of table: String, in database: Database) throws -> Int {
        Int(try database.rows("SELECT count(*) FROM main.\(quoteIdentifier(table))").first?.values.first?.number ?? 0)
    }

    /// Puts a copy of `kept` where the bundle's file is.
    /// - Throws: `KilnError.io` when it cannot be copied.
    private static func replace(_ file: URL, with kept: URL) throws {
        do {
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.copyItem(at: kept, to: file)
        } catch {
            throw KilnError.io(.foundation("cannot copy the kept tables \(kept.path) into the bundle \(file.path)", path: file.path, operation: .copy, error))
        }
    }

    /// Copies each shipped table's full-text index into the bundle, in declaration order, waiting for it to be built.
    private func copyFullTextIndexes(_ database: Database, from fullTextBuild: FullTextBuild) throws {
        for table in manifest.tables where table.ship {
            if let fullText = table.fullText { try fullTextBuild.copy(fullText.name, into: database) }
        }
    }

    private func complete(_ database: Database, counts: [(String, Int)], inputs: [String: String], metadata: [String: String]) throws {
        try database.transaction { try writeMetadata(database, counts: counts, inputs: inputs, further: metadata) }
        try database.execute("PRAGMA user_version = \(manifest.schemaVersion)")
        let broken = try database.rows("PRAGMA foreign_key_check")
        if let first = broken.first {
            throw SQLiteError(code: 19, message: "\(broken.count) rows break a foreign key (first in table \(first.values.first?.textValue ?? "?")); a foreign-key rule may have been turned down to a warning", sql: nil)
        }
        // Rows, indexes and metadata were written once each, in order, into a fresh file: its bytes are already
        // deterministic. Only pages left free (full-text merges drop segments) are worth a VACUUM.
        if try database.rows("PRAGMA freelist_count").first?.values.first?.number ?? 0 > 0 {
            try database.execute("VACUUM")
        }
    }

    private func writeMetadata(_ database: Database, counts: [(String, Int)], inputs: [String: String], further: [String: String]) throws {
        try database.execute("CREATE TABLE \(BundleWriter.metadataTable) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        var entries: [(String, String)] = [
            ("bundle.name", manifest.bundle),
            ("bundle.schema_version", String(manifest.schemaVersion)),
            ("kiln.version", BundleWriter.kilnVersion),
        ]
        entries += inputs.map { ("input.\($0.key).sha256", $0.value) }
        entries += counts.map { ("rows.\($0.0)", String($0.1)) }
        // What kiln fetch captured of each fetching source: its URLs and the newest capture (never the verification
        // time, so that a refresh that found nothing new builds the same bytes).
        for (source, captured) in manifest.captured {
            entries += [("source.\(source).urls", String(captured.urls)), ("source.\(source).captured", captured.newestCapture)]
        }
        entries += further.map { ($0.key, $0.value) }
        let insert = try database.prepare("INSERT INTO \(BundleWriter.metadataTable) (key, value) VALUES (?, ?)")
        for (key, value) in entries.sorted(by: { $0.0 < $1.0 }) { try insert.run([.text(key), .text(value)]) }
    }
}

/// A finished bundle in a temporary file beside its destination, not yet in place.
package struct PendingBundle: Sendable {
    /// The complete bundle, closed.
    package let temporary: URL
    /// Where `commit()` puts it.
    package let destination: URL
    /// The row count of each shipped table, in declaration order.
    package let counts: [(table: String, rows: Int)]
    /// The bundle's fsync, started as soon as it is complete: the report is written meanwhile.
    private let sync: BackgroundSync

    package init(temporary: URL, destination: URL, counts: [(table: String, rows: Int)]) {
        self.temporary = temporary
        self.destination = destination
        self.counts = counts
        sync = BackgroundSync(temporary)
    }

    /// Waits for the bundle's sync and renames it over the destination in one step, after settling the SQLite files
    /// beside the old one (`BundleSideFiles`); then reads it back.
    /// - Throws: `KilnError.io` when another process holds the old bundle, or syncing, renaming or reading back fails.
    package func commit() throws {
        try BundleSideFiles.settle(beside: destination)
        try sync.wait()
        try FileSync.move(temporary, to: destination)
        try BundleSideFiles.verify(destination)
    }

    /// Removes the temporary file, if it is still there.
    package func discard() {
        try? FileManager.default.removeItem(at: temporary)
        TemporaryFiles.shared.unregister(temporary)
    }
}
