import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `SourceCache`: what a source's key depends on (and what it does not), and that an entry of another Kiln is read
/// again without a word while its source's other entries are reused.
final class SourceCacheTests: KilnTestCase {
    private let manifest = """
        { bundle: "cached", schemaVersion: 1,
          vocabularies: { days: { terms: [{ name: "Mon", code: "mon" }] }, other: { terms: [{ name: "X", code: "x" }] } },
          tables: [{ name: "t", columns: [{ name: "v", type: "text" }, { name: "d", type: "text" }] },
                   { name: "u", description: "second", columns: [{ name: "w", type: "text" }] }],
          sources: [{ name: "s", format: "delimited", path: "rows.txt", options: { fields: ["v", "d"] }, into: "t",
                      columns: { v: "v", d: { field: "d", normalize: [{ terms: "days" }] } } },
                    { name: "second", format: "delimited", path: "rows.txt", options: { fields: ["w", "e"] }, into: "u", columns: { w: "w" } }],
          rules: [{ kind: "sql", code: "r", severity: "warning", sql: "SELECT 1 WHERE 0", message: "never" }] }
        """

    private func key(_ text: String, source: Int = 0, examples: Int = 100) throws -> String {
        let pipeline = try loadPipeline(manifest: text, rows: "a;Mon\n")
        return SourceCache.key(pipeline.sources[source], manifest: pipeline.manifest, examplesPerCode: examples)
    }

    func testTheKeyFollowsWhatDecidesTheSourcesRowsAndNothingElse() throws {
        let original = try key(manifest)
        XCTAssertEqual(try key(manifest), original)
        let changes: [(String, String, String)] = [
            ("an option", #"options: { fields: ["v", "d"] }"#, #"options: { fields: ["v", "d"], separator: ";" }"#),
            ("a mapping", #"columns: { v: "v", d:"#, #"columns: { v: "d", d:"#),
            ("a normalizer", #"normalize: [{ terms: "days" }]"#, #"normalize: [{ terms: "days", output: "mask" }]"#),
            ("the vocabulary it names", #"{ name: "Mon", code: "mon" }"#, #"{ name: "Mon", code: "monday" }"#),
            ("a column type of its table", #"{ name: "v", type: "text" }"#, #"{ name: "v", type: "integer" }"#),
            ("the path", #"path: "rows.txt", options: { fields: ["v", "d"] }"#, #"path: "*.txt", options: { fields: ["v", "d"] }"#),
            ("a severity", "rules: [", #"severity: { value: "warning" }, rules: ["#),
            ("a limit", "rules: [", "limits: { regexSecondsPerFile: 3 }, rules: ["),
        ]
        for (what, old, new) in changes {
            XCTAssertTrue(manifest.contains(old), what)
            XCTAssertNotEqual(try key(manifest.replacingOccurrences(of: old, with: new)), original, what)
        }
        XCTAssertNotEqual(try key(manifest, examples: 5), original, "the findings kept per code")
        let unrelated: [(String, String, String)] = [
            ("another source", #"options: { fields: ["w", "e"] }"#, #"options: { fields: ["w", "f"] }"#),
            ("a vocabulary it does not name", #"{ name: "X", code: "x" }"#, #"{ name: "X", code: "y" }"#),
            ("another table", #"description: "second""#, #"description: "other""#),
            ("a rule", "SELECT 1 WHERE 0", "SELECT 2 WHERE 0"),
            ("a comment", "{ bundle:", "// note\n{ bundle:"),
        ]
        for (what, old, new) in unrelated {
            XCTAssertTrue(manifest.contains(old), what)
            XCTAssertEqual(try key(manifest.replacingOccurrences(of: old, with: new)), original, what)
        }
    }

    func testAnEntryOfAnotherKilnIsReadAgainSilentlyAndTheOthersAreReused() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a;Mon\nb;Mon\n")
        let output = temporaryDirectory.appendingPathComponent("out/cached.sqlite")
        let full = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(full.built, "\(full.diagnostics)")
        let bundle = try Data(contentsOf: output)

        // Another Kiln (or other libraries) gives every key another value: the entry of "s" as such a Kiln wrote it.
        let folder = BuildCache(output: output).folder.appendingPathComponent("sources")
        let records = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.map { folder.appendingPathComponent($0) }
        XCTAssertEqual(records.count, 2)
        let record = try XCTUnwrap(records.first { (try? JSONDecoder().decode(SourceCacheEntry.self, from: Data(contentsOf: $0)))?.source == "s" })
        var entry = try JSONDecoder().decode(SourceCacheEntry.self, from: Data(contentsOf: record))
        entry.key = String(repeating: "f", count: 64)
        entry.checksum = try entry.computedChecksum()
        try KilnJSON.encode(entry).write(to: record)
        // Whole-bundle reuse is ruled out by a removed record, so that the sources' entries are asked.
        try FileManager.default.removeItem(at: BuildCache(output: output).recordURL)

        let again = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(again.built)
        XCTAssertFalse(again.reusedBundle)
        XCTAssertEqual(again.reusedSources, ["second"], "\"s\" was read again")
        XCTAssertEqual(again.reusedFiles["second"], ReusedFiles(files: 1, of: 1))
        XCTAssertFalse(again.diagnostics.contains { $0.code == DiagnosticCode.buildCache.rawValue }, "another Kiln's entry is no finding")
        XCTAssertEqual(try Data(contentsOf: output), bundle)
        XCTAssertEqual(again.diagnostics, full.diagnostics)
        // The entry was written again with this Kiln's key.
        XCTAssertEqual(try JSONDecoder().decode(SourceCacheEntry.self, from: Data(contentsOf: record)).key,
                       SourceCache.key(pipeline.sources[0], manifest: pipeline.manifest, examplesPerCode: DiagnosticTally.defaultExamplesPerCode))
    }
}
