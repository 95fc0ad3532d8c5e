import KilnC
import KilnCore

/// Checks that every name a manifest uses refers to something it declares, that names are plain identifiers
/// (SQL is built from them), and that every pattern compiles.
package struct ManifestChecker {
    package let manifest: Manifest
    /// Makes the error for a key path and a message.
    package let issue: (String, String) -> KilnError

    /// The first constraint of a shipped table that the bundle's schema declares (`SchemaSQL`) and that refuses the
    /// rows a finding of `code` names (`duplicate-key`, `not-null`, `range`, `enum`, `foreign-key`), described; `nil`
    /// when no shipped table declares one. A severity override below `error` of such a code cannot be honoured.
    package func schemaConstraint(enforcing code: String) -> String? {
        for table in manifest.tables where table.ship {
            let name = table.name
            switch code {
            case DiagnosticCode.duplicateKey.rawValue:
                if !table.primaryKey.isEmpty { return "the primary key (\(table.primaryKey.joined(separator: ", "))) of \(name)" }
                if let set = table.unique.first { return "\(name)'s columns \(set.joined(separator: ", ")) unique together" }
                if let column = table.columns.first(where: \.unique) { return "\(name).\(column.name) unique" }
            case DiagnosticCode.notNull.rawValue:
                if let column = table.columns.first(where: { $0.notNull || table.primaryKey.contains($0.name) }) { return "\(name).\(column.name) NOT NULL" }
            case DiagnosticCode.range.rawValue:
                if let column = table.columns.first(where: { $0.range != nil }) { return "the range of \(name).\(column.name) (a CHECK)" }
            case DiagnosticCode.enumeration.rawValue:
                if let column = table.columns.first(where: { $0.allowed != nil }) { return "the values of \(name).\(column.name) (a CHECK)" }
            case DiagnosticCode.foreignKey.rawValue:
                if let key = table.allForeignKeys.first {
                    return "\(name) (\(key.columns.joined(separator: ", "))) REFERENCES \(key.table), which the bundle's foreign-key check holds"
                }
            default:
                return nil
            }
        }
        return nil
    }

    package func check() throws {
        try require(BundleName.isValid(manifest.bundle),
                    "bundle", "the bundle name \"\(manifest.bundle)\" may hold only letters, digits, \"-\", \"_\" and \".\"")
        try require(manifest.schemaVersion >= 0, "schemaVersion", "the schema version must not be negative")
        try require(manifest.schemaVersion <= Int(Int32.max), "schemaVersion",
                    "the schema version \(manifest.schemaVersion) is over 2147483647, the largest SQLite's user_version holds (a 32-bit integer)")
        let ruleCodes = Set(manifest.rules.map(\.code))
        for code in manifest.severity.keys.sorted() {
            let ruleCode = code.hasSuffix(".identical") ? String(code.dropLast(".identical".count)) : code
            try require(DiagnosticCode.named(code) != nil || ruleCodes.contains(ruleCode), "severity.\(code)",
                        "no finding has the code \"\(code)\": it is neither one of Kiln's codes (kiln codes lists them) nor the code "
                            + "of a rule of this manifest\(ruleCodes.isEmpty ? "" : " (\(ruleCodes.sorted().joined(separator: ", ")))")")
        }
        for (index, code) in manifest.acknowledged.enumerated() {
            let ruleCode = code.hasSuffix(".identical") ? String(code.dropLast(".identical".count)) : code
            let rule = manifest.rules.first { $0.code == ruleCode }
            try require(DiagnosticCode.named(code) != nil || rule != nil, "acknowledged[\(index)]",
                        "no finding has the code \"\(code)\": it is neither one of Kiln's codes (kiln codes lists them) nor the code "
                            + "of a rule of this manifest\(ruleCodes.isEmpty ? "" : " (\(ruleCodes.sorted().joined(separator: ", ")))")")
            let severity = manifest.severity[code] ?? DiagnosticCode.named(code)?.severity ?? (code == ruleCode ? rule?.severity : .warning) ?? .error
            try require(severity < .error, "acknowledged[\(index)]",
                        "\"\(code)\" is an error, and an error fails the build: acknowledging it would hide why; only warnings and infos are acknowledged")
        }
        for code in manifest.severity.keys.sorted() {
            guard let severity = manifest.severity[code], severity < .error, let constraint = schemaConstraint(enforcing: code) else { continue }
            throw issue("severity.\(code)", "\"\(code)\" cannot be \"\(severity.rawValue)\": the bundle's schema declares \(constraint), which refuses "
                            + "every row such a finding names, so no bundle could be written; correct the rows or the declaration instead")
        }
        // SQLite does not tell ASCII names apart by case: "T" and "t" are one table.
        var seen: [String: String] = [:]
        func claim(_ name: String, _ keyPath: String, _ twice: String) throws {
            if let earlier = seen[name.lowercased()] {
                throw issue(keyPath, earlier == name ? twice : "\"\(name)\" and \"\(earlier)\" differ only in case, and SQLite does not tell them apart")
            }
            seen[name.lowercased()] = name
        }
        for (index, table) in manifest.tables.enumerated() {
            try checkTable(table, path: "tables[\(index)]")
            try claim(table.name, "tables[\(index)].name", "table \"\(table.name)\" is declared twice")
            if let fullText = table.fullText {
                try claim(fullText.name, "tables[\(index)].fullText.name", "\"\(fullText.name)\" is already the name of a table")
            }
            if let spatial = table.spatial {
                try claim(spatial.name, "tables[\(index)].spatial.name", "\"\(spatial.name)\" is already the name of a table")
            }
        }
        for source in manifest.sources {
            for target in source.targets {
                if let table = manifest.table(target.table), table.query != nil {
                    throw issue(target.keyPath, "table \"\(table.name)\" is filled by its query; a source cannot write into it")
                }
            }
        }
        try checkFetchedFiles()
        let sqlRules = SQLRuleCheck(manifest: manifest)
        for (index, rule) in manifest.rules.enumerated() { try checkRule(rule, path: "rules[\(index)]", sqlRules: sqlRules) }
        // Query tables and export queries run later (the build, the export), but SQL whose result chance or the clock
        // decides is refused now, naming the line.
        for (index, table) in manifest.tables.enumerated() {
            if let query = table.query, let problem = sqlRules.nondeterminism(in: query) { throw issue("tables[\(index)].query", problem) }
        }
        for (index, export) in manifest.exports.enumerated() {
            for (fileIndex, file) in export.files.enumerated() {
                if let problem = sqlRules.nondeterminism(in: file.query) { throw issue("exports[\(index)].files[\(fileIndex)].query", problem) }
            }
        }
        for (index, fixture) in manifest.fixtures.enumerated() {
            let sourceName = fixture.source.split(separator: ".", maxSplits: 1).first.map(String.init) ?? fixture.source
            try require(manifest.sources.contains { $0.name == sourceName }, "fixtures[\(index)].source",
                        "no source named \"\(fixture.source)\"; sources: \(manifest.sources.map(\.name).joined(separator: ", "))")
        }
        var exports: Set<String> = []
        for (index, export) in manifest.exports.enumerated() {
            try require(exports.insert(export.name).inserted, "exports[\(index)].name", "export \"\(export.name)\" is declared twice")
            for (fileIndex, file) in export.files.enumerated() {
                try require(!file.path.contains("/") && !file.path.hasPrefix(".") && !file.path.isEmpty,
                            "exports[\(index)].files[\(fileIndex)].path", "an export file is a plain file name, not \"\(file.path)\"")
            }
            if let archive = export.archive {
                try require(!archive.contains("/") && !archive.hasPrefix(".") && !archive.isEmpty, "exports[\(index)].archive",
                            "an archive is a plain file name (written beside the --out folder), not \"\(archive)\"")
            }
        }
    }

    private func checkTable(_ table: TableSpec, path: String) throws {
        try identifier(table.name, path + ".name")
        try require(!ManifestChecker.isReserved(table.name), path + ".name",
                    "table names starting with \"kiln_\" or \"sqlite_\" (in any case) are reserved")
        try require(!table.columns.isEmpty, path + ".columns", "a table needs at least one column")
        var names: Set<String> = []
        for (index, column) in table.columns.enumerated() {
            let columnPath = "\(path).columns[\(index)]"
            try identifier(column.name, columnPath + ".name")
            try require(!column.name.hasPrefix("_"), columnPath + ".name", "column names starting with \"_\" are reserved for provenance")
            try require(names.insert(column.name.lowercased()).inserted, columnPath + ".name", "column \"\(column.name)\" is declared twice (SQLite does not tell names apart by case)")
            if let reference = column.references { try checkReference(reference, path: columnPath + ".references") }
            if let pattern = column.pattern { try compiles(pattern, columnPath + ".pattern") }
        }
        try columns(table.primaryKey, of: table, path + ".primaryKey")
        for (index, set) in table.unique.enumerated() { try columns(set, of: table, "\(path).unique[\(index)]") }
        for (index, key) in table.foreignKeys.enumerated() {
            let keyPath = "\(path).foreignKeys[\(index)]"
            try columns(key.columns, of: table, keyPath + ".columns")
            guard let target = manifest.table(key.table) else { throw issue(keyPath + ".references", "no table named \"\(key.table)\"") }
            try columns(key.referencedColumns, of: target, keyPath + ".to")
            try require(key.columns.count == key.referencedColumns.count, keyPath + ".to", "give as many columns in \"to\" as in \"columns\"")
        }
        for (index, index_) in table.indexes.enumerated() {
            try columns(index_.columns, of: table, "\(path).indexes[\(index)].columns")
            try require(!index_.columns.isEmpty, "\(path).indexes[\(index)].columns", "an index needs at least one column")
            if let name = index_.name { try identifier(name, "\(path).indexes[\(index)].name") }
        }
        if let fullText = table.fullText {
            try identifier(fullText.name, path + ".fullText.name")
            try columns(fullText.columns, of: table, path + ".fullText.columns")
            try columns(fullText.unindexed, of: table, path + ".fullText.unindexed")
            for (key, names) in [("columns", fullText.columns), ("unindexed", fullText.unindexed)] {
                for (index, name) in names.enumerated() where ManifestChecker.isReservedInFullText(name, table: fullText.name) {
                    throw issue("\(path).fullText.\(key)[\(index)]",
                                "a full-text table cannot have a column named \"\(name)\": FTS5 keeps \"rank\", \"rowid\" and the full-text table's own name "
                                    + "(\"\(fullText.name)\") for itself, in any case; rename the column")
                }
            }
            try require(fullText.tokenize.allSatisfy { $0.isLetter || $0.isNumber || " _\"'".contains($0) },
                        path + ".fullText.tokenize", "the tokenizer may hold only letters, digits, spaces, quotes and \"_\"")
            if let problem = SchemaSQL.fullTextProblem(fullText) {
                throw issue(path + ".fullText.tokenize", "SQLite's FTS5 refuses the tokenizer \"\(fullText.tokenize)\": \(problem)")
            }
        }
        if let spatial = table.spatial { try checkSpatial(spatial, of: table, path: path + ".spatial") }
    }

    /// True for a name SQLite or Kiln keeps for itself: SQLite compares names without case, so `SQLITE_x` and
    /// `Kiln_metadata` are its and Kiln's as much as `sqlite_x` and `kiln_metadata` are.
    package static func isReserved(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("kiln_") || lowered.hasPrefix("sqlite_")
    }

    /// True for a column name an FTS5 table named `table` refuses (SQLite: "reserved fts5 column name"; its own name is
    /// its hidden column's).
    package static func isReservedInFullText(_ name: String, table: String) -> Bool {
        ["rank", "rowid", table.lowercased()].contains(name.lowercased())
    }

    /// An R*Tree needs a plain name, numeric coordinate columns, and a single INTEGER primary key for its ids.
    private func checkSpatial(_ spatial: SpatialSpec, of table: TableSpec, path: String) throws {
        try identifier(spatial.name, path + ".name")
        try require(!ManifestChecker.isReserved(spatial.name), path + ".name",
                    "names starting with \"kiln_\" or \"sqlite_\" (in any case) are reserved")
        for (key, name) in [("latitude", spatial.latitude), ("longitude", spatial.longitude)] {
            try columns([name], of: table, path + "." + key)
            try require(table.column(name).map { $0.type == .real || $0.type == .integer } == true, path + "." + key,
                        "the \(key) column \"\(name)\" must be of type real (decimal degrees)")
        }
        try require(table.primaryKey.count == 1 && table.column(table.primaryKey[0])?.type == .integer, path,
                    "an R*Tree keys its entries by the row's id: table \"\(table.name)\" needs a primary key of one integer column")
    }

    /// Checks that a rule names tables and columns that exist, that its pattern compiles, and that an SQL rule's
    /// message names only columns its query returns (`SQLRuleCheck`).
    private func checkRule(_ rule: RuleSpec, path: String, sqlRules: SQLRuleCheck) throws {
        guard let tableName = rule.check.table else {
            guard case .sql(let query, let message) = rule.check else { return }
            if let problem = sqlRules.problem(query: query, message: message) {
                throw issue(path + (problem.inMessage ? ".message" : ".sql"), problem.text)
            }
            return
        }
        guard let table = manifest.table(tableName) else { throw issue(path + ".table", "no table named \"\(tableName)\"") }
        switch rule.check {
        case .bounds(_, let latitude, let longitude, _):
            try columns([latitude], of: table, path + ".latitude")
            try columns([longitude], of: table, path + ".longitude")
        case .references(_, let key):
            try columns(key.columns, of: table, path + ".columns")
            try checkReference(ColumnReference(table: key.table, column: key.referencedColumns[0]), path: path + ".references")
        case .pattern(_, let names, let pattern):
            try columns(names, of: table, path + ".columns")
            try compiles(pattern, path + ".pattern")
        default:
            try columns(rule.check.columns, of: table, path + ".columns")
        }
    }

    private func checkReference(_ reference: ColumnReference, path: String) throws {
        guard let target = manifest.table(reference.table) else { throw issue(path, "no table named \"\(reference.table)\"") }
        try require(target.column(reference.column) != nil, path, "table \"\(reference.table)\" has no column \"\(reference.column)\"")
    }

    private func columns(_ names: [String], of table: TableSpec, _ path: String) throws {
        for name in names where table.column(name) == nil {
            throw issue(path, "table \"\(table.name)\" has no column \"\(name)\"; columns: \(table.columns.map(\.name).joined(separator: ", "))")
        }
    }

    private func identifier(_ name: String, _ path: String) throws {
        let valid = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        try require(valid, path, "\"\(name)\" is not a plain identifier (ASCII letters, digits and \"_\", not starting with a digit)")
    }

    private func compiles(_ pattern: String, _ path: String) throws {
        do { _ = try RegexPattern(pattern) } catch let error as RegexCompileError { throw issue(path, error.description) }
    }

    private func require(_ condition: Bool, _ path: String, _ message: String) throws {
        if !condition { throw issue(path, message) }
    }

    /// Every fetched file is one the source reads (its `path` names it) and no other source's: a URL saved where the
    /// build never looks would be fetched for nothing, silently.
    private func checkFetchedFiles() throws {
        var owners: [String: String] = [:]
        for (index, source) in manifest.sources.enumerated() {
            guard let fetch = source.fetch else { continue }
            let path = "sources[\(index)]"
            let components = source.path.split(separator: "/").map(String.init)
            let last = components.last ?? ""
            let glob = last.contains("*") || last.contains("?")
            try require(!source.path.hasPrefix("/") && !components.contains(".."), path + ".path",
                        "a fetched source's path must stay inside the pipeline folder, found \"\(source.path)\"")
            if fetch.single {
                try require(!glob, path + ".fetch.url", "url is saved as the file path names, but \"\(source.path)\" is a glob: name one file, or use urls")
            } else if let derived = fetch.derived {
                try require(glob, path + ".fetch", "derived URLs are saved in the folder of path, each under its URL's last path segment: path must be a glob there (\"\(components.dropLast().joined(separator: "/"))/*.html\"), found \"\(source.path)\"")
                if let from = derived.from {
                    let key = path + (derived.isTemplate ? ".fetch.from" : ".fetch.links.from")
                    try require(from != source.name, key, "source \"\(source.name)\" cannot derive its URLs from its own files")
                    try require(manifest.sources.contains { $0.name == from }, key,
                                "no source named \"\(from)\" to derive URLs from; sources: \(manifest.sources.map(\.name).joined(separator: ", "))")
                }
            } else {
                try require(glob, path + ".fetch.urls", "urls are saved in the folder of path, each under its URL's last path segment: path must be a glob there (\"\(components.dropLast().joined(separator: "/"))/*.html\"), found \"\(source.path)\"")
            }
            for (position, (url, file)) in FetchFileName.files(for: fetch, path: source.path).enumerated() {
                let key = fetch.single ? path + ".fetch.url" : path + ".fetch.urls[\(position)]"
                let name = String(file.split(separator: "/").last ?? "")
                try require(!glob || FileCalls.matches(name, pattern: last), key,
                            "\"\(url)\" would be saved as \"\(file)\", which path \"\(source.path)\" does not match: the build would never read it")
                if let other = owners[file.lowercased()], other != source.name {
                    throw issue(key, "\"\(url)\" would be saved as \"\(file)\", where source \"\(other)\" saves a URL too")
                }
                owners[file.lowercased()] = source.name
            }
        }
        try checkDerivationCycles()
    }

    /// Sources whose URLs derive from one another in a ring can never be fetched: each waits for the other.
    private func checkDerivationCycles() throws {
        let dependency = Dictionary(manifest.sources.compactMap { source in source.fetch?.derived?.from.map { (source.name, $0) } },
                                    uniquingKeysWith: { first, _ in first })
        for (index, source) in manifest.sources.enumerated() where dependency[source.name] != nil {
            var chain = [source.name]
            while let next = dependency[chain.last!], !chain.contains(next) { chain.append(next) }
            if let next = dependency[chain.last!], next == source.name {
                let key = "sources[\(index)].fetch" + (source.fetch?.derived?.isTemplate == true ? ".from" : ".links.from")
                throw issue(key, "the URLs of sources \((chain + [source.name]).map { "\"\($0)\"" }.joined(separator: " → ")) derive from one another in a ring: none can be fetched first")
            }
        }
    }
}
