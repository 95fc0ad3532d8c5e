import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

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
    /// The size in bytes of every input, by the same paths as `inputs`.
    public var inputSizes: [String: Int] = [:]
    /// The manifest's file name and the SHA-256 of its bytes.
    public var manifest: (file: String, sha256: String) = ("", "")
    /// What each code among the findings means: the manifest rule's description, else the catalogue's meaning.
    public var meanings: [String: String] = [:]
    /// The manifest's description of each shipped table that has one.
    public var tableDescriptions: [String: String] = [:]
    /// The manifest's `bounds` rules, so that the HTML report's maps flag the points they flag.
    public var boundsRules: [BoundsRule] = []
    /// When the build failed: the maps of the rows staged (`StagedMap`), the rows an error names flagged, since no
    /// bundle holds them.
    public var stagedMaps: [StagedMap] = []
    /// Every finding stored, in a stable order: the first `DiagnosticTally.examplesPerCode` of each code and severity.
    public var diagnostics: [Diagnostic]
    /// The findings counted but not stored, by code and severity.
    public var notStored: [DiagnosticTally.Key: Int] = [:]
    /// The comparison of the new bundle with the baseline, when there was one to compare with.
    public var comparison: BundleDiff? = nil
    /// Where the bytes of the new bundle go (also when a size limit refused it); `nil` when none was written.
    public var bytes: BundleBytes? = nil
    /// Each manifest target with the bundle it opens (the main one, or its own), when the manifest names targets.
    public var targets: [TargetOutput] = []
    /// The sources whose rows were not read again but taken from the build cache (`BuildCache`, `SourceCache`), in
    /// manifest order: every source when the whole bundle was kept, else those with at least one file reused.
    public var reusedSources: [String] = []
    /// For each source in `reusedSources` of a build that did not keep the whole bundle, how many of its files' rows
    /// came from the cache, of how many.
    public var reusedFiles: [String: ReusedFiles] = [:]
    /// The full-text indexes copied from the build cache instead of built (`FullTextCache`), by full-text table name.
    public var reusedIndexes: [String] = []
    /// The bundle's first tables, copied from a file the build cache kept after them instead of written
    /// (`BundlePrefixCache`), in declaration order.
    public var reusedTables: [String] = []
    /// How many rules had their findings replayed from the build cache instead of being checked (`RuleFindingsCache`).
    public var reusedRules = 0
    /// True when nothing changed since the last build: the bundle and report in place were left as they were.
    public var reusedBundle = false
    /// The rows each fetched file gave in the last bundle built, by file (`FetchedInputs`): this build's when it wrote
    /// a bundle, else the last report's.
    package var fetchedYields: [String: FetchedInputs.Yield] = [:]
}

/// How many of a source's files had their rows and findings taken from the build cache, of how many files.
public struct ReusedFiles: Sendable, Equatable, Encodable {
    public var files: Int
    public var of: Int
}

/// A manifest target and the bundle written for it.
public struct TargetOutput: Sendable {
    public var target: SQLiteTarget
    public var output: URL
}

extension BuildOutcome {
    /// The size in bytes of each of `inputs` (paths of `pipeline`'s files) that can be stated now.
    package static func sizes(of inputs: [String: String], in pipeline: CompiledPipeline) -> [String: Int] {
        var sizes: [String: Int] = [:]
        for file in pipeline.sources.flatMap(\.files) where inputs[file.relativePath] != nil {
            sizes[file.relativePath] = file.sizeOnDisk
        }
        return sizes
    }

    /// Fills in what the report says about the pipeline besides the findings: the manifest's digest, the inputs'
    /// sizes (`sizes(of:in:)`, unless the build measured them already: `sizes`), the tables' descriptions and the
    /// meaning of every code found.
    package mutating func describe(_ pipeline: CompiledPipeline, inputSizes sizes: [String: Int]? = nil) {
        let manifest = pipeline.manifest
        self.manifest = (manifest.file.lastPathComponent, manifest.sha256)
        inputSizes = sizes ?? BuildOutcome.sizes(of: inputs, in: pipeline)
        for table in manifest.tables { tableDescriptions[table.name] = table.description }
        boundsRules = BoundsRule.rules(of: manifest)
        let codes = Set(diagnostics.map(\.code) + notStored.keys.map(\.code))
        for code in codes {
            meanings[code] = manifest.rules.first { $0.code == code && $0.description != nil }?.description ?? DiagnosticCode.named(code)?.meaning
        }
    }
}

/// A `bounds` rule as the build report records it: its code, the table and columns it checks, and the box.
public struct BoundsRule: Codable, Sendable, Equatable {
    public var code: String
    public var table: String
    public var latitude: String
    public var longitude: String
    public var box: BoxSpec

    /// The manifest's `bounds` rules.
    package static func rules(of manifest: Manifest) -> [BoundsRule] {
        manifest.rules.compactMap { rule in
            guard case .bounds(let table, let latitude, let longitude, let box) = rule.check else { return nil }
            return BoundsRule(code: rule.code, table: table, latitude: latitude, longitude: longitude, box: box)
        }
    }

    /// Whether the rule flags a row at `latitude`, `longitude` (outside the box).
    public func flags(latitude: Double, longitude: Double) -> Bool {
        !(box.minLatitude...box.maxLatitude).contains(latitude) || !(box.minLongitude...box.maxLongitude).contains(longitude)
    }
}

/// A table's name and row count, and its bytes when the bundle was written.
public struct TableCount: Codable, Sendable, Equatable {
    public var name: String
    public var rows: Int
    public var bytes: TableBytes? = nil
}
