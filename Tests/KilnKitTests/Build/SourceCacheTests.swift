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

    /// The record of the entry of the source named `name` of the bundle at `output`; there is one per source.
    private func entryRecord(of name: String, output: URL) throws -> URL {
        let folder = BuildCache(output: output).folder.appendingPathComponent("sources")
        let records = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.map { folder.appendingPathComponent($0) }
        XCTAssertEqual(records.count, 2)
        return try XCTUnwrap(records.first { (try? JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: $0)))?.name == name })
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
        let record = try entryRecord(of: "s", output: output)
        var entry = try JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: record))
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
        XCTAssertEqual(try JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: record)).key,
                       SourceCache.key(pipeline.sources[0], manifest: pipeline.manifest, examplesPerCode: DiagnosticTally.defaultExamplesPerCode))
    }

    /// A table keyed by `id`, filled from five files in key order and then from one more source.
    private let keyedManifest = """
        { bundle: "keyed", schemaVersion: 1,
          tables: [{ name: "k", columns: [{ name: "id", type: "integer" }, { name: "name", type: "text", notNull: true }], primaryKey: ["id"] }],
          sources: [{ name: "parts", format: "delimited", path: "parts/*.txt", options: { fields: ["id", "name", "note"] }, into: "k",
                      columns: { id: "id", name: { field: "name", normalize: ["trim", "emptyToNull"] } } },
                    { name: "extra", format: "delimited", path: "extra.txt", options: { fields: ["id", "name"] }, into: "k", columns: { id: "id", name: "name" } }] }
        """

    /// Stages `pipeline` as a build does, with its sources' entries beside `output` (`cached`) or reading every file;
    /// returns each table's facts and what the cache supplied.
    private func stagedFacts(_ pipeline: CompiledPipeline, output: URL, cached: Bool) throws -> (facts: [String: StagedTableFacts.Segment], reused: [String: Int]) {
        let staged = try stage(pipeline, output: output, cached: cached)
        return (staged.facts, staged.reused)
    }

    /// Stages `pipeline` as `stagedFacts` does; returns besides the staged rows of `k` (in rowid order, as text), the
    /// findings of the read and whether staging started as a copy of the first source's entry.
    private func stage(_ pipeline: CompiledPipeline, output: URL, cached: Bool)
        throws -> (facts: [String: StagedTableFacts.Segment], reused: [String: Int], rows: [String], findings: [String], seeded: Bool) {
        let stagingURL = temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString).sqlite")
        let log = DiagnosticLog()
        var reused: [String: Int] = [:]
        let staging: StagingArea
        if cached {
            let cache = SourceCache(cache: BuildCache(output: output), pipeline: pipeline, examplesPerCode: DiagnosticTally.defaultExamplesPerCode)
            let digests = { BuildCache.Inputs(of: pipeline, record: nil)?.digests }
            cache.prepare(digests: digests, log: log)
            staging = try StagingArea(url: stagingURL, pipeline: pipeline, seed: cache.stagingSeed(), cache: cache)
            for (position, source) in pipeline.sources.enumerated() {
                cache.keep(try staging.stage(source, log: log), at: position)
            }
            reused = Dictionary(uniqueKeysWithValues: cache.reused.map { ($0.source, $0.files) })
        } else {
            staging = try StagingArea(url: stagingURL, pipeline: pipeline)
            for source in pipeline.sources { _ = try staging.load(source, log: log) }
        }
        let facts = Dictionary(uniqueKeysWithValues: pipeline.manifest.tables.compactMap { table in staging.facts(of: table).map { (table.name, $0.segment) } })
        let rows = try staging.database.rows("SELECT rowid, * FROM k ORDER BY rowid").map { "\($0.values)" }
        let seeded = staging.seeded
        try staging.database.close()
        return (facts, reused, rows, log.sorted.map { "\($0.code) \($0.provenance?.file ?? "-"):\($0.provenance?.line ?? 0) \($0.message)" }, seeded)
    }

    /// After a build, a later source edited: staging starts as a copy of the first source's entry (none of its files
    /// changed), and holds the rows, facts and findings a staging that reads every file has. An edit of the first
    /// source's own files copies them in row by row instead, to the same end.
    func testAnUnchangedFirstSourceSeedsStagingWithAFullReadsRowsFactsAndFindings() throws {
        // p1's second line has a field too many: a finding of the read, which the seeded build must replay.
        let parts = (0..<3).map { part in (0..<3).map { "\(part * 10 + $0 + 1);name \(part)-\($0);n" + (part == 1 && $0 == 1 ? ";extra" : "") }.joined(separator: "\n") + "\n" }
        for (index, text) in parts.enumerated() { try write(text, to: "pipeline/parts/p\(index).txt") }
        try write("100;last\n", to: "pipeline/extra.txt")
        // The extra field is a warning here, so that the build writes its bundle.
        let warning = keyedManifest.replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: 1, severity: { parse: \"warning\" },")
        let pipeline = try loadPipeline(manifest: warning, rows: "")
        let output = temporaryDirectory.appendingPathComponent("out/keyed.sqlite")
        XCTAssertTrue(try Builder.build(pipeline, options: BuildOptions(output: output)).built)

        for (what, path, text, seeded) in [("a later source", "pipeline/extra.txt", "100;later\n101;more\n", true),
                                           ("a file of the first source", "pipeline/parts/p2.txt", "21;x;n\n", false)] {
            try write(text, to: path)
            let edited = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("pipeline").path)
            let full = try stage(edited, output: output, cached: false)
            let cached = try stage(edited, output: output, cached: true)
            XCTAssertEqual(cached.seeded, seeded, what)
            XCTAssertFalse(full.seeded, what)
            XCTAssertEqual(cached.rows, full.rows, what)
            XCTAssertEqual(cached.facts, full.facts, what)
            XCTAssertEqual(cached.findings, full.findings, what)
            XCTAssertFalse(full.findings.isEmpty, "\(what): the read reported the extra field")
            XCTAssertTrue(full.findings.contains { $0.contains("p1.txt:2") }, "\(what): \(full.findings)")
        }
        // Through a build: the first source's table written from its entry, the bundle and findings a full build's.
        let pipelineFolder = temporaryDirectory.appendingPathComponent("pipeline").path
        XCTAssertTrue(try Builder.build(try ManifestLoader.load(pipelineFolder), options: BuildOptions(output: output)).built)
        try write("100;again\n", to: "pipeline/extra.txt")
        let rebuilt = try Builder.build(try ManifestLoader.load(pipelineFolder), options: BuildOptions(output: output))
        XCTAssertEqual(rebuilt.reusedFiles["parts"].map { [$0.files, $0.of] }, [3, 3], "every file of the first source from its entry")
        let fresh = temporaryDirectory.appendingPathComponent("fresh/keyed.sqlite")
        var options = BuildOptions(output: fresh)
        options.useCache = false
        let full = try Builder.build(try ManifestLoader.load(pipelineFolder), options: options)
        XCTAssertEqual(try Data(contentsOf: output), try Data(contentsOf: fresh))
        XCTAssertEqual(rebuilt.diagnostics, full.diagnostics)
    }

    /// After a build, one file edited: the facts of the table once the other files' rows are copied from the cache and
    /// the edited one is read are the facts a staging that reads every file learns, whether the edit keeps the key
    /// order, breaks it at the file's first row, repeats the key before it or leaves a name NULL.
    func testTheFactsAfterCopyingTheUnchangedFilesAreAFullReadsFacts() throws {
        let parts = (0..<5).map { part in (0..<4).map { "\(part * 10 + $0 + 1);name \(part)-\($0);n" }.joined(separator: "\n") + "\n" }
        for (index, text) in parts.enumerated() { try write(text, to: "pipeline/parts/p\(index).txt") }
        try write("100;last\n", to: "pipeline/extra.txt")
        let pipeline = try loadPipeline(manifest: keyedManifest, rows: "")
        let output = temporaryDirectory.appendingPathComponent("out/keyed.sqlite")
        XCTAssertTrue(try Builder.build(pipeline, options: BuildOptions(output: output)).built)

        let edits: [(String, String, Bool?)] = [
            ("in order", "21;other;n\n22;names;n\n23;here;n\n", true),
            ("its first row before the last copied one", "13;back;n\n22;b;n\n23;c;n\n", false),
            ("its first row repeating the key before it", "14;repeat;n\n22;b;n\n23;c;n\n", true),
            ("a name NULL", "21;a;n\n22;;n\n23;c;n\n", true),
        ]
        for (what, text, inOrder) in edits {
            try write(text, to: "pipeline/parts/p2.txt")
            let edited = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("pipeline").path)
            let full = try stagedFacts(edited, output: output, cached: false)
            let cached = try stagedFacts(edited, output: output, cached: true)
            XCTAssertEqual(cached.reused, ["parts": 4, "extra": 1], what)
            XCTAssertEqual(cached.facts, full.facts, what)
            XCTAssertEqual(cached.facts["k"]?.inOrder, inOrder, what)
            XCTAssertEqual(cached.facts["k"]?.rows, 20, what)
        }
        XCTAssertEqual(try stagedFacts(try ManifestLoader.load(temporaryDirectory.appendingPathComponent("pipeline").path), output: output, cached: true)
            .facts["k"]?.nullable, "01", "the NULL name is known")
    }

    /// An entry whose database lacks the facts of a file's rows (its digest and record made to match): the entry is
    /// damaged, so the source is read again, said so with a `build.cache` info, and the bundle is a full build's.
    func testAnEntryMissingTheFactsOfAFilesRowsIsDamagedAndReadAgain() throws {
        for index in 0..<3 { try write("\(index + 1);name \(index);n\n", to: "pipeline/parts/p\(index).txt") }
        try write("100;last\n", to: "pipeline/extra.txt")
        let pipeline = try loadPipeline(manifest: keyedManifest, rows: "")
        let output = temporaryDirectory.appendingPathComponent("out/keyed.sqlite")
        XCTAssertTrue(try Builder.build(pipeline, options: BuildOptions(output: output)).built)
        let bundle = try Data(contentsOf: output)

        let record = try entryRecord(of: "parts", output: output)
        let databaseURL = record.deletingPathExtension().appendingPathExtension("sqlite")
        let database = try Database(path: databaseURL.path)
        XCTAssertEqual(try database.rows("SELECT count(*) FROM _facts").first?.values.first, .integer(3), "one per file")
        try database.execute("DELETE FROM _facts WHERE position = 1")
        try database.close()
        var entry = try JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: record))
        entry.databaseSHA256 = try FileDigest.sha256(of: databaseURL)
        entry.checksum = try entry.computedChecksum()
        try KilnJSON.encode(entry).write(to: record)
        try FileManager.default.removeItem(at: BuildCache(output: output).recordURL)

        let again = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(again.built)
        XCTAssertEqual(again.reusedSources, ["extra"], "\"parts\" was read again")
        let found = again.diagnostics.filter { $0.code == DiagnosticCode.buildCache.rawValue }
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found.first?.message.contains("of source \"parts\" is damaged or was edited (it cannot be read") == true, "\(found)")
        XCTAssertEqual(try Data(contentsOf: output), bundle)
    }

    /// An entry of the format before `_facts` (what an earlier Kiln wrote, its checksum its own): read again without
    /// a finding, as an entry of another key is, and written again in the current format.
    func testAnEntryOfAnEarlierFormatIsReadAgainSilently() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a;Mon\nb;Mon\n")
        let output = temporaryDirectory.appendingPathComponent("out/cached.sqlite")
        let full = try Builder.build(pipeline, options: BuildOptions(output: output))
        let record = try entryRecord(of: "s", output: output)
        var entry = try JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: record))
        entry.format = 1
        entry.checksum = try entry.computedChecksum()
        try KilnJSON.encode(entry).write(to: record)
        try FileManager.default.removeItem(at: BuildCache(output: output).recordURL)

        let again = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertEqual(again.reusedSources, ["second"], "\"s\" was read again")
        XCTAssertEqual(again.diagnostics, full.diagnostics, "no build.cache finding")
        XCTAssertEqual(try JSONDecoder().decode(CacheEntryRecord.self, from: Data(contentsOf: record)).format, SourceCache.currentFormat)
    }
}

