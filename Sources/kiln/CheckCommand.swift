import Foundation
import KilnKit

/// `kiln check`: checks a shipped bundle against its manifest, for CI.
struct CheckCommand: KilnCommand {
    static let name = "check"
    static let abstract = "Checks a shipped bundle: SQLite integrity, schema, metadata and every rule of its manifest."
    static let arguments = "BUNDLE"
    static let details = """
        Opens BUNDLE read-only and checks, in order: that it is a whole SQLite database built from the manifest
        (an empty, foreign, truncated or damaged file, or a bundle of another pipeline, is one sentence);
        PRAGMA integrity_check and foreign_key_check, and full-text row counts; the schema against the manifest's
        (tables, columns, types, keys, indexes, full-text tables, user_version); the kiln_metadata table and its
        row counts; and every rule of the manifest, run again with its severity overrides. Rules that read tables
        the bundle does not ship are listed as not run. The report goes to stdout.

        Exit codes: 0 no error, 1 any error (or not a bundle of the manifest), 64 usage or manifest error,
        74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let manifest = CommandOption("--manifest", value: "M", help: "The pipeline folder or manifest. Default: kiln.json5 in the current folder, else raw/<bundle>/kiln.json5 where <bundle> is the name in the bundle's kiln_metadata. Raw inputs are not needed.")
        static let format = CommandOption("--format", value: "text|json|junit|github", help: "text (default): a line per category, then every finding; json: the whole report; junit: JUnit XML for CI servers (a suite per category, a test case per check); github: GitHub Actions annotations (::error file=…::…).")
    }

    static let commandOptions: [CommandOption] = [Options.manifest, Options.format]

    /// The bundle as the command line names it (`-`: standard input).
    let bundle: String
    let manifestPath: String?
    let format: ReportFormat

    /// Takes the bundle, `--manifest` and `--format`.
    /// - Throws: `KilnError.usage` for a missing bundle, an extra argument or an unknown format.
    init(_ arguments: inout ParsedArguments) throws {
        bundle = try arguments.positional("the bundle")
        try arguments.requireNoMore()
        manifestPath = arguments.value(Options.manifest)
        format = ReportFormat(rawValue: try arguments.format(Options.format))!
    }

    /// Checks the bundle and prints the report: 0 when no error, 1 otherwise.
    /// - Throws: `KilnError` for a bundle that cannot be read or a manifest that is missing or wrong.
    func run() throws -> ExitStatus {
        let report = try BundleChecker.check(try StandardInputFile.url(bundle, suffix: ".sqlite"), manifestPath: manifestPath)
        try printReport(try report.rendered(as: format), format)
        return ExitStatus(passed: report.passed)
    }
}
