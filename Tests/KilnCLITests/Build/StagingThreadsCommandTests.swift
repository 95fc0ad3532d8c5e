import Foundation
import XCTest
import KilnKit

/// `kiln build` stages on two threads (reader and SQLite writer); `KILN_STAGING_THREADS=1` keeps it on one. Every
/// sample pipeline, and the broken fixture with its findings, must give the same bytes either way.
final class StagingThreadsCommandTests: CLITestCase {
    func testEverySamplePipelineGivesTheSameBytesOnOneAndTwoThreads() throws {
        for pipeline in ["raw/patras", "raw/patras-web", "raw/itravel", "raw/atlas", "raw/museum"] {
            let threaded = try build(pipeline, single: false)
            let single = try build(pipeline, single: true)
            XCTAssertEqual(threaded.run.status, 0, "\(pipeline): \(threaded.run.stderr)")
            XCTAssertEqual(single.run.status, 0, "\(pipeline): \(single.run.stderr)")
            XCTAssertGreaterThan(threaded.files["bundle.sqlite"]?.count ?? 0, 0, pipeline)
            XCTAssertGreaterThan(threaded.files.count, 1, "\(pipeline): no report beside the bundle")
            XCTAssertEqual(threaded.files, single.files, pipeline)
        }
    }

    func testFindingsOfTheBrokenFixtureAreTheSameOnOneAndTwoThreads() throws {
        let folder = try brokenPipeline()
        let threaded = try build(folder.path, single: false)
        let single = try build(folder.path, single: true)
        XCTAssertNotEqual(threaded.run.status, 0)
        XCTAssertEqual(threaded.run.status, single.run.status)
        XCTAssertFalse(threaded.run.stderr.isEmpty)
        XCTAssertEqual(threaded.run.stderr, single.run.stderr)
        XCTAssertEqual(threaded.run.stdout, single.run.stdout)
        XCTAssertEqual(threaded.files, single.files)
    }

    /// Builds `pipeline` into `out/bundle.sqlite` and returns the run and every file written in `out` (then removed,
    /// so that both builds name the same output path in their reports).
    private func build(_ pipeline: String, single: Bool) throws -> (run: Run, files: [String: Data]) {
        let folder = file("out")
        try? FileManager.default.removeItem(at: folder)
        let run = try kiln(pipeline, output: folder.appendingPathComponent("bundle.sqlite").path, single: single)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0 != KilnFileNames.cacheFolder }
        let files = try Dictionary(uniqueKeysWithValues: names.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) })
        try? FileManager.default.removeItem(at: folder)
        return (run, files)
    }

    private func kiln(_ pipeline: String, output: String, single: Bool) throws -> Run {
        let process = Process()
        process.executableURL = CLITestCase.executable
        let source = pipeline.hasPrefix("/") ? pipeline : CLITestCase.repositoryRoot.appendingPathComponent(pipeline).path
        process.arguments = ["build", source, "--out", output]
        process.currentDirectoryURL = workingDirectory
        var environment = ProcessInfo.processInfo.environment
        environment["KILN_STAGING_THREADS"] = single ? "1" : nil
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }
}
