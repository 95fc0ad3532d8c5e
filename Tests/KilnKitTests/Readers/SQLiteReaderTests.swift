import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild
import KilnTestSupport

/// The `sqlite` reader: legacy scripts and database files in a sandbox, the query's rows as records, and a finding at
/// its line for every statement that fails or is refused.
final class SQLiteReaderTests: KilnTestCase {
    private let query = "SELECT m.latin, m.status, l.line AS _line FROM Mushrooms AS m "
        + "LEFT JOIN kiln_row_line AS l ON l.table_name = 'Mushrooms' AND l.row_id = m.rowid ORDER BY m.rowid"

    private func reader(query: String? = nil, fields: [String] = ["latin", "status"], seconds: Double = 5) throws -> SQLiteReader {
        try SQLiteReader(options: JSONValue.object(["query": .string(query ?? self.query), "fields": .array(fields.map(JSONValue.string)),
                                                    "seconds": .number(seconds)])
            .decode(SQLiteReader.Options.self, codingPath: []))
    }

    private let script = """
        -- the author's data
        CREATE TABLE Mushrooms (name TEXT, latin TEXT, status TEXT);
        BEGIN TRANSACTION;
        INSERT INTO Mushrooms VALUES ('Hřib smrkový', 'Boletus edulis', 'jedlá');

        INSERT INTO Mushrooms VALUES ('Muchomůrka zelená',
            'Amanita phalloides', 'jedovatá'); INSERT INTO Mushrooms VALUES ('Hřib žlučník', 'Tylopilus felleus', 'nejedlá');
        INSERT INTO Mushrooms VALUES ('Liška; obecná', 'Cantharellus cibarius', 'jedlá');
        COMMIT;

        """

    /// The 1-based numbers of the lines of `text` that start an INSERT statement (what an editor shows).
    private func insertLines(_ text: String) -> [Int] {
        text.components(separatedBy: "\n").enumerated().flatMap { index, line in
            Array(repeating: index + 1, count: line.components(separatedBy: "INSERT INTO").count - 1)
        }
    }

    func testScriptRowsWithTheLinesTheirInsertsStartOn() throws {
        let reader = try reader()
        let (records, log) = try read(reader, script, name: "atlas.sql")
        XCTAssertTrue(log.diagnostics.isEmpty, "\(log.diagnostics)")
        XCTAssertEqual(records.map { $0.values }, [["Boletus edulis", "jedlá"], ["Amanita phalloides", "jedovatá"],
                                                  ["Tylopilus felleus", "nejedlá"], ["Cantharellus cibarius", "jedlá"]])
        // Two INSERTs share a line; the statement that starts on line 6 gives line 6.
        XCTAssertEqual(insertLines(script), [4, 6, 7, 8])
        XCTAssertEqual(records.map(\.line), [4, 6, 6, 8])
    }

