import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Checks a shipped bundle against the manifest that built it: the file, SQLite's own integrity and foreign-key
/// checks, the schema, the `kiln_metadata` table, and every rule of the manifest run again on the bundle.
/// Everything wrong with the bundle is a finding in the report; only a file that cannot be read at all throws.
///
///     let report = try BundleChecker(pipeline: try ManifestLoader.load("raw/patras")).check(URL(fileURLWithPath: "build/patras.sqlite"))
///     if !report.passed { … }
public struct BundleChecker {
    /// The pipeline whose manifest the bundle is checked against.
    public let pipeline: CompiledPipeline
    private var manifest: Manifest { pipeline.manifest }

    /// A checker for bundles of `pipeline`.
    public init(pipeline: CompiledPipeline) {
        self.pipeline = pipeline
    }

    /// Checks the bundle at `url` against the manifest `ManifestLocation` finds (`manifestPath`, else the current
    /// folder's, else `raw/<bundle>`), without reading any raw input. A file that is not a bundle gives a report with
    /// that one finding.
    /// - Throws: `KilnError.io` when the bundle cannot be read; `KilnError.usage` or `KilnError.manifest` when the
    ///   manifest is missing or wrong.
    public static func check(_ url: URL, manifestPath: String?) throws -> CheckReport {
        let path: String
        do {
            path = try ManifestLocation.require(explicit: manifestPath, bundle: url)
        } catch KilnError.validation(let failure) {
            return unusable(url, failure, manifest: nil)
        }
        return try BundleChecker(pipeline: try ManifestLoader.load(path, resolvingInputs: false)).check(url)
    }

    /// Checks the bundle at `url` against this pipeline's manifest.
    /// - Throws: `KilnError.io` when the file does not exist or cannot be read.
    public func check(_ url: URL) throws -> CheckReport {
        let manifestPath = displayPath(manifest.file)
        let database: Database
        do {
            database = try BundleFile.open(url)
        } catch KilnError.validation(let failure) {
            return BundleChecker.unusable(url, failure, manifest: manifestPath)
        }
        var results = [CheckResult(category: .file, name: "SQLite file of bundle \(manifest.bundle)")]
        // A bundle is data Kiln did not necessarily write (a doctored file can hold a table replaced by an endless
        // view): every statement of the metadata, integrity and schema steps runs under the manifest's time limit,
        // per 100 MB of the bundle as any bundle a command reads (`BundleReadLimit`), in place of the default one
        // `BundleFile.open` gave; the rules have their own, each.
        let seconds = BundleReadLimit(seconds: manifest.limits.sqlSeconds, origin: "limits.sqlSeconds", remedy: "").budget(for: [url])
        var foreign: String?
        do {
            try database.pausingTimeLimit {
                let present = try database.withTimeLimit(seconds) { () throws -> SchemaSnapshot? in
                    let metadata = try BundleFile.metadata(of: database)
                    if let name = metadata?["bundle.name"], name != manifest.bundle {
                        foreign = name
                        return nil
                    }
                    results += try integrity(database, url)
                    let present = try SchemaSnapshot(database, excluding: [BundleWriter.metadataTable])
                    let target = metadata?["bundle.target"].flatMap { platform in manifest.targets.first { $0.platform == platform } }
                    results += try schema(present, url, target: target)
                    results.append(metadataCheck(metadata, database, present, url))
                    return present
                }
                if let present { results += try rules(database, present, url) }
            }
        } catch let error as SQLiteError where error.isInterrupted {
            results.append(CheckResult(category: .file, name: "reading the bundle", findings: [
                Diagnostic(code: .sqlTimeLimit, message: "reading \(url.relativePath) took longer than \(sqlNumber((seconds * 10).rounded() / 10)) s (limits.sqlSeconds, per 100 MB of the bundle) and was stopped; the checks after it did not run",
                           provenance: Provenance(file: url.relativePath)),
            ]))
        } catch let error as SQLiteError {
            results.append(CheckResult(category: .file, name: "reading the bundle",
                                       findings: [problem(url, "\(url.relativePath) is damaged: SQLite cannot read it (\(error.message))")]))
        }
        if let foreign {
            return BundleChecker.unusable(url, ValidationFailure("\(url.relativePath) is a bundle of \"\(foreign)\", not of \"\(manifest.bundle)\" which \(manifestPath) builds",
                                                                 file: url.relativePath, expected: manifest.bundle, found: foreign), manifest: manifestPath)
        }
        return CheckReport(bundle: url.relativePath, manifest: manifestPath, results: results)
    }

