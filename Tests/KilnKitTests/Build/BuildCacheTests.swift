import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `BuildCache`: what its key depends on, when a record is trusted, and the outcome a reused build gives.
final class BuildCacheTests: KilnTestCase {
    private let manifest = """
        { bundle: "cached", schemaVersion: 1,
          tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
          sources: [{ name: "s", format: "delimited", path: "rows.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
        """

    private var output: URL { temporaryDirectory.appendingPathComponent("out/cached.sqlite") }

    func testTheKeyChangesWithTheManifestAnInputDigestAndTheOutput() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a\n")
        let report = BuildOptions.defaultReport(for: output)
        let digests = ["rows.txt": String(repeating: "0", count: 64)]
        let key = BuildCache.key(pipeline, output: output, report: report, digests: digests)
        XCTAssertEqual(BuildCache.key(pipeline, output: output, report: report, digests: digests), key)
        XCTAssertNotEqual(BuildCache.key(pipeline, output: output, report: report, digests: ["rows.txt": String(repeating: "1", count: 64)]), key)
        let elsewhere = temporaryDirectory.appendingPathComponent("other/cached.sqlite")
        XCTAssertNotEqual(BuildCache.key(pipeline, output: elsewhere, report: report, digests: digests), key)
        XCTAssertNotEqual(BuildCache.key(pipeline, output: output, report: BuildOptions.defaultReport(for: elsewhere), digests: digests), key)
        let edited = try loadPipeline(manifest: manifest.replacingOccurrences(of: "schemaVersion: 1", with: "schemaVersion: 1 "), rows: "a\n")
        XCTAssertNotEqual(BuildCache.key(edited, output: output, report: report, digests: digests), key, "any byte of the manifest counts")
    }

    func testAReusedBuildGivesTheRecordedOutcome() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a\n\nb\n")
        let first = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(first.built)
        XCTAssertFalse(first.reusedBundle)
        let second = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(second.reusedBundle)
        XCTAssertEqual(second.reusedSources, ["s"])
        XCTAssertEqual(second.tables, first.tables)
        XCTAssertEqual(second.inputs, first.inputs)
        XCTAssertEqual(second.diagnostics, first.diagnostics)
        XCTAssertEqual(try BuildReport(second).json(), try BuildReport(first).json())
        var options = BuildOptions(output: output)
        options.useCache = false
        XCTAssertFalse(try Builder.build(pipeline, options: options).reusedBundle)
    }

    /// A build compared with a baseline is not kept whole, but its sources come from the cache.
    func testABaselineBuildTakesItsSourcesFromTheCache() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a\n\nb\n")
        let first = try Builder.build(pipeline, options: BuildOptions(output: output))
        let baseline = temporaryDirectory.appendingPathComponent("release.sqlite")
        try FileManager.default.copyItem(at: output, to: baseline)
        let compared = try Builder.build(pipeline, options: BuildOptions(output: output, baseline: baseline))
        XCTAssertTrue(compared.built)
        XCTAssertFalse(compared.reusedBundle)
        XCTAssertEqual(compared.reusedSources, ["s"])
        XCTAssertNotNil(compared.comparison)
        XCTAssertEqual(compared.tables, first.tables)
    }

    func testARecordOfAnotherKilnIsNotTrustedAndSaysSo() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "a\n")
        let built = try Builder.build(pipeline, options: BuildOptions(output: output))
        let cache = BuildCache(output: output)
        var record = try JSONDecoder().decode(BuildCacheRecord.self, from: Data(contentsOf: cache.recordURL))
        XCTAssertEqual(record.checksum, try record.computedChecksum())
        record.environment = "kiln 0.0.1; executable 1 1; sqlite 3.0.0; icu 1.0"
        record.checksum = try record.computedChecksum()
        try KilnJSON.encode(record).write(to: cache.recordURL)

        let again = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertFalse(again.reusedBundle)
        XCTAssertEqual(again.diagnostics.filter { $0.code == DiagnosticCode.buildCache.rawValue }.map(\.severity), [.info])
        XCTAssertTrue(again.diagnostics.contains { $0.message.contains("was written by another Kiln or other libraries (kiln 0.0.1;") })
        XCTAssertEqual(again.tables, built.tables)
        guard case .rebuild(nil, _) = cache.lookup(pipeline, output: output, report: again.reportURL) else {
            return XCTFail("the build that found the record untrusted leaves none")
        }
    }

    func testAStampChangesWhenAFileIsRewrittenWithItsSizeAndTimeKept() throws {
        let url = try write("same size\n", to: "stamped.txt")
        let before = try XCTUnwrap(FileStamp(url))
        var status = stat()
        XCTAssertEqual(stat(url.path, &status), 0)
        usleep(20_000)
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: Data("SAME SIZE\n".utf8))
        try handle.close()
        let times = [status.st_atim, status.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, url.path, times, 0), 0)
        let after = try XCTUnwrap(FileStamp(url))
        XCTAssertEqual(after.size, before.size)
        XCTAssertEqual(after.modified, before.modified, "the modification time was set back to the nanosecond")
        XCTAssertNotEqual(after, before, "the status-change time moved")
        XCTAssertNil(FileStamp(temporaryDirectory.appendingPathComponent("missing")))
    }
}
