import Foundation
import KilnKit

/// `kiln export`: writes files from a bundle with an export the manifest declares.
struct ExportCommand: KilnCommand {
    static let name = "export"
    static let abstract = "Writes files from a bundle with one of the manifest's exports (e.g. legacy-text)."
    static let arguments = "NAME BUNDLE"
    static let details = """
        Runs the queries of the manifest's export NAME against BUNDLE and writes each file into DIR, in the same
        formats the readers read. For the Patras pipeline, `kiln export legacy-text build/patras.sqlite --out DIR`
        writes the seven text files the older app loads, and `kiln export gtfs build/patras.sqlite --out build/gtfs`
        a GTFS feed (the folder, and build/patras-gtfs.zip beside it: an export that declares an archive writes it
        into DIR's parent).

        BUNDLE may be the pipeline folder: then its manifest, and build/<bundle>.sqlite, the bundle kiln build writes
        by default.

        Four exports need no declaration (a manifest export of the same name wins):
        `kiln export swift BUNDLE --out DIR` writes DIR/<Bundle>Bundle.swift, a struct per table with read-only
        queries (key, foreign keys, full-text search, region) over SQLite's C API, and GRDB conformances under
        #if canImport(GRDB); `kiln export datasette BUNDLE --out DIR` writes DIR/<bundle file>.metadata.json,
        Datasette's metadata file (descriptions, sources, the full-text table of each table, SQLite's shadow tables
        hidden); `kiln export docs BUNDLE --out DIR` writes a data dictionary, DIR/<bundle>.md and a
        self-contained DIR/<bundle>.html, from the manifest's descriptions, sources and rules;
        `kiln export room BUNDLE --out DIR` writes,
        for the Android bundle beside BUNDLE (<bundle>.android.sqlite;
        the main bundle when the manifest has no android target, which it says), Kotlin sources for Room in
        DIR/<package path>/ (an @Entity data class per table, @Fts4 for the FTS4 tables, a @Database class without
        DAOs that opens the bundle with createFromAsset) and Room's schema file
        DIR/schemas/<package>.<Bundle>Database/<user_version>.json; the tables Room cannot declare are named.

        Every file is written to a temporary file first, and they are renamed into place only when all are complete:
        a failure leaves DIR as it was. DIR may already hold other files, which are left as they are; it may not be an
        empty string (--out ""), the pipeline folder or a file. Export queries must only read (one SELECT each) and
        are stopped after the manifest's limits.sqlSeconds.

        Exit codes: 0 written, 1 the bundle is not a Kiln bundle of this pipeline (or is damaged), 64 usage or manifest
        error, 74 I/O error (also: the bundle is locked by another process).

        """
    /// The built-in exports' names for NAME (a manifest's own are known only with the manifest), then file names.
    static let argumentCompletion = CommandOption.Completion.wordThenFiles(BuiltInExport.allCases.map(\.rawValue))
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let out = CommandOption("--out", value: "DIR", required: true, help: "The folder to write into (created if missing).")
        static let manifest = CommandOption("--manifest", value: "M", help: "The pipeline folder or manifest. Default: kiln.json5 in the current folder, else raw/<bundle>/kiln.json5 where <bundle> is the name in the bundle's kiln_metadata. Raw inputs are not needed.")
        static let package = CommandOption("--package", value: "PACKAGE", help: "The Kotlin package of `room` (default: the bundle's name, e.g. patras).")
        static let date = CommandOption("--date", value: "YYYY-MM-DD", help: "The export date (default: the day of SOURCE_DATE_EPOCH, if set): where a service period of N months without a start date starts, and what the service-ending and expired-calendar warnings count from (without either, they count from today; the files never depend on the clock).")
    }

    static let commandOptions: [CommandOption] = [
        Options.out, Options.manifest, Options.package, Options.date, BundleReadLimitOption.option,
    ]

    let exportName: String
    let bundle: URL
    let output: URL
    let manifestPath: String?
    /// `--package`, for `room`.
    let package: String?
    /// `--date`, else the day of `SOURCE_DATE_EPOCH`.
    let exportDate: Date?
    let sqlSeconds: Double?

    init(_ arguments: inout ParsedArguments) throws {
        exportName = try arguments.positional("the export name")
        bundle = URL(fileURLWithPath: try arguments.positional("the bundle"))
        try arguments.requireNoMore()
        guard let out = try arguments.path(Options.out) else { throw KilnError.usage("missing \(Options.out.synopsis)") }
        output = out
        manifestPath = arguments.value(Options.manifest)
        package = arguments.value(Options.package)
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
        if let date = arguments.value(Options.date) {
            guard let day = CalendarDay.day(date) else { throw KilnError.usage("\(Options.date.name) takes a day as YYYY-MM-DD, not \"\(date)\"") }
            exportDate = day
        } else if let epoch = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"] {
            guard let day = CalendarDay.day(epoch: epoch) else { throw KilnError.usage("SOURCE_DATE_EPOCH is seconds since 1970, not \"\(epoch)\"") }
            exportDate = day
        } else {
            exportDate = nil
        }
    }

    func run() throws -> ExitStatus {
        BundleReadLimitOption.apply(sqlSeconds)
        // `kiln export NAME PIPELINE` (a folder is never a bundle): the pipeline folder's manifest, and the bundle kiln
        // build writes by default.
        let pipelineGiven = OutputPath.entryKind(bundle, followingLinks: true) == .folder
        let manifestPath = pipelineGiven ? (self.manifestPath ?? bundle.path) : try ManifestLocation.require(explicit: self.manifestPath, bundle: bundle)
        let pipeline = try ManifestLoader.load(manifestPath, resolvingInputs: false)
        BundleReadLimitOption.apply(sqlSeconds, manifest: pipeline.manifest)
        let manifest = try ManifestLoader.withSharedExports(pipeline.manifest)
        let bundle = pipelineGiven ? URL(fileURLWithPath: "build").appendingPathComponent("\(pipeline.manifest.bundle).sqlite") : self.bundle
        let packageExports = BuiltInExport.allCases.filter(\.takesPackage).map { "kiln export \($0.rawValue)" }.joined(separator: ", ")
        if !manifest.exports.contains(where: { $0.name == exportName }), let builtIn = BuiltInExport(rawValue: exportName) {
            if package != nil && !builtIn.takesPackage { throw KilnError.usage("\(Options.package.name) is an option of \(packageExports), not of \(exportName)") }
            let written = try builtIn.write(bundle: bundle, manifest: pipeline.manifest, to: output, package: package, names: OutputNames(output: Options.out.name)) { printToStandardError($0 + "\n") }
            for file in written { printToStandardError("wrote \(file.relativePath)\n") }
            return .success
        }
        if package != nil { throw KilnError.usage("\(Options.package.name) is an option of \(packageExports), not of \(exportName)") }
        let exporter = Exporter(manifest: manifest, exportDate: exportDate)
        let written = try exporter.export(exportName, from: bundle, to: output, names: OutputNames(output: Options.out.name))
        for file in written { printToStandardError("wrote \(file.relativePath)\n") }
        for finding in try exporter.serviceFindings(exportName) + exporter.calendarFindings(written, export: exportName) {
            printToStandardError(finding.displayLine + "\n")
        }
        return .success
    }
}
