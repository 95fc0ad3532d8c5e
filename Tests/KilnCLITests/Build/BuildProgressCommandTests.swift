import Foundation
import XCTest
import KilnKit

/// `kiln build`'s progress through the binary: on a terminal (a pseudo-terminal from `script`) the counts are redrawn
/// often enough that the build is never silent for long; nothing when stderr is not a terminal or with `--quiet`;
/// `--progress json` is a JSON-lines stream of events whose counts only grow, ending in `done`.
final class BuildProgressCommandTests: CLITestCase {
    /// Runs `kiln arguments…` on a pseudo-terminal under `script`, with the timing of each write in `timing`;
    /// returns what it wrote.
    private func onTerminal(_ arguments: [String], timing: String) throws -> String {
        let command = ([CLITestCase.executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-e", "-T", file(timing).path, "-c", command, "/dev/null"]
        process.currentDirectoryURL = workingDirectory
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: data, as: UTF8.self)
    }

    func testATerminalSeesTheCountsRedrawnAndNoLongSilence() throws {
        try generatedPipeline("gen", rows: 150_000)
        let output = try onTerminal(["build", "gen", "--out", "out/app.sqlite"], timing: "timing.txt")
        XCTAssertTrue(output.contains("reading stops: 1 file, "), output)
        XCTAssertTrue(output.contains("\r\u{1B}[K  stops: file 1 of 1, "), "the live line is redrawn in place: \(output.debugDescription)")
        XCTAssertTrue(output.contains(" records"), output)
        XCTAssertTrue(output.contains("built out/app.sqlite (bundle generated)"), output)
        // The live line is redrawn as the build goes (twice a second). How long the terminal stays silent is a
        // measurement, not a test: scripts/progress-silence (docs/PERFORMANCE.md).
        XCTAssertGreaterThan(output.components(separatedBy: "\r\u{1B}[K").count - 1, 1, "redrawn more than once")
    }

    func testNothingWhenStderrIsNoTerminalOrWithQuiet() throws {
        try copy("raw/patras", to: "patras")
        let piped = try kiln("build", "patras", "--out", "one.sqlite")
        XCTAssertTrue(piped.stderr.hasPrefix("built one.sqlite "), "no progress into a pipe: \(piped.stderr)")
        let quiet = try onTerminal(["build", "patras", "--out", "two.sqlite", "--quiet"], timing: "quiet.txt")
        XCTAssertEqual(quiet, "")
        let none = try onTerminal(["build", "patras", "--out", "three.sqlite", "--progress", "none"], timing: "none.txt")
        XCTAssertTrue(none.hasPrefix("built three.sqlite "), none)
        let shown = try onTerminal(["build", "patras", "--out", "four.sqlite"], timing: "shown.txt")
        XCTAssertTrue(shown.hasPrefix("reading stops: 1 file, "), shown)
        let bad = try kiln("build", "patras", "--progress", "fancy")
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--progress must be json or none, not \"fancy\""), bad.stderr)
    }

    func testJSONProgressIsEventsWithGrowingCountsAndADoneEvent() throws {
        try generatedPipeline("gen", rows: 40_000)
        let run = try kiln("build", "gen", "--out", "out/app.sqlite", "--progress", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "")
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(run.stderr.last, "\n")
        let events = try lines.map { line in try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line)) }
        XCTAssertEqual(events.map { $0["event"] as? String }.filter { $0 != "progress" },
                       ["reading", "read", "checking", "writing", "done"])
        XCTAssertEqual(events.first?["source"] as? String, "stops")
        XCTAssertEqual(events.first?["files"] as? Int, 1)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file("gen/stops.txt").path)[.size] as? Int)
        XCTAssertEqual(events.first?["bytes"] as? Int, size)
        XCTAssertGreaterThan(events.filter { $0["event"] as? String == "progress" }.count, 0, "ticks while the build ran")

        var previous: [String: Int] = [:], seconds = 0.0
        for event in events {
            let time = try XCTUnwrap(event["seconds"] as? Double)
            XCTAssertGreaterThanOrEqual(time, seconds)
            seconds = time
            guard let counts = event["counts"] as? [String: Int] else { continue }
            for (name, value) in counts { XCTAssertGreaterThanOrEqual(value, previous[name] ?? 0, "\(name) only grows") }
            previous = counts
        }
        let done = try XCTUnwrap(events.last)
        XCTAssertEqual(done["built"] as? Bool, true)
        XCTAssertEqual(done["reused"] as? Bool, false)
        let rows = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/app.report.json"))) as? [String: Any])?["tables"] as? [[String: Any]])
        XCTAssertEqual(previous["records"], rows.first?["rows"] as? Int)
        XCTAssertEqual(previous["bytesRead"], size)
        XCTAssertEqual(previous["filesRead"], 1)
        XCTAssertEqual(previous["tablesWritten"], 1)

        let again = try kiln("build", "gen", "--out", "out/app.sqlite", "--progress", "json")
        let kept = try again.stderr.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(kept.map { $0["event"] as? String }.filter { $0 != "progress" }, ["reused", "done"])
        XCTAssertEqual(kept.last?["reused"] as? Bool, true)
    }
}