    func testADatabaseFileGivesTheSameRowsAsItsScript() throws {
        let scriptFile = try write(script, to: "atlas.sql")
        let database = temporaryDirectory.appendingPathComponent("atlas.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database.path, ".read \(scriptFile.path)"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let fromScript = try read(reader(), url: scriptFile).records.map(\.values)
        let (fromFile, log) = try read(reader(), url: database)
        XCTAssertTrue(log.diagnostics.isEmpty, "\(log.diagnostics)")
        XCTAssertEqual(fromFile.map(\.values), fromScript)
        XCTAssertEqual(fromFile.map(\.line), [1, 1, 1, 1], "a database file has no lines")
        XCTAssertEqual(try Data(contentsOf: database).prefix(16), Data("SQLite format 3\0".utf8), "the file itself is untouched")
    }

    func testFailingStatementsAreFindingsAtTheirLinesAndTheRestRuns() throws {
        let text = """
            CREATE TABLE Mushrooms (name TEXT, latin TEXT, status TEXT);
            INSERT INTO Mushrooms VALUES ('Hřib smrkový', 'Boletus edulis' 'jedlá');
            INSERT INTO Mushrooms VALUES ('Liška obecná', 'Cantharellus cibarius', 'jedlá');
            ATTACH DATABASE 'other.sqlite' AS other;
            PRAGMA writable_schema = ON;
            DROP TABLE Mushrooms;
            DELETE FROM Mushrooms;
            UPDATE Mushrooms SET status = 'jedovatá';
            INSERT INTO Mushrooms SELECT name, latin, status FROM Mushrooms;
            CREATE TRIGGER t AFTER INSERT ON Mushrooms BEGIN DELETE FROM Mushrooms; END;
            INSERT INTO Nowhere VALUES (1);
            INSERT INTO Mushrooms VALUES ('Hřib žlučník', 'Tylopilus felleus', 'nejedlá')
            """
        let (records, log) = try read(reader(), text, name: "atlas.sql")
        // Line 9 copies the script's own rows (it reads nothing else): it runs, and its row has its line.
        XCTAssertEqual(records.map { $0.values[0] }, ["Cantharellus cibarius", "Cantharellus cibarius", "Tylopilus felleus"])
        XCTAssertEqual(records.map(\.line), [3, 9, 12])
        let found = log.diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code)" }
        XCTAssertEqual(found, ["2 sql.statement", "4 sql.denied", "5 sql.denied", "6 sql.denied", "7 sql.denied", "8 sql.denied",
                               "10 sql.denied", "11 sql.statement"])
        guard found.count == 8 else { return }
        XCTAssertTrue(log.diagnostics.allSatisfy { $0.severity == .error })
        XCTAssertTrue(log.diagnostics[1].message.hasPrefix("ATTACH is not allowed"), log.diagnostics[1].message)
        XCTAssertTrue(log.diagnostics[3].message.hasPrefix("DROP TABLE is not allowed"), log.diagnostics[3].message)
        XCTAssertTrue(log.diagnostics[7].message.contains("no such table: Nowhere"), log.diagnostics[7].message)
    }

    /// What the third hostile probe found in the sandbox: non-deterministic functions ran (two builds shipped
    /// different values), multi-row VALUES and a function in a CHECK were refused with a wrong reason, and a
    /// statement after a refused one on the same line silently did not run.
    func testTheScriptSandboxIsDeterministicAndRefusesOnlyWhatItMust() throws {
        let text = """
            CREATE TABLE Mushrooms (name TEXT CHECK (length(name) > 0), latin TEXT, n INTEGER DEFAULT (random()));
            INSERT INTO Mushrooms (name, latin, n) VALUES ('Liška obecná', 'Cantharellus cibarius', 1), ('Hřib smrkový', 'Boletus edulis', 2);
            INSERT INTO Mushrooms (name, latin) VALUES ('Muchomůrka', 'Amanita muscaria');
            INSERT INTO Mushrooms VALUES ('Bedla', 'Macrolepiota procera', random());
            DROP TABLE Mushrooms; INSERT INTO Mushrooms VALUES ('Hřib žlučník', 'Tylopilus felleus', 3);
            INSERT INTO Mushrooms VALUES ('Václavka', 'Armillaria mellea', abs(-4));
            """
        let (records, log) = try read(reader(query: "SELECT latin, n, kiln_row_line.line AS _line FROM Mushrooms LEFT JOIN kiln_row_line ON kiln_row_line.row_id = Mushrooms.rowid ORDER BY n",
                                             fields: ["latin", "n"]), text, name: "atlas.sql")
        XCTAssertEqual(records.map { $0.values }, [["Cantharellus cibarius", "1"], ["Boletus edulis", "2"], ["Tylopilus felleus", "3"], ["Armillaria mellea", "4"]])
        XCTAssertEqual(records.map(\.line), [2, 2, 5, 6], "the statement after the refused one on line 5 ran")
        let found = log.diagnostics.map { "\($0.provenance?.line ?? 0) \($0.code)" }
        XCTAssertEqual(found, ["3 sql.statement", "4 sql.denied", "5 sql.denied"])
        guard found.count == 3 else { return }
        XCTAssertTrue(log.diagnostics[0].message.hasPrefix("statement failed: random() is not allowed in data read from a file: its result is not decided by the input"), log.diagnostics[0].message)
        XCTAssertTrue(log.diagnostics[1].message.hasPrefix("INSERT calls random(), whose result is not decided by the input"), log.diagnostics[1].message)
        XCTAssertTrue(log.diagnostics[2].message.hasPrefix("DROP TABLE is not allowed"), log.diagnostics[2].message)
    }

