import Foundation
import XCTest

/// Every finding a build reports has the severity `kiln codes --manifest M` gives its code (the catalogue's, or the
/// manifest's override): on every sample pipeline and on the broken fixtures, which between them emit most codes.
final class CatalogueSeverityTests: CLITestCase {
    /// `code → severity` as `kiln codes --manifest manifest --format json` prints them.
    private func severities(_ manifest: URL) throws -> [String: String] {
        let run = try kiln("codes", "--manifest", manifest.path, "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        var table: [String: String] = [:]
        for entry in entries {
            if let code = entry["code"] as? String, let severity = entry["severity"] as? String { table[code] = severity }
        }
        return table
    }

    /// Builds `folder` and returns its findings' (code, severity) pairs.
    private func findings(_ folder: URL, name: String) throws -> [(code: String, severity: String)] {
        let run = try kiln("build", folder.path, "--out", file("out/\(name).sqlite").path)
        XCTAssertTrue([0, 1].contains(run.status), run.stderr)
        let data = try Data(contentsOf: file("out/\(name).report.json"))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        return diagnostics.compactMap { entry in
            guard let code = entry["code"] as? String, let severity = entry["severity"] as? String else { return nil }
            return (code, severity)
        }
    }

    func testEveryReportedSeverityIsTheOneKilnCodesGives() throws {
        var pipelines: [(URL, String)] = []
        for sample in ["patras", "patras-web", "itravel", "museum", "atlas"] {
            pipelines.append((try copy("raw/\(sample)", to: "samples/\(sample)"), sample))
        }
        pipelines.append((try brokenPipeline(), "broken"))
        var codesSeen: Set<String> = []
        for (folder, name) in pipelines {
            let expected = try severities(folder.appendingPathComponent("kiln.json5"))
            for finding in try findings(folder, name: name) {
                codesSeen.insert(finding.code)
                XCTAssertEqual(finding.severity, expected[finding.code], "\(name): \(finding.code)")
            }
        }
        XCTAssertGreaterThan(codesSeen.count, 15, "the pipelines emit many codes: \(codesSeen.sorted())")
    }
}
