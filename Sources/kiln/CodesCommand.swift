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
    static let commandOptions: [CommandOption] = [
        CommandOption("--format", value: "text|json", help: "text (default): a line per code; json: an array of {code, severity, meaning}."),
    ]

    let format: String

    init(_ arguments: inout ParsedArguments) throws {
        try arguments.requireNoMore()
        format = try arguments.format(allowed: ["text", "json"])
    }

    func run() throws -> Int32 {
        let codes = DiagnosticCode.catalogue
        if format == "json" {
            struct Entry: Encodable { let code: String, severity: String, meaning: String }
            try StandardOutput.write(KilnJSON.encode(codes.map { Entry(code: $0.rawValue, severity: $0.severity.rawValue, meaning: $0.meaning) }))
            try StandardOutput.write("\n")
            return 0
        }
        let width = (codes.map(\.rawValue.count).max() ?? 0) + 2
        try printOut(codes.map { code in
            code.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
                + code.severity.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0) + code.meaning + "\n"
        }.joined())
        return 0
    }
}
