import Foundation
import KilnKit

/// The `kiln` command: parses the arguments, runs one library call, prints, and returns the exit status.
/// Help and data go to stdout; errors go to stderr as `Error: …` with the usage line.
struct CommandLineTool {
    let arguments: [String]

    static let commands: [CommandEntry] = [
        CommandEntry(FetchCommand.self), CommandEntry(BuildCommand.self), CommandEntry(CheckCommand.self), CommandEntry(DiffCommand.self), CommandEntry(PatchCommand.self), CommandEntry(ApplyCommand.self), CommandEntry(ExtractCommand.self),
        CommandEntry(TestCommand.self), CommandEntry(ExportCommand.self), CommandEntry(ReportCommand.self), CommandEntry(CodesCommand.self),
        CommandEntry(CompletionsCommand.self),
        CommandEntry(InitCommand.self),
    ]

    /// `kiln --help` (`-h` is its short form; after a command, that command's help).
    static let helpOption = CommandOption("--help", value: nil, help: "Shows help (also -h, and after any command: kiln build --help).")
    /// `kiln --version`.
    static let versionOption = CommandOption("--version", value: nil, help: "Shows the version.")

    /// The options of `kiln` itself, as the overview's OPTIONS section lists them.
    static let globalOptions: [CommandOption] = [helpOption, versionOption]

    /// What `kiln help` does, as the overview and the completion scripts describe it.
    static let helpAbstract = "Shows help for a command (help --man: the manual page)."

    /// What `kiln help --help` prints.
    static var helpHelp: String {
        """
        Usage: kiln help [COMMAND] [--man]

        Shows the overview of kiln (no COMMAND), the help of COMMAND (as kiln COMMAND --help does), or the manual page.

        OPTIONS:
        \(helpOptions.map { "  \($0.name)  \($0.help)" }.joined(separator: "\n"))

        """
    }

    /// `kiln help --man`.
    static let manOption = CommandOption("--man", value: nil, help: "Prints the manual page of kiln (roff: every command, its options and exit codes) instead; man -l reads it.")

    /// The options of `kiln help [COMMAND]`.
    static let helpOptions: [CommandOption] = [manOption]

    static var overview: String {
        var text = """
            kiln \(KilnVersion.current): builds the SQLite bundle an app ships from scraped inputs, checked and reproducible.

            USAGE: kiln <command> [options]

            COMMANDS:

            """
        let rows = commands.map { ($0.name, $0.abstract) } + [("help", helpAbstract)]
        // Names in a column of 10; a longer one (completions) is followed by two spaces.
        for (name, abstract) in rows { text += "  " + name.padding(toLength: max(10, name.count + 2), withPad: " ", startingAt: 0) + abstract + "\n" }
        text += """

            OPTIONS:
              -h, --help     Shows help.
              -V, --version  Shows the version (also: kiln version).

            With no command, kiln prints this overview on stderr and exits 64 (a usage error); kiln --help prints it
            on stdout and exits 0.

            Exit codes: 0 success, 1 validation errors, 64 usage or manifest error, 74 I/O error.

            """
        return text
    }

    /// Runs the command line; a failure to write standard output is an I/O error like any other.
    func run() -> ExitStatus {
        // Old files whose blocks are freed on threads of their own (`FileSync.move`) are gone before the process is.
        defer { LaterRemovals.shared.wait() }
        defer { StandardInputFile.removeAll() }
        do {
            return try dispatch()
        } catch {
            printError("\(error)")
            return .io
        }
    }

