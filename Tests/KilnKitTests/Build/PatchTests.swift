import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The SQL patch's literals, read back by SQLite itself, and the patch's pieces that need no bundle.
final class PatchTests: XCTestCase {
    /// SQLite's value and storage class for `literal`.
    private func evaluate(_ literal: String, in database: Database) throws -> (SQLValue, String) {
        let row = try XCTUnwrap(database.rows("SELECT \(literal), typeof(\(literal))").first)
        return (row.values[0], row.values[1].textValue ?? "")
    }

    func testEveryRealReadsBackWithTheSameBits() throws {
        let database = try Database(path: ":memory:")
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 0.5, -0.25, 38.2461, 21.734_512_345_678_9, 1e-300, 5e-324, -2.2250738585072014e-308,
                                1e20, -9.007199254740993e15, 1.7976931348623157e308, .infinity, -.infinity, 123456789012345.67, 0.1, 2.5e-5]
        for _ in 0..<3000 { values.append(Double(bitPattern: generator.next())) }
        for _ in 0..<2000 { values.append(Double.random(in: -180...180)) }
        for value in values where !value.isNaN {
            let literal = SQLLiteral.of(.real(value))
            XCTAssertFalse(literal.contains("\n"))
            let (read, type) = try evaluate(literal, in: database)
            XCTAssertEqual(type, "real", literal)
            guard case .real(let back) = read else { return XCTFail("\(literal) read back as \(read)") }
            XCTAssertEqual(back.bitPattern, value.bitPattern, "\(value) written as \(literal)")
        }
        XCTAssertEqual(SQLLiteral.of(.real(0.5)), "0.5", "a decimal that is exactly the double stays a decimal")
        XCTAssertEqual(SQLLiteral.of(.real(38.0)), "38.0")
    }

    func testIntegersTextAndBlobsReadBackExactly() throws {
        let database = try Database(path: ":memory:")
        let values: [SQLValue] = [.integer(.min), .integer(.max), .integer(-1), .integer(0), .null,
                                  .text("it's \"quoted\""), .text("two\nlines\r\nand a NUL \0 here"), .text("Πανεπιστήμιο ✓"), .text(""),
                                  .blob([]), .blob([0, 1, 0xfe, 0xff, 39])]
        for value in values {
            let literal = SQLLiteral.of(value)
            XCTAssertFalse(literal.contains("\n") || literal.contains("\r"), literal)
            let (read, type) = try evaluate(literal, in: database)
            if case .text(let text) = value {
                // Compared as bytes: a NUL ends text read through the C string of sqlite3_column_text.
                let hex = try database.rows("SELECT hex(\(literal))").first?.values.first?.textValue
                XCTAssertEqual(hex, Array(text.utf8).map { String(format: "%02X", $0) }.joined(), literal)
                XCTAssertEqual(type, "text", literal)
            } else {
                XCTAssertEqual(read, value, literal)
            }
        }
    }

    func testSizeLimits() throws {
        XCTAssertEqual(try PatchSizeLimit(parsing: "50%", named: "--max-size").bytes(of: 1001), 500)
        XCTAssertEqual(try PatchSizeLimit(parsing: "250000", named: "--max-size").bytes(of: 1001), 250000)
        for bad in ["0", "-5", "150%", "half", ""] {
            XCTAssertThrowsError(try PatchSizeLimit(parsing: bad, named: "--max-size"), bad)
        }
    }

    func testAChangesetRefusesRowsThatAreNotAsItExpectsAndChangesNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-changeset-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = folder.appendingPathComponent("old.sqlite").path, new = folder.appendingPathComponent("new.sqlite").path
        for (path, rows) in [(old, "(1, 'a'), (2, 'b')"), (new, "(1, 'a'), (2, 'B'), (3, 'c')")] {
            let database = try Database(path: path)
            try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES \(rows)")
            try database.close()
        }
        let database = try Database(path: new)
        try database.execute("ATTACH DATABASE \(quoteLiteral(old)) AS old")
        let changeset = try SQLiteChangeset.diff(database, from: "old", tables: ["t"])
        try database.close()
        let target = try Database(path: old)
        try SQLiteChangeset.apply(changeset, to: target)
        XCTAssertEqual(try target.rows("SELECT v FROM t ORDER BY id").map { $0.values[0] }, [.text("a"), .text("B"), .text("c")])
        try target.execute("UPDATE t SET v = 'x' WHERE id = 1")
        let before = try target.rows("SELECT * FROM t ORDER BY id").map(\.values)
        XCTAssertThrowsError(try SQLiteChangeset.apply(changeset, to: target)) { error in
            XCTAssertNotNil(error as? SQLiteChangeset.Conflicts)
        }
        XCTAssertEqual(try target.rows("SELECT * FROM t ORDER BY id").map(\.values), before)
        XCTAssertThrowsError(try SQLiteChangeset.apply(Array(changeset.prefix(changeset.count / 2)), to: target))
        XCTAssertEqual(try target.rows("SELECT * FROM t ORDER BY id").map(\.values), before)
    }
}

