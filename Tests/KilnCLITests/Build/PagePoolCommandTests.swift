import Foundation
import XCTest
import KilnKit

/// The mediawiki reader parses pages and extracts their listings on worker threads (`KILN_PAGE_THREADS`; one per core
/// by default) and applies them in page order: the bundle, the report and the findings must be the bytes of a build
/// that processes every page on the reading thread (`KILN_PAGE_THREADS=0`), with one worker or two, run after run.
final class PagePoolCommandTests: CLITestCase {
    func testTheTravelGuideGivesTheSameBytesWithNoneOneAndTwoPageWorkers() throws {
        try assertSameBytes(CLITestCase.repositoryRoot.appendingPathComponent("raw/itravel").path)
    }

    func testAGeneratedDumpGivesTheSameBytesAndFindingsWithNoneOneAndTwoPageWorkers() throws {
        let folder = try generatedTravelDump("dump", megabytes: 2)
        let serial = try assertSameBytes(folder.path)
        // The dump's findings (bad coordinates, addresses, listings far from their page) are many and in page order.
        XCTAssertTrue(serial.stdout.contains("listing.far-from-page") || serial.stderr.contains("listing.far-from-page"),
                      serial.stderr)
    }

    /// Builds `pipeline` without page workers, with one, and twice with two; asserts every output byte, the exit
    /// status and both streams are the same; returns the serial run.
    @discardableResult
    private func assertSameBytes(_ pipeline: String, file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let serial = try build(pipeline, workers: 0)
        XCTAssertEqual(serial.run.status, 0, serial.run.stderr, file: file, line: line)
        XCTAssertGreaterThan(serial.files["bundle.sqlite"]?.count ?? 0, 0, file: file, line: line)
        XCTAssertGreaterThan(serial.files.count, 1, "no report beside the bundle", file: file, line: line)
        for (workers, attempt) in [(1, 1), (2, 1), (2, 2)] {
            let pooled = try build(pipeline, workers: workers)
            let what = "\(workers) worker(s), run \(attempt)"
            XCTAssertEqual(pooled.run.status, serial.run.status, what, file: file, line: line)
            XCTAssertEqual(pooled.run.stdout, serial.run.stdout, what, file: file, line: line)
            XCTAssertEqual(pooled.run.stderr, serial.run.stderr, what, file: file, line: line)
            XCTAssertEqual(pooled.files.keys.sorted(), serial.files.keys.sorted(), what, file: file, line: line)
            for (name, bytes) in serial.files {
                XCTAssertTrue(pooled.files[name] == bytes, "\(name) differs with \(what)", file: file, line: line)
            }
        }
        return serial.run
    }

    /// Builds `pipeline` into `out/bundle.sqlite` with `workers` page workers and returns the run and every file
    /// written in `out` (then removed, so that every build names the same output path in its report).
    private func build(_ pipeline: String, workers: Int) throws -> (run: Run, files: [String: Data]) {
        let folder = file("out")
        try? FileManager.default.removeItem(at: folder)
        let run = try CLITestCase.run(CLITestCase.executable,
                                      ["build", pipeline, "--out", folder.appendingPathComponent("bundle.sqlite").path, "--no-cache"],
                                      in: workingDirectory, environment: ["KILN_PAGE_THREADS": String(workers)])
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0 != KilnFileNames.cacheFolder }
        let files = try Dictionary(uniqueKeysWithValues: names.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) })
        try? FileManager.default.removeItem(at: folder)
        return (run, files)
    }
}
