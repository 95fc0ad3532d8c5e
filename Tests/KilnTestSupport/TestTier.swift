import Foundation
import XCTest

/// Which tests run: `scripts/test` runs every test (the full tier, what CI runs); `scripts/test --fast` sets
/// `KILN_TEST_TIER=fast` for the edit loop, and the tests that need the Python oracles, the browser or a loop of
/// faults skip themselves through `requireFull`.
public enum TestTier {
    /// True under `scripts/test --fast`.
    public static var isFast: Bool { ProcessInfo.processInfo.environment["KILN_TEST_TIER"] == "fast" }

    /// Skips the calling test in the fast tier, naming what it needs.
    /// - Throws: `XCTSkip` in the fast tier.
    public static func requireFull(_ need: String) throws {
        if isFast { throw XCTSkip("fast tier (scripts/test --fast): needs \(need)") }
    }
}
