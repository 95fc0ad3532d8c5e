import Foundation

/// Where a build writes.
public struct BuildOptions: Sendable {
    /// The bundle file; `build/<bundle>.sqlite` under the current folder when `nil`.
    public var output: URL?
    /// The JSON report; beside the bundle as `<bundle>.report.json` when `nil`.
    public var report: URL?

    public init(output: URL? = nil, report: URL? = nil) {
        self.output = output
        self.report = report
    }
}

/// What a build did: whether the bundle was written, the tables' row counts and every finding.
public struct BuildOutcome: Sendable {
    public var bundle: String
    public var output: URL
    public var reportURL: URL
    /// True when the bundle was written (no error remained).
    public var built: Bool
    /// Rows per shipped table, in declaration order (staged rows when the build failed).
    public var tables: [TableCount]
    /// SHA-256 of every input, by path relative to the pipeline folder.
    public var inputs: [String: String]
    /// Every finding, in a stable order.
    public var diagnostics: [Diagnostic]
}

/// A table's name and row count.
public struct TableCount: Codable, Sendable, Equatable {
    public var name: String
    public var rows: Int
}

/// Runs a pipeline: read every source into staging, fill query tables, run the rules, and write the bundle only
/// when no error remains. A failed build leaves any previous bundle untouched.
public enum Builder {
    /// Builds `pipeline`.
    /// - Throws: `KilnError.io` when inputs or outputs cannot be read or written; `KilnError.manifest` when SQLite
    ///   refuses SQL the manifest wrote. Validation errors do not throw: they are in the outcome.
    public static func build(_ pipeline: Pipeline, options: BuildOptions = BuildOptions()) throws -> BuildOutcome {
        let manifest = pipeline.manifest
        let output = options.output ?? URL(fileURLWithPath: "build").appendingPathComponent("\(manifest.bundle).sqlite")
        let reportURL = options.report ?? output.deletingPathExtension().appendingPathExtension("report.json")
        let folder = output.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw KilnError.io("cannot create the output folder \(folder.path): \(error.localizedDescription)")
        }
        let stagingURL = folder.appendingPathComponent(".\(manifest.bundle).staging.\(ProcessInfo.processInfo.processIdentifier).sqlite")
        defer { try? FileManager.default.removeItem(at: stagingURL) }

        let log = DiagnosticLog(overrides: manifest.severity)
        var inputs: [String: String] = [:]
        var counts: [TableCount] = []
        do {
            let staging = try StagingArea(url: stagingURL, pipeline: pipeline)
            for source in pipeline.sources {
                inputs.merge(try staging.load(source, log: log)) { first, _ in first }
            }
            try staging.fillQueryTables()
            try staging.indexLookupColumns()
            try RuleEngine(pipeline: pipeline, database: staging.database, log: log).run()
            counts = try manifest.tables.filter(\.ship).map { table in
                let rows = try staging.database.rows("SELECT count(*) FROM \(quoteIdentifier(table.name))")
                return TableCount(name: table.name, rows: Int(rows.first?.values.first?.number ?? 0))
            }
            try staging.database.close()
        } catch let error as SQLiteError {
            throw KilnError.io("staging failed in \(folder.path): \(error.message)")
        }

        var built = false
        if !log.hasErrors {
            do {
                counts = try BundleWriter(manifest: manifest).write(from: stagingURL, to: output, inputs: inputs)
                    .map { TableCount(name: $0.table, rows: $0.rows) }
                built = true
            } catch KilnError.validation(let message) {
                log.report("bundle", .error, message)
            }
        }
        let outcome = BuildOutcome(bundle: manifest.bundle, output: output, reportURL: reportURL, built: built,
                                   tables: counts, inputs: inputs, diagnostics: log.sorted)
        try BuildReport(outcome).write(to: reportURL)
        return outcome
    }
}