    private func dispatch() throws -> ExitStatus {
        guard let first = arguments.first else {
            // No command is a usage error (64): the overview goes to stderr, so that a script sees the mistake.
            printToStandardError(CommandLineTool.overview)
            return .usage
        }
        switch first {
        case "-h", CommandLineTool.helpOption.name:
            try printOut(CommandLineTool.overview)
            return .success
        case CommandLineTool.versionOption.name, "-V", "version":
            if let extra = arguments.dropFirst().first {
                return usageError("\(first) takes no argument, found \"\(extra)\"", usage: "kiln \(first)")
            }
            try printOut(KilnVersion.current + "\n")
            return .success
        case "help":
            if let option = arguments.dropFirst().first, option == CommandLineTool.helpOption.name || option == "-h" {
                try printOut(CommandLineTool.helpHelp)
                return .success
            }
            if arguments.dropFirst().first == CommandLineTool.manOption.name {
                if let extra = arguments.dropFirst(2).first {
                    return usageError("help --man takes no argument, found \"\(extra)\"", usage: "kiln help --man")
                }
                try StandardOutput.write(ManualPage.text(commands: CommandLineTool.commands))
                return .success
            }
            guard let name = arguments.dropFirst().first else {
                try printOut(CommandLineTool.overview)
                return .success
            }
            guard let command = CommandLineTool.commands.first(where: { $0.name == name }) else {
                return usageError("unknown command \"\(name)\"", usage: "kiln help <command>")
            }
            if let extra = arguments.dropFirst(2).first {
                return usageError("help takes one command name, found \"\(extra)\" too", usage: "kiln help <command>")
            }
            try printOut(command.help)
            return .success
        default:
            guard let command = CommandLineTool.commands.first(where: { $0.name == first }) else {
                return usageError("unknown command \"\(first)\"; commands: \(CommandLineTool.commands.map(\.name).joined(separator: ", "))",
                                  usage: "kiln <command> [options]")
            }
            let rest = Array(arguments.dropFirst())
            if rest.contains("-h") || rest.contains(CommandLineTool.helpOption.name) {
                try printOut(command.help)
                return .success
            }
            do {
                return try command.run(rest)
            } catch let error as KilnError {
                if case .usage(let message) = error { return usageError(message, usage: command.usage) }
                printError(error.description)
                return ExitStatus(error)
            } catch {
                printError("\(error)")
                return .io
            }
        }
    }

    private func usageError(_ message: String, usage: String) -> ExitStatus {
        printError(message + "\nUsage: " + usage)
        return .usage
    }
}

/// Writes `Error: message` to stderr, made safe for terminals and CI logs (`TerminalText.sanitize`).
func printError(_ message: String) {
    StandardError.write(TerminalText.sanitize("Error: " + message + "\n"))
}

/// Writes human-readable text to stderr, made safe for terminals and CI logs.
func printToStandardError(_ text: String) {
    StandardError.write(TerminalText.sanitize(text))
}

/// Writes human-readable text to stdout, made safe for terminals and CI logs; `workflowCommands` keeps GitHub
/// Actions commands (for `--format github`).
/// - Throws: `KilnError.io` when standard output cannot be written (a full disk, a closed pipe or descriptor).
func printOut(_ text: String, workflowCommands: Bool = false) throws {
    try StandardOutput.write(TerminalText.sanitize(text, workflowCommands: workflowCommands))
}

/// The pipeline folder as a path from the current folder, ending in `/` (empty for the current folder itself), so
/// that printed input paths open from where the command was run.
func pipelinePrefix(_ pipeline: CompiledPipeline) -> String {
    let relative = displayPath(pipeline.manifest.directory)
    return relative == "." ? "" : relative + "/"
}

/// Writes a report rendered in `format` to stdout: JSON as it is (JSONText escapes what a terminal would obey),
/// the other formats made safe, GitHub's workflow commands kept.
func printReport(_ rendered: String, _ format: ReportFormat) throws {
    if format == .json { try StandardOutput.write(rendered) } else { try printOut(rendered, workflowCommands: format == .github) }
}

/// One subcommand: its name, one-line abstract, arguments and options, and how it runs. The options are declared
/// once, in `commandOptions`: that list drives parsing, the usage line and the OPTIONS section of the help.
protocol KilnCommand {
    static var name: String { get }
    static var abstract: String { get }
    /// The positional arguments as the usage line shows them, e.g. `DIR|MANIFEST`.
    static var arguments: String { get }
    /// What the command does, then notes and exit codes: the help around the generated OPTIONS section.
    static var details: String { get }
    static var commandOptions: [CommandOption] { get }
    /// What a shell completes for the positional arguments (file names unless a command says otherwise).
    static var argumentCompletion: CommandOption.Completion { get }
    /// Validates the parsed arguments.
    /// - Throws: `KilnError.usage` for missing or extra arguments.
    init(_ arguments: inout ParsedArguments) throws
    /// Runs and returns the exit status.
    /// - Throws: `KilnError`, which the dispatcher maps to its exit status.
    func run() throws -> ExitStatus
}

extension KilnCommand {
    static var argumentCompletion: CommandOption.Completion { .files }

