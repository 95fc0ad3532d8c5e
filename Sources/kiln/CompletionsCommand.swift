import Foundation
import KilnKit

/// `kiln completions SHELL`: prints a completion script for bash, zsh or fish, made from the commands' declarations.
struct CompletionsCommand: KilnCommand {
    static let name = "completions"
    static let abstract = "Prints a shell completion script (bash, zsh or fish) for every command and option."
    static let arguments = "bash|zsh|fish"
    static let details = """
        Prints the script for SHELL on stdout, made from the same declarations as the commands' help, so it offers
        exactly the options each command takes (and the values of --format). Load it for the current shell with
        `source <(kiln completions bash)` (zsh: `source <(kiln completions zsh)`; fish: `kiln completions fish |
        source`), or install it where the shell looks (scripts/install does: share/bash-completion/completions/kiln,
        share/zsh/site-functions/_kiln, share/fish/vendor_completions.d/kiln.fish).

        Exit codes: 0 printed, 64 usage error (another shell).

        """
    static let commandOptions: [CommandOption] = []
    static let argumentCompletion = CommandOption.Completion.choices(ShellCompletion.Shell.allCases.map(\.rawValue))

    let shell: ShellCompletion.Shell

    init(_ arguments: inout ParsedArguments) throws {
        let name = try arguments.positional("the shell (bash, zsh or fish)")
        try arguments.requireNoMore()
        guard let shell = ShellCompletion.Shell(rawValue: name) else {
            throw KilnError.usage("no completions for \"\(name)\"; shells: \(ShellCompletion.Shell.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.shell = shell
    }

    func run() throws -> ExitStatus {
        try StandardOutput.write(ShellCompletion(commands: CommandLineTool.commands).script(for: shell))
        return .success
    }
}