    /// SQLite asks the authorizer for a REINDEX of each index a `CREATE INDEX` fills: allowed for that statement's own
    /// index only. A REINDEX statement is refused, also of an index created just before, in the same chunk.
    func testCreateIndexFillsItsIndexAndAReindexStatementIsRefused() throws {
        let sandbox = try Database.sandboxed(seconds: 5)
        sandbox.setPolicy(.script)
        var failures: [String] = []
        try sandbox.executeEach("""
            CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x'), ('y');
            CREATE INDEX t_a ON t (a); CREATE UNIQUE INDEX t_a_unique ON t (a DESC); REINDEX t_a; REINDEX;
            """) { _, error in failures.append(error.message) }
        XCTAssertEqual(failures.count, 2, "\(failures)")
        XCTAssertEqual(Set(sandbox.takeDeniedActions()), ["REINDEX"])
        sandbox.setPolicy(.query)
        XCTAssertEqual(try sandbox.rows("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").map { $0.values[0].textValue }, ["t_a", "t_a_unique"])
    }

    /// The statement a failure names starts after the white space and comments SQLite compiles with it.
    func testAStatementStartsAfterItsComments() {
        let text = "\n  -- one\n/* two\n */ DROP TABLE x; -- after"
        let start = SQLiteReader.statementStart(after: 0, in: text)
        XCTAssertEqual(String(decoding: Array(text.utf8)[start...], as: UTF8.self), "DROP TABLE x; -- after")
        XCTAssertEqual(SQLiteReader.lineOffset(of: start, in: text), 3)
        XCTAssertEqual(SQLiteReader.statementStart(after: 0, in: "-- only a comment\n"), 0)
        XCTAssertEqual(SQLiteReader.statementStart(after: 0, in: "/* unterminated"), 0)
        XCTAssertEqual(SQLiteReader.statementStart(after: 4, in: "x;  - 1"), 4, "a lone minus is not a comment")
    }

    func testABlobIsABinaryValueWithItsHexadecimalText() throws {
        let text = "CREATE TABLE Mushrooms (latin TEXT, status BLOB);\nINSERT INTO Mushrooms VALUES ('a', X'DEADBEEF0001'), ('b', 'text'), ('c', x'');\n"
        let (records, log) = try read(reader(query: "SELECT latin, status FROM Mushrooms ORDER BY latin"), text, name: "a.sql")
        XCTAssertEqual(log.diagnostics.map(\.code), [])
        XCTAssertEqual(records.map(\.values), [["a", "deadbeef0001"], ["b", "text"], ["c", ""]])
        XCTAssertEqual(records.map { $0.binaryValues?[1] }, [[0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01], nil, []])
        XCTAssertEqual(records.map { $0.binaryValues?[0] }, [nil, nil, nil], "a text is no binary value")
        // The hexadecimal text is Python's bytes.hex() for every byte value.
        let all = (0...255).map(UInt8.init)
        XCTAssertEqual(Hexadecimal.text(of: all), try PythonOracle.lines(ofProgram: "print(bytes(range(256)).hex())", []).first)
        // Read back: Python's text (and its upper case) gives the bytes; an odd count or another character gives none.
        let python = try XCTUnwrap(try PythonOracle.lines(ofProgram: "print(bytes(range(256)).hex())", []).first)
        XCTAssertEqual(Hexadecimal.bytes(of: Array(python.utf8)), all)
        XCTAssertEqual(Hexadecimal.bytes(of: Array(python.uppercased().utf8)), all)
        for bad in ["abc", "0g", "+f", " 0", "0x"] { XCTAssertNil(Hexadecimal.bytes(of: Array(bad.utf8)), bad) }
    }

