import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `BundleSideFiles.refuseIfHeld`, the one test every command runs before it reads or replaces a bundle: a bundle
/// another process (Python's sqlite3 here) reads, writes or has open in WAL mode is refused.
final class BundleHoldTests: KilnTestCase {
    /// Starts Python holding `path` as `sql` leaves it; returns the process once Python says it holds it.
    private func pythonHolding(_ path: String, _ sql: String) throws -> (Process, FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let program = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            for statement in sys.argv[2].split(";"):
                c.execute(statement)
            print("held", flush=True)
            sys.stdin.readline()
            """
        process.arguments = ["python3", "-c", program, path, sql]
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertTrue(line.hasPrefix("held"), line)
        return (process, input.fileHandleForWriting)
    }

    private func bundle() throws -> URL {
        let url = temporaryDirectory.appendingPathComponent("b.sqlite")
        let database = try Database(path: url.path)
        try database.execute("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a')")
        try database.close()
        return url
    }

    func testABundleAnotherProcessHoldsIsRefusedAndAFreeOneIsNot() throws {
        let url = try bundle()
        XCTAssertNoThrow(try BundleSideFiles.refuseIfHeld(url))
        for sql in ["BEGIN EXCLUSIVE", "BEGIN IMMEDIATE", "BEGIN; INSERT INTO t VALUES ('b')",
                    // A browser that switched to WAL mode and read the bundle: idle, it still has the log open.
                    "PRAGMA journal_mode = WAL; SELECT * FROM t",
                    "PRAGMA journal_mode = WAL; BEGIN; INSERT INTO t VALUES ('b')"] {
            let (process, stdin) = try pythonHolding(url.path, sql)
            XCTAssertThrowsError(try BundleSideFiles.refuseIfHeld(url), sql) { error in
                XCTAssertTrue(BundleSideFiles.isLocked(error as! KilnError), "\(sql): \(error)")
            }
            XCTAssertThrowsError(try BundleFile.open(url), sql)
            stdin.write(Data("\n".utf8))
            process.waitUntilExit()
            XCTAssertNoThrow(try BundleSideFiles.refuseIfHeld(url), "after \(sql)")
        }
        // A connection with no transaction in rollback mode holds nothing, a reader only a shared lock: reading and
        // replacing are safe (the reader keeps the old file), and parallel readers do not stop each other.
        for sql in ["PRAGMA journal_mode = DELETE", "BEGIN; SELECT * FROM t"] {
            let (process, stdin) = try pythonHolding(url.path, sql)
            XCTAssertNoThrow(try BundleSideFiles.refuseIfHeld(url), sql)
            stdin.write(Data("\n".utf8))
            process.waitUntilExit()
        }
    }

    func testAFileWithoutLocksOrThatDoesNotExistIsNotHeld() throws {
        XCTAssertFalse(try AdvisoryLocks.heldElsewhere(temporaryDirectory.appendingPathComponent("none").path, ranges: [(0, 1)]))
        let url = try bundle()
        XCTAssertFalse(try AdvisoryLocks.heldElsewhere(url.path, ranges: [(0, 0)]))
    }
}