    /// The report of a file that cannot be checked at all: one error, made from `failure` (at `url` when it names no
    /// file).
    private static func unusable(_ url: URL, _ failure: ValidationFailure, manifest: String?) -> CheckReport {
        var finding = Diagnostic(code: .checkFile, failure)
        if finding.provenance == nil { finding.provenance = Provenance(file: url.relativePath) }
        return CheckReport(bundle: url.relativePath, manifest: manifest,
                           results: [CheckResult(category: .file, name: "SQLite file", findings: [finding])])
    }

    private func problem(_ url: URL, _ message: String) -> Diagnostic {
        Diagnostic(code: .checkFile, message: message, provenance: Provenance(file: url.relativePath))
    }

    /// A result whose findings have the manifest's severity overrides applied, placed in the bundle, in a stable order.
    private func result(_ category: CheckCategory, _ name: String, _ url: URL, _ findings: [Diagnostic],
                        notStored: [DiagnosticTally.Key: Int] = [:]) -> CheckResult {
        let log = DiagnosticLog(overrides: manifest.severity)
        for var finding in findings {
            if finding.provenance == nil { finding.provenance = Provenance(file: url.relativePath) }
            log.report(finding)
        }
        var result = CheckResult(category: category, name: name, findings: log.sorted)
        for (key, count) in notStored.merging(log.tally.notStored, uniquingKeysWith: +) {
            let severity = manifest.severity[key.code] ?? key.severity
            if severity != .off { result.notStored[severity, default: 0] += count }
        }
        return result
    }

    private func finding(_ code: DiagnosticCode, _ message: String) -> Diagnostic {
        Diagnostic(code: code, message: message)
    }

    // MARK: - Integrity

    /// `PRAGMA integrity_check`, `PRAGMA foreign_key_check` (one finding per broken key, naming its first row) and
    /// the row counts of full-text tables against their tables.
    private func integrity(_ database: Database, _ url: URL) throws -> [CheckResult] {
        let problems = try database.rows("PRAGMA integrity_check").compactMap(\.values.first?.textValue).filter { $0 != "ok" }
        var results = [result(.integrity, "integrity_check", url, problems.map { finding(.checkIntegrity, "PRAGMA integrity_check: \($0)") })]

        var groups: [(table: String, key: Int, rowids: [Int64])] = []
        for row in try database.rows("PRAGMA foreign_key_check") {
            let table = row["table"].textValue ?? "", key = Int(row["fkid"].number ?? 0)
            let rowid = Int64(row["rowid"].number ?? 0)
            if let index = groups.firstIndex(where: { $0.table == table && $0.key == key }) {
                groups[index].rowids.append(rowid)
            } else {
                groups.append((table, key, [rowid]))
            }
        }
        var broken: [Diagnostic] = []
        for group in groups {
            let parts = try database.rows("SELECT * FROM pragma_foreign_key_list(?) WHERE id = ? ORDER BY seq", [.text(group.table), .integer(Int64(group.key))])
            let columns = parts.compactMap { $0["from"].textValue }, parent = parts.first?["table"].textValue ?? "?"
            let target = parts.compactMap { $0["to"].textValue }
            // A key the manifest declares is checked by its `foreign-key` rule below, with the build's message: one
            // broken key is one finding. SQLite's check stays for keys the manifest does not know (a doctored bundle).
            let declared = ForeignKeySpec(columns: columns, table: parent, referencedColumns: target)
            if manifest.table(group.table).map({ $0.ship && $0.allForeignKeys.contains(declared) }) == true { continue }
            let first = try database.rows("SELECT * FROM \(quoteIdentifier(group.table)) WHERE rowid = ?", [.integer(group.rowids[0])]).first
            let values = columns.map { first?[$0].textValue ?? "NULL" }.joined(separator: ", ")
            let more = group.rowids.count > 1 ? "; \(group.rowids.count - 1) more rows of \(group.table) break this key" : ""
            broken.append(finding(.checkForeignKey, "PRAGMA foreign_key_check: \(describe(group.table, first, rowid: group.rowids[0])): \(columns.joined(separator: ",")) \"\(values)\" refers to no \(parent) (no \(parent).\(target.joined(separator: ",")) \"\(values)\")\(more)"))
        }
        results.append(result(.integrity, "foreign_key_check", url, broken))

        // A table that cannot be counted is missing or not a table (the schema step says which); a count stopped by
        // the time limit stops the check, so it is not taken for a pass.
        func count(_ name: String) throws -> Double? {
            do {
                return try database.rows("SELECT count(*) FROM \(quoteIdentifier(name))").first?.values.first?.number
            } catch let error as SQLiteError where error.isInterrupted {
                throw error
            } catch {
                return nil
            }
        }
        for table in manifest.tables where table.ship {
            // An FTS5 table reading its table's text counts that table's rows: the rows it indexed are those its
            // document sizes (`_docsize`) were written for (FTS4: `_docsize` too).
            guard let fullText = table.fullText, let indexed = try count(fullText.name + "_docsize") ?? count(fullText.name),
                  let rows = try count(table.name) else { continue }
            let stale = indexed == rows ? [] : [finding(.checkFullText, "full-text table \(fullText.name) holds \(Int(indexed)) rows, but its table \(table.name) holds \(Int(rows))")]
            results.append(result(.integrity, "full-text rows of \(fullText.name)", url, stale))
        }
        return results
    }

