import Foundation
import FoundationXML
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The JUnit and GitHub renderings that `kiln build`, `kiln diff` and `kiln test` share with `kiln check`.
final class CIFormatsTests: KilnTestCase {
    /// A pipeline of one source (`rows.txt`, a name and a number per line) and one range rule on the number.
    private func rulePipeline(rows: String) throws -> CompiledPipeline {
        try loadPipeline(manifest: """
            { bundle: "ci", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "name", type: "text" }, { name: "n", type: "integer", notNull: true }], primaryKey: ["name"] }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["name", "n"] }, into: "t",
                          columns: { name: "name", n: "n" } }],
              rules: [{ code: "n.small", kind: "range", table: "t", column: "n", range: { min: 0, max: 9 } }] }
            """, rows: rows)
    }

    func testJUnitCountsFailuresAndSkippedPerSuite() throws {
        let error = Diagnostic(code: "e", severity: .error, message: "bad <x>", provenance: Provenance(file: "a.txt", line: 2))
        let xml = junitXML(name: "kiln build x", suites: [
            JUnitSuite(name: "sources", cases: [JUnitCase(classname: "c", name: "one", findings: [error, error]),
                                                JUnitCase(classname: "c", name: "two", skipped: "not run")]),
            JUnitSuite(name: "empty", cases: []),
        ])
        let document = try XMLDocument(data: Data(xml.utf8))
        let root = try XCTUnwrap(document.rootElement())
        XCTAssertEqual(root.attribute(forName: "tests")?.stringValue, "2")
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, "1")
        XCTAssertEqual(root.attribute(forName: "skipped")?.stringValue, "1")
        XCTAssertEqual(try document.nodes(forXPath: "//testsuite").count, 1, "an empty suite is left out")
        let failure = try XCTUnwrap(document.nodes(forXPath: "//testcase[@name='one']/failure").first as? XMLElement)
        XCTAssertEqual(failure.attribute(forName: "message")?.stringValue, "bad <x> (and 1 more)")
        XCTAssertEqual(failure.stringValue, "a.txt:2: error: bad <x> [e]\na.txt:2: error: bad <x> [e]")
    }

    func testBuildFindingsGoToTheirSourceOrRule() throws {
        let pipeline = try rulePipeline(rows: "a;1\nb;x\nc;12\n")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: temporaryDirectory.appendingPathComponent("out/ci.sqlite")))
        XCTAssertFalse(outcome.built)
        let summary = BuildSummary(pathPrefix: "pipeline/")
        let document = try XMLDocument(data: Data(outcome.junit(pipeline, summary).utf8))
        let rows = try XCTUnwrap(document.nodes(forXPath: "//testsuite[@name='sources']/testcase[@name='rows']/failure").first?.stringValue)
        XCTAssertTrue(rows.hasPrefix("pipeline/rows.txt:2: error: "), rows)
        let rule = try XCTUnwrap(document.nodes(forXPath: "//testsuite[@name='rules']/testcase[@name='n.small']/failure").first as? XMLElement)
        XCTAssertEqual(rule.attribute(forName: "type")?.stringValue, "n.small")
        XCTAssertTrue(rule.stringValue?.hasPrefix("pipeline/rows.txt:3: error: ") == true, rule.stringValue ?? "")

        let github = outcome.github(summary).split(separator: "\n").map(String.init)
        XCTAssertTrue(github.contains { $0.hasPrefix("::error file=pipeline/rows.txt,line=3,title=n.small::") }, "\(github)")
        XCTAssertEqual(github.last, "kiln build ci: not built (\(outcome.counts))")
    }

    /// The rule a finding belongs to: its code's, a `unique` rule's `.identical` repeats, a time limit naming it.
    func testAFindingBelongsToTheRuleOfItsCodeItsRepeatsAndItsTimeLimit() {
        let rules = ["stop.unique", "n.small"]
        func finding(_ code: String, _ message: String = "m") -> Diagnostic { Diagnostic(code: code, severity: .warning, message: message) }
        XCTAssertEqual(BuildOutcome.rule(of: finding("n.small"), among: rules), "n.small")
        XCTAssertEqual(BuildOutcome.rule(of: finding("stop.unique.identical"), among: rules), "stop.unique")
        XCTAssertNil(BuildOutcome.rule(of: finding("other.identical"), among: rules))
        let spec = RuleSpec(code: "n.small", check: .sql(query: "SELECT 1", message: "m"), severity: .error)
        XCTAssertEqual(BuildOutcome.rule(of: finding("sql.time-limit", RuleEngine.timeLimitMessage(spec, keyPath: "rules[1]", seconds: 1)), among: rules), "n.small")
        XCTAssertNil(BuildOutcome.rule(of: finding("duplicate-row"), among: rules))
    }

    /// `acknowledged` takes warnings and infos of known codes only; the GitHub rendering leaves them out and counts them.
    func testAcknowledgedCodesAreCheckedAndLeftOutOfTheAnnotations() throws {
        func manifest(_ acknowledged: String) -> String {
            """
            { bundle: "ci", schemaVersion: 1, acknowledged: \(acknowledged), severity: { "duplicate-row": "error" },
              tables: [{ name: "t", columns: [{ name: "name", type: "text" }] }],
              rules: [{ code: "t.name", kind: "unique", table: "t", columns: ["name"], severity: "warning" }] }
            """
        }
        XCTAssertEqual(try loadPipeline(manifest: manifest(#"["xml.unread", "t.name", "t.name.identical"]"#), rows: "").manifest.acknowledged,
                       ["xml.unread", "t.name", "t.name.identical"])
        XCTAssertThrowsError(try loadPipeline(manifest: manifest(#"["duplicate-row"]"#), rows: ""), "made an error by severity")
        XCTAssertThrowsError(try loadPipeline(manifest: manifest(#"["no.such"]"#), rows: ""))
        let outcome = BuildOutcome(bundle: "ci", output: URL(fileURLWithPath: "ci.sqlite"), reportURL: URL(fileURLWithPath: "r.json"), built: true,
                                   tables: [], inputs: [:], diagnostics: [Diagnostic(code: "xml.unread", severity: .info, message: "m"),
                                                                           Diagnostic(code: "xml.unread", severity: .error, message: "e")])
        let github = outcome.github(BuildSummary(pathPrefix: ""), acknowledged: ["xml.unread"])
        XCTAssertFalse(github.contains("::notice"), github)
        XCTAssertTrue(github.contains("::error title=xml.unread::e"), "an error is always annotated: \(github)")
        XCTAssertTrue(github.hasSuffix("; 1 acknowledged in the manifest, not annotated)\n"), github)
    }

    func testAFixtureThatDiffersIsOneErrorAtItsExpectedFile() throws {
        let spec = FixtureSpec(source: "s", input: "in.html", expected: "fixtures/in.json")
        let differs = FixtureRunner.Outcome(fixture: spec, differences: ["- a", "+ b"], missingExpectation: false)
        let passes = FixtureRunner.Outcome(fixture: spec, differences: [], missingExpectation: false)
        XCTAssertNil(passes.finding())
        let finding = try XCTUnwrap(differs.finding(pathPrefix: "web/"))
        XCTAssertEqual(finding.provenance, Provenance(file: "web/fixtures/in.json"))
        XCTAssertEqual(finding.code, DiagnosticCode.fixtureDiffers.rawValue)
        XCTAssertEqual([differs, passes].github().split(separator: "\n").last, "kiln test: 1 passed, 1 failed")
        let document = try XMLDocument(data: Data([differs, passes].junit().utf8))
        XCTAssertEqual(document.rootElement()?.attribute(forName: "failures")?.stringValue, "1")
    }

    /// Paths from the current folder: inside it, the folder itself, up through `..` to a folder they share, and
    /// absolute when they share only the root.
    func testPathsAreRelativeToTheCurrentFolderWhereverTheyAre() {
        XCTAssertEqual(relativePath("/w/pb/Routes.txt", from: "/w/pb"), "Routes.txt")
        XCTAssertEqual(relativePath("/w/pb", from: "/w/pb"), ".")
        XCTAssertEqual(relativePath("/w/pb", from: "/w/pb/"), ".")
        XCTAssertEqual(relativePath("/w/pb/Routes.txt", from: "/w/pb/sub"), "../Routes.txt")
        XCTAssertEqual(relativePath("/w/pb", from: "/w/pb/sub/deeper"), "../..")
        XCTAssertEqual(relativePath("/w/other/a.txt", from: "/w/pb"), "../other/a.txt")
        XCTAssertEqual(relativePath("/w/pb/a/b.txt", from: "/w"), "pb/a/b.txt")
        XCTAssertEqual(relativePath("/elsewhere/a.txt", from: "/w/pb"), "/elsewhere/a.txt")
        XCTAssertEqual(relativePath("/w/pbx/a.txt", from: "/w/pb"), "../pbx/a.txt", "a name that starts like the folder is not in it")
        let issue = ManifestIssue(file: FileManager.default.currentDirectoryPath + "/raw/p/kiln.json5", line: 3, keyPath: "bundle", message: "m")
        XCTAssertEqual(issue.description, "raw/p/kiln.json5:3: manifest error at bundle: m")
    }
}

