import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The rule of `BundleReadLimit`: `seconds` per 100 MB of the files a connection reads, and at least `seconds`; a
/// statement stopped by it is one sentence, any other failure is left as it is.
final class BundleReadLimitTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-read-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// A sparse file of `bytes` bytes: its size is what the rule reads.
    private func file(_ name: String, bytes: UInt64) throws -> URL {
        let url = folder.appendingPathComponent(name)
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: bytes)
        try handle.close()
        return url
    }

    func testTheBudgetIsTheSecondsPerHundredMegabytesAndAtLeastTheSeconds() throws {
        let limit = BundleReadLimit(seconds: 60, origin: "the default", remedy: "")
        XCTAssertEqual(limit.budget(for: [try file("small", bytes: 160_000)]), 60)
        XCTAssertEqual(limit.budget(for: [try file("large", bytes: 250_000_000)]), 150)
        // The 1.58 GB pair of scripts/bench-patch 1000: 1899 s; `kiln diff` of it took 147 s (debug build, loaded machine).
        XCTAssertEqual(limit.budget(for: [try file("old", bytes: 1_582_350_336), try file("new", bytes: 1_583_050_752)]), 60 * 3_165_401_088 / 100_000_000, accuracy: 1e-6)
    }

    func testOnlyAStatementTheLimitStoppedBecomesItsSentence() throws {
        let limit = BundleReadLimit(seconds: 0.2, origin: "--sql-seconds 0.2", remedy: "give a larger --sql-seconds")
        let database = try Database(path: ":memory:")
        database.limitLifetime(toSeconds: 0.2)
        let endless = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c"
        XCTAssertThrowsError(try database.rows(endless)) { error in
            let url = URL(fileURLWithPath: "missing.sqlite")
            XCTAssertEqual(limit.stopped(error, reading: [url])?.description,
                           "reading missing.sqlite was stopped after 0.2 s (SQLite was running: \(endless)): a bundle Kiln did not build is read for at most 0.2 s per 100 MB of it (--sql-seconds 0.2), so that a view, trigger or generated column that never ends cannot hang the command; nothing was written. If the bundle is sound but large, or the machine slow, give a larger --sql-seconds")
            XCTAssertTrue(BundleReadLimit.isStop(limit.stopped(error, reading: [url])!))
        }
        // The limit holds for the connection's life: the next statement stops at once, a failure of another kind is not one.
        XCTAssertThrowsError(try database.rows("SELECT 1 FROM missing")) { error in
            XCTAssertNil(limit.stopped(error, reading: []))
            XCTAssertFalse(BundleReadLimit.isStop(error))
        }
    }
}