/// What `BundlePatch.make` says besides the files, and a patch read from standard input.
final class PatchSummaryTests: KilnTestCase {
    /// Two bundles of a table with a full-text index, two of its 200 rows renamed in the second, and their patch.
    private func patchedPair() throws -> (old: URL, new: URL, update: UpdateManifest, shadows: [String: Int]) {
        let manifest = """
            { bundle: "p", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "name", type: "text" }, { name: "n", type: "integer" }], primaryKey: ["n"],
                         fullText: { name: "t_search", columns: ["name"] } }],
              sources: [{ name: "rows", format: "delimited", path: "rows.txt", options: { fields: ["name", "n"] }, into: "t",
                          columns: { name: "name", n: "n" } }] }
            """
        let rows = (1...200).map { "stop number \($0) street;\($0)" }
        let old = temporaryDirectory.appendingPathComponent("old.sqlite"), new = temporaryDirectory.appendingPathComponent("new.sqlite")
        XCTAssertTrue(try Builder.build(try loadPipeline(manifest: manifest, rows: rows.joined(separator: "\n")), options: BuildOptions(output: old)).built)
        var changed = rows
        changed[0] = "renamed stop;1"
        changed[1] = "other renamed stop;2"
        XCTAssertTrue(try Builder.build(try loadPipeline(manifest: manifest, rows: changed.joined(separator: "\n")), options: BuildOptions(output: new)).built)
        let (update, noChangeset, shadows) = try BundlePatch.make(old: old, new: new, out: temporaryDirectory.appendingPathComponent("update"), userFilled: [])
        XCTAssertNil(noChangeset)
        return (old, new, update, shadows)
    }

    /// The shares of the changeset `make` reports are the full-text index's shadow tables that changed, each smaller
    /// than the changeset, which also holds the table's own rows.
    func testTheChangesetsShadowTableBytesAreReportedByTable() throws {
        let (_, _, update, shadows) = try patchedPair()
        let changeset = try XCTUnwrap(update.patches.first { $0.kind == "changeset" })
        XCTAssertFalse(shadows.isEmpty)
        XCTAssertTrue(shadows.keys.allSatisfy { $0.hasPrefix("t_search_") }, "\(shadows)")
        XCTAssertLessThan(shadows.values.reduce(0, +), changeset.bytes)
    }

    /// A patch from standard input has no name: it is the listed patch with its SHA-256, and messages call it so.
    func testAPatchFromStandardInputIsTheListedOneWithItsDigest() throws {
        let (old, _, update, _) = try patchedPair()
        let folder = temporaryDirectory.appendingPathComponent("update")
        let piped = temporaryDirectory.appendingPathComponent("standard-input")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("patch.changeset"), to: piped)
        let outcome = try PatchApplier.apply(bundle: old, patch: piped, manifest: folder.appendingPathComponent("update.json"), standardInput: true)
        XCTAssertEqual(outcome.kind, "changeset")
        XCTAssertEqual(outcome.to, update.to.digest)
        try Data("not a patch".utf8).write(to: piped)
        XCTAssertThrowsError(try PatchApplier.apply(bundle: old, patch: piped, manifest: folder.appendingPathComponent("update.json"), standardInput: true)) { error in
            XCTAssertTrue("\(error)".contains("standard input is none of the patches"), "\(error)")
        }
    }

    /// A patch applied a second time is refused with the digest it starts from as the expected value and the bundle's
    /// (the one it gives) as the one found.
    func testARefusedPatchCarriesTheExpectedAndTheFoundDigest() throws {
        let (old, _, update, _) = try patchedPair()
        let folder = temporaryDirectory.appendingPathComponent("update")
        let patch = folder.appendingPathComponent("patch.changeset")
        XCTAssertEqual(try PatchApplier.apply(bundle: old, patch: patch).to, update.to.digest)
        XCTAssertThrowsError(try PatchApplier.apply(bundle: old, patch: patch)) { error in
            guard case KilnError.validation(let failure) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.file, old.relativePath)
            XCTAssertEqual(failure.expected, update.from.digest)
            XCTAssertEqual(failure.found, update.to.digest)
            XCTAssertTrue(failure.message.hasSuffix(": the patch is already applied; nothing was changed"), failure.message)
        }
    }
}