    /// A row named by the manifest's primary key, e.g. `route_stop 1.1 0`, or by its rowid.
    private func describe(_ table: String, _ row: Row?, rowid: Int64) -> String {
        let key = manifest.table(table)?.primaryKey ?? []
        guard let row, !key.isEmpty else { return "\(table) row \(rowid)" }
        return "\(table) " + key.map { row[$0].textValue ?? "NULL" }.joined(separator: " ")
    }

    // MARK: - Schema

    /// The bundle's schema against the one the manifest declares: one check per declared table (with its full-text
    /// table), one per undeclared table, and `user_version`.
    private func schema(_ present: SchemaSnapshot, _ url: URL, target: SQLiteTarget?) throws -> [CheckResult] {
        let differences = try SchemaSnapshot.declared(by: manifest, target: target).differences(to: present)
        var owner: [String: String] = [:]
        for table in manifest.tables where table.ship {
            owner[table.name] = table.name
            if let fullText = table.fullText { owner[fullText.name] = table.name }
            if let spatial = table.spatial { owner[spatial.name] = table.name }
        }
        func findings(_ matching: (SchemaDifference) -> Bool) -> [Diagnostic] {
            differences.filter(matching).map {
                finding(.schema($0.kind), $0.sentence(expected: "the manifest", actual: "the bundle"))
            }
        }
        var results = manifest.tables.filter(\.ship).map { table in
            result(.schema, "table \(table.name)", url, findings { $0.table.flatMap { owner[$0] } == table.name })
        }
        let undeclared = Set(differences.compactMap(\.table).filter { owner[$0] == nil }).sorted()
        results += undeclared.map { name in result(.schema, "table \(name)", url, findings { $0.table == name }) }
        results.append(result(.schema, "user_version", url, findings { $0.kind == .userVersion }))
        if let appTables = try userFilledAgainstBaseline(present, url) { results.append(appTables) }
        return results
    }

    /// The tables the app fills against the manifest's `baseline` (the bundle apps have now), when it names one that
    /// exists and is not `url` itself: their schema may change only with a new schema version
    /// (`diff.user-filled-schema`). A baseline that cannot be read is a `diff.baseline` error.
    private func userFilledAgainstBaseline(_ present: SchemaSnapshot, _ url: URL) throws -> CheckResult? {
        let userFilled = Set(manifest.tables.filter { $0.ship && $0.userFilled }.map(\.name))
        guard !userFilled.isEmpty, let baseline = manifest.baselineURL, FileManager.default.fileExists(atPath: baseline.path),
              FileKey(baseline) != FileKey(url) else { return nil }
        let name = "userFilled tables since the baseline \(displayPath(baseline))"
        let before: SchemaSnapshot
        do {
            before = try SchemaSnapshot(try BundleFile.open(baseline), excluding: [BundleWriter.metadataTable])
        } catch {
            guard let problem = error as? KilnError ?? BundleReadLimit.current.stopped(error, reading: [baseline]) else { throw error }
            return result(.schema, name, url, [finding(.diffBaseline, "the bundle cannot be compared with the baseline: \(problem.description)")])
        }
        let change = BundleDiff.userFilledSchemaChange(before.differences(to: present), userFilled: userFilled, oldVersion: before.userVersion,
                                                       newVersion: present.userVersion, old: displayPath(baseline))
        return result(.schema, name, url, change.map { [$0] } ?? [])
    }

    // MARK: - Metadata

