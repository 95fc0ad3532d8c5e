import Foundation
import KilnKit

/// The `kiln` command: parses the arguments, runs one library call, prints, and returns the exit code.
/// Help and data go to stdout; errors go to stderr as `Error: …` with the usage line.
struct CommandLineTool {
    let arguments: [String]

    static let commands: [CommandEntry] = [
        CommandEntry(BuildCommand.self), CommandEntry(CheckCommand.self), CommandEntry(DiffCommand.self), CommandEntry(ExtractCommand.self),
        CommandEntry(TestCommand.self), CommandEntry(ExportCommand.self), CommandEntry(ReportCommand.self),
    ]

    static var overview: String {
        var text = """
            kiln \(KilnVersion.current): builds the SQLite bundle an app ships from scraped inputs, checked and reproducible.

            USAGE: kiln <command> [options]

            COMMANDS:

            """
        for command in commands { text += "  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.abstract + "\n" }
        text += """
              help      Shows help for a command.

            OPTIONS:
              -h, --help  Shows help.
              --version   Shows the version.

            Exit codes: 0 success, 1 validation errors, 64 usage or manifest error, 74 I/O error.

            """
        return text
    }

    func run() -> Int32 {
        guard let first = arguments.first else {
            print(CommandLineTool.overview, terminator: "")
            return 0
        }
        switch first {
        case "-h", "--help":
            print(CommandLineTool.overview, terminator: "")
            return 0
        case "--version":
            print(KilnVersion.current)
            return 0
        case "help":
            guard let name = arguments.dropFirst().first else {
                print(CommandLineTool.overview, terminator: "")
                return 0
            }
            guard let command = CommandLineTool.commands.first(where: { $0.name == name }) else {
                return usageError("unknown command \"\(name)\"", usage: "kiln help <command>")
            }
            print(command.help, terminator: "")
            return 0
        default:
            guard let command = CommandLineTool.commands.first(where: { $0.name == first }) else {
                return usageError("unknown command \"\(first)\"; commands: \(CommandLineTool.commands.map(\.name).joined(separator: ", "))",
                                  usage: "kiln <command> [options]")
            }
            let rest = Array(arguments.dropFirst())
            if rest.contains("-h") || rest.contains("--help") {
                print(command.help, terminator: "")
                return 0
            }
            do {
                return try command.run(rest)
            } catch let error as KilnError {
                if case .usage(let message) = error { return usageError(message, usage: command.usage) }
                printError(error.description)
                return error.exitCode
            } catch {
                printError("\(error)")
                return 74
            }
        }
    }

    private func usageError(_ message: String, usage: String) -> Int32 {
        printError(message + "\nUsage: " + usage)
        return 64
    }
}

/// Writes `Error: message` to stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("Error: " + message + "\n").utf8))
}

/// Writes text to stderr as it is.
func printToStandardError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

/// One subcommand: its name, one-line abstract, usage and help, and how it runs.
protocol KilnCommand {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    static var details: String { get }
    /// Options that take no value.
    static var flags: Set<String> { get }
    /// Options that take a value.
    static var options: Set<String> { get }
    /// Validates the parsed arguments.
    /// - Throws: `KilnError.usage` for missing or extra arguments.
    init(_ arguments: inout ParsedArguments) throws
    /// Runs and returns the exit code.
    /// - Throws: `KilnError` mapped to its exit code.
    func run() throws -> Int32
}

extension KilnCommand {
    static var help: String { "\(abstract)\n\nUsage: \(usage)\n\n\(details)" }

}

/// A subcommand as the dispatcher sees it: its texts and a function that parses, validates and runs it.
struct CommandEntry: Sendable {
    let name: String
    let abstract: String
    let usage: String
    let help: String
    let run: @Sendable ([String]) throws -> Int32

    init<Command: KilnCommand>(_ type: Command.Type) {
        name = type.name
        abstract = type.abstract
        usage = type.usage
        help = type.help
        run = { arguments in
            var parsed = try ParsedArguments(arguments, flags: Command.flags, options: Command.options)
            return try Command(&parsed).run()
        }
    }
}

/// Arguments split into positionals, flags and `--option value` pairs; unknown options are usage errors.
struct ParsedArguments {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: String] = [:]
    /// Every value of each option, in order, for options that may be repeated (`values` keeps the last).
    var repeated: [String: [String]] = [:]

    /// - Throws: `KilnError.usage` for an unknown option or a missing value.
    init(_ arguments: [String], flags knownFlags: Set<String>, options knownOptions: Set<String>) throws {
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
                values[name] = value
                repeated[name, default: []].append(value)
            } else {
                throw KilnError.usage("unknown option \(name)")
            }
        }
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

    /// The value of `--format`, checked against the allowed ones.
    /// - Throws: `KilnError.usage` for another value.
    func format(allowed: [String]) throws -> String {
        let format = values["--format"] ?? allowed[0]
        guard allowed.contains(format) else {
            throw KilnError.usage("--format must be one of \(allowed.joined(separator: ", ")), not \"\(format)\"")
        }
        return format
    }
}
