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
        if isFast { throw XCTSkip("\(skipMarker): needs \(need)") }
    }

    /// The start of every fast-tier skip's message.
    public static let skipMarker = "fast tier (scripts/test --fast)"

    /// True when a failure must not be recorded: in the fast tier, an `XCTAssert…` or `XCTUnwrap` whose expression
    /// called an oracle turns the oracle's skip into a failure (`description` names it); that test is skipped
    /// instead, with the failures that follow from it (`skipped` remembers it for the rest of the test).
    public static func swallows(_ description: String, skipped: inout Bool) -> Bool {
        guard isFast else { return false }
        if description.contains(skipMarker) { skipped = true }
        return skipped
    }
}
