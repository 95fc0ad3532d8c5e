import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The JSON report of a build: every diagnostic with code, severity, message, file and line; row counts; inputs.
/// Keys are sorted and nothing depends on time, so equal builds give equal reports.
public struct BuildReport: Encodable {
    package struct Entry: Encodable {
        package var code: String
        package var severity: Severity
        package var message: String
        package var file: String?
        package var line: Int?
        package var column: Int?
        /// The URL the file was fetched from (absent for a file kiln fetch did not capture).
        package var url: String?
    }

    /// A table's row count, its bytes (when the bundle was written) and the manifest's description of it.
    package struct Table: Encodable {
        package var name: String
        package var rows: Int
        package var bytes: TableBytes?
        package var description: String?
    }

    /// The manifest file's name and the SHA-256 of its bytes.
    package struct ManifestFile: Encodable {
        package var file: String
        package var sha256: String
    }

    package var bundle: String
    package var built: Bool
    package var output: String
    /// The version of Kiln that built it.
    package var kilnVersion = KilnVersion.current
    package var manifest: ManifestFile
    package var tables: [Table]
    package var summary: [String: Int]
    package var inputs: [String: String]
    /// The size in bytes of each input, by the paths of `inputs`.
    package var inputSizes: [String: Int]
    /// What each code among the findings means (a manifest rule's description, or the catalogue's meaning).
    package var codes: [String: String]
    /// The manifest's `bounds` rules (omitted when none), for the HTML report's maps.
    package var boundsRules: [BoundsRule]?
    /// When the build failed, the maps of the staged rows (omitted otherwise, and when no table has coordinates).
    package var stagedMaps: [StagedMap]?
    package var diagnostics: [Entry]
    /// Findings counted in `summary` but not listed in `diagnostics`, by code and severity (omitted when none).
    package var notStored: [NotStored]?

    package struct NotStored: Encodable {
        package var code: String
        package var severity: Severity
        package var count: Int
    }

    /// The new bundle's size in bytes, and the bytes no table owns (schema, `kiln_metadata`, free pages); each
    /// table's share is in `tables`. Absent when no bundle was written.
    package var bundleBytes: Int?
    package var otherBytes: Int?
    /// Each manifest target, its SQLite and the bundle it opens (omitted when the manifest names no targets).
    package var targets: [Target]?

    package struct Target: Encodable {
        package var target: String
        package var sqlite: String
        package var output: String
    }

    /// The sources whose unchanged files' rows and findings came from the build cache, and how many of their files
    /// (absent when none did: then this report is byte for byte the one `--no-cache` writes).
    package var reusedSources: [ReusedSource]?

    package struct ReusedSource: Encodable {
        package var source: String
        package var files: Int
        package var of: Int
    }

    /// The full-text indexes copied from the build cache instead of built, by full-text table name (absent when none
    /// was).
    package var reusedIndexes: [String]?

    /// The bundle's first tables, copied from a file the build cache kept after them instead of written, in
    /// declaration order (absent when none was).
    package var reusedTables: [String]?

    /// How many rules had their findings replayed from the build cache instead of being checked (absent when none).
    package var reusedRules: Int?

    /// The URL, capture time and rows of each fetched file in the last bundle built (absent when nothing was fetched):
    /// the next build's layout check compares with it (`fetch.no-rows`).
    package var fetched: [String: FetchedInputs.Yield]?

    /// Per table, what changed since the baseline, when the build compared with one (absent otherwise).
    package var baseline: [TableChange]?

    package struct TableChange: Encodable {
        package var name: String
        package var oldRows: Int
        package var newRows: Int
        package var added: Int
        package var removed: Int
        package var changed: Int
    }

    /// The report of `outcome`.
    public init(_ outcome: BuildOutcome) {
        bundle = outcome.bundle
        built = outcome.built
        output = outcome.output.relativePath
        tables = outcome.tables.map { Table(name: $0.name, rows: $0.rows, bytes: $0.bytes, description: outcome.tableDescriptions[$0.name]) }
        bundleBytes = outcome.bytes?.total
        otherBytes = outcome.bytes?.other
        inputs = outcome.inputs
        inputSizes = outcome.inputSizes
        manifest = ManifestFile(file: outcome.manifest.file, sha256: outcome.manifest.sha256)
        codes = outcome.meanings
        boundsRules = outcome.boundsRules.isEmpty ? nil : outcome.boundsRules
        stagedMaps = outcome.stagedMaps.isEmpty ? nil : outcome.stagedMaps
        var summary: [String: Int] = ["error": 0, "warning": 0, "info": 0]
        for diagnostic in outcome.diagnostics { summary[diagnostic.severity.rawValue, default: 0] += 1 }
        for (key, count) in outcome.notStored { summary[key.severity.rawValue, default: 0] += count }
        let omitted = outcome.notStored.sorted { $0.key < $1.key }.map { NotStored(code: $0.key.code, severity: $0.key.severity, count: $0.value) }
        notStored = omitted.isEmpty ? nil : omitted
        self.summary = summary
        targets = outcome.targets.isEmpty ? nil : outcome.targets.map {
            Target(target: $0.target.platform, sqlite: $0.target.sqlite.description, output: $0.output.relativePath)
        }
        let reused = outcome.reusedBundle ? [] : outcome.reusedSources.compactMap { source in
            outcome.reusedFiles[source].map { ReusedSource(source: source, files: $0.files, of: $0.of) }
        }
        reusedSources = reused.isEmpty ? nil : reused
        reusedIndexes = outcome.reusedIndexes.isEmpty ? nil : outcome.reusedIndexes
        reusedTables = outcome.reusedTables.isEmpty ? nil : outcome.reusedTables
        reusedRules = outcome.reusedRules == 0 ? nil : outcome.reusedRules
        fetched = outcome.fetchedYields.isEmpty ? nil : outcome.fetchedYields
        baseline = outcome.comparison?.tables.map {
            TableChange(name: $0.name, oldRows: $0.oldRows, newRows: $0.newRows, added: $0.added, removed: $0.removed, changed: $0.changed)
        }
        diagnostics = outcome.diagnostics.map {
            Entry(code: $0.code, severity: $0.severity, message: $0.message,
                  file: $0.provenance?.file, line: $0.provenance?.line, column: $0.provenance?.column, url: $0.provenance?.url)
        }
    }

    /// The report as pretty-printed JSON with sorted keys.
    public func json() throws -> Data {
        // The inputs' two objects hold an entry per input file (50 000 pages): written without Foundation's encoder.
        var rest = self
        rest.inputs = [:]
        rest.inputSizes = [:]
        return try KilnJSON.encode(rest, filling: [("inputs", .strings(inputs)), ("inputSizes", .integers(inputSizes))])
    }
}
