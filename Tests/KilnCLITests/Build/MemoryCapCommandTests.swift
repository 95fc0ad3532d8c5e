import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// A build under a cap on its address space (`ulimit -v` in a child shell, as CI runners and containers set it):
/// it builds, or ends with exit 74 and one sentence, its lock and temporary files removed — never a signal (SIGSEGV,
/// a Swift allocation abort) and never a hang (it once waited forever for a thread the cap did not let start, and
/// once retried a refused 64 MiB arena on every allocation).
final class MemoryCapCommandTests: CLITestCase {
    func testABuildUnderAMemoryCapBuildsOrEndsWithOneSentence() throws {
        try generatedPipeline("p", rows: TestTier.size(300_000, fast: 100_000))
        // Below about 200 MB (175 MB: the Swift runtime's and Foundation's own allocations, ~150 MB of libraries
        // mapped) a run may still end in the runtime's allocation abort, which no code can catch (docs/LIMITATIONS.md).
        let caps = TestTier.isFast ? [200, 250] : [200, 225, 250, 300, 350]
        var built = 0
        for megabytes in caps {
            // `timeout` turns a hang into status 124 instead of a test that never ends.
            let run = try kilnInShell("", prefix: "ulimit -v \(megabytes * 1000); exec timeout 240", ["build", "p", "--quiet"])
            XCTAssertTrue(run.status == 0 || run.status == 74, "\(megabytes) MB: status \(run.status): \(run.stderr.prefix(600))")
            if run.status == 74 {
                XCTAssertTrue(run.stderr.hasPrefix("Error: "), "\(megabytes) MB: \(run.stderr.prefix(600))")
                XCTAssertEqual(run.stderr.filter { $0 == "\n" }.count, 1, "\(megabytes) MB: one sentence: \(run.stderr.prefix(600))")
            } else {
                built += 1
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: file("build").path)
                .filter { $0.hasPrefix(".") && $0 != ".kiln-cache" }
            XCTAssertEqual(left, [], "\(megabytes) MB: no lock, no staging database left")
            try? FileManager.default.removeItem(at: file("build"))
        }
        XCTAssertGreaterThan(built, 0, "a cap of \(caps.last ?? 0) MB is room enough to build")
    }
}
