import Foundation
import KilnC
import KilnKit

/// `kiln build`: reads, checks and writes a bundle.
struct BuildCommand: KilnCommand {
    static let name = "build"
    static let abstract = "Builds the bundle a pipeline declares, if its inputs pass every rule."
    static let arguments = "DIR|MANIFEST"
    static let details = """
        Reads every source of the pipeline (a folder holding kiln.json5, or a manifest file), stages the records in
        SQLite, runs the rules, and writes the bundle only when no error remains: atomically, byte-identical for
        identical inputs. A failed build leaves the previous bundle untouched.

        On a terminal (and without --quiet or --format json), progress goes to stderr: each source's files, bytes and
        records with the rate and the time left, the rules as they run, the bundle's tables as they are written, and
        a wait for another build's lock, redrawn twice a second. --progress json writes the same as JSON lines.

        --out and --report replace only regular files (or create them): a device, a symbolic link, a FIFO or a folder
        is refused, and so is an input, the manifest, the baseline (for --report) or each other. SQLite's -wal, -shm
        and -journal beside the old bundle are settled before it is replaced; while another process holds it, the
        build stops (exit 74, "locked by another process"). On Ctrl-C, SIGTERM or SIGHUP the build removes its
        temporary files and exits 130, 143 or 129.

        When nothing that decides the bundle changed since the last build (the inputs' SHA-256, the manifest, the
        output paths, Kiln and its SQLite and ICU), and the bundle and report in place are the ones that build wrote,
        both are kept as they are and the summary says "up to date". The record lives in .kiln-cache/<bundle file>/
        beside the bundle; a record from another Kiln, or one damaged or edited, is an info finding (build.cache) and
        the bundle is built in full. A build with a baseline (--baseline or the manifest's) is never kept whole: it
        takes its sources, full-text indexes, tables and rules' findings from the cache, then writes the bundle and
        compares it with the baseline. --no-cache builds in full.

        Two builds of the same bundle take turns: the second waits for the first (a lock file beside the bundle).
        A build that is killed leaves the previous bundle as it was; the next build removes its temporary files.

        Exit codes: 0 built, 1 validation errors or a threshold exceeded, 64 usage or manifest error, 74 I/O error
        (also: the disk is full or the output folder cannot be written; the previous bundle is then left as it was).

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let out = CommandOption("--out", value: "FILE", help: "The bundle to write (default: build/<bundle>.sqlite in the current folder, not in the pipeline's: pipelines kept in raw/<name>/ build into the one build/ folder where the command runs, and a pipeline folder holds only inputs).")
        static let report = CommandOption("--report", value: "FILE", help: "The JSON report (default: beside the bundle, <name>.report.json for <name>.sqlite, <file>.report.json for any other bundle file name).")
        static let html = CommandOption("--html", value: nil, help: "Also writes the report as an HTML page beside it (<bundle>.report.html), as kiln report does.")
        static let format = CommandOption("--format", value: "text|json|junit|github", help: "text (default): summary on stderr; json: the report on stdout; junit: JUnit XML on stdout (a test case per source, per rule, and one for the rest; an error finding fails its case); github: GitHub Actions annotations on stdout (::error file=<input from the current folder>,line=N,title=<code>::message, ::warning, ::notice), then the verdict.")
        static let quiet = CommandOption("--quiet", value: nil, help: "Prints nothing but errors.")
        static let progress = CommandOption("--progress", value: "json|none", help: "json: a JSON-lines progress stream on stderr (one object per stage, a progress event twice a second, a last done event), whatever stderr is, and no summary there; none: no progress. Default: progress on a terminal only, without --quiet or --format json.")
        static let noCache = CommandOption("--no-cache", value: nil, help: "Builds in full even when nothing changed since the last build (the build cache, .kiln-cache beside the bundle, is recorded again).")
        static let baseline = CommandOption("--baseline", value: "FILE", help: "Before replacing anything, compare the new bundle with FILE (e.g. the bundle being replaced, or the last release) under the thresholds; over one, exit 1 and nothing is replaced. Default: the manifest's baseline, if it names one.")
        static let maxRemoved = CommandOption("--max-removed", value: "L", help: "The most rows a table may lose since the baseline, as in kiln diff: 10%, 25 (rows), TABLE=5%, comma-separated; replaces the manifest's limits one by one.")
        static let maxChanged = CommandOption("--max-changed", value: "L", help: "The same for changed rows.")
        static let allowPath = CommandOption("--allow-path", value: "PATH", repeatable: true, help: "Lets sources read the folder (or file) PATH although it lies outside the pipeline folder, by absolute path or through a symbolic link. Without it, absolute paths, \"..\" and links leading out of the pipeline folder are refused.")
    }

    static let commandOptions: [CommandOption] = [
        Options.out, Options.report, Options.html, Options.format, Options.quiet, Options.progress, Options.noCache,
        Options.baseline, Options.maxRemoved, Options.maxChanged, Options.allowPath,
    ]

    let pipelinePath: String
    let options: BuildOptions
    /// Paths outside the pipeline folder that sources may read.
    let allowedPaths: [URL]
    let format: ReportFormat
    let quiet: Bool
    let html: Bool
    let noCache: Bool
    /// `--progress`: `json`, `none`, or `nil` for progress on a terminal.
    let progressStyle: String?

    init(_ arguments: inout ParsedArguments) throws {
        pipelinePath = try arguments.positional("the pipeline folder or manifest")
        try arguments.requireNoMore()
        var options = BuildOptions(output: try arguments.path(Options.out), report: try arguments.path(Options.report),
                                   baseline: try arguments.path(Options.baseline),
                                   thresholds: try arguments.thresholds(removed: Options.maxRemoved, changed: Options.maxChanged))
        options.names = OutputNames(output: Options.out.name, report: Options.report.name)
        // The `KILN_*` thread variables (docs/reference/commands.md, "Environment").
        options.threads = ThreadSettings(environment: ProcessInfo.processInfo.environment)
        self.options = options
        allowedPaths = try (arguments.values(Options.allowPath) ?? []).map { path in
            let url = URL(fileURLWithPath: path).standardizedFileURL
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw KilnError.usage("\(Options.allowPath.name) \(path): there is no such file or folder")
            }
            return url
        }
        format = ReportFormat(rawValue: try arguments.format(Options.format))!
        quiet = arguments.flag(Options.quiet)
        html = arguments.flag(Options.html)
        noCache = arguments.flag(Options.noCache)
        progressStyle = arguments.value(Options.progress)
        if let progressStyle, !["json", "none"].contains(progressStyle) {
            throw KilnError.usage("\(Options.progress.name) must be json or none, not \"\(progressStyle)\"")
        }
    }

    func run() throws -> ExitStatus {
        let pipeline = try ManifestLoader.load(pipelinePath, allowedPaths: allowedPaths)
        var options = self.options
        options.htmlReport = html
        options.useCache = !noCache
        var display: BuildProgressDisplay?
        if progressStyle == "json" {
            display = BuildProgressDisplay(style: .json) { StandardError.write($0) }
        } else if progressStyle == nil, format == .text, !quiet, Terminal.isTerminal(STDERR_FILENO) {
            display = BuildProgressDisplay(style: .terminal) { StandardError.write($0) }
        }
        options.progress = display?.progress
        display?.start()
        let outcome: BuildOutcome
        do {
            outcome = try Builder.build(pipeline, options: options)
        } catch {
            display?.finish(built: false, reused: false)
            throw error
        }
        display?.finish(built: outcome.built, reused: outcome.reusedBundle)
        if html {
            let page = ReportCommand.pageBeside(outcome.reportURL)
            try HTMLReport(report: try ReportDocument.read(outcome.reportURL), pipelineFolder: pipeline.manifest.directory,
                           bundle: outcome.built ? outcome.output : nil).write(to: page)
            if !quiet && format == .text && !jsonProgress { printToStandardError("html report: \(page.relativePath)\n") }
        }
        let summary = BuildSummary(pathPrefix: pipelinePrefix(pipeline))
        switch format {
        case .json:
            try StandardOutput.write(BuildReport(outcome).json())
            try StandardOutput.write("\n")
        case .junit: try printOut(outcome.junit(pipeline, summary))
        case .github: try printOut(outcome.github(summary, acknowledged: Set(pipeline.manifest.acknowledged)), workflowCommands: true)
        case .text: if !jsonProgress { printText(outcome, summary) }  // with --progress json, stderr holds the JSON lines only
        }
        return ExitStatus(passed: outcome.built)
    }

    /// True for `--progress json`: stderr is the JSON-lines stream and nothing else.
    private var jsonProgress: Bool { progressStyle == "json" }

    /// The summary on stderr, or with `--quiet` only the errors of a failed build.
    private func printText(_ outcome: BuildOutcome, _ summary: BuildSummary) {
        if !quiet {
            printToStandardError(summary.text(outcome))
            if let comparison = outcome.comparison { printToStandardError(comparison.summaryLine + "\n") }
        } else if !outcome.built {
            for diagnostic in outcome.diagnostics where diagnostic.severity == .error {
                printToStandardError(summary.line(diagnostic) + "\n")
            }
        }
    }
}
