import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The key under which the build cache keeps a full-text index (`FullTextCache.key`) changes with everything that
/// decides the rows it indexes, and only with that.
final class FullTextCacheTests: KilnTestCase {
    private func manifest(tokenize: String = "", mapping: String = "name") -> String {
        """
        { bundle: "keys", schemaVersion: 1,
          tables: [{ name: "place", columns: [{ name: "name", type: "text" }, { name: "code", type: "text" }], primaryKey: ["code"],
                     fullText: { name: "place_search", columns: ["name"], unindexed: ["code"]\(tokenize) } },
                   { name: "other", columns: [{ name: "text", type: "text" }] },
                   { name: "named", query: "SELECT name FROM place", columns: [{ name: "name", type: "text" }],
                     fullText: { name: "named_search", columns: ["name"] } }],
          sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["name", "code"] }, into: "place",
                      columns: { name: "\(mapping)", code: "code" } },
                    { name: "others", format: "delimited", path: "rows.txt", options: { fields: ["text"] }, into: "other",
                      columns: { text: "text" } }] }
        """
    }

    private func key(_ pipeline: CompiledPipeline, _ digests: [String: String], table: String = "place") throws -> String? {
        let cache = FullTextCache(cache: BuildCache(output: temporaryDirectory.appendingPathComponent("out/keys.sqlite")),
                                  pipeline: pipeline, examplesPerCode: 100)
        let spec = try XCTUnwrap(pipeline.manifest.tables.first { $0.name == table })
        return cache.key(try XCTUnwrap(spec.fullText), of: spec, digests: digests)
    }

    func testTheKeyFollowsTheFilesTheSourcesAndTheDeclarationsOfTheIndexedRows() throws {
        let base = try loadPipeline(manifest: manifest(), rows: "Άγιος Ανδρέας;1\n")
        let digests = ["rows.txt": String(repeating: "a", count: 64)]
        let first = try XCTUnwrap(try key(base, digests))
        XCTAssertEqual(try key(try loadPipeline(manifest: manifest(), rows: "Άγιος Ανδρέας;1\n"), digests), first,
                       "the same manifest and files give the same key in another load")
        XCTAssertNotEqual(try key(base, ["rows.txt": String(repeating: "b", count: 64)]), first, "a file's bytes changed")
        XCTAssertNil(try key(base, [:]), "a file without a digest has no key")
        XCTAssertNotEqual(try key(try loadPipeline(manifest: manifest(mapping: "code"), rows: "x;1\n"), digests), first,
                          "the source's mapping changed")
        XCTAssertNotEqual(try key(try loadPipeline(manifest: manifest(tokenize: #", tokenize: "unicode61 remove_diacritics 0""#), rows: "x;1\n"), digests),
                          first, "the full-text declaration changed")
        XCTAssertNil(try key(base, digests, table: "named"), "a query table's rows come from SQL: never kept")
    }
}
