import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The library side of build faults (the binary's side is `FaultTests`): the lock that makes builds of one bundle
/// take turns, the removal of what killed builds left behind, and the order of the report and the bundle.
final class HostileBuildTests: KilnTestCase {
    private func pipeline() throws -> CompiledPipeline {
        let folder = temporaryDirectory.appendingPathComponent("patras")
        if !FileManager.default.fileExists(atPath: folder.path) { _ = try copyRepositoryFolder("raw/patras", as: "patras") }
        return try ManifestLoader.load(folder.path)
    }

    private func hiddenFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }.sorted()
    }

    func testABuildGivesUpWhenAnotherHoldsTheLockTooLong() throws {
        let output = temporaryDirectory.appendingPathComponent("out/app.sqlite")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        let held = try BuildLock(BuildFiles(destination: output).lock, timeout: 0)
        XCTAssertThrowsError(try Builder.build(try pipeline(), options: BuildOptions(output: output, lockTimeout: 0.2))) { error in
            guard case KilnError.io(let failure) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(failure.message, "another build is writing the same bundle (\(output.deletingLastPathComponent().path)/.app.sqlite.lock is locked); waited 0 s")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        held.release()
        XCTAssertTrue(try Builder.build(try pipeline(), options: BuildOptions(output: output, lockTimeout: 0.2)).built)
        XCTAssertEqual(try hiddenFiles(output.deletingLastPathComponent()), [], "the lock file goes with the lock")
    }

    func testAWaiterWhoseLockFileWasRemovedTakesTheNewOne() throws {
        let url = temporaryDirectory.appendingPathComponent(".x.lock")
        let first = try BuildLock(url, timeout: 0)
        final class Outcome: @unchecked Sendable { var error: Error? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                let second = try BuildLock(url, timeout: 10)
                // While the second holds it, nobody else gets it — not even through the file the first removed.
                do {
                    _ = try BuildLock(url, timeout: 0.1)
                    outcome.error = KilnError.usage("a third process took a held lock")
                } catch {}
                second.release()
            } catch {
                outcome.error = error
            }
            done.signal()
        }
        usleep(200_000)
        first.release()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertNil(outcome.error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path))
    }

    func testStaleFilesOfDeadProcessesAreRemovedAndOthersKept() throws {
        let folder = temporaryDirectory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = finished.processIdentifier, alive = ProcessInfo.processInfo.processIdentifier
        let stale = [".app.sqlite.\(dead).old.tmp", ".app.sqlite.\(dead).tmp", ".app.sqlite.staging.\(dead).fts1.sqlite", ".app.sqlite.staging.\(dead).fts12.sqlite-journal",
                     ".app.sqlite.staging.\(dead).sqlite", ".app.sqlite.staging.\(dead).sqlite-journal"]
        let kept = [".app.sqlite.\(alive).tmp", ".app.sqlite.staging.\(alive).sqlite", ".app.sqlite.staging.\(alive).fts1.sqlite",
                    ".app.sqlite.x.tmp", ".app.sqlite.staging.x.sqlite", ".app.sqlite.staging.\(dead).fts.sqlite",
                    ".app.sqlite.staging.\(dead).ftsx.sqlite", ".app.sqlite.staging.\(dead).fts1.db",
                    ".app.sqlite2.\(dead).tmp", ".app.sqlite.\(alive).old.tmp", ".app.sqlite.\(dead).new.tmp", ".app.sqlite.\(dead).txt", "app.sqlite.\(dead).tmp"]
        for name in stale + kept { XCTAssertTrue(FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: Data())) }
        let removed = BuildFiles(destination: folder.appendingPathComponent("app.sqlite")).removeStale().map(\.lastPathComponent)
        XCTAssertEqual(removed, stale)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), kept.sorted())
    }

    func testAFailedBuildDoesNotTouchTheLockOrTemporaryFilesOfItsBundle() throws {
        let output = temporaryDirectory.appendingPathComponent("out/app.sqlite")
        let broken = try copyRepositoryFolder("Tests/Fixtures/patras-broken", as: "broken")
        try FileManager.default.copyItem(at: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"),
                                         to: broken.appendingPathComponent("kiln.json5"))
        let outcome = try Builder.build(try ManifestLoader.load(broken.path), options: BuildOptions(output: output))
        XCTAssertFalse(outcome.built)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path).filter { $0 != ".kiln-cache" }.sorted(), ["app.report.json"],
                       "the build cache keeps what was read; nothing else is left")
    }
}
