import Foundation
import Synchronization
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The staging file's owner (`StagingDatabase`): a write phase waits for every read lease to be returned, a lease
/// asked for during a write phase waits for its end, a lease reads only, the owner's connection writes only inside a
/// write phase, and a lease dropped on an error path is returned all the same.
final class StagingDatabaseTests: KilnTestCase {
    /// A staging file holding `t(n)` with one row.
    private func staging() throws -> StagingDatabase {
        let staging = try StagingDatabase(url: temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString).sqlite"))
        try staging.write { try $0.execute("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)") }
        return staging
    }

    /// A connection of another thread's kind, attaching staging under a lease.
    private func reader() throws -> Database {
        try Database(path: temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString).sqlite").path, readOnlyAttachments: true)
    }

    func testAWritePhaseWaitsUntilEveryLeaseIsReturned() throws {
        let staging = try staging()
        let lease = staging.lease()
        let connection = try reader()
        try lease.attach(to: connection, as: "staging")
        XCTAssertEqual(try connection.rows("SELECT n FROM staging.t").first?.values.first?.number, 1)
        let phaseRan = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? staging.write { try $0.execute("INSERT INTO t VALUES (2)") }
            phaseRan.signal()
        }
        writer.start()
        XCTAssertEqual(phaseRan.wait(timeout: .now() + 0.5), .timedOut, "the write phase started while a lease was out")
        XCTAssertFalse(staging.isWriting)
        try lease.release(detaching: "staging", from: connection)
        XCTAssertEqual(phaseRan.wait(timeout: .now() + 10), .success, "the write phase started once the lease was returned")
        XCTAssertEqual(try staging.database.rows("SELECT count(*) FROM t").first?.values.first?.number, 2)
    }

    func testALeaseAskedForDuringAWritePhaseWaitsForItsEnd() throws {
        let staging = try staging()
        let granted = DispatchSemaphore(value: 0)
        let seen = ResultBox()
        try staging.write { database in
            let leaseTaker = Thread {
                let lease = staging.lease()
                // What the lease sees: the row the phase wrote, committed.
                let count = Result { () throws -> Double? in
                    let connection = try Database(path: ":memory:", readOnlyAttachments: true)
                    try lease.attach(to: connection, as: "staging")
                    defer { try? lease.release(detaching: "staging", from: connection) }
                    return try connection.rows("SELECT count(*) FROM staging.t").first?.values.first?.number
                }
                seen.set(count.map { $0 ?? -1 }.mapError { StringError(text: "\($0)") })
                granted.signal()
            }
            leaseTaker.start()
            XCTAssertEqual(granted.wait(timeout: .now() + 0.5), .timedOut, "a lease was handed out during a write phase")
            XCTAssertEqual(staging.outstandingLeases, 0)
            try database.execute("INSERT INTO t VALUES (2)")
        }
        XCTAssertEqual(granted.wait(timeout: .now() + 10), .success, "the lease was handed out once the phase ended")
        XCTAssertEqual(seen.value, .success(2))
        XCTAssertEqual(staging.outstandingLeases, 0)
    }

    func testALeaseReadsOnlyAndTheOwnerWritesOnlyInAWritePhase() throws {
        let staging = try staging()
        let connection = try reader()
        let lease = staging.lease()
        try lease.attach(to: connection, as: "staging")
        XCTAssertThrowsError(try connection.execute("INSERT INTO staging.t VALUES (3)")) { error in
            XCTAssertEqual(((error as? SQLiteError)?.code ?? 0) & 0xff, 8, "SQLITE_READONLY: \(error)")
        }
        try lease.release(detaching: "staging", from: connection)
        // Outside a write phase the owner's connection is query_only: a write fails at once instead of racing a reader.
        XCTAssertThrowsError(try staging.database.execute("INSERT INTO t VALUES (3)")) { error in
            XCTAssertEqual(((error as? SQLiteError)?.code ?? 0) & 0xff, 8, "SQLITE_READONLY: \(error)")
        }
        try staging.write { try $0.execute("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try staging.database.rows("SELECT count(*) FROM t").first?.values.first?.number, 2)
    }

    func testALeaseDroppedWithoutReleaseIsReturned() throws {
        let staging = try staging()
        func failingRead() throws {
            let lease = staging.lease()
            let connection = try reader()
            try lease.attach(to: connection, as: "staging")
            _ = try connection.rows("SELECT missing FROM staging.t")
        }
        XCTAssertThrowsError(try failingRead())
        XCTAssertEqual(staging.outstandingLeases, 0)
        // And the next write phase does not wait for it.
        try staging.write { try $0.execute("INSERT INTO t VALUES (2)") }
        XCTAssertEqual(try staging.database.rows("SELECT count(*) FROM t").first?.values.first?.number, 2)
    }

    func testAFileNameWithURICharactersIsAttached() throws {
        let folder = temporaryDirectory.appendingPathComponent("a ?#%'é")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staging = try StagingDatabase(url: folder.appendingPathComponent("staging?x=1#y.sqlite"))
        try staging.write { try $0.execute("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (7)") }
        let connection = try reader()
        let lease = staging.lease()
        try lease.attach(to: connection, as: "staging")
        XCTAssertEqual(try connection.rows("SELECT n FROM staging.t").first?.values.first?.number, 7)
        try lease.release(detaching: "staging", from: connection)
    }
}

/// A result set by one thread and read by the test's.
private final class ResultBox: Sendable {
    private let stored = Mutex<Result<Double, StringError>?>(nil)

    func set(_ result: Result<Double, StringError>) {
        stored.withLock { $0 = result }
    }

    var value: Result<Double, StringError>? { stored.withLock { $0 } }
}

/// An error's description, so that results compare.
private struct StringError: Error, Equatable {
    let text: String
}
