import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `LineDiff` and `FixtureRunner` on a tiny `text` pipeline: writing, passing and failing fixtures.
final class FixtureRunnerTests: KilnTestCase {
    // MARK: LineDiff

    func testEqualTextsHaveNoChanges() {
        XCTAssertEqual(LineDiff.changes(from: ["a", "b"], to: ["a", "b"]), [])
        XCTAssertEqual(LineDiff.changes(from: [], to: []), [])
    }

    func testInsertion() {
        XCTAssertEqual(LineDiff.changes(from: ["a", "c"], to: ["a", "b", "c"]), ["+ b"])
        XCTAssertEqual(LineDiff.changes(from: [], to: ["a", "b"]), ["+ a", "+ b"])
        XCTAssertEqual(LineDiff.changes(from: ["a"], to: ["a", "b"]), ["+ b"])
    }

    func testDeletion() {
        XCTAssertEqual(LineDiff.changes(from: ["a", "b", "c"], to: ["a", "c"]), ["- b"])
        XCTAssertEqual(LineDiff.changes(from: ["a", "b"], to: []), ["- a", "- b"])
        XCTAssertEqual(LineDiff.changes(from: ["a", "b"], to: ["b"]), ["- a"])
    }

    func testChange() {
        XCTAssertEqual(LineDiff.changes(from: ["a", "b", "c"], to: ["a", "x", "c"]), ["+ x", "- b"])
        XCTAssertEqual(LineDiff.changes(from: ["a"], to: ["b"]), ["+ b", "- a"])
    }

    func testSeveralChangesKeepTheCommonLines() {
        XCTAssertEqual(LineDiff.changes(from: ["1", "2", "3", "4", "5"], to: ["1", "3", "4", "4b", "5", "6"]),
                       ["- 2", "+ 4b", "+ 6"])
        // Repeated lines: only the extra copy is reported.
        XCTAssertEqual(LineDiff.changes(from: ["x", "x"], to: ["x", "x", "x"]), ["+ x"])
    }

    // MARK: FixtureRunner

    private let manifest = """
        {
          bundle: "tiny",
          schemaVersion: 1,
          tables: [{ name: "departure", columns: [{ name: "stop", type: "text" }, { name: "time", type: "text" }] }],
          sources: [{
            name: "departures", format: "text", path: "pages/*.txt",
            options: { extract: { headings: ["^Στάση (?<stop>\\\\S+)$"], row: "^(?<time>\\\\d{1,2}:\\\\d{2})$" } },
            into: "departure", columns: { stop: "stop", time: "time" },
          }],
          fixtures: [
            { source: "departures", input: "pages/a.txt", expected: "fixtures/a.json" },
          ],
        }
        """

    private let page = "Στάση 0102\n06:00\n06:30\nΣημείωση 23:15\n"

    private var folder: URL { temporaryDirectory.appendingPathComponent("tiny") }

    private func pipeline(_ manifestText: String? = nil) throws -> CompiledPipeline {
        try write(manifestText ?? manifest, to: "tiny/kiln.json5")
        return try ManifestLoader.load(folder.path)
    }

    func testUpdateWritesTheExpectedFile() throws {
        try write(page, to: "tiny/pages/a.txt")
        let outcomes = try FixtureRunner(pipeline: try pipeline()).run(update: true)
        XCTAssertEqual(outcomes.count, 1)
        XCTAssertTrue(outcomes[0].passed)
        XCTAssertEqual(outcomes[0].fixture.expected, "fixtures/a.json")
        let written = try String(contentsOf: folder.appendingPathComponent("fixtures/a.json"), encoding: .utf8)
        XCTAssertEqual(written, """
            {
              "fields" : [
                "stop",
                "time"
              ],
              "records" : [
                {
                  "_line" : 2,
                  "stop" : "0102",
                  "time" : "06:00"
                },
                {
                  "_line" : 3,
                  "stop" : "0102",
                  "time" : "06:30"
                }
              ],
              "unmatched" : [
                {
                  "line" : 4,
                  "message" : "no row pattern captured this line that looks like data: \\"Σημείωση 23:15\\""
                }
              ]
            }

            """)
    }

    func testRunPassesAfterUpdateAndReportsAChangedRecord() throws {
        try write(page, to: "tiny/pages/a.txt")
        let runner = FixtureRunner(pipeline: try pipeline())
        _ = try runner.run(update: true)
        let passing = try runner.run()
        XCTAssertEqual(passing.map(\.passed), [true])
        XCTAssertEqual(passing[0].differences, [])
        XCTAssertFalse(passing[0].missingExpectation)

        // One departure changes, one is added, and the note is fixed so that it no longer looks like data.
        try write("Στάση 0102\n06:00\n06:45\n07:15\nΣημείωση\n", to: "tiny/pages/a.txt")
        let failing = try runner.run()
        XCTAssertEqual(failing.map(\.passed), [false])
        XCTAssertFalse(failing[0].missingExpectation)
        XCTAssertEqual(failing[0].differences, [
            "+ record at line 3: stop=\"0102\" time=\"06:45\"",
            "+ record at line 4: stop=\"0102\" time=\"07:15\"",
            "- record at line 3: stop=\"0102\" time=\"06:30\"",
            "- unmatched at line 4: no row pattern captured this line that looks like data: \"Σημείωση 23:15\"",
        ])
        // Updating again accepts the change.
        _ = try runner.run(update: true)
        XCTAssertEqual(try runner.run().map(\.passed), [true])
    }