    /// `kiln_metadata` is there, names the manifest's schema version (and the bundle's `user_version`), and counts
    /// every table's rows right.
    private func metadataCheck(_ metadata: [String: String]?, _ database: Database, _ present: SchemaSnapshot, _ url: URL) -> CheckResult {
        let name = BundleWriter.metadataTable
        guard let metadata else {
            return result(.metadata, name, url, [finding(.checkMetadata, "the bundle has no \(name) table: it was not written by kiln build")])
        }
        var problems: [String] = []
        if metadata["bundle.name"] == nil { problems.append("\(name) names no bundle (no bundle.name entry)") }
        let version = metadata["bundle.schema_version"]
        if let platform = metadata["bundle.target"], !manifest.targets.contains(where: { $0.platform == platform }) {
            problems.append("\(name) says the bundle is for the target \(platform), which the manifest's targets do not name")
        }
        if version != String(manifest.schemaVersion) {
            problems.append("\(name) records schema version \(version ?? "none"), but the manifest's schemaVersion is \(manifest.schemaVersion)")
        }
        // The two places an app may read the version from must agree (SQLite keeps only 32 bits of user_version).
        if let version, version != String(present.userVersion) {
            problems.append("\(name) records schema version \(version), but the bundle's user_version is \(present.userVersion)")
        }
        for table in present.tables.keys.sorted() where manifest.table(table)?.userFilled != true {
            let rows = (try? database.rows("SELECT count(*) FROM main.\(quoteIdentifier(table))").first?.values.first?.number).flatMap { $0 }.map { Int($0) }
            switch metadata["rows.\(table)"] {
            case nil: problems.append("\(name) has no row count for table \(table) (rows.\(table))")
            case let recorded? where recorded != rows.map(String.init):
                problems.append("\(name) records \(recorded) rows for table \(table), but the table holds \(rows.map(String.init) ?? "an unreadable number of rows")")
            default: break
            }
        }
        for key in metadata.keys.sorted() where key.hasPrefix("rows.") && present.tables[String(key.dropFirst(5))] == nil {
            problems.append("\(name) records \(metadata[key]!) rows for table \(key.dropFirst(5)), which is missing in the bundle")
        }
        return result(.metadata, name, url, problems.map { finding(.checkMetadata, $0) })
    }

    // MARK: - Rules

    /// Every rule of the manifest, run on the bundle with the manifest's severity overrides. Rules on tables that
    /// are not shipped (or missing in the bundle) are not run and say so.
    private func rules(_ database: Database, _ present: SchemaSnapshot, _ url: URL) throws -> [CheckResult] {
        // SQL rules read `_file` and `_line`, which only staged tables have: each shipped table is seen through a
        // temporary view of the same name that adds them (as NULL) and exposes the rowid the built-in rules order by.
        for name in present.tables.keys.sorted() where manifest.table(name)?.ship == true {
            try database.execute("CREATE TEMP VIEW \(quoteIdentifier(name)) AS SELECT rowid AS rowid, *, NULL AS _file, NULL AS _line FROM main.\(quoteIdentifier(name))")
        }
        defer {
            for name in present.tables.keys.sorted() { try? database.execute("DROP VIEW IF EXISTS temp.\(quoteIdentifier(name))") }
        }
        let engine = RuleEngine(pipeline: pipeline, database: database, log: DiagnosticLog(), hasProvenance: false)
        var results: [CheckResult] = []
        for (rule, keyPath) in engine.rules {
            var name = rule.code
            if let table = rule.check.table {
                name += " on \(table)" + (rule.check.columns.isEmpty ? "" : "." + rule.check.columns.joined(separator: ","))
            }
            name += " (\(keyPath))"
            if let table = (rule.check.tablesRead ?? []).first(where: { present.tables[$0] == nil }) {
                results.append(CheckResult(category: .rules, name: name, notRun: unavailable(table)))
                continue
            }
            let log = DiagnosticLog()
            do {
                let seconds = manifest.limits.sqlSeconds
                do {
                    try database.withTimeLimit(seconds) { try RuleEngine(pipeline: pipeline, database: database, log: log, hasProvenance: false).run(rule) }
                } catch let error as SQLiteError where error.isInterrupted {
                    log.report(RuleEngine.timeLimitCode, RuleEngine.timeLimitMessage(rule, keyPath: keyPath, seconds: seconds))
                }
                results.append(result(.rules, name, url, log.diagnostics, notStored: log.tally.notStored))
            } catch let error as SQLiteError {
                if let table = error.missingTable, manifest.table(table) != nil {
                    results.append(CheckResult(category: .rules, name: name, notRun: unavailable(table)))
                } else {
                    results.append(result(.rules, name, url, [finding(.checkRule, "rule \(rule.code) (\(keyPath)) cannot run on the bundle: SQLite says \(error.message)")]))
                }
            }
        }
        return results
    }

    /// Why a rule reading `table` is not run on a bundle.
    private func unavailable(_ table: String) -> String {
        manifest.table(table)?.ship == false ? "table \(table) is not shipped" : "table \(table) is missing in the bundle"
    }
}
