import Foundation
import XCTest

/// The command line itself: help, version, usage errors and exit codes.
final class CommandLineTests: CLITestCase {
    func testVersionPrintsTheVersion() throws {
        let run = try kiln("--version")
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stdout, "0.1.0\n")
    }

    /// -V, --version and kiln version print the version alike; an argument after any of them is a usage error.
    func testEverySpellingOfVersionPrintsTheVersion() throws {
        let expected = try kiln("--version").stdout
        for spelling in ["-V", "version"] {
            let run = try kiln(spelling)
            XCTAssertEqual(run.status, 0, spelling)
            XCTAssertEqual(run.stdout, expected, spelling)
            let extra = try kiln(spelling, "x")
            XCTAssertEqual(extra.status, 64, spelling)
            XCTAssertEqual(extra.stderr, "Error: \(spelling) takes no argument, found \"x\"\nUsage: kiln \(spelling)\n")
        }
    }

    /// kiln with no command is a usage error: the overview on stderr, nothing on stdout, exit 64; --help is 0.
    func testNoCommandIsAUsageErrorWithTheOverviewOnStderr() throws {
        let run = try kiln([])
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.stderr, try kiln("--help").stdout)
        XCTAssertTrue(run.stderr.contains("With no command, kiln prints this overview on stderr and exits 64"), run.stderr)
    }

    /// kiln help --help (and -h) describes help itself.
    func testHelpHelpDescribesHelp() throws {
        for flag in ["--help", "-h"] {
            let run = try kiln("help", flag)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.hasPrefix("Usage: kiln help [COMMAND] [--man]\n"), run.stdout)
            XCTAssertTrue(run.stdout.contains("  --man  Prints the manual page"), run.stdout)
        }
    }

    /// kiln build --help says where the default bundle goes, and why there.
    func testBuildHelpSaysTheDefaultBundleIsInTheCurrentFolder() throws {
        let help = try kiln("build", "--help")
        XCTAssertTrue(help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("default: build/<bundle>.sqlite in the current folder, not in the pipeline's"), help.stdout)
    }

    func testHelpListsEveryCommand() throws {
        let run = try kiln("--help")
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.stdout.contains("build     Builds the bundle"), run.stdout)
        XCTAssertTrue(run.stdout.contains("export    Writes files from a bundle"), run.stdout)
        XCTAssertEqual(run.stderr, "")
    }

    func testHelpForACommandIsTheSameThreeWays() throws {
        let viaHelp = try kiln("help", "build")
        let viaFlag = try kiln("build", "--help")
        let viaShort = try kiln("build", "-h")
        XCTAssertEqual(viaHelp.status, 0)
        XCTAssertTrue(viaHelp.stdout.contains("Usage: kiln build DIR|MANIFEST [--out FILE] [--report FILE]"), viaHelp.stdout)
        XCTAssertEqual(viaHelp.stdout, viaFlag.stdout)
        XCTAssertEqual(viaHelp.stdout, viaShort.stdout)
    }

    func testUnknownCommandIsAUsageError() throws {
        let run = try kiln("bake")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(run.stderr.hasPrefix("Error: unknown command \"bake\""), run.stderr)
        XCTAssertTrue(run.stderr.contains("Usage: kiln <command> [options]"), run.stderr)
    }

    func testUnknownOptionIsAUsageError() throws {
        let run = try kiln("build", "raw/patras", "--fast")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(run.stderr, "Error: unknown option --fast; options: --out, --report, --html, --format, --quiet, --progress, --no-cache, --baseline, --max-removed, --max-changed, --allow-path\n"
                       + "Usage: kiln build DIR|MANIFEST [--out FILE] [--report FILE] [--html] [--format text|json|junit|github] [--quiet] [--progress json|none] [--no-cache] [--baseline FILE] [--max-removed L] [--max-changed L] [--allow-path PATH]\n")
    }

    func testMissingArgumentIsAUsageError() throws {
        let run = try kiln("build")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: missing the pipeline folder or manifest\n"), run.stderr)
    }

    func testBadFormatIsAUsageError() throws {
        try copy("raw/patras", to: "patras")
        let run = try kiln("build", "patras", "--format", "xml")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("--format must be one of text, json, junit, github, not \"xml\""), run.stderr)
    }
}
