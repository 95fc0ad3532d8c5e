import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnBuild
@testable import KilnReaders

/// `KilnError`'s kinds carry what went wrong as data: the file, the operation and the system's `errno` of an I/O
/// failure, the file, expected and found values of a validation failure; decisions and findings are made from them.
final class KilnErrorTests: KilnTestCase {
    /// What `body` threw, as `match` takes it apart; a test failure when it threw nothing or another kind (`kind`).
    private func thrown<Failure>(_ kind: String, _ body: () throws -> Void, _ match: (Error) -> Failure?,
                                 file: StaticString, line: UInt) -> Failure? {
        do {
            try body()
            XCTFail("no error", file: file, line: line)
        } catch {
            if let failure = match(error) { return failure }
            XCTFail("not \(kind): \(error)", file: file, line: line)
        }
        return nil
    }

    private func ioFailure(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> IOFailure? {
        thrown("an I/O error", body, { if case KilnError.io(let failure) = $0 { failure } else { nil } }, file: file, line: line)
    }

    private func validationFailure(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> ValidationFailure? {
        thrown("a validation error", body, { if case KilnError.validation(let failure) = $0 { failure } else { nil } }, file: file, line: line)
    }

    func testAFileThatCannotBeReadCarriesItsPathTheReadAndTheSystemsErrno() throws {
        let missing = temporaryDirectory.appendingPathComponent("absent.txt")
        let absent = ioFailure { _ = try LineReader(url: missing) }
        XCTAssertEqual(absent?.path, missing.path)
        XCTAssertEqual(absent?.operation, .read)
        XCTAssertEqual(absent?.errno, ENOENT)
        XCTAssertEqual(absent?.heldElsewhere, false)
        let folder = ioFailure { _ = try FileDigest.sha256(of: self.temporaryDirectory) }
        XCTAssertEqual(folder?.path, temporaryDirectory.path)
        XCTAssertEqual(folder?.operation, .read)
        XCTAssertEqual(folder?.errno, EISDIR)
    }

    func testAWriteTheFolderRefusesCarriesTheDestinationTheWriteAndTheSystemsErrno() throws {
        // A folder this process may not write: read-only by its mode, or (root writes through modes) sysfs, which
        // takes no new file from anyone.
        var folder = temporaryDirectory.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        if geteuid() == 0 { folder = URL(fileURLWithPath: "/sys") }
        let destination = folder.appendingPathComponent("report.json")
        let refused = ioFailure { try AtomicFile.write(Data("{}".utf8), to: destination) }
        XCTAssertEqual(refused?.path, destination.path)
        XCTAssertEqual(refused?.operation, .write)
        XCTAssertEqual(refused?.errno, EACCES)
        XCTAssertEqual(refused?.message.hasPrefix("cannot write \(destination.path): "), true, refused?.message ?? "")
    }

    func testAFailedRenameCarriesTheDestinationAndTheSystemsErrno() throws {
        let destination = temporaryDirectory.appendingPathComponent("out.json")
        let failure = ioFailure { try FileSync.move(self.temporaryDirectory.appendingPathComponent("never-written.tmp"), to: destination) }
        XCTAssertEqual(failure?.path, destination.path)
        XCTAssertEqual(failure?.operation, .rename)
        XCTAssertEqual(failure?.errno, ENOENT)
        XCTAssertEqual(failure?.message, "cannot move the new file to \(destination.path): \(SystemError.message(ENOENT))")
    }

    func testALockAnotherHolderHasIsSaidByItsData() throws {
        let url = temporaryDirectory.appendingPathComponent(".app.sqlite.lock")
        let held = try BuildLock(url, timeout: 0)
        defer { held.release() }
        let failure = ioFailure { _ = try BuildLock(url, timeout: 0) }
        XCTAssertEqual(failure?.path, url.path)
        XCTAssertEqual(failure?.operation, .lock)
        XCTAssertEqual(failure?.heldElsewhere, true)
        XCTAssertEqual(failure?.errno, EWOULDBLOCK)
        // A bundle another process holds is told by the flag, not by the words of its sentence.
        let bundle = temporaryDirectory.appendingPathComponent("app.sqlite")
        guard case .io(let locked) = BundleSideFiles.lockedError(bundle) else { return XCTFail("not an I/O error") }
        XCTAssertEqual(locked.path, bundle.path)
        XCTAssertEqual(locked.operation, .lock)
        XCTAssertTrue(BundleSideFiles.isLocked(BundleSideFiles.lockedError(bundle)))
        XCTAssertFalse(BundleSideFiles.isLocked(.io(BundleSideFiles.lockedError(bundle).description)))
    }

    func testAReadTheTimeLimitStoppedIsToldByItsCodeNotItsWords() throws {
        let bundle = temporaryDirectory.appendingPathComponent("app.sqlite")
        let interrupted = SQLiteError(code: 9 /* SQLITE_INTERRUPT */, message: "interrupted", sql: "SELECT 1")
        let stopped = try XCTUnwrap(BundleReadLimit.standard.stopped(interrupted, reading: [bundle]))
        XCTAssertTrue(BundleReadLimit.isStop(stopped))
        guard case .validation(let failure) = stopped else { return XCTFail("\(stopped)") }
        XCTAssertEqual(failure.code, DiagnosticCode.sqlTimeLimit)
        XCTAssertFalse(BundleReadLimit.isStop(KilnError.validation(stopped.description)))
        XCTAssertNil(BundleReadLimit.standard.stopped(SQLiteError(code: 10 /* SQLITE_IOERR */, message: "disk I/O error", sql: nil), reading: [bundle]))
    }

    func testATableSQLiteDoesNotFindIsReadFromItsError() throws {
        let database = try Database(path: ":memory:", mode: .readWrite)
        try database.execute("CREATE TABLE present (v)")
        do {
            _ = try database.rows("SELECT v FROM absent")
            XCTFail("SQLite found the table")
        } catch let error as SQLiteError {
            XCTAssertEqual(error.missingTable, "absent")
        }
        do {
            _ = try database.rows("SELECT nothing FROM present")
            XCTFail("SQLite found the column")
        } catch let error as SQLiteError {
            XCTAssertNil(error.missingTable, error.message)
        }
    }

    func testAFileThatIsNoBundleCarriesItsNameAndWhatWasExpected() throws {
        let text = try write("name;code\n", to: "text.sqlite")
        let header = validationFailure { _ = try BundleFile.open(text) }
        XCTAssertEqual(header?.file, text.relativePath)
        XCTAssertEqual(header?.expected, "the SQLite header")
        let database = try Database(path: temporaryDirectory.appendingPathComponent("whole.sqlite").path)
        try database.execute("CREATE TABLE t (v); INSERT INTO t VALUES (randomblob(20000))")
        try database.close()
        let whole = try Data(contentsOf: temporaryDirectory.appendingPathComponent("whole.sqlite"))
        let half = try write("", to: "half.sqlite")
        try whole.prefix(whole.count / 2).write(to: half)
        let truncated = validationFailure { _ = try BundleFile.open(half) }
        XCTAssertEqual(truncated?.file, half.relativePath)
        XCTAssertEqual(truncated?.expected, "\(whole.count) bytes")
        XCTAssertEqual(truncated?.found, "\(whole.count / 2) bytes")
    }

    func testAFindingMadeFromAFailureTakesItsFileAndLineFromTheData() throws {
        let failure = ValidationFailure("the row is not what the header promised", file: "raw/p/stops.csv", line: 14, column: 3,
                                        expected: "4 fields", found: "3 fields")
        let finding = Diagnostic(code: .bundle, failure)
        XCTAssertEqual(finding.message, failure.message)
        XCTAssertEqual(finding.provenance, Provenance(file: "raw/p/stops.csv", line: 14, column: 3))
        XCTAssertNil(Diagnostic(code: .bundle, ValidationFailure("no file")).provenance)
        // kiln check's finding for a file that is no bundle is placed by the failure's file.
        let text = try write("name;code\n", to: "text.sqlite")
        let pipeline = try write("{ bundle: \"b\", schemaVersion: 1, tables: [{ name: \"t\", columns: [{ name: \"v\", type: \"text\" }] }], sources: [] }",
                                 to: "p/kiln.json5")
        let report = try BundleChecker.check(text, manifestPath: pipeline.deletingLastPathComponent().path)
        let findings = report.results.flatMap(\.findings)
        XCTAssertEqual(findings.map(\.provenance), [Provenance(file: text.relativePath)])
        XCTAssertEqual(findings.map(\.message), ["\(text.relativePath) is not an SQLite database (it does not start with the SQLite header)"])
    }

    func testAFullDiskIsAWriteFailureWithSQLitesErrorAndTheFolder() {
        let full = SQLiteError(code: 13 /* SQLITE_FULL */, message: "database or disk is full", sql: nil)
        let failure = TemporaryFolder.storageFailure(full, writing: "b.sqlite", in: temporaryDirectory, environment: ["TMPDIR": temporaryDirectory.path])
        XCTAssertEqual(failure.operation, IOOperation.write)
        XCTAssertEqual(failure.path, temporaryDirectory.path)
        XCTAssertEqual(failure.sqlite?.code, 13)
        XCTAssertEqual(failure.message, "cannot write b.sqlite: \(full.message)")
    }
}