extension SourceCacheTests {
    /// An entry's rows are copied back by file (`_ranges`): each file's rows must form one run of rowids. The runs are
    /// read in one pass in rowid order; the oracle is SQLite grouping the rows on their file.
    func testEachFilesRowsAreOneRunOrTheEntryIsRefused() throws {
        let database = try Database(path: temporaryDirectory.appendingPathComponent("entry.sqlite").path)
        let positions = ["a.html": 0, "b.html": 1, "c.html": 2]
        func ranges(_ files: [String?], rowids: [Int64]? = nil) throws -> [(position: Int, first: Int64, last: Int64)]? {
            try database.execute("DROP TABLE IF EXISTS t; CREATE TABLE t (v TEXT, _file TEXT, _line INTEGER)")
            let insert = try database.prepare("INSERT INTO t (rowid, v, _file, _line) VALUES (?, 'x', ?, 1)")
            for (index, file) in files.enumerated() {
                try insert.run([.integer(rowids?[index] ?? Int64(index + 1)), file.map { .text($0) } ?? .null])
            }
            return try SourceCache.fileRanges(of: "t", positions: positions, in: database)
        }
        let files = ["a.html", "a.html", "b.html", "c.html", "c.html", "c.html"]
        let found = try XCTUnwrap(try ranges(files))
        let oracle = try database.rows("SELECT _file, min(rowid), max(rowid) FROM t GROUP BY _file ORDER BY min(rowid)").map { row in
            (positions[row.values[0].textValue ?? ""] ?? -1, row.values[1].storedValue, row.values[2].storedValue)
        }
        XCTAssertEqual(found.map { "\($0.position) \($0.first) \($0.last)" }, oracle.map { "\($0.0) \($0.1) \($0.2)" })
        XCTAssertEqual(try ranges([])?.count, 0, "no rows, no ranges")
        XCTAssertNil(try ranges(["a.html", "b.html", "a.html"]), "a file's rows in two runs")
        XCTAssertNil(try ranges(["a.html", "z.html"]), "a row of a file not the source's")
        XCTAssertNil(try ranges(["a.html", nil]), "a row of no file")
        XCTAssertNil(try ranges(["a.html", "a.html", "b.html"], rowids: [1, 2, 4]), "a gap between rowids")
    }
}

private extension SQLValue {
    var storedValue: Int64 { if case .integer(let value) = self { return value } else { return -1 } }
}
