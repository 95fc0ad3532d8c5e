import Foundation
import XCTest
import KilnC
import KilnKit

/// A column `pattern` over long scraped values, through the `kiln` binary: a 5 000-character value that matches is
/// shipped (before, "JIT stack limit reached" failed the build), and one that does not match is a `pattern` error
/// naming its line, as for a short value.
final class RegexLongLineCommandTests: CLITestCase {
    func testALongValueIsCheckedByItsPatternLikeAShortOne() throws {
        let folder = try writePipeline("p", manifest: """
            { bundle: "long", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text", pattern: "^(a|b)*c$" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
            """)
        let matching = String(repeating: "ab", count: 2_500) + "c"
        try (matching + "\nabc\n").write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let built = try kiln("build", "p", "--quiet")
        XCTAssertEqual(built.status, 0, built.stderr)
        let rows = try Database(path: file("build/long.sqlite").path, mode: .readOnly).rows("SELECT length(v) FROM t ORDER BY 1")
        XCTAssertEqual(rows.map(\.values), [[.integer(3)], [.integer(5_001)]])

        try (String(repeating: "ab", count: 2_500) + "d\nabc\n").write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let failed = try kiln("build", "p", "--quiet")
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.contains("in.txt:1:"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("does not match /^(a|b)*c$/"), failed.stderr)
        XCTAssertFalse(failed.stderr.contains("JIT"), failed.stderr)
    }
}
