import Foundation
import KilnKit

/// `kiln codes`: lists every diagnostic code Kiln can emit, with its default severity and meaning.
struct CodesCommand: KilnCommand {
    static let name = "codes"
    static let abstract = "Lists every diagnostic code Kiln can emit, with its default severity and what it means."
    static let arguments = ""
    static let details = """
        The codes a manifest's `severity` section may override (besides the codes of its own rules). A manifest that
        overrides a code that is neither listed here nor one of its rules' codes is refused, so a typo cannot
        silently do nothing.

        Exit codes: 0 listed, 64 usage error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let format = CommandOption("--format", value: "text|json", help: "text (default): a line per code; json: an array of {code, severity, meaning} ({code, severity, meaning, rule} for a manifest's rules).")
        static let manifest = CommandOption("--manifest", value: "M", help: "A pipeline folder or manifest: its own rules' codes are listed after the catalogue, with their severity (after the manifest's overrides) and description.")
    }

    static let commandOptions: [CommandOption] = [Options.format, Options.manifest]

    let format: String
    let manifestPath: String?

    init(_ arguments: inout ParsedArguments) throws {
        try arguments.requireNoMore()
        format = try arguments.format(Options.format)
        manifestPath = arguments.value(Options.manifest)
    }

    /// One line of the list: a catalogue code, or a manifest rule's code with the key path of the rule.
    private struct Entry: Encodable {
        let code: String, severity: String, meaning: String
        var rule: String? = nil
    }

    func run() throws -> ExitStatus {
        var entries = DiagnosticCode.catalogue.map { Entry(code: $0.rawValue, severity: $0.severity.rawValue, meaning: $0.meaning) }
        var ruleEntries: [Entry] = []
        if let manifestPath {
            let manifest = try ManifestLoader.load(manifestPath, resolvingInputs: false).manifest
            for (index, rule) in manifest.rules.enumerated() {
                let severity = manifest.severity[rule.code] ?? rule.severity
                ruleEntries.append(Entry(code: rule.code, severity: severity.rawValue,
                                         meaning: rule.description ?? "(a \(rule.kind.rawValue) rule without a description)", rule: "rules[\(index)]"))
            }
        }
        if format == "json" {
            entries += ruleEntries
            try StandardOutput.write(KilnJSON.encode(entries))
            try StandardOutput.write("\n")
            return .success
        }
        let width = ((entries + ruleEntries).map(\.code.count).max() ?? 0) + 2
        func line(_ entry: Entry) -> String {
            entry.code.padding(toLength: width, withPad: " ", startingAt: 0) + entry.severity.padding(toLength: 9, withPad: " ", startingAt: 0)
                + TextFolding.collapseSpaces(entry.meaning) + (entry.rule.map { " (\($0))" } ?? "") + "\n"
        }
        var text = entries.map(line).joined()
        if let manifestPath, !ruleEntries.isEmpty {
            text += "\nrules of \(manifestPath):\n" + ruleEntries.map(line).joined()
        }
        try printOut(text)
        return .success
    }
}
