import Foundation
import KilnC
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
        pattern) that no row pattern captured, with its line number — so a pattern can be tuned in seconds. A file
        kiln fetch saved for the source is shown with the URL it came from and when it was captured.

        Exit codes: 0 extracted (findings are shown, not failures), 64 usage or manifest error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let manifest = CommandOption("--manifest", value: "M", help: "The pipeline folder or manifest (default: kiln.json5 in the current folder).")
        static let format = CommandOption("--format", value: "table|json", help: "table (default) or json.")
        static let fields = CommandOption("--fields", value: "A,B", help: "Only these fields, in this order, comma-separated (in the table and the JSON); an unknown name is refused with the list of the source's fields.")
        static let width = CommandOption("--width", value: "N", help: "The table's widest line: the widest field columns are narrowed to fit and cells cut end in … (said once, after the records). Default: the terminal's width (COLUMNS, else the terminal's own) when stdout is a terminal, else no limit; 0: no limit. The JSON is never cut.")
    }

    static let commandOptions: [CommandOption] = [Options.manifest, Options.format, Options.fields, Options.width]

    let sourceName: String
    let files: [String]
    let manifestPath: String
    let format: String
    let fields: [String]?
    /// The table's widest line; `nil`: no limit.
    let width: Int?

    init(_ arguments: inout ParsedArguments) throws {
        sourceName = try arguments.positional("the source name")
        guard !arguments.positionals.isEmpty else { throw KilnError.usage("missing the files to extract from") }
        files = arguments.positionals
        arguments.positionals = []
        if files.filter({ $0 == StandardInputFile.argument }).count > 1 {
            throw KilnError.usage("standard input (-) can be read once; name the other files")
        }
        manifestPath = try ManifestLocation.resolve(explicit: arguments.value(Options.manifest), bundle: nil)
            ?? { throw KilnError.usage("no \(ManifestLoader.defaultFileName) in the current folder; give the pipeline with --manifest") }()
        format = try arguments.format(Options.format)
        fields = arguments.value(Options.fields).map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } }
        if let fields, fields.contains("") {
            throw KilnError.usage("\(Options.fields.name) needs field names separated by commas, not \"\(arguments.value(Options.fields) ?? "")\"")
        }
        if let given = arguments.value(Options.width) {
            guard let width = Int(given), width >= 0 else { throw KilnError.usage("\(Options.width.name) needs a number of columns (0: no limit), not \"\(given)\"") }
            guard format == "table" else { throw KilnError.usage("\(Options.width.name) applies to the table; \(Options.format.name) json is never cut") }
            self.width = width == 0 ? nil : width
        } else {
            width = format == "table" ? ExtractCommand.terminalWidth() : nil
        }
    }

    /// The width of the terminal stdout is, when it is one: `COLUMNS` when it holds a number, else the terminal's own.
    static func terminalWidth() -> Int? {
        guard Terminal.isTerminal(STDOUT_FILENO) else { return nil }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        return Terminal.columns(STDOUT_FILENO)
    }

    func run() throws -> ExitStatus {
        let pipeline = try ManifestLoader.load(manifestPath)
        let (source, kind) = try pipeline.source(named: sourceName)
        try ExtractionStream.write(source, kind: kind, files: try files.map { try StandardInputFile.url($0) }, displayNames: files,
                                   fields: fields, fieldsName: Options.fields.name, width: width, format: format == "json" ? .json : .table, to: FileHandle.standardOutput) {
            TerminalText.sanitize($0)
        }
        return .success
    }
}
