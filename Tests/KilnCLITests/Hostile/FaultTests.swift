import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// Faults during `kiln build`, through the binary: killed at random points, out of disk space, an output folder that
/// cannot be written, two builds of the same bundle at once. Whatever happens, the previous bundle stays complete and
/// byte-for-byte as it was (or is replaced whole by the new one), temporary files do not pile up, and the next build
/// succeeds.
final class FaultTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try TestTier.requireFull("loops of faults (kills, full disks, lock races)")
    }

    /// The hidden files in `folder` (temporary files, locks).
    private func hiddenFiles(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: file(folder).path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }.sorted()
    }

    /// Runs `kiln arguments…` under `bash` with the file-size limit `kilobytes` (`ulimit -f`) and SIGXFSZ ignored, so
    /// that writing past the limit fails with EFBIG, as a full disk fails with ENOSPC.
    private func kilnWithFileSizeLimit(_ kilobytes: Int, _ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "trap '' XFSZ; ulimit -f \(kilobytes); exec \"$0\" \"$@\"", CLITestCase.executable.path] + arguments
        process.currentDirectoryURL = workingDirectory
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: "", stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// `PRAGMA integrity_check` of a bundle.
    private func integrity(_ path: String) throws -> String {
        let database = try Database(path: file(path).path, mode: .readOnly)
        return try database.rows("PRAGMA integrity_check").first?.values.first?.textValue ?? ""
    }

    // MARK: Killed builds

    func testKilledBuildsLeaveThePreviousBundleAndTheNextBuildSucceeds() throws {
        try generatedPipeline("old", rows: 30_000)
        try generatedPipeline("new", rows: 30_000, variant: "ς")
        XCTAssertEqual(try kiln("build", "new", "--out", "reference/app.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try kiln("build", "old", "--out", "out/app.sqlite", "--quiet").status, 0)
        let previous = try sha256("out/app.sqlite")
        let complete = try sha256("reference/app.sqlite")
        XCTAssertNotEqual(previous, complete)

        // Kill points spread over a whole build (about the time one takes), from a fixed seed.
        let started = Date()
        XCTAssertEqual(try kiln("build", "new", "--out", "timing/app.sqlite", "--quiet").status, 0)
        let duration = Date().timeIntervalSince(started)
        var random = SeededGenerator(seed: 7)
        var killed = 0
        for _ in 0..<8 {
            let build = try start(["build", "new", "--out", "out/app.sqlite", "--quiet"])
            usleep(useconds_t(Double.random(in: 0.02...max(0.05, duration), using: &random) * 1_000_000))
            kill(build.processIdentifier, SIGKILL)
            build.waitUntilExit()
            if build.terminationReason == .uncaughtSignal { killed += 1 }
            let now = try sha256("out/app.sqlite")
            XCTAssertTrue(now == previous || now == complete, "a killed build left a bundle that is neither the old nor the new one")
            XCTAssertEqual(try integrity("out/app.sqlite"), "ok")
        }
        XCTAssertGreaterThan(killed, 0, "no build was killed before it ended")

        let next = try kiln("build", "new", "--out", "out/app.sqlite")
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertEqual(try sha256("out/app.sqlite"), complete)
        XCTAssertEqual(try hiddenFiles(in: "out"), [], "the next build removes what killed builds left")
    }

    func testStaleTemporaryFilesOfOtherBundlesAreLeftAlone() throws {
        try copy("raw/patras", to: "patras")
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        let stale = [".app.sqlite.999999.tmp", ".app.sqlite.staging.999999.sqlite", ".app.sqlite.lock", ".app.report.json.999999.tmp"]
        let foreign = [".other.sqlite.999999.tmp", ".app.sqlite.notes", "app.sqlite.999999.tmp"]
        for name in stale + foreign { XCTAssertTrue(FileManager.default.createFile(atPath: file("out/\(name)").path, contents: Data("x".utf8))) }
        XCTAssertEqual(try kiln("build", "patras", "--out", "out/app.sqlite", "--quiet").status, 0)
        XCTAssertEqual(try hiddenFiles(in: "out"), [".app.sqlite.notes", ".other.sqlite.999999.tmp"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("out/app.sqlite.999999.tmp").path))
    }

    // MARK: Full disk, folders that cannot be written

    func testAFullDiskIsExit74AndKeepsThePreviousBundle() throws {
        try generatedPipeline("gen", rows: 3_000)
        XCTAssertEqual(try kiln("build", "gen", "--out", "out/app.sqlite", "--quiet").status, 0)
        let previous = try sha256("out/app.sqlite")
        let report = try sha256("out/app.report.json")
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file("out/app.sqlite").path)[.size] as? Int)
        let folder = file("out").path
        var messages: Set<String> = []
        // From too little for the staging database to too little for the finished bundle.
        for kilobytes in [4, 64, size / 2048, size * 3 / 4096, size / 1024 - 8] {
            let run = try kilnWithFileSizeLimit(kilobytes, ["build", "gen", "--out", "out/app.sqlite", "--quiet", "--no-cache"])
            XCTAssertEqual(run.status, 74, "\(kilobytes) KB: \(run.stderr)")
            let message = run.stderr.components(separatedBy: "\n").first ?? ""
            XCTAssertTrue([
                "Error: cannot write the staging database in \(folder): disk I/O error",
                "Error: cannot write \(folder)/app.sqlite: disk I/O error",
            ].contains(message), "\(kilobytes) KB: \(run.stderr)")
            messages.insert(message)
            XCTAssertEqual(try sha256("out/app.sqlite"), previous, "\(kilobytes) KB")
            XCTAssertEqual(try sha256("out/app.report.json"), report, "\(kilobytes) KB")
            XCTAssertEqual(try hiddenFiles(in: "out"), [], "\(kilobytes) KB: temporary files left")
        }
        XCTAssertEqual(messages.count, 2, "both the staging database and the bundle ran out of space: \(messages)")
        XCTAssertEqual(try kiln("build", "gen", "--out", "out/app.sqlite", "--quiet").status, 0)
    }

    func testAnOutputFolderThatCannotBeWrittenIsExit74() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertTrue(FileManager.default.createFile(atPath: file("blocker").path, contents: Data("a file, not a folder\n".utf8)))
        let run = try kiln("build", "patras", "--out", "blocker/app.sqlite")
        XCTAssertEqual(run.status, 74)
        XCTAssertTrue(run.stderr.hasPrefix("Error: cannot create the output folder \(file("blocker").path): "), run.stderr)

        let proc = try kiln("build", "patras", "--out", "/proc/kiln-cannot-be-here/app.sqlite")
        XCTAssertEqual(proc.status, 74)
        XCTAssertTrue(proc.stderr.hasPrefix("Error: cannot create the output folder /proc/kiln-cannot-be-here: "), proc.stderr)

        if geteuid() != 0 {
            try FileManager.default.createDirectory(at: file("locked"), withIntermediateDirectories: true)
            chmod(file("locked").path, 0o555)
            defer { chmod(file("locked").path, 0o755) }
            XCTAssertEqual(try kiln("build", "patras", "--out", "locked/app.sqlite").status, 74)
        }
    }

    func testAReportThatCannotBeWrittenStopsTheBuildBeforeTheBundleIsReplaced() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--out", "out/app.sqlite", "--quiet").status, 0)
        let previous = try sha256("out/app.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: file("blocker").path, contents: Data()))
        try FileManager.default.removeItem(at: file("out/app.report.json"))
        let run = try kiln("build", "patras", "--out", "out/app.sqlite", "--report", "blocker/report.json")
        XCTAssertEqual(run.status, 74)
        XCTAssertTrue(run.stderr.hasPrefix("Error: cannot write \(file("blocker/report.json").path): "), run.stderr)
        XCTAssertEqual(try sha256("out/app.sqlite"), previous)
        XCTAssertEqual(try hiddenFiles(in: "out"), [])
    }

    // MARK: Builds at once

    func testTwoBuildsOfTheSameBundleAtOnceTakeTurns() throws {
        try generatedPipeline("gen", rows: 5_000)
        XCTAssertEqual(try kiln("build", "gen", "--out", "reference/app.sqlite", "--quiet").status, 0)
        let reference = try sha256("reference/app.sqlite")
        for round in 0..<4 {
            let first = try start(["build", "gen", "--out", "out/app.sqlite", "--quiet"])
            let second = try start(["build", "gen", "--out", "out/app.sqlite", "--quiet"])
            first.waitUntilExit()
            second.waitUntilExit()
            XCTAssertEqual([first.terminationStatus, second.terminationStatus], [0, 0], "round \(round)")
            XCTAssertEqual(try sha256("out/app.sqlite"), reference, "round \(round)")
            XCTAssertEqual(try integrity("out/app.sqlite"), "ok")
            XCTAssertEqual(try hiddenFiles(in: "out"), [], "round \(round)")
        }
    }

    func testABuildWaitsWhileAnotherHoldsTheLock() throws {
        try copy("raw/patras", to: "patras")
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        let lock = open(file("out/.app.sqlite.lock").path, O_RDWR | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(lock, 0)
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        let build = try start(["build", "patras", "--out", "out/app.sqlite", "--quiet"])
        sleep(2)
        XCTAssertTrue(build.isRunning, "the build did not wait for the lock")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/app.sqlite").path))
        close(lock)
        build.waitUntilExit()
        XCTAssertEqual(build.terminationStatus, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("out/app.sqlite").path))
        XCTAssertEqual(try hiddenFiles(in: "out"), [])
    }
}

