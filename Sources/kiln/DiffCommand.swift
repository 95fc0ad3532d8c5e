import Foundation
import KilnKit

/// `kiln diff`: compares two versions of a bundle, row by row, and fails over the thresholds.
struct DiffCommand: KilnCommand {
    static let name = "diff"
    static let abstract = "Compares two versions of a bundle: rows added, removed and changed per table, and the schema."
    static let arguments = "OLD NEW"
    static let details = """
        Matches the rows of each table of OLD and NEW by primary key (by every column when a table has none) and
        counts the rows added, removed and changed, with the columns that changed and a few examples. Lists the
        schema differences; a schema change without a new user_version is an error. The report goes to stdout.

        Exit codes: 0 within the thresholds, 1 over a threshold, a schema change without a new user_version, or a
        file that is not a bundle, 64 usage or manifest error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let format = CommandOption("--format", value: "text|json|junit|github", help: "text (default), json, junit (JUnit XML: a test case per table, failed over a threshold, and one for the schema) or github (GitHub Actions annotations at NEW, then the verdict).")
        static let maxRemoved = CommandOption("--max-removed", value: "LIMITS", help: "Fail when more rows than this were removed from a table: 10% (of OLD's rows), 25 (rows), or per table, TABLE=5%; several separated by commas: --max-removed 10%,timetable=5%.")
        static let maxChanged = CommandOption("--max-changed", value: "LIMITS", help: "The same for changed rows.")
        static let manifest = CommandOption("--manifest", value: "M", help: "Read thresholds, severity overrides and the tables the app fills (userFilled: counted, not compared) from this pipeline folder or manifest (default: kiln.json5 in the current folder, else raw/<bundle>/kiln.json5 where <bundle> is the name in the bundle's kiln_metadata; none when neither exists). Options replace the manifest's limits one by one; a table's own limit wins over a default.")
        static let examples = CommandOption("--examples", value: "N", help: "Examples per table and kind (default 3).")
    }

    static let commandOptions: [CommandOption] = [
        Options.format, Options.maxRemoved, Options.maxChanged, Options.manifest, Options.examples,
        BundleReadLimitOption.option,
    ]

    /// The bundles as the command line names them (`-`, for one of them: standard input).
    let oldArgument: String
    let newArgument: String
    let format: ReportFormat
    let thresholds: Thresholds
    let manifestPath: String?
    let examples: Int
    let sqlSeconds: Double?

    /// Takes the two bundles and the options.
    /// - Throws: `KilnError.usage` for a missing bundle, an extra argument, a bad limit or format.
    init(_ arguments: inout ParsedArguments) throws {
        oldArgument = try arguments.positional("the old bundle")
        newArgument = try arguments.positional("the new bundle")
        try arguments.requireNoMore()
        if oldArgument == StandardInputFile.argument && newArgument == StandardInputFile.argument {
            throw KilnError.usage("standard input (-) can be read once; name the other bundle")
        }
        format = ReportFormat(rawValue: try arguments.format(Options.format))!
        thresholds = try arguments.thresholds(removed: Options.maxRemoved, changed: Options.maxChanged)
        manifestPath = arguments.value(Options.manifest)
        let examples = arguments.value(Options.examples) ?? String(BundleDiff.defaultExamples)
        guard let count = Int(examples), count >= 0 else { throw KilnError.usage("\(Options.examples.name) takes a number of rows, not \"\(examples)\"") }
        self.examples = count
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
    }

    /// Compares the bundles and prints the report: 0 within the thresholds, 1 otherwise.
    /// - Throws: `KilnError` for a bundle that cannot be read or a manifest that is missing or wrong.
    func run() throws -> ExitStatus {
        var limits = thresholds
        var severity: [String: Severity] = [:]
        var userFilled: Set<String> = []
        BundleReadLimitOption.apply(sqlSeconds)
        let old = try StandardInputFile.url(oldArgument, suffix: ".sqlite"), new = try StandardInputFile.url(newArgument, suffix: ".sqlite")
        // Without --manifest, the one ManifestLocation finds for NEW, when there is one (a diff needs none).
        if let path = try manifestPath ?? BundleReadLimitOption.optionalManifest(of: new) {
            let manifest = try ManifestLoader.load(path, resolvingInputs: false).manifest
            BundleReadLimitOption.apply(sqlSeconds, manifest: manifest)
            limits = manifest.thresholds.overridden(by: thresholds)
            severity = manifest.severity
            userFilled = Set(manifest.tables.filter(\.userFilled).map(\.name))
        }
        let diff = try BundleDiff.compare(old: old, new: new, thresholds: limits, examples: examples, severity: severity,
                                          userFilled: userFilled)
        try printReport(try diff.rendered(as: format), format)
        return ExitStatus(passed: diff.passed)
    }
}
