import Foundation
import KilnKit

/// `kiln extract`: shows what one source extracts from some files, and what it missed.
struct ExtractCommand: KilnCommand {
    static let name = "extract"
    static let abstract = "Shows what a source extracts from files, then the lines that look like data but were missed."
    static let usage = "kiln extract SOURCE FILE... [--manifest M] [--format table|json]"
    static let details = """
        Runs the reader of the manifest's source SOURCE (with its patterns, headings and expectations) over the given
        files and prints the records as a table, then every line that looks like data (the source's candidate
        pattern) that no row pattern captured, with its line number — so a pattern can be tuned in seconds.

        OPTIONS:
          --manifest M     The pipeline folder or manifest (default: the current folder).
          --format FORMAT  table (default) or json.

        Exit codes: 0 extracted (findings are shown, not failures), 64 usage or manifest error, 74 I/O error.

        """
    static let flags: Set<String> = []
    static let options: Set<String> = ["--manifest", "--format"]

    let sourceName: String
    let files: [String]
    let manifestPath: String
    let format: String

    init(_ arguments: inout ParsedArguments) throws {
        sourceName = try arguments.positional("the source name")
        guard !arguments.positionals.isEmpty else { throw KilnError.usage("missing the files to extract from") }
        files = arguments.positionals
        arguments.positionals = []
        manifestPath = arguments.values["--manifest"] ?? "."
        format = try arguments.format(allowed: ["table", "json"])
    }

    func run() throws -> Int32 {
        let pipeline = try ManifestLoader.load(manifestPath)
        guard let source = pipeline.sources.first(where: { $0.spec.name == sourceName }) else {
            throw KilnError.usage("the manifest has no source \"\(sourceName)\"; sources: \(pipeline.sources.map(\.spec.name).joined(separator: ", "))")
        }
        let extraction = try Extraction.run(source, files: files.map { URL(fileURLWithPath: $0) }, displayNames: files)
        if format == "json" {
            FileHandle.standardOutput.write(try extraction.json())
            print()
        } else {
            printOut(extraction.table())
        }
        return 0
    }
}
