import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A database staging may start as a copy of: the build cache's entry of the pipeline's first source, when every one
/// of its files is unchanged (`SourceCache.stagingSeed`). It holds that source's tables as staging does, with its rows,
/// and the tables named in `dropping`, which are not staging's.
package struct StagingSeed {
    package let database: URL
    package let dropping: [String]
}

/// The staging database: every declared table, without constraints so that every bad row can be reported, plus the
/// provenance columns `_file` and `_line`. Records stream into it; rules are SQL over it. The file and its
/// connections belong to `file` (`StagingDatabase`): each load and each query table is written in a write phase.
/// Not `Sendable`: its thread is the staging file's owner.
package final class StagingArea {
    /// The staging file's owner, which hands out its write phases and read leases.
    package let file: StagingDatabase
    /// The owner's connection, for reads between write phases (`StagingDatabase.database`).
    package var database: Database { file.database }
    private let pipeline: CompiledPipeline
    /// The build cache staging asks where each source's rows come from (`StagingCache`); `nil` to read every file.
    private let cache: StagingCache?
    /// The threads staging may use (`BuildOptions.threads`); every input is read under them.
    private let threads: ThreadSettings
    /// Digests already computed: several sources may read the same file.
    private var digestCache: [String: String] = [:]
    /// Each source's position in the pipeline, by name: looking it up by a scan made 4 000 sources quadratic.
    private lazy var sourceIndexes = Dictionary(pipeline.sources.enumerated().map { ($1.spec.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// Creates the staging tables in a new database at `url`. With a `seed` (`StagingSeed`), the database starts as a
    /// copy of its file, already holding the first source's rows; its other tables are dropped and the manifest's
    /// tables it lacks are created. A seed that cannot be copied is not used (`seeded`). With a `cache`, each source's
    /// rows come from where it answers (`stage`).
    /// - Throws: `SQLiteError` when the file cannot be created.
    package init(url: URL, pipeline: CompiledPipeline, seed: StagingSeed? = nil, cache: StagingCache? = nil,
                 threads: ThreadSettings = ThreadSettings()) throws {
        file = try StagingDatabase(url: url, seed: seed?.database)
        self.pipeline = pipeline
        self.cache = cache
        self.threads = threads
        let seeded = file.seeded
        try file.write { database in
            var present = Set<String>()
            if seeded, let seed {
                for table in seed.dropping { try database.execute("DROP TABLE \(quoteIdentifier(table))") }
                try database.forEachRow("SELECT name FROM sqlite_schema WHERE type = 'table'") { row in
                    if case .text(let name) = row.values[0] { present.insert(name) }
                }
            }
            try SchemaSQL.createStagingTables(pipeline.manifest.tables.filter { !present.contains($0.name) }, in: database)
        }
    }

    /// True when staging started as a copy of its seed, holding the first source's rows.
    package var seeded: Bool { file.seeded }

    /// The build cache entry staging started as a copy of (`StagingSeed`), holding the first source's rows; `nil` when
    /// it did not. A bundle table only the first source fills may be read from there (`BundleTables.staged(_:inOrder:copy:)`).
    package var seededEntry: URL? {
        guard seeded, let rows = cachedRows(of: 0), rows.whole else { return nil }
        return rows.database
    }

    /// What the staging writers learned of the rows of each table sources filled (`StagedTableFacts`).
    private var recordedFacts: [String: StagedTableFacts] = [:]

    /// What the staging writers learned of `table`'s rows, once its sources are staged; `nil` for a query table,
    /// whose rows SQL wrote.
    package func facts(of table: TableSpec) -> StagedTableFacts? {
        guard table.query == nil else { return nil }
        return recordedFacts[table.name] ?? StagedTableFacts(table: table)
    }

    /// The build cache's answer for each source (by position) once asked (`cachedRows(of:)`).
    private var answers: [Int: CachedRows?] = [:]
    /// How many of each source's files to read have been loaded, by position (`load(_:log:next:)`).
    private var filesLoaded: [Int: Int] = [:]
    /// The findings of the source being staged, with their files, while a build cache keeps them (`stage`).
    private var stagedFindings: StagedFindings?
    /// The facts of each file loaded since `stage` last took them, in order, while a build cache keeps them.
    private var loadedFileFacts: [(path: String, tables: [String: StagedTableFacts])] = []

    /// What the build cache supplies of the source at `position` (`StagingCache.rows(ofSource:)`), asked once: those
    /// files are neither read nor read ahead, and their SHA-256 are known from then on.
    package func cachedRows(of position: Int) -> CachedRows? {
        if let answer = answers[position] { return answer }
        let answer = cache?.rows(ofSource: position)
        answers[position] = answer
        if let answer { digestCache.merge(answer.digests) { first, _ in first } }
        return answer
    }

    /// Stages `source`: asks the build cache where its rows come from, then, in file order, reads the files it does
    /// not supply (`load`) and copies in the rows and findings of those it does (`CachedRows.copy`). Returns each
    /// file's SHA-256 and, with a cache, what the source's next entry is written from.
    /// - Throws: as `load`; `SQLiteError` when an entry's rows cannot be copied.
    package func stage(_ source: CompiledSource, log: DiagnosticLog) throws -> StagedSource {
        guard cache != nil else { return StagedSource(digests: try load(source, log: log)) }
        let position = sourceIndex(source)
        let tables = SourceCache.tables(of: source, in: pipeline.manifest)
        let rowsThere = position == 0 && seededEntry != nil
        var staged = StagedSource()
        // A seeded source's rows were in staging from the start: they begin after rowid 0.
        staged.before = rowsThere ? Dictionary(uniqueKeysWithValues: tables.map { ($0.name, Int64(0)) }) : try lastRowids(tables)
        let findings = StagedFindings()
        stagedFindings = findings
        log.observer = { findings.add($0, once: $1) }
        defer {
            log.observer = nil
            stagedFindings = nil
        }
        func takeFileFacts() {
            for (path, facts) in loadedFileFacts { staged.files[path] = facts }
            loadedFileFacts = []
        }
        if let rows = cachedRows(of: position) {
            var copier: Database?
            defer { try? copier?.close() }
            for run in rows.runs {
                switch run {
                case .read(let count):
                    staged.digests.merge(try load(source, log: log, next: count)) { first, _ in first }
                    takeFileFacts()
                case .copy(let entryRun):
                    try rows.copy(entryRun, into: file, tables: tables, rowsThere: rowsThere, copier: &copier, log: log, findings: findings)
                    let copied = rows.facts(of: entryRun)
                    rowsCopied(copied.tables, into: tables)
                    staged.files.merge(copied.files) { $1 }
                }
            }
            staged.digests.merge(rows.digests) { first, _ in first }
        } else {
            staged.digests = try load(source, log: log)
            takeFileFacts()
        }
        staged.after = try lastRowids(tables)
        staged.findings = findings.findings
        return staged
    }

    /// The largest rowid of each of `tables` (0 when empty).
    private func lastRowids(_ tables: [TableSpec]) throws -> [String: Int64] {
        var last: [String: Int64] = [:]
        for table in tables {
            let row = try database.rows("SELECT coalesce(max(rowid), 0) FROM \(quoteIdentifier(table.name))").first
            if case .integer(let rowid) = row?.values.first { last[table.name] = rowid } else { last[table.name] = 0 }
        }
        return last
    }

    /// Notes that rows were copied in without the staging writer seeing them, with the facts of those rows by table
    /// (`tables` names the tables): they continue each table's facts as if the writer had inserted them.
    private func rowsCopied(_ facts: [String: StagedTableFacts], into tables: [TableSpec]) {
        for table in tables {
            guard let copied = facts[table.name] else { continue }
            recordedFacts[table.name] = (recordedFacts[table.name] ?? StagedTableFacts(table: table)).appending(copied)
        }
    }

    /// The files of `source` `load` reads, in order: those the build cache does not supply.
    private func filesToRead(_ source: CompiledSource) -> [InputFile] {
        guard let cached = cachedRows(of: sourceIndex(source))?.digests else { return source.files }
        return source.files.filter { cached[$0.relativePath] == nil }
    }

    /// Streams the next `count` files of `source` to read (all the rest when `nil`) once, each record into the table
    /// of its kind. Returns each file's SHA-256 by relative path.
    /// - Throws: `KilnError.io` when a file cannot be read, `SQLiteError` when staging fails.
    package func load(_ source: CompiledSource, log: DiagnosticLog, next count: Int? = nil) throws -> [String: String] {
        let all = filesToRead(source), position = sourceIndex(source)
        let start = filesLoaded[position] ?? 0, end = min(all.count, count.map { start + $0 } ?? all.count)
        filesLoaded[position] = end
        let files = Array(all[start..<end])
        let insertSQL = source.targets.map { target in
            let columnNames = target.mappings.map { quoteIdentifier($0.column.name) } + ["_file", "_line"]
            let placeholders = Array(repeating: "?", count: columnNames.count).joined(separator: ", ")
            return "INSERT INTO \(quoteIdentifier(target.table.name)) (\(columnNames.joined(separator: ", "))) VALUES (\(placeholders))"
        }
        var digests: [String: String] = [:]
        let recorder = StagedRowRecorder(targets: source.targets, continuing: recordedFacts, keepingFiles: cache != nil)
        // On one thread (for comparing with the threaded load, where reader threads read and shape the files ahead,
        // `ReadAhead`, this thread takes them in order and a writer thread inserts them): read, shape and insert here.
        if threads.stagingOnOneThread {
            let loaded = try file.write { database in
                let sink = StagingSink(database, try insertSQL.map { try database.prepare($0) }, source.shaper, log, recorder)
                try load(source, files: files, log: log, into: sink)
                return sink.recorder
            }
            recorded(loaded)
            for input in files { digests[input.relativePath] = try digest(of: input) }
            return digests
        }
        let readAhead = try self.readAhead(examplesPerCode: log.tally.examplesPerCode)
        // The write phase lends the owner's connection to the writer's thread until `finish()` has waited for it.
        try file.lendForWriting { connection in
            let writer = StagingWriter(lending: connection, insertSQL: insertSQL, recorder: recorder)
            do {
                try load(source, from: readAhead, items: start..<end, shaper: source.shaper, log: log, into: writer)
                if let finished = try writer.finish() { recorded(finished) }
            } catch {
                readAhead.cancel()
                // The writer's own failure explains the reader's.
                try writer.finish()
                throw error
            }
        }
        for input in files { digests[input.relativePath] = try digest(of: input) }
        return digests
    }

    /// Takes in what `recorder` learned of the rows of a load.
    private func recorded(_ recorder: StagedRowRecorder) {
        recordedFacts.merge(recorder.facts) { $1 }
        loadedFileFacts += recorder.fileFacts
    }

    /// Takes `source`'s files from the read-ahead, in order, into the writer thread, the whole source inside one
    /// transaction (a file that fails stops the build, so nothing is gained by a transaction per file, and a commit
    /// per file writes the table's last pages out again for every small file); each file's records are shaped here
    /// with `shaper` when its worker left them as read, its findings replayed into `log` when it is done. The rows of
    /// small files are gathered into batches of `ReadAhead.batchRecords` before they are handed on: one hand-over
    /// (and one wake-up of the writer) per batch, not per file.
    private func load(_ source: CompiledSource, from readAhead: ReadAhead, items: Range<Int>, shaper: RowShaper, log: DiagnosticLog,
                      into writer: StagingWriter) throws {
        let position = sourceIndex(source)
        try writer.send(.begin)
        var gathered: [ShapedRow] = []
        func send(_ rows: [ShapedRow]) throws {
            BuildMeter.shared.staged(rows.count)
            if gathered.isEmpty && rows.count >= ReadAhead.batchRecords {
                try writer.send(.rows(rows))
                return
            }
            gathered += rows
            if gathered.count >= ReadAhead.batchRecords {
                try writer.send(.rows(gathered))
                gathered = []
            }
        }
        for index in readAhead.items(of: position)[items] {
            let file = readAhead.items[index]
            stagedFindings?.file = file.input.relativePath
            reading: while true {
                switch readAhead.next(index) {
                case .batch(.shaped(let rows)):
                    try send(rows)
                case .batch(.records(let records)):
                    try send(records.map { staged in
                        ShapedRow(target: staged.target, values: shaper.row(staged.record, target: staged.target, input: file.input, log: log))
                    })
                case .finished(let fileLog, let digest):
                    BuildMeter.shared.readFile(at: file.input.url)
                    if let digest { digestCache[file.input.relativePath] = digest }
                    fileLog.replay(into: log)
                    break reading
                case .failed(let error):
                    throw error
                }
            }
        }
        if !gathered.isEmpty { try writer.send(.rows(gathered)) }
        try writer.send(.commit)
    }

    /// The read-ahead over every file of every source, started at the first load.
    /// - Parameter examplesPerCode: the build log's cap on stored findings per code, for each file's own log.
    /// - Throws: as `SourcePlan.instantiate`, never for a loaded pipeline.
    private func readAhead(examplesPerCode: Int) throws -> ReadAhead {
        if let started = startedReadAhead { return started }
        var listed = Set<String>()
        var items: [ReadAhead.Item] = []
        for (index, source) in pipeline.sources.enumerated() {
            for input in source.files where cachedRows(of: index)?.digests[input.relativePath] == nil {
                items.append(ReadAhead.Item(source: index, input: withThreads(input), digest: listed.insert(input.relativePath).inserted))
            }
        }
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, StagingArea.maximumReaders, items.count))
        let tools = try (0..<workers).map { _ in try pipeline.sources.map { try $0.plan.instantiate() } }
        let started = ReadAhead(items: items, sources: pipeline.sources, tools: tools,
                                examplesPerCode: examplesPerCode)
        startedReadAhead = started
        return started
    }

    private var startedReadAhead: ReadAhead?

    /// `input` to be read under staging's thread settings.
    private func withThreads(_ input: InputFile) -> InputFile {
        var input = input
        input.threads = threads
        return input
    }

    /// Lowers the priority of the threads reading later sources ahead, for the rest of staging: a full-text index
    /// has started, and the build's end waits for it (`ReadAhead.stepBack`).
    package func readersStepBack() {
        startedReadAhead?.stepBack()
    }

    /// The most reader threads a build starts.
    package static let maximumReaders = 4

    /// The position of `source` in the pipeline (sources have unique names). Loading a source of another pipeline is
    /// a programming error.
    private func sourceIndex(_ source: CompiledSource) -> Int {
        guard let index = sourceIndexes[source.spec.name] else {
            preconditionFailure("the source \(source.spec.name) is not one of this staging area's pipeline")
        }
        return index
    }

    deinit { startedReadAhead?.cancel() }

    private func digest(of input: InputFile) throws -> String {
        if let known = digestCache[input.relativePath] { return known }
        let digest = try FileDigest.sha256(of: input.url)
        digestCache[input.relativePath] = digest
        return digest
    }

    /// Reads, shapes and inserts every file of `source` on the calling thread, the whole source inside one
    /// transaction, as the threaded load does.
    private func load(_ source: CompiledSource, files: [InputFile], log: DiagnosticLog, into sink: StagingSink) throws {
        let targetIndex = StagingArea.targetIndex(of: source)
        try sink.begin()
        do {
            for input in files {
                stagedFindings?.file = input.relativePath
                let digest = try StagingArea.readFile(withThreads(input), digest: digestCache[input.relativePath] == nil, reader: source.reader,
                                                      targetIndex: targetIndex, sourceName: source.spec.name, log: log) { target, record, input in
                    try sink.add(record, target: target, input: input)
                }
                if let digest { digestCache[input.relativePath] = digest }
                BuildMeter.shared.readFile(at: input.url)
            }
            try sink.commit()
        } catch {
            sink.rollback()
            throw error
        }
    }

    /// The index of each of `source`'s targets by the kind of record it takes.
    package static func targetIndex(of source: CompiledSource) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: source.targets.enumerated().map { ($1.kind, $0) })
    }

    /// Reads one input file, handing each record of a mapped kind to `body` with its target index and the input as
    /// read (with its first bytes); records of kinds the source does not map are counted and reported once per kind
    /// (`source.unmapped-kind`). With `digest`, the file's SHA-256 is computed first and returned: that pass keeps the
    /// file's first bytes for the reader's checks of its start (blank file, declared encoding), so a file is opened
    /// twice in all, once for its digest and once by the reader.
    /// - Throws: `KilnError.io` when the file cannot be read; whatever `body` throws.
    package static func readFile(_ listed: InputFile, digest: Bool, reader: RecordReader, targetIndex: [String: Int], sourceName: String,
                         log: DiagnosticLog, _ body: (Int, Record, InputFile) throws -> Void) throws -> String? {
        var input = listed
        var pending: FileDigest.Pending?
        if digest {
            let started = try FileDigest.start(input.url)
            input.head = InputFile.head(from: started.head, url: input.url, relativePath: input.relativePath)
            pending = started.digest
        }
        // A large file is digested on a thread of its own while it is read: wait for it even when reading fails.
        defer { _ = try? pending?.wait() }
        var unmapped: [String: (count: Int, line: Int)] = [:]
        log.readingSource = sourceName
        defer { log.readingSource = nil }
        try reader.read(input, log: log) { record in
            guard let target = targetIndex[record.kind.name] else {
                unmapped[record.kind.name, default: (0, record.line)].count += 1
                return
            }
            try body(target, record, input)
        }
        for (kind, use) in unmapped.sorted(by: { $0.key < $1.key }) {
            log.report(.sourceUnmappedKind, "\(use.count) \(kind) record\(use.count == 1 ? "" : "s") of source \"\(sourceName)\" went into no table: "
                           + "the source's \"into\" does not map the kind \"\(kind)\"", at: input.at(use.line))
        }
        return try pending?.wait()
    }

    /// Fills the tables declared with a `query`, in declaration order.
    /// - Throws: `KilnError.manifest` pointing at the query when SQLite refuses it.
    package func fillQueryTables() throws {
        let queried = pipeline.manifest.tables.enumerated().filter { $0.element.query != nil }
        guard !queried.isEmpty else { return }
        try file.write { database in try fillQueryTables(queried, in: database) }
    }

    private func fillQueryTables(_ queried: [(offset: Int, element: TableSpec)], in database: Database) throws {
        for (index, table) in queried {
            guard let query = table.query else { continue }
            let keyPath = "tables[\(index)].query"
            do {
                let statement = try database.prepareQuery(query)
                let allowed = Set(table.columns.map(\.name) + ["_file", "_line"])
                if let unknown = statement.columnNames.first(where: { !allowed.contains($0) }) {
                    throw pipeline.issue(keyPath, "the query returns a column \"\(unknown)\" that table \"\(table.name)\" does not declare")
                }
                let names = statement.columnNames.map(quoteIdentifier).joined(separator: ", ")
                let insert = try database.prepareSingle("INSERT INTO \(quoteIdentifier(table.name)) (\(names)) \(query)")
                try database.withTimeLimit(pipeline.manifest.limits.sqlSeconds) { try insert.run([]) }
            } catch let error as SQLiteError where error.isInterrupted {
                throw pipeline.issue(keyPath, "the query of table \"\(table.name)\" ran longer than \(sqlNumber(pipeline.manifest.limits.sqlSeconds)) s and was stopped; make it cheaper or raise limits.sqlSeconds")
            } catch let error as SQLiteError where !error.isOutOfResources {
                throw pipeline.issue(keyPath, "SQLite refuses the query: \(error.message)")
            }
        }
    }
}
