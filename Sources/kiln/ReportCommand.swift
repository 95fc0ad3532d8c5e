import Foundation
import KilnKit

/// `kiln report`: an HTML page for a build's JSON report.
struct ReportCommand: KilnCommand {
    static let name = "report"
    static let abstract = "Writes a build's JSON report as one self-contained HTML page (summary, findings, maps)."
    static let arguments = "REPORT.json"
    static let details = """
        Reads the JSON report kiln build wrote (build/<bundle>.report.json) and writes one HTML file that opens
        anywhere, without network: counts per severity, Kiln's version and the manifest's SHA-256; the findings
        grouped by code with what each code means and every example the report keeps (filtered and paged by one
        inline script; #filter=TEXT in the address fills the filter), linked to file:line; the tables with their
        descriptions; the inputs with sizes and SHA-256; regex extraction per page; a map per bundle table with
        coordinates (axes in degrees, a scale bar, in red only the rows the table's outlier column or a bounds rule
        flags, far points at the edge and listed); and the comparison with the baseline when the build made one.
        `kiln build --html` writes the same page beside its report. A report from an older Kiln still renders.

        Exit codes: 0 written, 1 not a Kiln build report or an unreadable bundle, 64 usage error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let out = CommandOption("--out", value: "FILE", help: "The page to write (default: the report's path with .html for .json).")
        static let manifest = CommandOption("--manifest", value: "M", help: "The pipeline folder or manifest the findings' files are relative to (default: kiln.json5 in the current folder, else raw/<bundle>/ when it exists; otherwise files are not linked).")
        static let bundle = CommandOption("--bundle", value: "FILE", help: "The bundle to draw the maps from (default: the report's output, when it exists).")
    }

    static let commandOptions: [CommandOption] = [
        Options.out, Options.manifest, Options.bundle, BundleReadLimitOption.option,
    ]

    /// The JSON report as the command line names it (`-`: standard input, which needs `--out`).
    let reportArgument: String
    let output: URL?
    let manifestPath: String?
    let bundle: URL?
    let sqlSeconds: Double?

    init(_ arguments: inout ParsedArguments) throws {
        reportArgument = try arguments.positional("the JSON report")
        try arguments.requireNoMore()
        output = arguments.value(Options.out).map { URL(fileURLWithPath: $0) }
        if reportArgument == StandardInputFile.argument, output == nil {
            throw KilnError.usage("a report read from standard input (-) has no folder to write its page beside: give --out PAGE")
        }
        manifestPath = arguments.value(Options.manifest)
        bundle = arguments.value(Options.bundle).map { URL(fileURLWithPath: $0) }
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
    }

    func run() throws -> ExitStatus {
        BundleReadLimitOption.apply(sqlSeconds)
        let report = try StandardInputFile.url(reportArgument, suffix: ".json")
        let document = try ReportDocument.read(report)
        if let bundle, !FileManager.default.fileExists(atPath: bundle.path) {
            throw KilnError.validation("the bundle \(bundle.relativePath) given with --bundle does not exist; the maps are drawn from it")
        }
        let page = output ?? ReportCommand.pageBeside(report)
        var protected = [OutputPath.Protected(report, "the report it is made from")]
        if let bundle { protected.append(OutputPath.Protected(bundle, "the bundle (--bundle)")) }
        try OutputPath.checkFile(page, named: Options.out.name, protected: protected)
        for file in protected { ProtectedFiles.shared.protect(file.url, as: file.role) }
        try HTMLReport(report: document, pipelineFolder: pipelineFolder(document), bundle: bundle ?? defaultBundle(document, report: report)).write(to: page)
        printToStandardError("wrote \(page.relativePath)\n")
        return .success
    }

    /// `x.report.json` → `x.report.html` (or `x.html` for any other name).
    static func pageBeside(_ report: URL) -> URL { KilnFileNames.htmlReport(for: report) }

    private func pipelineFolder(_ document: ReportDocument) -> URL? {
        if let manifestPath {
            let url = URL(fileURLWithPath: manifestPath)
            return url.pathExtension == "json5" ? url.deletingLastPathComponent() : url
        }
        let guess = URL(fileURLWithPath: "raw/" + document.bundle)
        return FileManager.default.fileExists(atPath: guess.path) ? guess : nil
    }

    private func defaultBundle(_ document: ReportDocument, report: URL) -> URL? {
        let written = URL(fileURLWithPath: document.output)
        if FileManager.default.fileExists(atPath: written.path) { return written }
        let beside = report.deletingLastPathComponent().appendingPathComponent(written.lastPathComponent)
        return FileManager.default.fileExists(atPath: beside.path) ? beside : nil
    }
}
