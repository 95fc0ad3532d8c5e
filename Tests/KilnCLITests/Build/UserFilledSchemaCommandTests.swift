import Foundation
import XCTest

/// A table the app fills (`userFilled`, the atlas's `finds`) may change its schema only with a new schemaVersion:
/// `kiln build --baseline`, `kiln diff` and `kiln check` (against the manifest's baseline) say
/// `diff.user-filled-schema`, through the binary.
final class UserFilledSchemaCommandTests: CLITestCase {
    /// A copy of raw/atlas at `name`, its `finds` table given one more column, and its schemaVersion `version`.
    @discardableResult
    private func changedAtlas(_ name: String, version: Int, baseline: String? = nil) throws -> URL {
        let folder = try copy("raw/atlas", to: name)
        let manifestURL = folder.appendingPathComponent("kiln.json5")
        var text = try String(contentsOf: manifestURL, encoding: .utf8)
        let column = "        { name: \"photo\", type: \"text\" },\n"
        let finds = try XCTUnwrap(text.range(of: "name: \"finds\","))
        let photo = try XCTUnwrap(text.range(of: column, range: finds.upperBound..<text.endIndex))
        text.replaceSubrange(photo, with: column + "        { name: \"weight_grams\", type: \"real\" },\n")
        text = text.replacingOccurrences(of: "schemaVersion: 1,\n", with: "schemaVersion: \(version),\n" + (baseline.map { "  baseline: \"\($0)\",\n" } ?? ""))
        try text.write(to: manifestURL, atomically: true, encoding: .utf8)
        return folder
    }

    func testBuildWithABaselineRefusesAChangedUserFilledTableWithoutANewVersion() throws {
        try copy("raw/atlas", to: "atlas")
        XCTAssertEqual(try kiln("build", "atlas", "--out", "app.sqlite", "--quiet").status, 0)
        let before = try sha256("app.sqlite")
        try changedAtlas("changed", version: 1)
        let run = try kiln("build", "changed", "--out", "next.sqlite", "--baseline", "app.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("diff.user-filled-schema (error) ×1"), run.stderr)
        XCTAssertTrue(run.stderr.contains("the schema of finds, which the app fills (userFilled), changed since app.sqlite (column finds.weight_grams is in the new bundle but not in the old bundle"), run.stderr)
        XCTAssertTrue(run.stderr.contains("raise the manifest's schemaVersion"), run.stderr)
        // The change is reported once, under the sharper code.
        XCTAssertFalse(run.stderr.contains("diff.user-version"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("next.sqlite").path))
        XCTAssertEqual(try sha256("app.sqlite"), before)

        try FileManager.default.removeItem(at: file("changed"))
        try changedAtlas("changed", version: 2)
        let raised = try kiln("build", "changed", "--out", "next.sqlite", "--baseline", "app.sqlite")
        XCTAssertEqual(raised.status, 0, raised.stderr)
        XCTAssertFalse(raised.stderr.contains("diff.user-filled-schema"), raised.stderr)
    }

    func testDiffSaysItAndAChangeElsewhereKeepsItsOwnCode() throws {
        try copy("raw/atlas", to: "atlas")
        XCTAssertEqual(try kiln("build", "atlas", "--out", "old.sqlite", "--quiet").status, 0)
        try changedAtlas("changed", version: 1)
        XCTAssertEqual(try kiln("build", "changed", "--out", "new.sqlite", "--quiet").status, 0)
        let run = try kiln("diff", "old.sqlite", "new.sqlite", "--manifest", "changed")
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        XCTAssertTrue((run.stdout + run.stderr).contains("[diff.user-filled-schema]"), run.stdout + run.stderr)
        // Without a manifest saying finds is the app's, the general schema rule speaks.
        let plain = try kiln("diff", "old.sqlite", "new.sqlite")
        XCTAssertEqual(plain.status, 1)
        XCTAssertTrue((plain.stdout + plain.stderr).contains("[diff.user-version]"), plain.stdout + plain.stderr)
        XCTAssertFalse((plain.stdout + plain.stderr).contains("[diff.user-filled-schema]"), plain.stdout + plain.stderr)
        let json = try kiln("diff", "old.sqlite", "new.sqlite", "--manifest", "changed", "--format", "json")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let codes = try XCTUnwrap(report["findings"] as? [[String: Any]]).compactMap { $0["code"] as? String }
        XCTAssertEqual(codes, ["diff.user-filled-schema"])
    }

    func testCheckComparesTheUserFilledTablesWithTheManifestsBaseline() throws {
        try copy("raw/atlas", to: "atlas")
        XCTAssertEqual(try kiln("build", "atlas", "--out", "shipped.sqlite", "--quiet").status, 0)
        let folder = try changedAtlas("changed", version: 1, baseline: "../shipped.sqlite")
        // The manifest's own baseline stops the build; the bundle a careless build made without it is what check sees.
        XCTAssertEqual(try kiln("build", "changed", "--out", "new.sqlite", "--quiet").status, 1)
        let manifestURL = folder.appendingPathComponent("kiln.json5")
        let withBaseline = try String(contentsOf: manifestURL, encoding: .utf8)
        try withBaseline.replacingOccurrences(of: "  baseline: \"../shipped.sqlite\",\n", with: "").write(to: manifestURL, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "changed", "--out", "new.sqlite", "--quiet").status, 0)
        try withBaseline.write(to: manifestURL, atomically: true, encoding: .utf8)

        let run = try kiln("check", "new.sqlite", "--manifest", "changed")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("diff.user-filled-schema"), run.stdout)
        XCTAssertTrue(run.stdout.contains("changed since ../shipped.sqlite") || run.stdout.contains("changed since shipped.sqlite"), run.stdout)
        // The shipped bundle checked against the same manifest is its own baseline: nothing to compare.
        let same = try kiln("check", "shipped.sqlite", "--manifest", "atlas")
        XCTAssertEqual(same.status, 0, same.stdout)
        XCTAssertFalse(same.stdout.contains("user-filled"), same.stdout)
    }
}
