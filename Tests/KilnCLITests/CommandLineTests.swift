import Foundation
import XCTest

/// The command line itself: help, version, usage errors and exit codes.
final class CommandLineTests: CLITestCase {
    func testVersionPrintsTheVersion() throws {
        let run = try kiln("--version")
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stdout, "0.1.0\n")
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