    /// `kiln NAME ARGUMENTS [--option VALUE]…`, required options without brackets.
    static var usage: String {
        let options = commandOptions.map { option in option.required ? option.synopsis : "[\(option.synopsis)]" }
        return (["kiln", name, arguments] + options).filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The help: abstract, usage, the first paragraph of `details`, the options, then the rest of `details`.
    static var help: String {
        let paragraphs = details.components(separatedBy: "\n\n")
        let description = paragraphs.first ?? ""
        let rest = paragraphs.dropFirst().joined(separator: "\n\n")
        let optionsText = commandOptions.isEmpty ? "" : "OPTIONS:\n" + CommandOption.helpLines(commandOptions) + "\n"
        return "\(abstract)\n\nUsage: \(usage)\n\n\(description)\n\n\(optionsText)\(rest)"
    }
}

/// A command-line option: its name, the value it takes (`nil` for a flag), whether it must be given or may be
/// repeated, and its help.
struct CommandOption: Sendable {
    let name: String
    let value: String?
    var required = false
    var repeatable = false
    let help: String

    init(_ name: String, value: String?, required: Bool = false, repeatable: Bool = false, help: String) {
        self.name = name
        self.value = value
        self.required = required
        self.repeatable = repeatable
        self.help = help
    }

    /// What a shell offers for an option's value (or a command's arguments).
    enum Completion: Equatable, Sendable {
        /// A flag: no value.
        case none
        /// One of these words.
        case choices([String])
        /// A file or folder name.
        case files
        /// A folder name.
        case folders
        /// Anything (a number, a limit): nothing to offer.
        case text
        /// A command's arguments: the first one of these words, the others file names (`kiln export NAME BUNDLE`).
        case wordThenFiles([String])
    }

    /// The completion the value's placeholder calls for: `a|b` its words, `DIR` folders, `FILE`, `M` (a pipeline
    /// folder or manifest) and `PATH` file names, any other placeholder (`N`, `L`, `SIZE`…) free text.
    var completion: Completion {
        guard let value else { return .none }
        if value.contains("|") { return .choices(value.split(separator: "|").map(String.init)) }
        switch value {
        case "DIR": return .folders
        case "FILE", "M", "PATH": return .files
        default: return .text
        }
    }

    /// `--name VALUE`, or `--name` for a flag.
    var synopsis: String { value.map { "\(name) \($0)" } ?? name }

