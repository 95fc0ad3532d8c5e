import Foundation
import XCTest
import KilnC
import KilnKit

/// Issue 11, item 6: one listing removed from a real page (Karwendel, German Wikivoyage, in `raw/itravel`) must pass
/// the README's CI thresholds and read as exactly one row removed, although every later listing of the page shifts
/// its `position` and the page's `listing_count` drops: the manifest names those columns derived.
final class DiffDerivedColumnsTests: CLITestCase {
    /// The README's CI limits.
    private let limits = ["--max-removed", "10%", "--max-changed", "25%"]

    /// Builds `raw/itravel` as it is into `base.sqlite`, then removes the Pleisenspitze `{{vCard}}` line from the export.
    private func baseAndEditedExport() throws -> (listingsAfter: Int, removedLine: String) {
        try copy("raw/itravel", to: "itravel")
        XCTAssertEqual(try kiln("build", "itravel", "--out", "base.sqlite", "--quiet").status, 0)
        let export = file("itravel/itravel-export.xml")
        var lines = try String(contentsOf: export, encoding: .utf8).components(separatedBy: "\n")
        let index = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("{{vCard") && $0.contains("name= Pleisenspitze") })
        let removed = lines.remove(at: index)
        try lines.joined(separator: "\n").write(to: export, atomically: true, encoding: .utf8)
        // How many listings of the page follow it in the bundle built before: their positions shift.
        let base = try Database(path: file("base.sqlite").path, mode: .readOnly)
        let following = try base.rows("""
            SELECT count(*) FROM listing AS l JOIN listing AS p ON p.name = 'Pleisenspitze'
            WHERE l.page_id = p.page_id AND l.position > p.position
            """).first?.values.first?.textValue ?? ""
        return (Int(following) ?? 0, removed)
    }

    func testOneListingRemovedFromARealPageIsOneRowRemovedAndPassesTheThresholds() throws {
        let (after, _) = try baseAndEditedExport()
        XCTAssertGreaterThan(after, 40, "most of the page's listings follow the one removed")

        let build = try kiln(["build", "itravel", "--out", "base.sqlite", "--baseline", "base.sqlite"] + limits)
        XCTAssertEqual(build.status, 0, build.stderr)
        XCTAssertTrue(build.stderr.contains("compared with base.sqlite: listing 1 removed\n"), build.stderr)

        XCTAssertEqual(try kiln("build", "itravel", "--out", "new.sqlite", "--quiet").status, 0)
        try FileManager.default.removeItem(at: file("base.sqlite"))
        try copy("raw/itravel", to: "original")
        XCTAssertEqual(try kiln("build", "original", "--out", "base.sqlite", "--quiet").status, 0)
        let diff = try kiln(["diff", "base.sqlite", "new.sqlite", "--manifest", "itravel"] + limits)
        XCTAssertEqual(diff.status, 0, diff.stdout)
        XCTAssertTrue(diff.stdout.contains("listing     160 → 159     0 added, 1 removed (0.6%), 0 changed (0%); \(after) rows with only derived columns changed: position ×\(after)\n"), diff.stdout)
        XCTAssertTrue(diff.stdout.contains("page        24 → 24       unchanged; 1 row with only derived columns changed: listing_count ×1\n"), diff.stdout)
        XCTAssertTrue(diff.stdout.hasSuffix("passed\n"), diff.stdout)

        let json = try kiln(["diff", "base.sqlite", "new.sqlite", "--manifest", "itravel", "--format", "json"] + limits)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let listing = try XCTUnwrap((report["tables"] as? [[String: Any]])?.first { $0["name"] as? String == "listing" })
        XCTAssertEqual(listing["removed"] as? Int, 1)
        XCTAssertEqual(listing["changed"] as? Int, 0)
        XCTAssertEqual(listing["derivedOnly"] as? Int, after)
    }

    func testWithoutDerivedColumnsTheSameEditFailsAsTheIssueSaw() throws {
        let (after, _) = try baseAndEditedExport()
        let manifest = file("itravel/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let declared = "tables: { listing: { derived: [\"position\"] }, page: { derived: [\"listing_count\"] } },"
        XCTAssertTrue(text.contains(declared))
        try text.replacingOccurrences(of: declared, with: "").write(to: manifest, atomically: true, encoding: .utf8)
        let build = try kiln(["build", "itravel", "--out", "base.sqlite", "--baseline", "base.sqlite"] + limits)
        XCTAssertEqual(build.status, 1, build.stderr)
        XCTAssertTrue(build.stderr.contains("listing: \(after) of 160 rows changed since base.sqlite"), build.stderr)
    }

    func testADerivedColumnTheTableDoesNotHaveIsAWarning() throws {
        try copy("raw/itravel", to: "itravel")
        let manifest = file("itravel/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "derived: [\"position\"]", with: "derived: [\"positon\"]").write(to: manifest, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "itravel", "--out", "a.sqlite", "--quiet").status, 0)
        let diff = try kiln("diff", "a.sqlite", "a.sqlite", "--manifest", "itravel")
        XCTAssertEqual(diff.status, 0, diff.stdout)
        XCTAssertTrue(diff.stdout.contains("listing has no column \"positon\" for the thresholds' derived columns"), diff.stdout)
    }
}
