import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The staging indexes the rules look up through (keys, unique sets, the columns of foreign keys and those they
/// refer to), each created the first time a rule needs it rather than all before the rules run. A rule that answers
/// without one (a key whose rows the staging writer saw in order, `StagedTableFacts`) leaves staging unwritten, so the
/// bundle's thread may still be reading it meanwhile; each index is created in a write phase of its own
/// (`inWritePhase`, `StagingDatabase.write`), which waits for those reads to end.
/// Not `Sendable`: it uses the staging connection of the thread that runs the rules.
package final class LookupIndexes {
    private let database: Database
    /// Every column set worth an index, without repeats, in declaration order; an index is named after its position.
    private let sets: [(table: String, columns: [String])]
    private var created: Set<Int> = []
    /// Runs its argument, which writes `database`, in a write phase of the staging file.
    private let inWritePhase: (() throws -> Void) throws -> Void

    /// The indexes `manifest`'s tables call for, in `database` (staging); `inWritePhase` runs each creation in a
    /// write phase (waiting until no other connection reads staging).
    package init(manifest: Manifest, database: Database, inWritePhase: @escaping (() throws -> Void) throws -> Void) {
        var sets: [(table: String, columns: [String])] = []
        for table in manifest.tables {
            var wanted: [(String, [String])] = []
            if !table.primaryKey.isEmpty { wanted.append((table.name, table.primaryKey)) }
            wanted += table.unique.map { (table.name, $0) }
            wanted += table.columns.filter(\.unique).map { (table.name, [$0.name]) }
            wanted += table.allForeignKeys.map { (table.name, $0.columns) } + table.allForeignKeys.map { ($0.table, $0.referencedColumns) }
            for (name, columns) in wanted where !sets.contains(where: { $0.table == name && $0.columns == columns }) {
                sets.append((name, columns))
            }
        }
        self.database = database
        self.sets = sets
        self.inWritePhase = inWritePhase
    }

    /// Makes sure `table` has its lookup index on `columns`, if the manifest calls for one.
    /// - Throws: `SQLiteError` when the index cannot be created.
    package func index(_ table: String, _ columns: [String]) throws {
        guard let position = sets.firstIndex(where: { $0.table == table && $0.columns == columns }) else { return }
        try create(position)
    }

    /// Makes sure every lookup index exists (for the manifest's own SQL rules, which may join on any key).
    /// - Throws: `SQLiteError` when an index cannot be created.
    package func indexAll() throws {
        for position in sets.indices { try create(position) }
    }

    private func create(_ position: Int) throws {
        guard !created.contains(position) else { return }
        // Building an index is the rule's setup, not its query: it does not count against `limits.sqlSeconds`.
        try database.pausingTimeLimit {
            let set = sets[position]
            try inWritePhase {
                // A small cache and one sorter thread: the index is built beside the bundle's and the full-text
                // thread's caches, and SQLite's sorter holds the cache's size in memory for each of its threads (a
                // 1 GB travel guide's build peaked 20-30 MB higher with the staging cache and two sorter threads).
                let threads = Int(try database.rows("PRAGMA threads").first?.values.first?.number ?? 0)
                let cache = Int(try database.rows("PRAGMA main.cache_size").first?.values.first?.number ?? -2000)
                try database.execute("PRAGMA threads = 0; PRAGMA main.cache_size = -4096")
                defer { try? database.execute("PRAGMA threads = \(threads); PRAGMA main.cache_size = \(cache)") }
                try database.execute("CREATE INDEX \(quoteIdentifier("kiln_lookup_\(position + 1)")) ON \(quoteIdentifier(set.table)) (\(set.columns.map(quoteIdentifier).joined(separator: ", ")))")
            }
        }
        created.insert(position)
    }
}
