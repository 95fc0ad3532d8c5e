import Foundation
import XCTest
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `StagingCache`: staging asks the build cache one question per source and acts on the answer, and hands back what
/// it staged of each source for its entry.
final class StagingCacheTests: KilnTestCase {
    /// A cache that supplies nothing and notes every question.
    private final class AskedCache: StagingCache {
        private(set) var questions: [Int] = []

        func rows(ofSource position: Int) -> CachedRows? {
            questions.append(position)
            return nil
        }
    }

    /// Two sources into one table; every third line of a file has a field too many (a finding of its file, not staged):
    /// `a` stages 3 + 2 rows, `b` 4.
    private func pipeline() throws -> CompiledPipeline {
        for (name, count) in [("a1", 4), ("a2", 3), ("b1", 5)] {
            try write((1...count).map { "\(name)-\($0);\($0)" + ($0 % 3 == 0 ? ";extra" : "") }.joined(separator: "\n") + "\n",
                      to: "pipeline/\(name.first!)/\(name).txt")
        }
        return try loadPipeline(manifest: """
            { bundle: "asked", schemaVersion: 1, severity: { parse: "warning" },
              tables: [{ name: "t", columns: [{ name: "id", type: "text" }, { name: "n", type: "integer" }] }],
              sources: [{ name: "a", format: "delimited", path: "a/*.txt", options: { fields: ["id", "n"] }, into: "t", columns: { id: "id", n: "n" } },
                        { name: "b", format: "delimited", path: "b/*.txt", options: { fields: ["id", "n"] }, into: "t", columns: { id: "id", n: "n" } }] }
            """, rows: "")
    }

    /// On one thread and on several, each source is asked about once, and what staging hands back for it holds its
    /// files' digests, its rowids before and after, and its findings each with the file that made it.
    func testStagingAsksOncePerSourceAndHandsBackWhatItStaged() throws {
        let pipeline = try pipeline()
        var oneThread = ThreadSettings()
        oneThread.stagingOnOneThread = true
        for threads in [ThreadSettings(), oneThread] {
            let cache = AskedCache()
            let staging = try StagingArea(url: temporaryDirectory.appendingPathComponent("staging-\(threads.stagingOnOneThread).sqlite"),
                                          pipeline: pipeline, cache: cache, threads: threads)
            let log = DiagnosticLog()
            let staged = try pipeline.sources.map { try staging.stage($0, log: log) }
            XCTAssertEqual(cache.questions.sorted(), [0, 1], "one question per source")
            XCTAssertEqual(staged.map { $0.digests.keys.sorted() }, [["a/a1.txt", "a/a2.txt"], ["b/b1.txt"]])
            XCTAssertEqual(staged.map(\.before), [["t": 0], ["t": 5]])
            XCTAssertEqual(staged.map(\.after), [["t": 5], ["t": 9]])
            XCTAssertEqual(staged.map { $0.findings.map { "\($0.file ?? "-") \($0.diagnostic.provenance?.line ?? 0)" } },
                           [["a/a1.txt 3", "a/a2.txt 3"], ["b/b1.txt 3"]])
            XCTAssertEqual(staged.map { $0.files.keys.sorted() }, [["a/a1.txt", "a/a2.txt"], ["b/b1.txt"]])
            XCTAssertNil(log.observer, "the log is left as it was")
            try staging.database.close()
        }
    }

    /// Without a cache, staging keeps nothing for an entry.
    func testWithoutACacheStagingKeepsOnlyTheDigests() throws {
        let pipeline = try pipeline()
        let staging = try StagingArea(url: temporaryDirectory.appendingPathComponent("staging.sqlite"), pipeline: pipeline)
        let staged = try staging.stage(pipeline.sources[0], log: DiagnosticLog())
        XCTAssertEqual(staged.digests.keys.sorted(), ["a/a1.txt", "a/a2.txt"])
        XCTAssertTrue(staged.findings.isEmpty && staged.files.isEmpty && staged.before.isEmpty)
        try staging.database.close()
    }
}
