/// Runs the checks over staged tables (or over a shipped bundle): the constraints each table declares
/// (keys, unique sets, not-null, references, range, enum, pattern) and the manifest's explicit rules.
/// Each offending row becomes one diagnostic with the file and line it came from.
struct RuleEngine {
    let pipeline: Pipeline
    let database: Database
    let log: DiagnosticLog
    /// False on a shipped bundle, whose tables carry no `_file`/`_line` columns.
    var hasProvenance = true

    /// The default code of each built-in kind.
    static func defaultCode(_ kind: RuleKind) -> String {
        switch kind {
        case .unique: return "duplicate-key"
        case .references: return "foreign-key"
        case .notNull: return "not-null"
        case .range: return "range"
        case .enum: return "enum"
        case .pattern: return "pattern"
        case .bounds: return "out-of-bounds"
        case .sql: return "sql"
        }
    }

    /// Every rule: the declared constraints first, table by table, then the manifest's rules in order.
    var rules: [(rule: RuleSpec, keyPath: String)] {
        var rules: [(RuleSpec, String)] = []
        for (index, table) in pipeline.manifest.tables.enumerated() {
            let path = "tables[\(index)]"
            func rule(_ kind: RuleKind, _ columns: [String]) -> RuleSpec {
                RuleSpec(code: RuleEngine.defaultCode(kind), kind: kind, table: table.name, columns: columns, severity: .error)
            }
            if !table.primaryKey.isEmpty { rules.append((rule(.unique, table.primaryKey), path + ".primaryKey")) }
            for (setIndex, set) in table.unique.enumerated() { rules.append((rule(.unique, set), "\(path).unique[\(setIndex)]")) }
            for (columnIndex, column) in table.columns.enumerated() {
                let columnPath = "\(path).columns[\(columnIndex)]"
                if column.unique { rules.append((rule(.unique, [column.name]), columnPath)) }
                if column.notNull || table.primaryKey.contains(column.name) { rules.append((rule(.notNull, [column.name]), columnPath)) }
                if let range = column.range {
                    var spec = rule(.range, [column.name]); spec.range = range
                    rules.append((spec, columnPath + ".range"))
                }
                if let allowed = column.allowed {
                    var spec = rule(.enum, [column.name]); spec.allowed = allowed
                    rules.append((spec, columnPath + ".enum"))
                }
                if let pattern = column.pattern {
                    var spec = rule(.pattern, [column.name]); spec.pattern = pattern
                    rules.append((spec, columnPath + ".pattern"))
                }
            }
            for key in table.allForeignKeys {
                var spec = rule(.references, key.columns)
                spec.foreignKey = key
                rules.append((spec, path))
            }
        }
        for (index, rule) in pipeline.manifest.rules.enumerated() { rules.append((rule, "rules[\(index)]")) }
        return rules
    }

    /// Runs every rule, reporting findings to the log.
    /// - Throws: `KilnError.manifest` when SQLite refuses a rule's SQL.
    func run() throws {
        let seconds = pipeline.manifest.limits.sqlSeconds
        for (rule, keyPath) in rules {
            do {
                try database.withTimeLimit(seconds) { try run(rule) }
            } catch let error as SQLiteError where error.isInterrupted {
                log.report(RuleEngine.timeLimitCode, .error, RuleEngine.timeLimitMessage(rule, keyPath: keyPath, seconds: seconds))
            } catch let error as SQLiteError where !error.isStorageFailure {
                throw pipeline.issue(keyPath + (rule.kind == .sql ? ".sql" : ""), "SQLite refuses the rule's query: \(error.message)")
            }
        }
    }

    /// The code of the finding for a rule stopped by `limits.sqlSeconds`.
    static let timeLimitCode = "sql.time-limit"

    /// The sentence for a rule stopped by the time limit.
    static func timeLimitMessage(_ rule: RuleSpec, keyPath: String, seconds: Double) -> String {
        "rule \(rule.code) (\(keyPath)) ran longer than \(sqlNumber(seconds)) s and was stopped, so it checked nothing; make it cheaper or raise limits.sqlSeconds"
    }

