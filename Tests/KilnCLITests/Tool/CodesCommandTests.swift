import Foundation
import XCTest
import KilnKit

/// `kiln codes --manifest M` (issue 30, item 11): the manifest's own rule codes after the catalogue, each with its
/// severity after the manifest's overrides and its description, compared with what the manifest itself says.
final class CodesCommandTests: CLITestCase {
    func testTheManifestsRulesAreListedWithTheirDescriptions() throws {
        let plain = try kiln("codes", "--format", "json")
        let withRules = try kiln("codes", "--manifest", CLITestCase.repositoryRoot.appendingPathComponent("raw/patras").path, "--format", "json")
        XCTAssertEqual(withRules.status, 0, withRules.stderr)
        let catalogue = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [[String: String]])
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(withRules.stdout.utf8)) as? [[String: String]])
        XCTAssertEqual(Array(entries.prefix(catalogue.count)), catalogue, "the catalogue comes first, as without --manifest")
        let rules = entries.dropFirst(catalogue.count)
        XCTAssertTrue(rules.allSatisfy { $0["rule"]?.hasPrefix("rules[") == true })

        // The expected codes, read from the text of the manifest's `rules` section (each rule's `code:` line), in order.
        let manifest = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"), encoding: .utf8)
        let rulesSection = try XCTUnwrap(manifest.range(of: "\n  rules: ["))
        let declaredCodes = manifest[rulesSection.upperBound...].components(separatedBy: "\n  ],")[0].components(separatedBy: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("code: \"") else { return nil }
            return String(trimmed.dropFirst(7).prefix { $0 != "\"" })
        }
        XCTAssertEqual(rules.map { $0["code"] ?? "" }, declaredCodes)
        let coordinates = try XCTUnwrap(rules.first { $0["code"] == "coordinates" })
        XCTAssertTrue(manifest.contains("description: \"\(coordinates["meaning"] ?? "")\""), "the description as the manifest writes it")
        XCTAssertEqual(rules.first { $0["code"] == "stop.similar-name" }?["severity"], "info")

        let text = try kiln("codes", "--manifest", CLITestCase.repositoryRoot.appendingPathComponent("raw/patras").path)
        XCTAssertTrue(text.stdout.contains("\nrules of "), text.stdout)
        XCTAssertTrue(text.stdout.contains("The app's routing guarantee: every stop reaches every other with at most two changes. A change is made"),
                      "a description written over several lines is one line")
        let missing = try kiln("codes", "--manifest", "nowhere")
        XCTAssertEqual(missing.status, 64)
    }
}
