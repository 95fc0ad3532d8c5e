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
    static let commandOptions: [CommandOption] = [
        CommandOption("--update", value: nil, help: "Writes the expected files from what is extracted now (review the change with git diff)."),
    ]

    let pipelinePath: String
    let update: Bool

    init(_ arguments: inout ParsedArguments) throws {
        pipelinePath = try arguments.positional("the pipeline folder or manifest")
        try arguments.requireNoMore()
        update = arguments.flags.contains("--update")
    }

    func run() throws -> Int32 {
        let pipeline = try ManifestLoader.load(pipelinePath)
        guard !pipeline.manifest.fixtures.isEmpty else {
            try printOut("no fixtures in \(pipeline.manifest.file.lastPathComponent)\n")
            return 0
        }
        let outcomes = try FixtureRunner(pipeline: pipeline).run(update: update)
        var failures = 0
        for outcome in outcomes {
            let name = "\(outcome.fixture.input) (source \(outcome.fixture.source))"
            if update {
                try printOut("updated \(outcome.fixture.expected) from \(name)\n")
            } else if outcome.missingExpectation {
                failures += 1
                try printOut("FAIL \(name): \(outcome.fixture.expected) does not exist; run kiln test --update to write it\n")
            } else if outcome.passed {
                try printOut("ok   \(name)\n")
            } else {
                failures += 1
                try printOut("FAIL \(name) differs from \(outcome.fixture.expected):\n")
                for line in outcome.differences { try printOut("  " + TerminalText.escape(line) + "\n") }
            }
        }
        if !update { try printOut("\(outcomes.count - failures) passed, \(failures) failed\n") }
        return failures == 0 ? 0 : 1
    }
}