    /// The OPTIONS lines: each synopsis in a column, its help wrapped beside it.
    static func helpLines(_ options: [CommandOption], width: Int = 110) -> String {
        let column = (options.map(\.synopsis.count).max() ?? 0) + 4
        var lines: [String] = []
        for option in options {
            var words = option.help.split(separator: " ").map(String.init)
            if option.repeatable { words += ["(May", "be", "repeated.)"] }
            var line = "  " + option.synopsis.padding(toLength: column - 2, withPad: " ", startingAt: 0)
            var first = true
            while !words.isEmpty {
                var text = ""
                while let word = words.first, text.isEmpty || 2 + column + text.count + 1 + word.count <= width {
                    text += (text.isEmpty ? "" : " ") + word
                    words.removeFirst()
                }
                lines.append((first ? line : String(repeating: " ", count: column)) + text)
                first = false
                line = ""
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A subcommand as the dispatcher sees it: its texts and a function that parses, validates and runs it.
struct CommandEntry: Sendable {
    let name: String
    let abstract: String
    let usage: String
    let help: String
    /// The paragraphs of the help around its OPTIONS section, as declared.
    let details: String
    let options: [CommandOption]
    let argumentCompletion: CommandOption.Completion
    let run: @Sendable ([String]) throws -> ExitStatus

    init<Command: KilnCommand>(_ type: Command.Type) {
        name = type.name
        abstract = type.abstract
        usage = type.usage
        help = type.help
        details = type.details
        options = type.commandOptions
        argumentCompletion = type.argumentCompletion
        run = { arguments in
            var parsed = try ParsedArguments(arguments, options: Command.commandOptions)
            return try Command(&parsed).run()
        }
    }
}

/// Arguments split into positionals, flags and `--option value` pairs; unknown options are usage errors. A command
/// reads its options through their declarations (`flag(Options.quiet)`, `value`, `values`), so each option's name is
/// written once and a misspelt one does not compile; reading an option the command does not list in its
/// `commandOptions` is a programmer's error that stops a debug build (`assert`).
struct ParsedArguments {
    var positionals: [String] = []
    private var flags: Set<String> = []
    private var lastValues: [String: String] = [:]
    /// Every value of each option, in order, for options that may be repeated (`lastValues` keeps the last).
    private var repeated: [String: [String]] = [:]
    private let declaredNames: Set<String>

    /// - Throws: `KilnError.usage` for an unknown option, a missing value, an option given twice that may not be
    ///   repeated, or a required option left out.
    init(_ arguments: [String], options declared: [CommandOption]) throws {
        declaredNames = Set(declared.map(\.name))
        let knownFlags = Set(declared.filter { $0.value == nil }.map(\.name))
        let knownOptions = Set(declared.filter { $0.value != nil }.map(\.name))
        let repeatable = Set(declared.filter(\.repeatable).map(\.name))
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                positionals.append(argument)
                continue
            }
            var name = argument, inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            if (flags.contains(name) || lastValues[name] != nil), !repeatable.contains(name) {
                throw KilnError.usage("\(name) is given twice; give it once")
            }
            if knownFlags.contains(name), inline == nil {
                flags.insert(name)
            } else if knownOptions.contains(name) {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw KilnError.usage("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                lastValues[name] = value
                repeated[name, default: []].append(value)
            } else {
                let names = declared.map(\.name)
                throw KilnError.usage("unknown option \(name)" + (names.isEmpty ? "" : "; options: \(names.joined(separator: ", "))"))
            }
        }
        if let missing = declared.first(where: { $0.required && lastValues[$0.name] == nil }) {
            throw KilnError.usage("missing \(missing.synopsis)")
        }
    }

    /// Whether the flag `option` was given.
    func flag(_ option: CommandOption) -> Bool {
        assertDeclared(option, flag: true)
        return flags.contains(option.name)
    }

    /// The value of `option` (its last, for one that repeats); `nil` when absent.
    func value(_ option: CommandOption) -> String? {
        assertDeclared(option, flag: false)
        return lastValues[option.name]
    }

    /// Every value of `option`, in order; `nil` when absent.
    func values(_ option: CommandOption) -> [String]? {
        assertDeclared(option, flag: false)
        return repeated[option.name]
    }

    private func assertDeclared(_ option: CommandOption, flag: Bool) {
        assert(declaredNames.contains(option.name), "the command reads \(option.name), which it does not declare")
        assert((option.value == nil) == flag, "\(option.name) is read as a \(flag ? "flag" : "value"), which it is not")
    }

    /// Takes the next positional argument.
    /// - Throws: `KilnError.usage` naming what is missing.
    mutating func positional(_ what: String) throws -> String {
        guard !positionals.isEmpty else { throw KilnError.usage("missing \(what)") }
        return positionals.removeFirst()
    }

    /// Fails when positionals are left over.
    /// - Throws: `KilnError.usage` naming the extra argument.
    func requireNoMore() throws {
        if let extra = positionals.first { throw KilnError.usage("unexpected argument \"\(extra)\"") }
    }

    /// The value of a path option as a file URL; `nil` when the option is absent.
    /// - Throws: `KilnError.usage` for an empty path.
    func path(_ option: CommandOption) throws -> URL? {
        guard let value = value(option) else { return nil }
        guard !value.isEmpty else { throw KilnError.usage("\(option.name) needs a path, not an empty string") }
        return URL(fileURLWithPath: value)
    }

    /// The limits the options `removed` and `changed` (`--max-removed`, `--max-changed`) set.
    /// - Throws: `KilnError.usage` for a value that is not a list of limits.
    func thresholds(removed: CommandOption, changed: CommandOption) throws -> Thresholds {
        var thresholds = Thresholds()
        for (measure, option) in [(Thresholds.Measure.removed, removed), (.changed, changed)] {
            if let text = value(option) { try thresholds.add(measure, from: text, named: option.name) }
        }
        return thresholds
    }

    /// The value of `option` (`--format`), checked against the choices its declaration lists (`text|json`); the
    /// first when it is absent.
    /// - Throws: `KilnError.usage` for another value.
    func format(_ option: CommandOption) throws -> String {
        guard case .choices(let allowed) = option.completion else { preconditionFailure("\(option.name) declares no choices") }
        let format = value(option) ?? allowed[0]
        guard allowed.contains(format) else {
            throw KilnError.usage("\(option.name) must be one of \(allowed.joined(separator: ", ")), not \"\(format)\"")
        }
        return format
    }
}
