import Foundation
import KilnKit
import XCTest
@testable import kiln

/// The commands' declarations are the one source of the parser, the help, the completion scripts and the manual
/// page: each generator is held to them here (the scripts run in the shells in `CompletionsCommandTests`).
final class CommandDeclarationTests: XCTestCase {
    func testEveryDeclaredOptionIsInItsCommandsHelpAndNothingElse() {
        for command in CommandLineTool.commands {
            XCTAssertEqual(CompletionsCommandTests.optionNames(inOptionsSection: command.help), Set(command.options.map(\.name)), command.name)
            XCTAssertEqual(Set(command.options.map(\.name)).count, command.options.count, "\(command.name): each option once")
        }
    }

    func testEachScriptNamesEveryDeclaredOptionUnderItsCommand() {
        let scripts = ShellCompletion(commands: CommandLineTool.commands)
        let bash = scripts.script(for: .bash), zsh = scripts.script(for: .zsh), fish = scripts.script(for: .fish)
        for command in CommandLineTool.commands {
            let names = command.options.map(\.name) + ["--help"]
            let bashBranch = bash.components(separatedBy: "\n        \(command.name))\n").dropFirst().first?.components(separatedBy: "\n            ;;\n").first ?? ""
            let offered = bashBranch.components(separatedBy: "if [[ \"$cur\" == -* ]]; then\n").last?.split(separator: "\n").first ?? ""
            XCTAssertEqual(offered.trimmingCharacters(in: .whitespaces), "_kiln_reply -W \"\(names.joined(separator: " "))\"", command.name)
            let fishLines = fish.split(separator: "\n").filter { $0.contains("-n '__kiln_command_is \(command.name)'") && $0.contains(" -l ") }
            XCTAssertEqual(fishLines.map { $0.components(separatedBy: " -l ")[1].split(separator: " ")[0] }.map { "--" + $0 }, names, command.name)
            for name in names { XCTAssertTrue(zsh.contains("'\(name)[") || zsh.contains("'*\(name)["), "\(command.name) \(name)") }
        }
    }

    func testValuePlaceholdersCompleteAsTheirKind() {
        var kinds: [String: CommandOption.Completion] = [:]
        for option in CommandLineTool.commands.flatMap(\.options) { if let value = option.value { kinds[value] = option.completion } }
        // A new placeholder that names a file must be added to `CommandOption.completion`, not fall to free text.
        XCTAssertEqual(Set(kinds.filter { $0.value == .text }.keys), ["L", "LIMITS", "N", "SIZE", "A,B", "YYYY-MM-DD", "PACKAGE", "S", "SOURCE", "FROM=TO"])
        XCTAssertEqual(kinds["DIR"], .folders)
        XCTAssertEqual(kinds["FILE"], .files)
        XCTAssertEqual(kinds["text|json|junit|github"], .choices(["text", "json", "junit", "github"]))
        XCTAssertEqual(CommandOption("--quiet", value: nil, help: "").completion, CommandOption.Completion.none)
    }

    func testSummariesEndAtTheFirstSentence() {
        XCTAssertEqual(ShellCompletion.summary("Compare with FILE (e.g. the last release) first. Default: none."), "Compare with FILE (e.g. the last release) first")
        XCTAssertEqual(ShellCompletion.summary("Prints nothing\n  but errors."), "Prints nothing but errors")
    }

    func testManualPageTextIsEscapedForRoff() {
        XCTAssertEqual(ManualPage.escape("--out a\\b → x"), "\\-\\-out a\\eb \\[u2192] x")
        let page = ManualPage.text(commands: CommandLineTool.commands)
        XCTAssertFalse(page.split(separator: "\n").contains { $0.hasPrefix("'") }, "no line starts a roff request by accident")
        for command in CommandLineTool.commands {
            XCTAssertTrue(page.contains("\n.SS \"kiln \(command.name)\"\n.B " + ManualPage.escape(command.usage) + "\n"), command.name)
        }
    }

    /// A command reads its options through their declarations (`BuildCommand.Options.quiet`), whose names are written
    /// once: flags, values (the last given) and every value of one that repeats. (A misspelt option does not compile;
    /// reading an option the command does not list stops a debug build.)
    func testOptionsAreReadThroughTheirDeclarations() throws {
        typealias Options = BuildCommand.Options
        let parsed = try ParsedArguments(["p", "--allow-path", "a", "--quiet", "--allow-path=b", "--progress", "json"], options: BuildCommand.commandOptions)
        XCTAssertTrue(parsed.flag(Options.quiet))
        XCTAssertFalse(parsed.flag(Options.html))
        XCTAssertEqual(parsed.values(Options.allowPath), ["a", "b"])
        XCTAssertEqual(parsed.value(Options.allowPath), "b")
        XCTAssertEqual(parsed.value(Options.progress), "json")
        XCTAssertNil(parsed.value(Options.baseline))
        XCTAssertNil(parsed.values(Options.baseline))
        XCTAssertEqual(try parsed.format(Options.format), "text", "the first choice when absent")
        XCTAssertEqual(parsed.positionals, ["p"])
    }

    /// `--format` is checked against the choices its declaration lists, and the thresholds are read from the two
    /// options named.
    func testFormatAndThresholdsAreReadFromTheirDeclarations() throws {
        typealias Options = DiffCommand.Options
        let parsed = try ParsedArguments(["--format", "junit", "--max-removed", "10%"], options: DiffCommand.commandOptions)
        XCTAssertEqual(try parsed.format(Options.format), "junit")
        var expected = Thresholds()
        try expected.add(.removed, from: "10%", named: "--max-removed")
        XCTAssertEqual(try parsed.thresholds(removed: Options.maxRemoved, changed: Options.maxChanged), expected)
        XCTAssertNotEqual(expected, Thresholds())
        let wrong = try ParsedArguments(["--format", "junit"], options: CodesCommand.commandOptions)
        XCTAssertThrowsError(try wrong.format(CodesCommand.Options.format)) { error in
            XCTAssertEqual("\(error)", "\(KilnError.usage("--format must be one of text, json, not \"junit\""))")
        }
    }

    func testAnEmptyPathIsRefusedAsAnEmptyString() throws {
        let parsed = try ParsedArguments(["--out", ""], options: ExportCommand.commandOptions)
        XCTAssertThrowsError(try parsed.path(ExportCommand.Options.out)) { error in
            XCTAssertEqual("\(error)", "\(KilnError.usage("--out needs a path, not an empty string"))")
        }
        XCTAssertEqual(try ParsedArguments(["--out", "legacy"], options: ExportCommand.commandOptions).path(ExportCommand.Options.out)?.lastPathComponent, "legacy")
    }
}