    func testANullFieldIsCompared() throws {
        // A row before any heading has no stop: written as null, read back as null.
        try write("05:30\nΣτάση 0102\n06:00\n", to: "tiny/pages/a.txt")
        let runner = FixtureRunner(pipeline: try pipeline())
        _ = try runner.run(update: true)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("fixtures/a.json"))) as? [String: Any])
        let records = try XCTUnwrap(json["records"] as? [[String: Any]])
        XCTAssertTrue(records.first?["stop"] is NSNull)
        XCTAssertEqual(try runner.run().map(\.passed), [true])
        try write("05:30\nΣτάση 0103\n06:00\n", to: "tiny/pages/a.txt")
        XCTAssertEqual(try runner.run().first?.differences, ["+ record at line 3: stop=\"0103\" time=\"06:00\"",
                                                             "- record at line 3: stop=\"0102\" time=\"06:00\""])
    }

    func testMissingExpectedFile() throws {
        try write(page, to: "tiny/pages/a.txt")
        let outcomes = try FixtureRunner(pipeline: try pipeline()).run()
        XCTAssertEqual(outcomes.count, 1)
        XCTAssertTrue(outcomes[0].missingExpectation)
        XCTAssertFalse(outcomes[0].passed)
        XCTAssertEqual(outcomes[0].differences, [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("fixtures/a.json").path))
    }

    func testExpectedFileThatIsNotAFixture() throws {
        try write(page, to: "tiny/pages/a.txt")
        try write("{\"records\": []}", to: "tiny/fixtures/a.json")
        XCTAssertThrowsError(try FixtureRunner(pipeline: try pipeline()).run()) { error in
            guard case KilnError.io(let failure) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(failure.message, "fixtures/a.json is not a fixture file (expected the JSON object {fields, records, unmatched} that kiln test --update writes): fields is missing")
        }
    }

    func testExpectedFileOutsideThePipelineIsRefused() throws {
        try write(page, to: "tiny/pages/a.txt")
        let escaping = manifest.replacingOccurrences(of: "expected: \"fixtures/a.json\"", with: "expected: \"../a.json\"")
        XCTAssertThrowsError(try FixtureRunner(pipeline: try pipeline(escaping)).run(update: true)) { error in
            guard case KilnError.manifest(let issue) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(issue.keyPath, "fixtures[0].expected")
            XCTAssertEqual(issue.message, "\"../a.json\" leaves the pipeline folder")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporaryDirectory.appendingPathComponent("a.json").path))
    }

    func testSeveralFixturesRunInOrder() throws {
        try write(page, to: "tiny/pages/a.txt")
        try write("Στάση 0104\n08:00\n", to: "tiny/pages/b.txt")
        let two = manifest.replacingOccurrences(
            of: "{ source: \"departures\", input: \"pages/a.txt\", expected: \"fixtures/a.json\" },",
            with: "{ source: \"departures\", input: \"pages/a.txt\", expected: \"fixtures/a.json\" },\n"
                + "    { source: \"departures\", input: \"pages/b.txt\", expected: \"fixtures/b.json\" },")
        let runner = FixtureRunner(pipeline: try pipeline(two))
        _ = try runner.run(update: true)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("fixtures/b.json"))
        let outcomes = try runner.run()
        XCTAssertEqual(outcomes.map(\.fixture.input), ["pages/a.txt", "pages/b.txt"])
        XCTAssertEqual(outcomes.map(\.passed), [true, false])
        XCTAssertEqual(outcomes.map(\.missingExpectation), [false, true])
    }

    // MARK: Extraction

    func testExtractionTableAndJSON() throws {
        try write(page, to: "tiny/pages/a.txt")
        let source = try XCTUnwrap(try pipeline().sources.first)
        let extraction = try Extraction.run(source, files: [folder.appendingPathComponent("pages/a.txt")], displayNames: ["a.txt"])
        XCTAssertEqual(extraction.fieldNames, ["stop", "time"])
        XCTAssertEqual(extraction.items, [Extraction.Item(file: "a.txt", line: 2, values: ["0102", "06:00"]),
                                          Extraction.Item(file: "a.txt", line: 3, values: ["0102", "06:30"])])
        XCTAssertEqual(extraction.unmatched.map { $0.provenance }, [Provenance(file: "a.txt", line: 4)])
        XCTAssertEqual(FixtureRunner.lines(of: extraction), [
            "record at line 2: stop=\"0102\" time=\"06:00\"",
            "record at line 3: stop=\"0102\" time=\"06:30\"",
            "unmatched at line 4: no row pattern captured this line that looks like data: \"Σημείωση 23:15\"",
        ])
        XCTAssertEqual(extraction.table(), """
            file:line  stop  time
            ---------  ----  -----
            a.txt:2    0102  06:00
            a.txt:3    0102  06:30
            2 records

            1 unmatched candidate line:
              a.txt:4: no row pattern captured this line that looks like data: "Σημείωση 23:15"

            """)
    }
}