    /// Runs one rule, reporting its findings to the log; a pattern that gives up on a value is a finding too.
    /// - Throws: `SQLiteError` when SQLite refuses the rule's query, for the caller to place.
    func run(_ rule: RuleSpec) throws {
        do {
            try evaluate(rule)
        } catch let error as RegexMatchError {
            log.report(rule.code, .error, error.description)
        }
    }

    private func evaluate(_ rule: RuleSpec) throws {
        let table = rule.table.map(quoteIdentifier) ?? ""
        let place = hasProvenance ? "_file, _line" : "NULL AS _file, NULL AS _line"
        switch rule.kind {
        case .unique: try duplicates(rule)
        case .notNull:
            for column in rule.columns {
                try database.forEachRow("SELECT \(place), \(describedKey(rule.table!)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NULL ORDER BY rowid") { row in
                    report(rule, row, "\(describe(rule.table!, row)) has no \(column)")
                }
            }
        case .references:
            let key = rule.foreignKey
                ?? ForeignKeySpec(columns: rule.columns, table: rule.references!.table, referencedColumns: [rule.references!.column])
            let join = zip(key.columns, key.referencedColumns).map { "r.\(quoteIdentifier($1)) = t.\(quoteIdentifier($0))" }.joined(separator: " AND ")
            let present = key.columns.map { "t.\(quoteIdentifier($0)) IS NOT NULL" }.joined(separator: " AND ")
            let selected = key.columns.map { "t.\(quoteIdentifier($0))" }.joined(separator: ", ")
            let grouping = (hasProvenance ? ["t._file", "t._line"] : []) + key.columns.map { "t.\(quoteIdentifier($0))" }
            let sql = "SELECT \(hasProvenance ? "t._file, t._line" : "NULL AS _file, NULL AS _line"), \(selected), count(*) AS times FROM \(table) AS t WHERE \(present) AND NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(key.table)) AS r WHERE \(join)) GROUP BY \(grouping.joined(separator: ", ")) ORDER BY min(t.rowid)"
            try database.forEachRow(sql) { row in
                let values = key.columns.map { row[$0].textValue ?? "" }.joined(separator: ", ")
                let times = row["times"].number.map { $0 > 1 ? " (\(Int($0)) \(hasProvenance ? "times on this line" : "rows"))" : "" } ?? ""
                report(rule, row, "\(rule.table!).\(key.columns.joined(separator: ",")) \"\(values)\" refers to no \(key.table) (no \(key.table).\(key.referencedColumns.joined(separator: ",")) \"\(values)\")\(times)")
            }
        case .range:
            let range = rule.range!
            for column in rule.columns {
                var tests: [String] = []
                if let min = range.min { tests.append("\(quoteIdentifier(column)) < \(sqlNumber(min))") }
                if let max = range.max { tests.append("\(quoteIdentifier(column)) > \(sqlNumber(max))") }
                guard !tests.isEmpty else { continue }
                let numeric = "typeof(\(quoteIdentifier(column))) IN ('integer', 'real')"
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(rule.table!)) FROM \(table) WHERE \(numeric) AND (\(tests.joined(separator: " OR "))) ORDER BY rowid") { row in
                    report(rule, row, "\(describe(rule.table!, row)): \(column) \(row[column].textValue ?? "") is outside \(range.min.map(sqlNumber) ?? "")…\(range.max.map(sqlNumber) ?? "")")
                }
            }
        case .enum:
            let allowed = rule.allowed!.map(quoteLiteral).joined(separator: ", ")
            for column in rule.columns {
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(rule.table!)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NOT NULL AND \(quoteIdentifier(column)) NOT IN (\(allowed)) ORDER BY rowid") { row in
                    report(rule, row, "\(describe(rule.table!, row)): \(column) \"\(row[column].textValue ?? "")\" is not one of \(rule.allowed!.joined(separator: ", "))")
                }
            }
        case .pattern:
            let pattern = try RegexPattern(rule.pattern!)
            for column in rule.columns {
                try database.forEachRow("SELECT \(place), \(quoteIdentifier(column)), \(describedKey(rule.table!)) FROM \(table) WHERE \(quoteIdentifier(column)) IS NOT NULL ORDER BY rowid") { row in
                    let value = row[column].textValue ?? ""
                    if try !pattern.matches(value) {
                        report(rule, row, "\(describe(rule.table!, row)): \(column) \"\(value)\" does not match /\(rule.pattern!)/")
                    }
                }
            }
        case .bounds: try bounds(rule)
        case .sql:
            let statement = try database.prepareQuery(rule.sql!)
            while let row = try statement.step() {
                report(rule, row, fill(rule.message!, row))
            }
        }
    }

    /// Key uniqueness: a repeated key with identical rows is a `duplicate-row` warning (kept once);
    /// with different values it is an error naming the columns that differ.
    private func duplicates(_ rule: RuleSpec) throws {
        let spec = pipeline.manifest.table(rule.table!)!
        let table = quoteIdentifier(spec.name)
        let keyJoin = rule.columns.map { "a.\(quoteIdentifier($0)) = b.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let firstJoin = rule.columns.map { "c.\(quoteIdentifier($0)) = a.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let columns = spec.columns.map(\.name)
        let selected = columns.flatMap { ["a.\(quoteIdentifier($0)) AS \(quoteIdentifier("a." + $0))", "b.\(quoteIdentifier($0)) AS \(quoteIdentifier("b." + $0))"] }
        let places = hasProvenance ? "a._file AS first_file, a._line AS first_line, b._file AS _file, b._line AS _line"
                                   : "NULL AS first_file, NULL AS first_line, NULL AS _file, NULL AS _line"
        let sql = """
            SELECT \(places), \(selected.joined(separator: ", ")) FROM \(table) AS a JOIN \(table) AS b ON \(keyJoin) AND a.rowid < b.rowid
            WHERE NOT EXISTS (SELECT 1 FROM \(table) AS c WHERE \(firstJoin) AND c.rowid < a.rowid) ORDER BY b.rowid
            """
        try database.forEachRow(sql) { row in
            let key = rule.columns.map { row["b." + $0].textValue ?? "" }.joined(separator: ", ")
            let firstPlace = [row["first_file"].textValue, row["first_line"].textValue].compactMap { $0 }.joined(separator: ":")
            let first = firstPlace.isEmpty ? "" : " (first at \(firstPlace))"
            let differing = columns.filter { row["a." + $0] != row["b." + $0] }
            let what = "\(spec.name) \(rule.columns.joined(separator: ",")) \"\(key)\""
            if differing.isEmpty {
                var duplicate = rule
                duplicate.code = rule.code == RuleEngine.defaultCode(.unique) ? "duplicate-row" : rule.code + ".identical"
                duplicate.severity = .warning
                report(duplicate, row, "\(what) is listed again with identical values\(first); kept once")
            } else {
                let changes = differing.map { "\($0) \"\(row["b." + $0].textValue ?? "NULL")\" here, \"\(row["a." + $0].textValue ?? "NULL")\" there" }
                report(rule, row, "\(what) is listed twice with different values\(first): \(changes.joined(separator: "; "))")
            }
        }
    }

    /// Coordinates outside the box; when swapping latitude and longitude would put them inside, says so.
    private func bounds(_ rule: RuleSpec) throws {
        let box = rule.box!
        let latitude = rule.latitude!, longitude = rule.longitude!
        let place = hasProvenance ? "_file, _line" : "NULL AS _file, NULL AS _line"
        let sql = "SELECT \(place), \(quoteIdentifier(latitude)), \(quoteIdentifier(longitude)), \(describedKey(rule.table!)) FROM \(quoteIdentifier(rule.table!)) WHERE \(quoteIdentifier(latitude)) IS NOT NULL AND \(quoteIdentifier(longitude)) IS NOT NULL ORDER BY rowid"
        func inside(_ lat: Double, _ lon: Double) -> Bool {
            (box.minLatitude...box.maxLatitude).contains(lat) && (box.minLongitude...box.maxLongitude).contains(lon)
        }
        try database.forEachRow(sql) { row in
            guard let lat = row[latitude].number, let lon = row[longitude].number, !inside(lat, lon) else { return }
            let what = describe(rule.table!, row)
            if inside(lon, lat) {
                var swapped = rule
                swapped.code = "swapped-coordinates"
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

extension SQLValue {
    /// The value as a number, when it is one.
    var number: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }
}
