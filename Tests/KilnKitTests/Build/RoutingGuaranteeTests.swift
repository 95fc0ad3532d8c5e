import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The routing guarantee and the route rules of raw/patras (rules `route.transfers`, `line.start-off-route`,
/// `route.repeated-stop`, `line.no-timetable`), compared with networkx (scripts/oracles/transfers.py).
final class RoutingGuaranteeTests: KilnTestCase {
    /// Builds `folder` (a repository folder) with the Patras manifest beside it.
    private func build(_ folder: String, severity: String? = nil) throws -> BuildOutcome {
        let name = "pipeline-\(UUID().uuidString)"
        let copy = try copyRepositoryFolder(folder, as: name)
        var manifest = try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"), encoding: .utf8)
        if let severity {
            manifest = manifest.replacingOccurrences(of: "  severity: {\n", with: "  severity: {\n\(severity)\n")
        }
        try write(manifest, to: name + "/kiln.json5")
        return try Builder.build(try ManifestLoader.load(copy.path),
                                 options: BuildOptions(output: temporaryDirectory.appendingPathComponent(name + ".sqlite")))
    }

    private func oraclePairs(_ folder: String) throws -> [[String: Any]] {
        try TestTier.requireFull("the Python oracles")
        let routes = KilnTestCase.repositoryRoot.appendingPathComponent(folder).appendingPathComponent("Routes_UTF8.txt").path
        return try XCTUnwrap(try PythonOracle.json("transfers.py", [routes]) as? [[String: Any]])
    }

    func testTheSampleMissesTheGuaranteeByAsManyPairsAsNetworkxCounts() throws {
        let outcome = try build("raw/patras")
        XCTAssertTrue(outcome.built)
        let findings = outcome.diagnostics.filter { $0.code == "route.transfers" }
        XCTAssertEqual(findings.count, 1)
        let finding = try XCTUnwrap(findings.first)
        XCTAssertEqual(finding.severity, .warning)
        let pairs = try oraclePairs("raw/patras")
        XCTAssertTrue(finding.message.contains("needing more than two changes: \(pairs.count) "), finding.message)
        // The worst pair: most changes, then the lowest codes.
        let worst = try XCTUnwrap(pairs.max { a, b in
            let ca = a["changes"] as? Int ?? Int.max, cb = b["changes"] as? Int ?? Int.max
            if ca != cb { return ca < cb }
            return (a["a"] as! String, a["b"] as! String) > (b["a"] as! String, b["b"] as! String)
        })
        let a = try XCTUnwrap(worst["a"] as? String), b = try XCTUnwrap(worst["b"] as? String), changes = try XCTUnwrap(worst["changes"] as? Int)
        XCTAssertTrue(finding.message.contains("the worst, stop \(a) «"), finding.message)
        XCTAssertTrue(finding.message.contains("and stop \(b) «"), finding.message)
        XCTAssertTrue(finding.message.hasSuffix("needs \(changes) changes"), finding.message)
    }

    /// The web pipeline stages repeated stop rows (its stop pages overlap); the pairs are still counted once.
    func testTheWebPipelineCountsTheSamePairs() throws {
        let folder = try copyRepositoryFolder("raw/patras-web", as: "patras-web")
        let outcome = try Builder.build(try ManifestLoader.load(folder.path),
                                        options: BuildOptions(output: temporaryDirectory.appendingPathComponent("web.sqlite")))
        let finding = try XCTUnwrap(outcome.diagnostics.first { $0.code == "route.transfers" })
        let pairs = try oraclePairs("raw/patras-web")
        XCTAssertTrue(finding.message.contains("needing more than two changes: \(pairs.count) "), finding.message)
    }

    func testTheBrokenFixtureCountsAsNetworkxDoes() throws {
        let outcome = try build("Tests/Fixtures/patras-broken")
        let finding = try XCTUnwrap(outcome.diagnostics.first { $0.code == "route.transfers" })
        let pairs = try oraclePairs("Tests/Fixtures/patras-broken")
        XCTAssertTrue(finding.message.contains("needing more than two changes: \(pairs.count) "), finding.message)
    }

    func testTheTransferFixtureNamesThePairThatNeedsThreeChanges() throws {
        let pairs = try oraclePairs("Tests/Fixtures/patras-transfers")
        XCTAssertEqual(pairs.count, 1)
        XCTAssertEqual(pairs.first?["a"] as? String, "0101")
        XCTAssertEqual(pairs.first?["b"] as? String, "0105")
        XCTAssertEqual(pairs.first?["changes"] as? Int, 3)

        let outcome = try build("Tests/Fixtures/patras-transfers")
        XCTAssertTrue(outcome.built)
        XCTAssertEqual(outcome.diagnostics.map(\.code), ["route.transfers"], outcome.diagnostics.map(\.formatted).joined(separator: "\n"))
        let finding = try XCTUnwrap(outcome.diagnostics.first)
        XCTAssertEqual(finding.message, "stop pairs needing more than two changes: 1 (the app promises at most two); "
            + "the worst, stop 0101 «Πλατεία Γεωργίου» and stop 0105 «Λιμάνι», needs 3 changes")
        XCTAssertEqual(finding.provenance, Provenance(file: "Routes_UTF8.txt", line: 2))

        // As an error, it stops the build.
        let strict = try build("Tests/Fixtures/patras-transfers", severity: "    \"route.transfers\": \"error\",")
        XCTAssertFalse(strict.built)
        XCTAssertEqual(strict.diagnostics.map(\.severity), [.error])
    }

    func testAnUnreachableStopIsSaidToBe() throws {
        let copy = try copyRepositoryFolder("Tests/Fixtures/patras-transfers", as: "island")
        // Line 4.1 now serves 0105 alone: nothing connects it to the others.
        let routes = try String(contentsOf: copy.appendingPathComponent("Routes_UTF8.txt"), encoding: .utf8)
        try routes.replacingOccurrences(of: "0 0104! 1 0105!", with: "0 0105!").write(to: copy.appendingPathComponent("Routes_UTF8.txt"), atomically: true, encoding: .utf8)
        try write(try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"), encoding: .utf8), to: "island/kiln.json5")
        let outcome = try Builder.build(try ManifestLoader.load(copy.path), options: BuildOptions(output: temporaryDirectory.appendingPathComponent("i.sqlite")))
        let finding = try XCTUnwrap(outcome.diagnostics.first { $0.code == "route.transfers" })
        XCTAssertTrue(finding.message.contains("stop pairs needing more than two changes: 4 "), finding.message)
        XCTAssertTrue(finding.message.hasSuffix("stop 0101 «Πλατεία Γεωργίου» and stop 0105 «Λιμάνι», needs more than 8 changes or cannot reach the other at all"),
                      finding.message)
    }

    func testRouteRulesRunOnAShippedBundle() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let pipeline = try ManifestLoader.load(folder.path)
        let bundle = temporaryDirectory.appendingPathComponent("patras.sqlite")
        XCTAssertTrue(try Builder.build(pipeline, options: BuildOptions(output: bundle)).built)
        let database = try Database(path: bundle.path, mode: .readWrite)
        // Line 1.2: a stop repeated in a row, a start stop off the route, and no timetable.
        try database.execute("""
            UPDATE route_stop SET stop_code = (SELECT stop_code FROM route_stop WHERE line_id = '1.2' AND position = 0) WHERE line_id = '1.2' AND position = 1;
            UPDATE line SET start_stop = '1114' WHERE id = '1.2';
            DELETE FROM line_timetable WHERE line_id = '1.2';
            """)
        try database.close()
        let report = try BundleChecker(pipeline: pipeline).check(bundle)
        let errors = report.diagnostics.filter { $0.severity == .error }.map { "\($0.code): \($0.message)" }
        XCTAssertEqual(errors.filter { !$0.hasPrefix("check.") }, [
            "line.no-timetable: line 1.2 has no timetable in Timetables_UTF8.txt",
            "line.start-off-route: line 1.2 starts at stop 1114 (StartingPoints.txt), which its route does not visit",
            "route.repeated-stop: route of line 1.2 visits stop 0110 twice in a row (positions 0 and 1)",
        ])
    }
}
