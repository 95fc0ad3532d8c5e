import Foundation
import KilnKit

/// `kiln diff`: compares two versions of a bundle, row by row, and fails over the thresholds.
struct DiffCommand: KilnCommand {
    static let name = "diff"
    static let abstract = "Compares two versions of a bundle: rows added, removed and changed per table, and the schema."
    static let usage = "kiln diff OLD NEW [--format text|json] [--max-removed LIMITS] [--max-changed LIMITS] [--manifest M] [--examples N]"
    static let details = """
        Matches the rows of each table of OLD and NEW by primary key (by every column when a table has none) and
        counts the rows added, removed and changed, with the columns that changed and a few examples. Lists the
        schema differences; a schema change without a new user_version is an error. The report goes to stdout.

        OPTIONS:
          --format FORMAT      text (default) or json.
          --max-removed LIMITS Fail when more rows than this were removed from a table: 10% (of OLD's rows),
                               25 (rows), or per table, TABLE=5%; several separated by commas:
                               --max-removed 10%,timetable=5%.
          --max-changed LIMITS The same for changed rows.
          --manifest M         Read thresholds and severity overrides from this pipeline folder or manifest
                               (default: raw/<bundle>/ under the current folder, when it exists). Options
                               replace the manifest's limits one by one; a table's own limit wins over a default.
          --examples N         Examples per table and kind (default 3).

        Exit codes: 0 within the thresholds, 1 over a threshold, a schema change without a new user_version, or a
        file that is not a bundle, 64 usage or manifest error, 74 I/O error.

        """
    static let flags: Set<String> = []
    static let options: Set<String> = ["--format", "--max-removed", "--max-changed", "--manifest", "--examples"]

    let old: URL
    let new: URL
    let format: String
    let thresholds: Thresholds
    let manifestPath: String?
    let examples: Int

    /// Takes the two bundles and the options.
    /// - Throws: `KilnError.usage` for a missing bundle, an extra argument, a bad limit or format.
    init(_ arguments: inout ParsedArguments) throws {
        old = URL(fileURLWithPath: try arguments.positional("the old bundle"))
        new = URL(fileURLWithPath: try arguments.positional("the new bundle"))
        try arguments.requireNoMore()
        format = try arguments.format(allowed: ["text", "json"])
        thresholds = try Thresholds(options: arguments.values)
        manifestPath = arguments.values["--manifest"]
        let examples = arguments.values["--examples"] ?? String(BundleDiff.defaultExamples)
        guard let count = Int(examples), count >= 0 else { throw KilnError.usage("--examples takes a number of rows, not \"\(examples)\"") }
        self.examples = count
    }

    /// Compares the bundles and prints the report: 0 within the thresholds, 1 otherwise.
    /// - Throws: `KilnError` for a bundle that cannot be read or a manifest that is missing or wrong.
    func run() throws -> Int32 {
        var limits = thresholds
        var severity: [String: Severity] = [:]
        if let path = try manifestPath ?? conventionalManifest() {
            let manifest = try ManifestLoader.load(path).manifest
            limits = manifest.thresholds.overridden(by: thresholds)
            severity = manifest.severity
        }
        let diff = try BundleDiff.compare(old: old, new: new, thresholds: limits, examples: examples, severity: severity)
        printOut(format == "json" ? try diff.json : diff.text)
        return diff.passed ? 0 : 1
    }

    /// `raw/<bundle>` when NEW names its bundle and that folder holds a manifest.
    private func conventionalManifest() throws -> String? {
        guard let path = try? BundleFile.defaultManifestPath(for: new),
              FileManager.default.fileExists(atPath: path + "/" + ManifestLoader.defaultFileName) else { return nil }
        return path
    }
}
