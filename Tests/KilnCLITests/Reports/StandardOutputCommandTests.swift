import Foundation
import XCTest
import KilnKit

/// Standard output that cannot take what Kiln prints (a full disk, a closed descriptor) and a file-size limit
/// (`ulimit -f`): each is an I/O error, exit 74 with one sentence, never a crash, never output lost under exit 0,
/// and a build that hits the limit leaves no lock, staging or temporary file and the previous bundle as it was.
final class StandardOutputCommandTests: CLITestCase {
    /// A one-table pipeline `p` and its built bundle `p.sqlite` (with `p.report.json`).
    private func builtPipeline() throws {
        let folder = try writePipeline("p", manifest: """
            { bundle: "out", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }], primaryKey: ["v"] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
            """)
        try (1...2_000).map { "value \($0)\n" }.joined().write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--out", "p.sqlite", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    /// Every command that prints data or help, with what it prints.
    private var printingCommands: [[String]] {
        [["codes"], ["codes", "--format", "json"], ["--help"], ["help", "build"], ["build", "--help"], ["--version"],
         ["check", "p.sqlite", "--manifest", "p/kiln.json5"], ["check", "p.sqlite", "--manifest", "p/kiln.json5", "--format", "json"],
         ["diff", "p.sqlite", "p.sqlite"], ["diff", "p.sqlite", "p.sqlite", "--format", "json"],
         ["extract", "s", "p/in.txt", "--manifest", "p/kiln.json5"],
         ["extract", "s", "p/in.txt", "--manifest", "p/kiln.json5", "--format", "json"],
         ["build", "p", "--out", "again.sqlite", "--format", "json"]]
    }

    func testEveryCommandPrintsSomethingToAPipe() throws {
        try builtPipeline()
        for arguments in printingCommands {
            let run = try kiln(arguments)
            XCTAssertEqual(run.status, 0, "\(arguments): \(run.stderr)")
            XCTAssertFalse(run.stdout.isEmpty, "\(arguments) prints to stdout, so a failed write can be seen")
        }
    }

    func testAFullStandardOutputIsAnIOErrorInOneSentence() throws {
        try builtPipeline()
        for arguments in printingCommands {
            let run = try kilnInShell(">/dev/full", arguments)
            XCTAssertEqual(run.status, 74, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr, "Error: cannot write to standard output: No space left on device\n", "\(arguments)")
        }
    }

    func testAClosedStandardOutputIsAnIOErrorAndNoFileReceivesTheOutput() throws {
        try builtPipeline()
        let before = try sha256("p.sqlite")
        for arguments in printingCommands {
            let run = try kilnInShell(">&-", arguments)
            XCTAssertEqual(run.status, 74, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr, "Error: cannot write to standard output: Bad file descriptor\n", "\(arguments)")
        }
        XCTAssertEqual(try sha256("p.sqlite"), before, "no file opened later received what was printed")
        let report = try String(contentsOf: file("again.report.json"), encoding: .utf8)
        XCTAssertTrue(report.hasPrefix("{"), "the report file holds the report, not a copy of stdout")
    }

    func testAFileSizeLimitFailsTheBuildAndLeavesNothingBehind() throws {
        try builtPipeline()
        let bundle = try sha256("p.sqlite"), report = try sha256("p.report.json")
        // 16 KiB: the staging database of 2 000 rows does not fit.
        let run = try kilnInShell("", prefix: "ulimit -f 16;", ["build", "p", "--out", "p.sqlite", "--no-cache"])
        XCTAssertEqual(run.status, 74, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("Error: cannot write the staging database"), run.stderr)
        XCTAssertEqual(run.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count, 1, run.stderr)
        XCTAssertEqual(try sha256("p.sqlite"), bundle, "the previous bundle is as it was")
        XCTAssertEqual(try sha256("p.report.json"), report)
        let left = try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }
        XCTAssertEqual(left, [], "no lock, staging or temporary file is left")
    }
}
