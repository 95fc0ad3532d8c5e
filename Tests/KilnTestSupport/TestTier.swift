import Foundation
import XCTest

/// Which tests run: `scripts/test` runs every test (the full tier, what CI runs); `scripts/test --fast` sets
/// `KILN_TEST_TIER=fast` for the edit loop, and the tests that need the Python oracles, the browser or a loop of
/// faults skip themselves through `requireFull`; the stress tests whose point is their size or their number of rounds
/// take a smaller size there (`size(_:fast:)`), with the same assertions.
public enum TestTier {
    /// True under `scripts/test --fast`.
    public static var isFast: Bool { ProcessInfo.processInfo.environment["KILN_TEST_TIER"] == "fast" }

    /// Skips the calling test in the fast tier, naming what it needs.
    /// - Throws: `XCTSkip` in the fast tier.
    public static func requireFull(_ need: String) throws {
        if isFast { throw XCTSkip("\(skipMarker): needs \(need)") }
    }

    /// The size of a stress test's input or its number of random rounds: `full` in the full tier, `fast` under
    /// `scripts/test --fast`. `fast` must still cross every limit the test is about (a line over the line limit, a
    /// text over libxml2's), so the fast tier runs the same assertions on less.
    public static func size(_ full: Int, fast: Int) -> Int { isFast ? fast : full }

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
