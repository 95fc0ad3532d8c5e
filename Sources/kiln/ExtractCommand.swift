import Foundation
import KilnKit

/// `kiln extract`: shows what one source extracts from some files, and what it missed.
struct ExtractCommand: KilnCommand {
    static let name = "extract"
    static let abstract = "Shows what a source extracts from files, then the lines that look like data but were missed."
    static let arguments = "SOURCE[.KIND] FILE..."
    static let details = """
        Runs the reader of the manifest's source SOURCE (with its patterns, headings and expectations) over the given
        files and prints the records as a table (for a source that fills several tables, name the kind of record:
        guide.listing), then every line that looks like data (the source's candidate
        pattern) that no row pattern captured, with its line number — so a pattern can be tuned in seconds.

        Exit codes: 0 extracted (findings are shown, not failures), 64 usage or manifest error, 74 I/O error.

        """
    static let commandOptions: [CommandOption] = [
        CommandOption("--manifest", value: "M", help: "The pipeline folder or manifest (default: kiln.json5 in the current folder)."),
        CommandOption("--format", value: "table|json", help: "table (default) or json."),
    ]

    let sourceName: String
    let files: [String]
    let manifestPath: String
    let format: String

    init(_ arguments: inout ParsedArguments) throws {
        sourceName = try arguments.positional("the source name")
        guard !arguments.positionals.isEmpty else { throw KilnError.usage("missing the files to extract from") }
        files = arguments.positionals
        arguments.positionals = []
        manifestPath = try ManifestLocation.resolve(explicit: arguments.values["--manifest"], bundle: nil)
            ?? { throw KilnError.usage("no \(ManifestLoader.defaultFileName) in the current folder; give the pipeline with --manifest") }()
        format = try arguments.format(allowed: ["table", "json"])
    }

    func run() throws -> Int32 {
        let pipeline = try ManifestLoader.load(manifestPath)
        let (source, kind) = try pipeline.source(named: sourceName)
        try ExtractionStream.write(source, kind: kind, files: files.map { URL(fileURLWithPath: $0) }, displayNames: files,
                                   format: format == "json" ? .json : .table, to: FileHandle.standardOutput) {
            TerminalText.sanitize($0)
        }
        return 0
    }
}
