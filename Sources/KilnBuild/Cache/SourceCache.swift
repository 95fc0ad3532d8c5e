import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Per-source and per-file reuse for a build that cannot keep the whole bundle (`BuildCache`): each source's staged
/// rows and reading findings are kept in a database of its own in the build cache, with the SHA-256 of each file they
/// came from. A source whose key is unchanged takes the rows of its unchanged files from there (`INSERT … SELECT`
/// through an attached connection, in file order, so staging holds the rows a full read would have put there, in the
/// same order) and replays their findings into the build's log as the read had reported them; only its new or
/// changed files are read. A first source whose files are all unchanged is not copied at all: staging starts as a
/// copy of its entry (`stagingSeed`). Once staging is done (whether or not the build then succeeds), every source
/// not wholly reused gets a new entry (its database written to a temporary file, synced, renamed through the output
/// guard, then its record), so that a build killed at any point leaves either the old entry, no entry, or one whose
/// digest does not match (read again, reported). Staging asks it one question for each source (`StagingCache`:
/// `rows(ofSource:)`, answered with a `CachedRows`), acts on the answer, and hands back what it staged (`keep`).
///
/// The entry's database holds the source's tables as staging does, `_files` (each file's position, path and SHA-256),
/// `_ranges` (the rowids of each file's rows in each table), `_facts` (what the staging writer learned of each file's
/// rows in each table, a `StagedTableFacts.Segment` a row: copied rows continue the table's facts as read ones would)
/// and `_findings` (the findings the read reported, in order, each with its file's position and the key of a finding
/// made once per source).
/// Not `Sendable`: the build's thread uses it, then hands it over to the thread that writes the entries (`storing`).
package final class SourceCache: StagingCache {
    /// The format of the entries this Kiln writes (`CacheEntryRecord.format`); an entry of another is read again.
    package static let currentFormat = 3
    /// The entries: `<bundle folder>/.kiln-cache/<bundle file>/sources`.
    private let entries: CacheEntryFolder
    private let pipeline: CompiledPipeline
    private let examplesPerCode: Int
    /// What the cache supplies of each source, by position; a source without a plan is read in full.
    private var plans: [Int: CachedRows] = [:]
    /// What this build staged of each source, by position, for `store`.
    private var staged: [Int: StagedSource] = [:]
    /// True when an entry was found damaged: the build says so (a `build.cache` info), so its report is not one a later
    /// build keeps whole.
    package private(set) var foundDamaged = false

    package init(cache: BuildCache, pipeline: CompiledPipeline, examplesPerCode: Int) {
        entries = CacheEntryFolder("sources", of: cache, format: SourceCache.currentFormat)
        self.pipeline = pipeline
        self.examplesPerCode = examplesPerCode
    }

    /// What decides the staged rows of `table` once its sources are staged with the files `digests` gives (SHA-256 by
    /// relative path), as lines for a cache key: each source that fills it, in order, by its key, then its files by
    /// digest and path. `nil` for a query table, a table no source fills, or a file without a digest.
    package static func rowsDescription(of table: TableSpec, in pipeline: CompiledPipeline, digests: [String: String],
                                        examplesPerCode: Int) -> [String]? {
        guard table.query == nil else { return nil }
        var lines: [String] = []
        for source in pipeline.sources where source.targets.contains(where: { $0.table.name == table.name }) {
            lines.append("source \(SourceCache.key(source, manifest: pipeline.manifest, examplesPerCode: examplesPerCode))")
            for file in source.files {
                guard let digest = digests[file.relativePath] else { return nil }
                lines.append("file \(digest) \(file.relativePath)")
            }
        }
        return lines.isEmpty ? nil : lines
    }

    /// The key of `source`: everything besides its files' bytes that decides its staged rows and findings — Kiln,
    /// its executable, SQLite and ICU (`BuildCache.environment`); the source's name, format, path and options
    /// (canonical JSON); each target's kind, table and column mappings with their normalizers; the tables' columns and
    /// types; the vocabularies its normalizers name; the manifest's severities and limits; the findings kept per code.
    package static func key(_ source: CompiledSource, manifest: Manifest, examplesPerCode: Int) -> String {
        let spec = source.spec
        var lines = ["kiln source cache \(SourceCache.currentFormat)", BuildCache.environment,
                     "source \(spec.name)", "format \(spec.format)", "path \(spec.path)",
                     "options " + String(decoding: (try? KilnJSON.encode(spec.options)) ?? Data(), as: UTF8.self)]
        var vocabularies = Set<String>()
        for target in spec.targets {
            lines.append("target \(target.kind ?? "-") \(target.table)")
            for (column, mapping) in target.columns.sorted(by: { $0.key < $1.key }) {
                lines.append("column \(column) \(String(reflecting: mapping))")
                for case .terms(let vocabulary, _) in mapping.normalize { vocabularies.insert(vocabulary) }
            }
        }
        for table in SourceCache.tables(of: source, in: manifest) {
            lines.append("table \(table.name) " + table.columns.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", "))
        }
        for name in vocabularies.sorted() {
            lines.append("vocabulary \(name) " + (manifest.vocabularies[name].map { String(reflecting: $0) } ?? "-"))
        }
        lines.append("severity " + manifest.severity.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)" }.joined(separator: " "))
        lines.append("limits \(String(reflecting: manifest.limits))")
        lines.append("examples \(examplesPerCode)")
        return SHA256Digest.hex(of: Data(lines.joined(separator: "\n").utf8))
    }

    /// The tables `source` fills, each once, in the order its targets name them.
    package static func tables(of source: CompiledSource, in manifest: Manifest) -> [TableSpec] {
        var seen = Set<String>()
        return source.spec.targets.compactMap { target in
            guard seen.insert(target.table).inserted else { return nil }
            return manifest.tables.first { $0.name == target.table }
        }
    }

    /// The inputs' SHA-256, once a plan has asked for them.
    private var knownDigests: [String: String]?
    /// The sources after a first one that seeds staging, while they are not planned yet (`rows(ofSource:)`): how to
    /// ask for the inputs' SHA-256 and the log their damaged entries are reported to.
    private var laterSources: (digests: () -> [String: String]?, log: DiagnosticLog)?

    /// Plans the first source from its entry, before staging is made (`stagingSeed`), and the others too unless the
    /// first one seeds staging: those are then planned when staging first asks for one of them (`rows(ofSource:)`,
    /// once the first one is staged, before anything is read), so that the bundle's first tables start sooner.
    /// `digests` gives the inputs' SHA-256 (asked once, and only when an entry's key matches); an entry found
    /// damaged is a `build.cache` info.
    package func prepare(digests: @escaping () -> [String: String]?, log: DiagnosticLog) {
        plan(pipeline.sources.indices.prefix(1), digests: digests, log: log)
        if stagingSeed() == nil {
            plan(pipeline.sources.indices.dropFirst(), digests: digests, log: log)
        } else {
            laterSources = (digests, log)
        }
    }

    /// The rows of the source at `position` this cache supplies: the plan of its entry, if it has one (planning now
    /// the sources after a seeded first one, at the first question about one of them).
    package func rows(ofSource position: Int) -> CachedRows? {
        if position > 0, let (digests, log) = laterSources {
            laterSources = nil
            plan(pipeline.sources.indices.dropFirst(), digests: digests, log: log)
        }
        return plans[position]
    }

    /// Keeps what staging put in for the source at `position`, for its new entry (`store`).
    package func keep(_ source: StagedSource, at position: Int) {
        staged[position] = source
    }

    /// Plans the sources at `positions` from their entries.
    private func plan(_ positions: Range<Int>, digests: () -> [String: String]?, log: DiagnosticLog) {
        guard entries.hasEntries else { return }
        for position in positions {
            let source = pipeline.sources[position]
            let key = SourceCache.key(source, manifest: pipeline.manifest, examplesPerCode: examplesPerCode)
            let databaseURL: URL
            switch entries.lookup(source.spec.name, key: key) {
            case .absent: continue
            case .damaged(let file, let why):
                reportDamaged(source, file, why, log)
                continue
            case .found(let database): databaseURL = database
            }
            let known = knownDigests ?? digests() ?? [:]
            knownDigests = known
            do {
                guard let plan = try plan(source, database: databaseURL, digests: known) else { continue }
                plans[position] = plan
            } catch {
                reportDamaged(source, databaseURL, "it cannot be read (\(error))", log)
            }
        }
    }

    /// The tables of an entry that are not the source's: its files, their row ranges and facts, and the findings.
    private static let bookkeepingTables = ["_files", "_ranges", "_facts", "_findings"]

    /// The entry staging starts as a copy of, when the pipeline's first source takes every one of its files from its
    /// entry: its rows are then neither copied in row by row nor read.
    package func stagingSeed() -> StagingSeed? {
        guard let plan = plans[0], plan.whole else { return nil }
        return StagingSeed(database: plan.database, dropping: SourceCache.bookkeepingTables)
    }

    private func reportDamaged(_ source: CompiledSource, _ file: URL, _ why: String, _ log: DiagnosticLog) {
        foundDamaged = true
        log.report(.buildCache, "the build cache entry \(displayPath(file)) of source \"\(source.spec.name)\" is damaged or was edited (\(why)): "
                       + "the source's files were read again")
    }

    /// The plan of `source` from the entry `database`: runs of files whose SHA-256 (`digests`) is the one the entry
    /// holds and whose entry positions follow each other are copied; the others are read. `nil` when nothing is copied.
    private func plan(_ source: CompiledSource, database url: URL, digests: [String: String]) throws -> CachedRows? {
        let database = try Database(path: url.path, mode: .readOnly, functions: KilnSQLFunctions.all)
        defer { try? database.close() }
        var cached: [String: (position: Int, sha256: String)] = [:]
        var count = 0
        try database.forEachRow("SELECT position, path, sha256 FROM _files ORDER BY position") { row in
            guard case .integer(let position) = row.values[0], case .text(let path) = row.values[1],
                  case .text(let sha256) = row.values[2] else { throw KilnError.io("a file of the entry is not a position, path and digest") }
            cached[path] = (Int(position), sha256)
            count += 1
        }
        var runs: [CachedRows.Run] = []
        var copied: [String: String] = [:]
        for file in source.files {
            if let entry = cached[file.relativePath], let digest = digests[file.relativePath], digest == entry.sha256 {
                copied[file.relativePath] = digest
                if case .copy(let run) = runs.last, run.upperBound + 1 == entry.position {
                    runs[runs.count - 1] = .copy(run.lowerBound...entry.position)
                } else {
                    runs.append(.copy(entry.position...entry.position))
                }
            } else if case .read(let reading) = runs.last {
                runs[runs.count - 1] = .read(count: reading + 1)
            } else {
                runs.append(.read(count: 1))
            }
        }
        guard !copied.isEmpty else { return nil }
        var whole = false
        if runs.count == 1, case .copy(let run) = runs[0], run == 0...(count - 1), copied.count == source.files.count { whole = true }
        let paths = Dictionary(uniqueKeysWithValues: copied.keys.compactMap { path in cached[path].map { ($0.position, path) } })
        return CachedRows(database: url, runs: runs, digests: copied, whole: whole,
                    facts: try SourceCache.facts(in: database, positions: Set(paths.keys), tables: SourceCache.tables(of: source, in: pipeline.manifest)),
                    paths: paths)
    }

    /// The facts of the rows of each file at `positions` in the entry `database`, by table: one for each file and
    /// table `_ranges` has rows of, holding that many rows.
    /// - Throws: `KilnError.io` when one is missing or does not fit its table (the entry is damaged).
    private static func facts(in database: Database, positions: Set<Int>, tables: [TableSpec]) throws -> [Int: [String: StagedTableFacts]] {
        var facts: [Int: [String: StagedTableFacts]] = [:]
        let empty = Dictionary(tables.map { ($0.name, StagedTableFacts(table: $0)) }, uniquingKeysWith: { first, _ in first })
        try database.forEachRow("SELECT r.position, r.tbl, r.last - r.first + 1, f.rows, f.nullable, f.in_order, f.shared, f.edges FROM _ranges r "
                                + "LEFT JOIN _facts f ON f.position = r.position AND f.tbl = r.tbl ORDER BY r.position") { row in
            let values = row.values
            guard case .integer(let position) = values[0], positions.contains(Int(position)) else { return }
            let inOrder: Bool?? = switch values[5] { case .null: .some(nil); case .integer(let flag) where flag == 0 || flag == 1: .some(flag == 1); default: nil }
            guard case .text(let name) = values[1], let none = empty[name], case .integer(let rows) = values[2], values[3] == .integer(rows),
                  case .text(let nullable) = values[4], let inOrder, case .integer(let shared) = values[6], case .text(let edges) = values[7],
                  let known = none.restoring(StagedTableFacts.Segment(rows: Int(rows), nullable: nullable, inOrder: inOrder,
                                                                      longestSharedPrefix: Int(shared), edges: edges)) else {
                throw KilnError.io("the facts of a file's rows are missing or do not fit its table")
            }
            facts[Int(position), default: [:]][name] = known
        }
        return facts
    }

    /// Writes the facts of each file's rows in each table (`files`, by path) into the entry `database`'s `_facts`, each
    /// at its file's position: one for each file and table `_ranges` has rows of.
    /// - Throws: `KilnError.io` when one is missing (the entry would not be trusted).
    private static func writeFacts(_ files: [String: [String: StagedTableFacts]], positions: [String: Int], in database: Database) throws {
        let addFacts = try database.prepare("INSERT INTO _facts (position, tbl, rows, nullable, in_order, shared, edges) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for (path, tables) in files {
            guard let position = positions[path] else { continue }
            for (name, facts) in tables {
                let segment = facts.segment
                try addFacts.run([.integer(Int64(position)), .text(name), .integer(Int64(segment.rows)), .text(segment.nullable),
                                  segment.inOrder.map { .integer($0 ? 1 : 0) } ?? .null, .integer(Int64(segment.longestSharedPrefix)), .text(segment.edges)])
            }
        }
        let missing = try database.rows("SELECT count(*) FROM _ranges r WHERE NOT EXISTS (SELECT 1 FROM _facts f WHERE f.position = r.position AND f.tbl = r.tbl)")
        guard missing.first?.values.first == .integer(0) else { throw KilnError.io("the facts of some file's rows are missing") }
    }

    /// The rowids of the rows of each file (by its position in `positions`, by path) in the table `name` of the entry
    /// `database`, read in one pass in rowid order: `nil` unless every row names one of the files, rowids follow each
    /// other without a gap, and each file's rows form one run.
    package static func fileRanges(of name: String, positions: [String: Int], in database: Database) throws -> [(position: Int, first: Int64, last: Int64)]? {
        var ranges: [(position: Int, first: Int64, last: Int64)] = []
        var seen: Set<Int> = [], current: String?, grouped = true
        try database.forEachRow("SELECT rowid, _file FROM main.\(quoteIdentifier(name)) ORDER BY rowid") { row in
            guard grouped, let rowid = row.values[0].storedInteger, let file = row.values[1].storedText else {
                grouped = false
                return
            }
            if let last = ranges.last, file == current {
                guard rowid == last.last + 1 else { grouped = false; return }
                ranges[ranges.count - 1].last = rowid
                return
            }
            guard let position = positions[file], seen.insert(position).inserted,
                  ranges.last.map({ rowid == $0.last + 1 }) ?? true else {
                grouped = false
                return
            }
            current = file
            ranges.append((position, rowid, rowid))
        }
        return grouped ? ranges : nil
    }

    /// The declared columns of `table` and its provenance columns, quoted, for an `INSERT … SELECT`.
    fileprivate static func columnList(_ table: TableSpec) -> String {
        (table.columns.map { quoteIdentifier($0.name) } + ["_file", "_line"]).joined(separator: ", ")
    }

    /// The sources of this build whose rows were copied from the cache, with how many of their files were.
    package var reused: [(source: String, files: Int, of: Int)] {
        pipeline.sources.enumerated().compactMap { position, source in
            plans[position].map { (source.spec.name, $0.digests.count, source.files.count) }
        }
    }

    /// Starts `store` on a thread of its own (`kiln cache entries`), so that the build checks its rules and finishes
    /// its bundle meanwhile. `cache` is handed over (docs/CONCURRENCY.md): the caller does not touch it again, and
    /// waits for the thread before the staging file `staging` owns is removed.
    package static func storing(_ cache: SourceCache, staging: StagingDatabase, inputs: [String: String]) -> BackgroundThread<Void> {
        let handoff = Handoff(cache)
        return BackgroundThread(name: "kiln cache entries") {
            // The bundle's thread and the builder's are the build's longest path; the entries are waited for only
            // at its end, so this thread steps back for them (`ThreadPriority`).
            ThreadPriority.stepBack()
            handoff.value.store(staging: staging, inputs: inputs)
        }
    }

    /// Writes a new entry for every source this build staged but did not copy whole from its entry, from the staging
    /// file `staging` owns (rows) and `inputs` (each file's SHA-256). A source that cannot be stored is left without an
    /// entry (its next build reads it). Called once every source is staged (their rows do not change any more): each
    /// entry reads staging under a read lease (`StagingDatabase.lease`), so that a write phase (a rule's lookup index)
    /// waits for the copy and the copy for the phase.
    package func store(staging: StagingDatabase, inputs: [String: String]) {
        guard entries.usable else { return }
        for (position, source) in pipeline.sources.enumerated() {
            guard let staged = staged[position], plans[position]?.whole != true else { continue }
            entries.store(source.spec.name, key: SourceCache.key(source, manifest: pipeline.manifest, examplesPerCode: examplesPerCode)) { database in
                try write(source, staged, staging: staging, inputs: inputs, to: database)
            }
        }
    }

    /// Writes the entry database of `source` to `destination` through a temporary file, synced and renamed.
    private func write(_ source: CompiledSource, _ staged: StagedSource, staging: StagingDatabase, inputs: [String: String], to destination: URL) throws {
        try FileSync.write(destination) { temporary in
            try write(source, staged, staging: staging, inputs: inputs, into: temporary)
        }
    }

    /// Writes the entry database of `source` as the new file `temporary`.
    private func write(_ source: CompiledSource, _ staged: StagedSource, staging: StagingDatabase, inputs: [String: String], into temporary: URL) throws {
        let tables = SourceCache.tables(of: source, in: pipeline.manifest)
        let database = try Database(path: temporary.path, functions: KilnSQLFunctions.all, readOnlyAttachments: true)
        do {
            try database.execute("PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            try SchemaSQL.createStagingTables(tables, in: database)
            try database.execute("""
                CREATE TABLE _files (position INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, sha256 TEXT NOT NULL);
                CREATE TABLE _ranges (position INTEGER NOT NULL, tbl TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL);
                CREATE TABLE _facts (position INTEGER NOT NULL, tbl TEXT NOT NULL, rows INTEGER NOT NULL, nullable TEXT NOT NULL, in_order INTEGER,
                                     shared INTEGER NOT NULL, edges TEXT NOT NULL, PRIMARY KEY (position, tbl));
                CREATE TABLE _findings (seq INTEGER PRIMARY KEY, position INTEGER NOT NULL, code TEXT NOT NULL, severity TEXT NOT NULL,
                                        message TEXT NOT NULL, file TEXT, line INTEGER, col INTEGER, once TEXT)
                """)
            let lease = staging.lease()
            try lease.attach(to: database, as: "staging")
            try database.execute("BEGIN")
            let addFile = try database.prepare("INSERT INTO _files (position, path, sha256) VALUES (?, ?, ?)")
            var positions: [String: Int] = [:]
            for (position, file) in source.files.enumerated() {
                guard let digest = inputs[file.relativePath] else { throw KilnError.io("no digest for \(file.relativePath)") }
                try addFile.run([.integer(Int64(position)), .text(file.relativePath), .text(digest)])
                positions[file.relativePath] = position
            }
            for table in tables {
                let name = quoteIdentifier(table.name), columns = SourceCache.columnList(table)
                let before = staged.before[table.name] ?? 0, after = staged.after[table.name] ?? 0
                // A table this source filled alone, from its first row, has rowids 1…n in staging as in the entry: SQLite
                // then copies the stored rows as they are (its transfer optimization), without decoding them.
                let whole = try before == 0 && database.rows("SELECT count(*) = ?1 AND coalesce(max(rowid), 0) = ?1 FROM staging.\(name)",
                                                             [.integer(after)]).first?.values.first?.number == 1
                if whole {
                    try database.execute("INSERT INTO main.\(name) SELECT * FROM staging.\(name)")
                } else {
                    let copy = try database.prepare("INSERT INTO main.\(name) (\(columns)) SELECT \(columns) FROM staging.\(name) "
                                                    + "WHERE rowid > ? AND rowid <= ? ORDER BY rowid")
                    try copy.run([.integer(before), .integer(after)])
                }
                // Every row belongs to one file, and each file's rows follow each other: else a copy would lose or mix rows.
                guard let ranges = try SourceCache.fileRanges(of: table.name, positions: positions, in: database) else {
                    throw KilnError.io("the rows of \(table.name) are not grouped by file")
                }
                let addRange = try database.prepare("INSERT INTO _ranges (position, tbl, first, last) VALUES (?, ?, ?, ?)")
                for range in ranges.sorted(by: { $0.position < $1.position }) {
                    try addRange.run([.integer(Int64(range.position)), .text(table.name), .integer(range.first), .integer(range.last)])
                }
            }
            try SourceCache.writeFacts(staged.files, positions: positions, in: database)
            let addFinding = try database.prepare("INSERT INTO _findings (position, code, severity, message, file, line, col, once) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            for finding in staged.findings {
                // A finding made before the first file (none is) could not be replayed in its place.
                guard let file = finding.file, let position = positions[file] else { throw KilnError.io("a finding outside the source's files") }
                let diagnostic = finding.diagnostic, place = diagnostic.provenance
                try addFinding.run([.integer(Int64(position)), .text(diagnostic.code), .text(diagnostic.severity.rawValue), .text(diagnostic.message),
                                    place.map { .text($0.file) } ?? .null, place?.line.map { .integer(Int64($0)) } ?? .null,
                                    place?.column.map { .integer(Int64($0)) } ?? .null, finding.once.map { .text($0) } ?? .null])
            }
            try database.execute("COMMIT")
            try lease.release(detaching: "staging", from: database)
            try database.close()
        } catch {
            try? database.close()
            throw error
        }
    }
}