    func testTheDateFunctionsAnswerAsSQLitesOwnExceptForTheClock() throws {
        let sandbox = try Database.sandboxed(seconds: 5)
        sandbox.setPolicy(.query)
        let plain = try Database(path: ":memory:")
        for call in ["date('2024-02-29', '+1 year')", "strftime('%s %j', '2024-01-01')", "julianday('2000-01-01 12:00')", "datetime(2460000.5)",
                     "time('12:34:56.789', '+1 hour')", "unixepoch('2024-01-01')", "date(NULL)", "date('garbage')", "datetime(1700000000, 'unixepoch')"] {
            XCTAssertEqual(try sandbox.rows("SELECT \(call)").first?.values, try plain.rows("SELECT \(call)").first?.values, call)
        }
        for call in ["date('now')", "datetime(' NOW ', '+1 day')", "julianday()", "strftime('%Y')", "date('2024-01-01', 'localtime')",
                     "datetime('2024-01-01', 'UTC')", "strftime('%Y', 'now')", "date(x'6e6f77')"] {
            XCTAssertThrowsError(try sandbox.rows("SELECT \(call)"), call) { error in
                XCTAssertTrue((error as? SQLiteError)?.message.contains("is not allowed in data read from a file: its result is decided by the clock") ?? false, "\(call): \(error)")
            }
        }
    }

    func testAQueryMayNotCallANonDeterministicFunction() throws {
        let (records, log) = try read(reader(query: "SELECT latin, random() AS status FROM Mushrooms", fields: ["latin", "status"]), script, name: "a.sql")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["sql.query"])
        XCTAssertTrue(log.diagnostics.first?.message.hasSuffix("refused: it calls random(), whose result is not decided by the input (a query may call only deterministic functions)") ?? false,
                      "\(log.diagnostics)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporaryDirectory.appendingPathComponent("other.sqlite").path))
    }

    /// The query may read, the schema too (`pragma_table_info`, whose declaration SQLite compiles with an UPDATE of
    /// the schema table that the sandbox allows), and nothing else.
    func testTheQueryMayOnlyRead() throws {
        let (_, log) = try read(reader(query: "UPDATE Mushrooms SET latin = 'x' RETURNING latin", fields: ["latin"]), script, name: "a.sql")
        XCTAssertEqual(log.diagnostics.map(\.code), ["sql.query"])
        let (columns, schemaLog) = try read(reader(query: "SELECT name FROM pragma_table_info('Mushrooms')", fields: ["name"]), script, name: "a.sql")
        XCTAssertEqual(schemaLog.diagnostics.map(\.formatted), [])
        XCTAssertTrue(columns.map(\.declaredValues).contains(["latin"]), "\(columns.map(\.declaredValues))")
        let (_, attach) = try read(reader(query: "ATTACH DATABASE 'x.sqlite' AS x", fields: ["x"]), script, name: "a.sql")
        XCTAssertEqual(attach.diagnostics.map(\.code), ["sql.query"])
        let (_, missing) = try read(reader(fields: ["latin", "edibility"]), script, name: "a.sql")
        XCTAssertEqual(missing.diagnostics.map(\.message), ["the query gives no column \"edibility\"; it gives: latin, status, _line"])
    }

    func testTimeIsBounded() throws {
        let endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) AS total FROM n"
        let started = Date()
        let (records, log) = try read(reader(query: endless, fields: ["total"], seconds: 0.5), script, name: "a.sql")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertTrue(records.isEmpty)
        XCTAssertEqual(log.diagnostics.map(\.code), ["sql.time-limit"])
    }

    func testADamagedDatabaseFileIsOneFinding() throws {
        var bytes = Data("SQLite format 3\0".utf8)
        bytes.append(Data(repeating: 0x41, count: 600))
        let url = try write(bytes, to: "broken.sqlite")
        let (records, log) = try read(reader(), url: url)
        XCTAssertTrue(records.isEmpty)
        XCTAssertEqual(log.diagnostics.count, 1)
        XCTAssertTrue(["sql.unreadable", "sql.query"].contains(log.diagnostics[0].code), log.diagnostics[0].code)
        XCTAssertEqual(log.diagnostics[0].severity, .error)
    }

    func testOptionsAreChecked() {
        XCTAssertThrowsError(try reader(fields: []))
        XCTAssertThrowsError(try reader(fields: ["latin", "latin"]))
        XCTAssertThrowsError(try reader(seconds: 0))
    }
}
