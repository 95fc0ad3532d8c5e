import Foundation
import KilnKit

/// `kiln test`: checks that every source still extracts what its fixtures expect.
struct TestCommand: KilnCommand {
    static let name = "test"
    static let abstract = "Runs the manifest's extraction fixtures and shows a diff where extraction changed."
    static let arguments = "DIR|MANIFEST"
    static let details = """
        For every entry of the manifest's `fixtures` (source, input, expected), runs the source's reader over the
        input and compares the records and the unmatched lines with the expected JSON file. Prints `ok` or a
        line diff (`- expected`, `+ now`) for each fixture.

        Exit codes: 0 every fixture matches, 1 any difference or missing expected file, 64 usage or manifest
        error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let update = CommandOption("--update", value: nil, help: "Writes the expected files from what is extracted now (review the change with git diff).")
        static let format = CommandOption("--format", value: "text|junit|github", help: "text (default): ok or the diff per fixture; junit: JUnit XML, a test case per fixture; github: GitHub Actions annotations, an ::error at the expected file of each fixture that differs, then the verdict.")
    }

    static let commandOptions: [CommandOption] = [Options.update, Options.format]

    let pipelinePath: String
    let update: Bool
    let format: ReportFormat

    init(_ arguments: inout ParsedArguments) throws {
        pipelinePath = try arguments.positional("the pipeline folder or manifest")
        try arguments.requireNoMore()
        update = arguments.flag(Options.update)
        format = ReportFormat(rawValue: try arguments.format(Options.format))!
        if update, format != .text { throw KilnError.usage("\(Options.update.name) writes the expected files; it takes no \(Options.format.name)") }
    }

    func run() throws -> ExitStatus {
        let pipeline = try ManifestLoader.load(pipelinePath)
        guard !pipeline.manifest.fixtures.isEmpty else {
            try printOut("no fixtures in \(pipeline.manifest.file.lastPathComponent)\n")
            return .success
        }
        let outcomes = try FixtureRunner(pipeline: pipeline).run(update: update)
        let pathPrefix = pipelinePrefix(pipeline)
        switch format {
        case .junit: try printReport(outcomes.junit(pathPrefix: pathPrefix), format)
        case .github: try printReport(outcomes.github(pathPrefix: pathPrefix), format)
        case .text, .json: try printText(outcomes)
        }
        return ExitStatus(passed: outcomes.allSatisfy(\.passed) || update)
    }

    /// `ok` or the differences per fixture, then the count (with `--update`, the files written).
    private func printText(_ outcomes: [FixtureRunner.Outcome]) throws {
        for outcome in outcomes {
            let name = outcome.name
            if update {
                try printOut("updated \(outcome.fixture.expected) from \(name)\n")
            } else if outcome.missingExpectation {
                try printOut("FAIL \(name): \(outcome.fixture.expected) does not exist; run kiln test --update to write it\n")
            } else if outcome.passed {
                try printOut("ok   \(name)\n")
            } else {
                try printOut("FAIL \(name) differs from \(outcome.fixture.expected):\n")
                for line in outcome.differences { try printOut("  " + TerminalText.escape(line) + "\n") }
            }
        }
        if !update { try printOut(outcomes.verdict + "\n") }
    }
}
