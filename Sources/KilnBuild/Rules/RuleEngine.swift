import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Runs the checks over staged tables (or over a shipped bundle): the constraints each table declares
/// (keys, unique sets, not-null, references, range, enum, pattern) and the manifest's explicit rules.
/// Each offending row becomes one diagnostic with the file and line it came from.
package struct RuleEngine {
    package let pipeline: CompiledPipeline
    package private(set) var database: Database
    package private(set) var log: DiagnosticLog
    /// False on a shipped bundle, whose tables carry no `_file`/`_line` columns.
    package var hasProvenance = true
    /// The staged tables whose rows are already in the bundle's order (`StagedRowOrder.isInOrder`): rows that share
    /// a key stand next to each other there, so a key with no two neighbours alike has no duplicate.
    package var inOrder: Set<String> = []
    /// True for a staged table no two of whose rows share the primary key, as far as is known when its key rule runs
    /// (the bundle's thread finds it out as it writes a table sorted on its key, `BundleTables.keyIsUnique`): that
    /// rule has nothing to search. Unknown tables are searched.
    package var keyKnownUnique: (@Sendable (String) -> Bool)?
    /// What the staging writer learned of each staged table's rows (`StagedTableFacts`): which columns may hold
    /// NULL, and for a table it saw in order, whether two neighbours share a key. Empty on a shipped bundle.
    package var facts: [String: StagedTableFacts] = [:]
    /// Creates the staging indexes a rule looks up through when it first needs one; `nil` on a shipped bundle, whose
    /// declared keys are indexed already.
    package var lookupIndexes: LookupIndexes?
    /// True to search every key for duplicates and scan every not-null column, without the shortcuts (the order,
    /// the staging writer's facts, one sort for "no repeated key"): the plain checks the shortcuts are tested against.
    package var exhaustive = false
    /// The staging file, when a second thread may check rules beside this one under a read lease of its own
    /// (`StagingDatabase.lease`); `nil` to check them all on this thread (`ThreadSettings.checksRulesInParallel` false, a shipped bundle).
    /// Either way the findings reach `log` in rule order, each rule's in the order it found them.
    package var parallel: StagingDatabase?
    /// The findings of rules known without checking them (the build cache's, `RuleFindingsCache`), by position in
    /// `rules`: those rules are not checked, and their findings are replayed into `log` in their turn.
    package var known: [Int: ReplayableFindings] = [:]

    /// Every rule: the declared constraints first, table by table, then the manifest's rules in order.
    package var rules: [(rule: RuleSpec, keyPath: String)] {
        var rules: [(RuleSpec, String)] = []
        for (index, table) in pipeline.manifest.tables.enumerated() {
            let path = "tables[\(index)]"
            func rule(_ check: RuleCheck) -> RuleSpec {
                RuleSpec(code: check.kind.defaultCode.rawValue, check: check, severity: .error)
            }
            let name = table.name
            if !table.primaryKey.isEmpty { rules.append((rule(.unique(table: name, columns: table.primaryKey)), path + ".primaryKey")) }
            for (setIndex, set) in table.unique.enumerated() {
                rules.append((rule(.unique(table: name, columns: set)), "\(path).unique[\(setIndex)]"))
            }
            for (columnIndex, column) in table.columns.enumerated() {
                let columnPath = "\(path).columns[\(columnIndex)]"
                let columns = [column.name]
                if column.unique { rules.append((rule(.unique(table: name, columns: columns)), columnPath)) }
                if column.notNull || table.primaryKey.contains(column.name) {
                    rules.append((rule(.notNull(table: name, columns: columns)), columnPath))
                }
                if let range = column.range { rules.append((rule(.range(table: name, columns: columns, range: range)), columnPath + ".range")) }
                if let allowed = column.allowed {
                    rules.append((rule(.allowed(table: name, columns: columns, values: allowed)), columnPath + ".enum"))
                }
                if let pattern = column.pattern {
                    rules.append((rule(.pattern(table: name, columns: columns, pattern: pattern)), columnPath + ".pattern"))
                }
            }
            for key in table.allForeignKeys { rules.append((rule(.references(table: name, key: key)), path)) }
        }
        for (index, rule) in pipeline.manifest.rules.enumerated() { rules.append((rule, "rules[\(index)]")) }
        return rules
    }

    /// Runs every rule, reporting findings to the log. With `parallel`, the rules are shared out between this thread
    /// and a helper (`RuleHelper`). Either way each rule's findings are kept in a log of their own, then replayed into
    /// `log` in rule order, so that the log (and the report) is the one a serial run gives; a rule the helper cannot
    /// check without a write phase (a lookup index it needs) is checked here, in its turn. A rule with `known`
    /// findings is not checked: they are replayed in its turn.
    /// - Returns: the findings of each rule checked to its end (not stopped by an error or the time limit), by position.
    /// - Throws: `KilnError.manifest` when SQLite refuses a rule's SQL.
    @discardableResult
    package func run() throws -> [Int: ReplayableFindings] {
        let seconds = pipeline.manifest.limits.sqlSeconds
        let rules = rules
        let nullFree = exhaustive ? [:] : columnsWithoutNulls(rules.indices.filter { known[$0] == nil }.map { rules[$0].rule })
        let checked = Set(rules.indices.filter { position in
            if known[position] != nil { return false }
            if case .notNull(let table, let columns) = rules[position].rule.check, let free = nullFree[table],
               columns.allSatisfy(free.contains) { return false }
            return true
        })
        let ruleLog = { DiagnosticLog(overrides: log.overrides, examplesPerCode: log.tally.examplesPerCode) }
        var outcomes: [Int: RuleOutcome] = [:]
        if let staging = parallel, checked.count > 1 {
            let queue = RuleQueue(checked.sorted())
            let helper = RuleHelper(self, rules: rules.map(\.rule), queue: queue, staging: staging)
            while let position = queue.next() {
                outcomes[position] = outcome(of: rules[position].rule, seconds: seconds, into: ruleLog())
            }
            for (position, outcome) in helper.wait() { outcomes[position] = outcome }
        }
        var found: [Int: ReplayableFindings] = [:]
        for (position, (rule, keyPath)) in rules.enumerated() {
            defer { BuildMeter.shared.ranRule() }
            if let findings = known[position] {
                findings.replay(into: log)
                continue
            }
            guard checked.contains(position) else { continue }
            var result = outcomes.removeValue(forKey: position) ?? .needsOwner
            if case .needsOwner = result { result = outcome(of: rule, seconds: seconds, into: ruleLog()) }
            switch result {
            case .checked(let findings):
                findings.replay(into: log)
                found[position] = ReplayableFindings(findings)
            // A rule stopped by an error keeps what it found before, as in a serial run.
            case .failed(let error as SQLiteError, let findings) where error.isInterrupted:
                findings.replay(into: log)
                log.report(RuleEngine.timeLimitCode, RuleEngine.timeLimitMessage(rule, keyPath: keyPath, seconds: seconds))
            case .failed(let error as SQLiteError, let findings) where !error.isOutOfResources:
                findings.replay(into: log)
                throw pipeline.issue(keyPath + (rule.kind == .sql ? ".sql" : ""), "SQLite refuses the rule's query: \(error.message)")
            case .failed(let error, let findings):
                findings.replay(into: log)
                throw error
            case .needsOwner: break
            }
        }
        return found
    }

    /// Checks `rule` under the time limit on this engine's connection, its findings going to `ruleLog`.
    fileprivate func outcome(of rule: RuleSpec, seconds: Double, into ruleLog: DiagnosticLog) -> RuleOutcome {
        var engine = self
        engine.log = ruleLog
        do {
            try database.withTimeLimit(seconds) { try engine.run(rule) }
            return .checked(ruleLog)
        } catch is RuleHelper.NeedsWritePhase {
            return .needsOwner
        } catch {
            return .failed(error, ruleLog)
        }
    }

    /// The columns of the not-null rules that hold no NULL, by table: what the staging writer saw (`facts`) answers
    /// without reading the table; otherwise one scan of each table answers for all its not-null rules, instead of
    /// one scan per column. A table whose scan fails or runs out of time is left out, and its rules run one by one
    /// as usual.
    private func columnsWithoutNulls(_ rules: [RuleSpec]) -> [String: Set<String>] {
        var checked: [String: [String]] = [:]
        for rule in rules {
            if case .notNull(let table, let columns) = rule.check {
                let known = checked[table] ?? []
                checked[table] = known + columns.filter { !known.contains($0) }
            }
        }
        var free: [String: Set<String>] = [:]
        for (table, columns) in checked {
            guard let facts = facts[table] else { continue }
            free[table] = Set(columns.filter { !facts.mayHoldNull($0) })
        }
        for (table, columns) in checked where columns.count > 1 && free[table] == nil {
            let tests = columns.map { "max(\(quoteIdentifier($0)) IS NULL)" }.joined(separator: ", ")
            guard let row = try? database.withTimeLimit(pipeline.manifest.limits.sqlSeconds, {
                try database.rows("SELECT \(tests) FROM \(quoteIdentifier(table))").first
            }) else { continue }
            free[table] = Set(zip(columns, row.values).filter { ($0.1.number ?? 0) == 0 }.map(\.0))
        }
        return free
    }

    /// The code of the finding for a rule stopped by `limits.sqlSeconds`.
    package static let timeLimitCode = DiagnosticCode.sqlTimeLimit

    /// The sentence for a rule stopped by the time limit.
    package static func timeLimitMessage(_ rule: RuleSpec, keyPath: String, seconds: Double) -> String {
        "rule \(rule.code) (\(keyPath)) ran longer than \(sqlNumber(seconds)) s and was stopped, so it checked nothing; make it cheaper or raise limits.sqlSeconds"
    }

    /// Runs one rule, reporting its findings to the log; a pattern that gives up on a value is a finding too.
    /// - Throws: `SQLiteError` when SQLite refuses the rule's query, for the caller to place.
    package func run(_ rule: RuleSpec) throws {
        do {
            try evaluate(rule)
        } catch let error as RegexMatchError {
            log.report(ruleCode: rule.code, .error, error.description)
        }
    }

    private func evaluate(_ rule: RuleSpec) throws {
        let place = hasProvenance ? "_file, _line" : "NULL AS _file, NULL AS _line"
        switch rule.check {
        case .unique(let tableName, let columns): try duplicates(rule, tableName, columns)
        case .notNull(let tableName, let columns):
            let table = quoteIdentifier(tableName)
            for column in columns {
                try database.forEachRow("SELECT \(place), \(describedKey(tableName)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NULL ORDER BY rowid") { row in
                    report(rule, row, "\(describe(tableName, row)) has no \(column)")
                }
            }
        case .references(let tableName, let key):
            try lookupIndexes?.index(key.table, key.referencedColumns)
            try lookupIndexes?.index(tableName, key.columns)
            let table = quoteIdentifier(tableName)
            let join = zip(key.columns, key.referencedColumns).map { "r.\(quoteIdentifier($1)) = t.\(quoteIdentifier($0))" }.joined(separator: " AND ")
            let present = key.columns.map { "t.\(quoteIdentifier($0)) IS NOT NULL" }.joined(separator: " AND ")
            let selected = key.columns.map { "t.\(quoteIdentifier($0))" }.joined(separator: ", ")
            let grouping = (hasProvenance ? ["t._file", "t._line"] : []) + key.columns.map { "t.\(quoteIdentifier($0))" }
            let sql = "SELECT \(hasProvenance ? "t._file, t._line" : "NULL AS _file, NULL AS _line"), \(selected), count(*) AS times FROM \(table) AS t WHERE \(present) AND NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(key.table)) AS r WHERE \(join)) GROUP BY \(grouping.joined(separator: ", ")) ORDER BY min(t.rowid)"
            try database.forEachRow(sql) { row in
                let values = key.columns.map { row[$0].textValue ?? "" }.joined(separator: ", ")
                let times = row["times"].number.map { $0 > 1 ? " (\(Int($0)) \(hasProvenance ? "times on this line" : "rows"))" : "" } ?? ""
                report(rule, row, "\(tableName).\(key.columns.joined(separator: ",")) \"\(values)\" refers to no \(key.table) (no \(key.table).\(key.referencedColumns.joined(separator: ",")) \"\(values)\")\(times)")
            }
        case .range(let tableName, let columns, let range):
            let table = quoteIdentifier(tableName)
            for column in columns {
                var tests: [String] = []
                if let min = range.min { tests.append("\(quoteIdentifier(column)) < \(sqlNumber(min))") }
                if let max = range.max { tests.append("\(quoteIdentifier(column)) > \(sqlNumber(max))") }
                guard !tests.isEmpty else { continue }
                let numeric = "typeof(\(quoteIdentifier(column))) IN ('integer', 'real')"
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(tableName)) FROM \(table) WHERE \(numeric) AND (\(tests.joined(separator: " OR "))) ORDER BY rowid") { row in
                    report(rule, row, "\(describe(tableName, row)): \(column) \(row[column].textValue ?? "") is outside \(range.min.map(sqlNumber) ?? "")…\(range.max.map(sqlNumber) ?? "")")
                }
            }
        case .allowed(let tableName, let columns, let values):
            let table = quoteIdentifier(tableName)
            let allowed = values.map(quoteLiteral).joined(separator: ", ")
            for column in columns {
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(tableName)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NOT NULL AND \(quoteIdentifier(column)) NOT IN (\(allowed)) ORDER BY rowid") { row in
                    report(rule, row, "\(describe(tableName, row)): \(column) \"\(row[column].textValue ?? "")\" is not one of \(values.joined(separator: ", "))")
                }
            }
        case .pattern(let tableName, let columns, let source):
            let table = quoteIdentifier(tableName)
            let pattern = try RegexPattern(source)
            for column in columns {
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(tableName)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NOT NULL ORDER BY rowid") { row in
                    let value = row[column].textValue ?? ""
                    if try !pattern.matches(value) {
                        report(rule, row, "\(describe(tableName, row)): \(column) \"\(value)\" does not match /\(source)/")
                    }
                }
            }
        case .bounds(let tableName, let latitude, let longitude, let box):
            try bounds(rule, tableName, latitude: latitude, longitude: longitude, box: box)
        case .sql(let query, let message):
            try lookupIndexes?.indexAll()
            let statement = try database.prepareQuery(query)
            while let row = try statement.step() {
                report(rule, row, fill(message, row))
            }
        }
    }

    /// Key uniqueness: a repeated key with identical rows is a `duplicate-row` warning (kept once);
    /// with different values it is an error naming the columns that differ.
    private func duplicates(_ rule: RuleSpec, _ tableName: String, _ keyColumns: [String]) throws {
        guard let spec = pipeline.manifest.table(tableName) else { return }
        let table = quoteIdentifier(spec.name)
        let keyJoin = keyColumns.map { "a.\(quoteIdentifier($0)) = b.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        if !exhaustive, try !mayRepeat(keyColumns, of: spec, keyJoin: keyJoin) { return }
        try lookupIndexes?.index(spec.name, keyColumns)
        let firstJoin = keyColumns.map { "c.\(quoteIdentifier($0)) = a.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let columns = spec.columns.map(\.name)
        let selected = columns.flatMap { ["a.\(quoteIdentifier($0)) AS \(quoteIdentifier("a." + $0))", "b.\(quoteIdentifier($0)) AS \(quoteIdentifier("b." + $0))"] }
        let places = hasProvenance ? "a._file AS first_file, a._line AS first_line, b._file AS _file, b._line AS _line"
                                   : "NULL AS first_file, NULL AS first_line, NULL AS _file, NULL AS _line"
        let sql = """
            SELECT \(places), \(selected.joined(separator: ", ")) FROM \(table) AS a JOIN \(table) AS b ON \(keyJoin) AND a.rowid < b.rowid
            WHERE NOT EXISTS (SELECT 1 FROM \(table) AS c WHERE \(firstJoin) AND c.rowid < a.rowid) ORDER BY b.rowid
            """
        try database.forEachRow(sql) { row in
            let key = keyColumns.map { row["b." + $0].textValue ?? "" }.joined(separator: ", ")
            let firstPlace = [row["first_file"].textValue, row["first_line"].textValue].compactMap { $0 }.joined(separator: ":")
            let first = firstPlace.isEmpty ? "" : " (first at \(firstPlace))"
            let differing = columns.filter { row["a." + $0] != row["b." + $0] }
            let what = "\(spec.name) \(keyColumns.joined(separator: ",")) \"\(key)\""
            if differing.isEmpty {
                var duplicate = rule
                duplicate.code = rule.code == RuleKind.unique.defaultCode.rawValue ? DiagnosticCode.duplicateRow.rawValue : rule.code + ".identical"
                duplicate.severity = .warning
                report(duplicate, row, "\(what) is listed again with identical values\(first); kept once")
            } else {
                let changes = differing.map { "\($0) \"\(row["b." + $0].textValue ?? "NULL")\" here, \"\(row["a." + $0].textValue ?? "NULL")\" there" }
                report(rule, row, "\(what) is listed twice with different values\(first): \(changes.joined(separator: "; "))")
            }
        }
    }

    /// False when no two rows of `table` can share a value of `keyColumns` (none NULL, `=` column by column, as the
    /// search joins them), told without the search and without writing an index into staging. Rows in the bundle's
    /// order are sorted on their key first (consecutive rowids, `StagedRowOrder`), so equal keys are neighbours: the
    /// staging writer compared the neighbours as it inserted them (`StagedTableFacts`), or SQL compares them. A table
    /// whose primary key is known to be unique (`keyKnownUnique`) repeats none. Any other table is grouped on the
    /// key, which one sort answers.
    private func mayRepeat(_ keyColumns: [String], of table: TableSpec, keyJoin: String) throws -> Bool {
        let name = quoteIdentifier(table.name)
        if Set(keyColumns) == Set(table.primaryKey), keyKnownUnique?(table.name) == true { return false }
        if inOrder.contains(table.name), Set(table.orderColumns.prefix(keyColumns.count)) == Set(keyColumns) {
            if let facts = facts[table.name], facts.inOrder == true { return facts.longestSharedPrefix >= keyColumns.count }
            return try database.rows("SELECT EXISTS (SELECT 1 FROM \(name) AS a JOIN \(name) AS b ON b.rowid = a.rowid + 1 WHERE \(keyJoin))").first?.values.first?.number != 0
        }
        let key = keyColumns.map(quoteIdentifier)
        let present = key.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
        let sql = "SELECT EXISTS (SELECT 1 FROM \(name) WHERE \(present) GROUP BY \(key.joined(separator: ", ")) HAVING count(*) > 1)"
        return try database.rows(sql).first?.values.first?.number != 0
    }

    /// Coordinates outside the box; when swapping latitude and longitude would put them inside, says so.
    private func bounds(_ rule: RuleSpec, _ tableName: String, latitude: String, longitude: String, box: BoxSpec) throws {
        let place = hasProvenance ? "_file, _line" : "NULL AS _file, NULL AS _line"
        let sql = "SELECT \(place), \(quoteIdentifier(latitude)), \(quoteIdentifier(longitude)), \(describedKey(tableName)) FROM \(quoteIdentifier(tableName)) WHERE \(quoteIdentifier(latitude)) IS NOT NULL AND \(quoteIdentifier(longitude)) IS NOT NULL ORDER BY rowid"
        func inside(_ lat: Double, _ lon: Double) -> Bool {
            (box.minLatitude...box.maxLatitude).contains(lat) && (box.minLongitude...box.maxLongitude).contains(lon)
        }
        try database.forEachRow(sql) { row in
            guard let lat = row[latitude].number, let lon = row[longitude].number, !inside(lat, lon) else { return }
            let what = describe(tableName, row)
            if inside(lon, lat) {
                var swapped = rule
                swapped.code = DiagnosticCode.swappedCoordinates.rawValue
                report(swapped, row, "\(what): latitude \(SQLValue.real(lat).textValue!) and longitude \(SQLValue.real(lon).textValue!) are swapped (the other way round they fall inside the box)")
            } else {
                report(rule, row, "\(what): coordinates \(SQLValue.real(lat).textValue!), \(SQLValue.real(lon).textValue!) are outside the box latitude \(box.minLatitude)…\(box.maxLatitude), longitude \(box.minLongitude)…\(box.maxLongitude)")
            }
        }
    }

    private func report(_ rule: RuleSpec, _ row: Row, _ message: String) {
        var provenance: Provenance?
        if let file = row["_file"].textValue {
            provenance = Provenance(file: file, line: row["_line"].textValue.flatMap { Int($0) })
        }
        log.report(Diagnostic(code: rule.code, severity: rule.severity, message: message, provenance: provenance))
    }

    /// The key columns of `table` selected under their own names, so that messages can name the row.
    private func describedKey(_ table: String) -> String {
        let key = pipeline.manifest.table(table)?.primaryKey ?? []
        return key.isEmpty ? "rowid AS \"rowid\"" : key.map(quoteIdentifier).joined(separator: ", ")
    }

    private func describe(_ table: String, _ row: Row) -> String {
        let key = pipeline.manifest.table(table)?.primaryKey ?? []
        if key.isEmpty { return table }
        return "\(table) " + key.map { row[$0].textValue ?? "NULL" }.joined(separator: " ")
    }

    /// Fills `{column}` placeholders from the row.
    private func fill(_ template: String, _ row: Row) -> String {
        var text = template
        for (name, value) in zip(row.columns, row.values) {
            text = text.replacingOccurrences(of: "{\(name)}", with: value.textValue ?? "NULL")
        }
        return text
    }
}

/// What checking one rule gave: its findings in a log of their own (or the build's, when checked in its turn), the
/// error that stopped it with what it found before, or that it needs the owner's thread (a lookup index to create in
/// a write phase).
private enum RuleOutcome {
    case checked(DiagnosticLog)
    case failed(any Error, DiagnosticLog)
    case needsOwner
}

/// The positions of the rules still to check, taken in order by the rules' thread and its helper.
private final class RuleQueue: Sendable {
    private let positions: [Int]
    private let taken = Atomic<Int>(0)

    package init(_ positions: [Int]) { self.positions = positions }

    /// The next rule to check, or `nil` when every rule is taken.
    package func next() -> Int? {
        let index = taken.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < positions.count ? positions[index] : nil
    }
}

/// A second thread checking rules beside the rules' own (`RuleEngine.parallel`): its own connection, with the staging
/// file attached under a read lease held until it has taken its last rule (it waits for nothing meanwhile). Its
/// outcomes come back, by rule position, through a `Handoff`.
private final class RuleHelper: Sendable {
    /// Thrown in place of creating a lookup index, which only the owner's thread may (in a write phase).
    package struct NeedsWritePhase: Error {}

    private let thread: BackgroundThread<Handoff<[(Int, RuleOutcome)]>>

    package init(_ engine: RuleEngine, rules: [RuleSpec], queue: RuleQueue, staging: StagingDatabase) {
        let manifest = engine.pipeline.manifest, overrides = engine.log.overrides, hasProvenance = engine.hasProvenance
        let examplesPerCode = engine.log.tally.examplesPerCode
        let inOrder = engine.inOrder, keyKnownUnique = engine.keyKnownUnique, facts = engine.facts, exhaustive = engine.exhaustive
        thread = BackgroundThread(name: "kiln rules") {
            let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all, readOnlyAttachments: true)
            defer { try? database.close() }
            let lease = staging.lease()
            try lease.attach(to: database, as: "staging")
            defer { try? lease.release(detaching: "staging", from: database) }
            try database.execute("PRAGMA staging.cache_size = -8192")
            var engine = RuleEngine(pipeline: CompiledPipeline(manifest: manifest, sources: [], locator: JSON5Locator(text: "")), database: database,
                                    log: DiagnosticLog(overrides: overrides, examplesPerCode: examplesPerCode))
            engine.hasProvenance = hasProvenance
            engine.inOrder = inOrder
            engine.keyKnownUnique = keyKnownUnique
            engine.facts = facts
            engine.exhaustive = exhaustive
            engine.lookupIndexes = LookupIndexes(manifest: manifest, database: database) { _ in throw NeedsWritePhase() }
            var outcomes: [(Int, RuleOutcome)] = []
            while let position = queue.next() {
                // The manifest's SQL may name any table or index of staging's: it runs on the owner's connection.
                guard rules[position].kind != .sql else {
                    outcomes.append((position, .needsOwner))
                    continue
                }
                outcomes.append((position, engine.outcome(of: rules[position], seconds: manifest.limits.sqlSeconds, into: DiagnosticLog(overrides: overrides, examplesPerCode: examplesPerCode))))
            }
            return Handoff(outcomes)
        }
    }

    /// The helper's outcomes, once it has taken its last rule; none when it could not read staging (the rules it took
    /// then, none, are checked by the owner).
    package func wait() -> [(Int, RuleOutcome)] {
        (try? thread.wait())?.value ?? []
    }
}

extension SQLValue {
    /// The value as a number, when it is one.
    package var number: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }
}