/// Where one source's rows come from, as the build cache answers staging (`StagingCache.rows(ofSource:)`): its files
/// in order, as runs of files to read and runs of its entry's files whose rows and findings are copied from there.
package struct CachedRows {
    /// A run of the source's files.
    package enum Run {
        /// Read the next `count` files to read.
        case read(count: Int)
        /// Copy the rows and findings of the entry's files at these positions.
        case copy(ClosedRange<Int>)
    }
    /// The entry's database.
    package let database: URL
    /// The source's files in order, as runs.
    package let runs: [Run]
    /// The SHA-256 of each file whose rows are copied.
    package let digests: [String: String]
    /// True when every file is copied, in the entry's order: the entry stays as it is, and staging may start as a copy
    /// of it (`SourceCache.stagingSeed`).
    package let whole: Bool
    /// The facts of the rows of each copied file (by entry position), by table name (the tables it has rows of).
    package let facts: [Int: [String: StagedTableFacts]]
    /// The path of each copied file, by entry position.
    package let paths: [Int: String]

    /// Copies the rows of the entry's files at positions `run` into `staging`'s tables `tables` (the source's), in
    /// order, in a write phase of its owner, and replays their findings into `log` (noted in `findings` with their
    /// files); only the findings when staging started as a copy of this entry (`rowsThere`). `copier` keeps the
    /// connection that copies, for the next run (the caller closes it).
    /// - Throws: `SQLiteError` when the entry cannot be read or its rows copied.
    package func copy(_ run: ClosedRange<Int>, into staging: StagingDatabase, tables: [TableSpec], rowsThere: Bool,
                      copier: inout Database?, log: DiagnosticLog, findings: StagedFindings) throws {
        if rowsThere {
            // The rows are there already; the findings come from the entry itself.
            let entry = try Database(path: database.path, mode: .readOnly, functions: KilnSQLFunctions.all)
            defer { try? entry.close() }
            try replayFindings(run, of: "main", with: entry, log: log, findings: findings)
            return
        }
        // A write phase of the staging file's owner: no lease is out, so this connection writes alone.
        var connection = copier
        defer { copier = connection }
        try staging.write { _ in
            let attached = try connection ?? attach(toStaging: staging.url)
            connection = attached
            try copyRows(run, tables: tables, with: attached)
            try replayFindings(run, of: "kiln_cache", with: attached, log: log, findings: findings)
        }
    }

    /// The facts of the rows of the entry's files at positions `run`: by table, file after file (they continue the
    /// tables' facts), and by the path of each file.
    package func facts(of run: ClosedRange<Int>) -> (tables: [String: StagedTableFacts], files: [String: [String: StagedTableFacts]]) {
        var tables: [String: StagedTableFacts] = [:]
        var files: [String: [String: StagedTableFacts]] = [:]
        for position in run {
            for (name, facts) in facts[position] ?? [:] {
                tables[name] = tables[name].map { $0.appending(facts) } ?? facts
            }
            if let path = paths[position] { files[path] = facts[position] ?? [:] }
        }
        return (tables, files)
    }

    /// A connection of its own to the staging file at `stagingURL` with the entry attached as `kiln_cache`; used only
    /// inside a write phase of the staging file's owner (`StagingDatabase.write`), when no lease is out.
    private func attach(toStaging stagingURL: URL) throws -> Database {
        let connection = try Database(path: stagingURL.path, mode: .readWrite, functions: KilnSQLFunctions.all)
        try connection.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        _ = try connection.rows("ATTACH DATABASE ? AS kiln_cache", [.text(database.path)])
        return connection
    }

    /// Copies the rows of the entry's files at positions `run` into staging, in order.
    private func copyRows(_ run: ClosedRange<Int>, tables: [TableSpec], with connection: Database) throws {
        let bounds = CachedRows.bounds(run)
        try connection.execute("BEGIN")
        do {
            let ranges = try connection.rows("SELECT tbl, min(first), max(last) FROM kiln_cache._ranges WHERE position BETWEEN ? AND ? GROUP BY tbl", bounds)
            for range in ranges {
                guard case .text(let name) = range.values[0], let table = tables.first(where: { $0.name == name }) else { continue }
                let columns = SourceCache.columnList(table)
                let insert = try connection.prepare("INSERT INTO main.\(quoteIdentifier(name)) (\(columns)) SELECT \(columns) "
                                                    + "FROM kiln_cache.\(quoteIdentifier(name)) WHERE rowid BETWEEN ? AND ? ORDER BY rowid")
                try insert.run([range.values[1], range.values[2]])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The entry positions of `run`, as the bounds of a `BETWEEN`.
    private static func bounds(_ run: ClosedRange<Int>) -> [SQLValue] {
        [.integer(Int64(run.lowerBound)), .integer(Int64(run.upperBound))]
    }

    /// Replays into the build's log the findings of the entry's files at positions `run`, as their read reported
    /// them, from the entry's tables in `schema` of `connection`.
    private func replayFindings(_ run: ClosedRange<Int>, of schema: String, with connection: Database, log: DiagnosticLog,
                                findings: StagedFindings) throws {
        try connection.forEachRow("""
            SELECT f.path, g.code, g.severity, g.message, g.file, g.line, g.col, g.once
            FROM \(schema)._findings g JOIN \(schema)._files f ON f.position = g.position
            WHERE g.position BETWEEN ? AND ? ORDER BY g.seq
            """, CachedRows.bounds(run)) { row in
            let values = row.values
            findings.file = values[0].storedText
            var finding = Diagnostic(code: values[1].storedText ?? "", severity: Severity(rawValue: values[2].storedText ?? "") ?? .info, message: values[3].storedText ?? "")
            if let file = values[4].storedText {
                finding.provenance = Provenance(file: file, line: values[5].storedInteger.map(Int.init), column: values[6].storedInteger.map(Int.init))
            }
            if let once = values[7].storedText { log.report(finding, once: once) } else { log.report(finding) }
        }
    }
}

private extension SQLValue {
    /// The text stored, or `nil` for any other value.
    var storedText: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The integer stored, or `nil` for any other value.
    var storedInteger: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
