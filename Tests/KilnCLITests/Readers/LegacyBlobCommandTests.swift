import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// BLOBs of a legacy database or script (issue 31, item 3): they arrive in the bundle's `blob` columns as the same
/// bytes (before, `X'DEADBEEF0001'` shipped as the 24 characters of its hexadecimal text), and a BLOB for a column
/// of another type is the error `value.blob`, not silent text. The oracle is Python's sqlite3, reading the legacy
/// database and the bundle.
final class LegacyBlobCommandTests: CLITestCase {
    private func pipeline(input: String, payloadType: String = "blob") throws {
        try writePipeline("p", manifest: """
            { bundle: "blobs", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "integer" }, { name: "payload", type: "\(payloadType)" }, { name: "label", type: "text" }] }],
              sources: [{ name: "s", format: "sqlite", path: "\(input)",
                          options: { query: "SELECT id, payload, label FROM m ORDER BY id", fields: ["id", "payload", "label"] },
                          into: "t", columns: { id: "id", payload: "payload", label: "label" } }] }
            """)
    }

    /// What Python's sqlite3 reads from `query` in the database at `path`: each row's values, a blob as
    /// `blob:<length>:<hex>`, a text as `text:<value>`.
    private func python(_ path: String, _ query: String) throws -> [String] {
        try PythonOracle.lines(ofProgram: """
            import sqlite3, sys
            for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
                print("|".join("blob:%d:%s" % (len(v), v.hex()) if isinstance(v, bytes) else "%s:%s" % (type(v).__name__, v) for v in row))
            """, [file(path).path, query])
    }

    /// A legacy database Python writes: blobs with NUL and 0xFF bytes, one of 100 000 random bytes, a text.
    private func writeLegacyDatabase() throws {
        _ = try PythonOracle.lines(ofProgram: """
            import sqlite3, sys, random
            generator = random.Random(31)
            c = sqlite3.connect(sys.argv[1])
            c.execute("CREATE TABLE m (id INTEGER, payload BLOB, label TEXT)")
            c.executemany("INSERT INTO m VALUES (?, ?, ?)", [
                (1, bytes.fromhex("deadbeef0001"), "x"),
                (2, bytes([0, 255, 0, 10, 13]), "nul"),
                (3, bytes(generator.getrandbits(8) for _ in range(100000)), "big"),
                (4, "plain text", "text in a blob column"),
                (5, None, "null"),
                (6, b"", "empty"),
            ])
            c.commit()
            """, [file("p/legacy.sqlite").path])
    }

    func testBlobsOfADatabaseFileArriveAsTheSameBytes() throws {
        try pipeline(input: "legacy.sqlite")
        try writeLegacyDatabase()
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let legacy = try python("p/legacy.sqlite", "SELECT id, payload, label FROM m ORDER BY id")
        let bundle = try python("build/blobs.sqlite", "SELECT id, payload, label FROM t ORDER BY id")
        XCTAssertEqual(legacy.count, 6)
        // A text in a blob column is stored as its UTF-8 bytes (Kiln's rule for text into blob), the rest as read.
        XCTAssertEqual(bundle.filter { !$0.hasPrefix("int:4|") }, legacy.filter { !$0.hasPrefix("int:4|") })
        XCTAssertEqual(bundle.first { $0.hasPrefix("int:4|") }, "int:4|blob:10:\(Array("plain text".utf8).map { String(format: "%02x", $0) }.joined())|str:text in a blob column")
        XCTAssertTrue(bundle[0].contains("blob:6:deadbeef0001"), bundle[0])
    }

    func testBlobsOfALegacyScriptArriveAsTheSameBytes() throws {
        try pipeline(input: "legacy.sql")
        try """
            CREATE TABLE m (id INTEGER, payload BLOB, label TEXT);
            INSERT INTO m VALUES (1, X'DEADBEEF0001', 'x');
            INSERT INTO m VALUES (2, x'00ff000a0d', 'nul'), (3, zeroblob(3), 'zeros');

            """.write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        // The oracle runs the same script in Python's sqlite3.
        let script = try String(contentsOf: file("p/legacy.sql"), encoding: .utf8)
        let expected = try PythonOracle.lines(ofProgram: """
            import sqlite3, sys
            c = sqlite3.connect(":memory:")
            c.executescript(sys.argv[1])
            for row in c.execute("SELECT id, payload, label FROM m ORDER BY id"):
                print("|".join("blob:%d:%s" % (len(v), v.hex()) if isinstance(v, bytes) else "%s:%s" % (type(v).__name__, v) for v in row))
            """, [script])
        XCTAssertEqual(try python("build/blobs.sqlite", "SELECT id, payload, label FROM t ORDER BY id"), expected)
        XCTAssertEqual(expected.first, "int:1|blob:6:deadbeef0001|str:x")
    }

    func testABlobForATextColumnIsAnErrorAndNothingShips() throws {
        try pipeline(input: "legacy.sql", payloadType: "text")
        try "CREATE TABLE m (id INTEGER, payload BLOB, label TEXT);\nINSERT INTO m VALUES (1, X'DEADBEEF0001', 'x');\nINSERT INTO m VALUES (2, 'text', 'y');\n"
            .write(to: file("p/legacy.sql"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("t.payload: the source gives a BLOB of 6 bytes (x'deadbeef0001'), which a text column cannot hold; declare the column blob (staged as its hexadecimal text)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("value.blob"), run.stderr)
        XCTAssertEqual(run.stderr.components(separatedBy: "value.blob").count, 2, "only the BLOB is a finding: \(run.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/blobs.sqlite").path), "nothing shipped")
    }
}
