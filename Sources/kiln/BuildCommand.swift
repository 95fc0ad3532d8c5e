import Foundation
import KilnKit

/// `kiln build`: reads, checks and writes a bundle.
struct BuildCommand: KilnCommand {
    static let name = "build"
    static let abstract = "Builds the bundle a pipeline declares, if its inputs pass every rule."
    static let usage = "kiln build DIR|MANIFEST [--out FILE] [--report FILE] [--html] [--format text|json] [--quiet] [--baseline FILE] [--max-removed L] [--max-changed L]"
    static let details = """
        Reads every source of the pipeline (a folder holding kiln.json5, or a manifest file), stages the records in
        SQLite, runs the rules, and writes the bundle only when no error remains: atomically, byte-identical for
        identical inputs. A failed build leaves the previous bundle untouched.

        OPTIONS:
          --out FILE        The bundle to write (default: build/<bundle>.sqlite).
          --report FILE     The JSON report (default: beside the bundle, <bundle>.report.json).
          --html            Also writes the report as an HTML page beside it (<bundle>.report.html), as
                            kiln report does.
          --format FORMAT   text (default): summary on stderr; json: the report on stdout.
          --quiet           Prints nothing but errors.
          --baseline FILE   Before replacing anything, compare the new bundle with FILE (e.g. the bundle being
                            replaced, or the last release) under the thresholds; over one, exit 1 and nothing is
                            replaced. Default: the manifest's baseline, if it names one.
          --max-removed L   Thresholds for the comparison, as in kiln diff: 10%, 25 (rows), TABLE=5%, comma-
          --max-changed L   separated; they replace the manifest's thresholds limit by limit.
          --allow-path PATH Lets sources read the folder (or file) PATH although it lies outside the pipeline
                            folder, by absolute path or through a symbolic link; repeat for several. Without it,
                            absolute paths, ".." and links leading out of the pipeline folder are refused.

        Two builds of the same bundle take turns: the second waits for the first (a lock file beside the bundle).
        A build that is killed leaves the previous bundle as it was; the next build removes its temporary files.

        Exit codes: 0 built, 1 validation errors or a threshold exceeded, 64 usage or manifest error, 74 I/O error
        (also: the disk is full or the output folder cannot be written; the previous bundle is then left as it was).

        """
    static let flags: Set<String> = ["--quiet", "--html"]
    static let options: Set<String> = ["--out", "--report", "--format", "--baseline", "--max-removed", "--max-changed", "--allow-path"]

    let pipelinePath: String
    let options: BuildOptions
    /// Paths outside the pipeline folder that sources may read.
    let allowedPaths: [URL]
    let format: String
    let quiet: Bool
    let html: Bool

    init(_ arguments: inout ParsedArguments) throws {
        pipelinePath = try arguments.positional("the pipeline folder or manifest")
        try arguments.requireNoMore()
        options = BuildOptions(output: arguments.values["--out"].map { URL(fileURLWithPath: $0) },
                               report: arguments.values["--report"].map { URL(fileURLWithPath: $0) },
                               baseline: arguments.values["--baseline"].map { URL(fileURLWithPath: $0) },
                               thresholds: try Thresholds(options: arguments.values))
        allowedPaths = try (arguments.repeated["--allow-path"] ?? []).map { path in
            let url = URL(fileURLWithPath: path).standardizedFileURL
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw KilnError.usage("--allow-path \(path): there is no such file or folder")
            }
            return url
        }
        format = try arguments.format(allowed: ["text", "json"])
        quiet = arguments.flags.contains("--quiet")
        html = arguments.flags.contains("--html")
    }

    func run() throws -> Int32 {
        let pipeline = try ManifestLoader.load(pipelinePath, allowedPaths: allowedPaths)
        let outcome = try Builder.build(pipeline, options: options)
        if html {
            let page = ReportCommand.pageBeside(outcome.reportURL)
            try HTMLReport(report: try ReportDocument.read(outcome.reportURL), pipelineFolder: pipeline.manifest.directory,
                           bundle: outcome.built ? outcome.output : nil).write(to: page)
            if !quiet && format != "json" { printToStandardError("html report: \(page.relativePath)\n") }
        }
        if format == "json" {
            FileHandle.standardOutput.write(try BuildReport(outcome).json())
            print()
        } else if !quiet {
            printToStandardError(BuildSummary(pathPrefix: pipelinePrefix(pipeline)).text(outcome))
            if let comparison = outcome.comparison { printToStandardError(comparison.summaryLine + "\n") }
        } else if !outcome.built {
            let summary = BuildSummary(pathPrefix: pipelinePrefix(pipeline))
            for diagnostic in outcome.diagnostics where diagnostic.severity == .error {
                printToStandardError(summary.format(diagnostic) + "\n")
            }
        }
        return outcome.built ? 0 : 1
    }

    /// The pipeline folder as the user wrote it, so that printed paths open from the current folder.
    private func pipelinePrefix(_ pipeline: Pipeline) -> String {
        let relative = displayPath(pipeline.manifest.directory)
        return relative.isEmpty ? "" : relative + "/"
    }
}
