import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The environment around a build, as a hostile tester sets it up: outputs that are not regular files or that name
/// an input, manifest SQL that writes or runs forever. Each is refused (or stopped) and nothing is lost.
final class HostileEnvironmentTests: KilnTestCase {
    private func url(_ name: String) -> URL { temporaryDirectory.appendingPathComponent(name) }

    private func usageMessage(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch KilnError.usage(let message) {
            return message
        } catch {
            return "unexpected \(error)"
        }
    }

    // MARK: OutputPath

    func testOutputsThatAreNotRegularFilesAreRefused() throws {
        let target = try write("keep me\n", to: "target.txt")
        try FileManager.default.createSymbolicLink(at: url("link.sqlite"), withDestinationURL: target)
        XCTAssertEqual(mkfifo(url("fifo").path, 0o644), 0)
        try FileManager.default.createDirectory(at: url("folder"), withIntermediateDirectories: true)

        XCTAssertEqual(usageMessage { try OutputPath.checkFile(self.url("link.sqlite"), named: "--out") },
                       "--out \(url("link.sqlite").path) is a symbolic link; Kiln replaces only regular files")
        XCTAssertEqual(usageMessage { try OutputPath.checkFile(self.url("fifo"), named: "--report") },
                       "--report \(url("fifo").path) is a FIFO (named pipe); Kiln replaces only regular files")
        XCTAssertEqual(usageMessage { try OutputPath.checkFile(self.url("folder"), named: "--out") },
                       "--out \(url("folder").path) is a folder; Kiln replaces only regular files")
        XCTAssertEqual(usageMessage { try OutputPath.checkFile(URL(fileURLWithPath: "/dev/null"), named: "--out") },
                       "--out /dev/null is a character device; Kiln replaces only regular files")
        XCTAssertNil(usageMessage { try OutputPath.checkFile(target, named: "--out") }, "a regular file may be replaced")
        XCTAssertNil(usageMessage { try OutputPath.checkFile(self.url("new/app.sqlite"), named: "--out") }, "so may a new one")
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "keep me\n")
    }

    func testAnOutputThatIsAProtectedFileIsRefusedHoweverItIsNamed() throws {
        let input = try write("a\n", to: "p/in.txt")
        try FileManager.default.createDirectory(at: url("p/sub"), withIntermediateDirectories: true)
        let protected = [OutputPath.Protected(input, "the input in.txt")]
        // The same file through "..", and through a hard link (another name, the same inode).
        XCTAssertEqual(link(input.path, url("hard.txt").path), 0)
        for name in ["p/sub/../in.txt", "hard.txt"] {
            XCTAssertEqual(usageMessage { try OutputPath.checkFile(self.url(name), named: "--out", protected: protected) },
                           "--out \(url(name).path) is the input in.txt; it would be overwritten", name)
        }
        // Two outputs that do not exist yet, named differently.
        let report = [OutputPath.Protected(url("x/a.sqlite"), "the bundle (--out)")]
        XCTAssertNotNil(usageMessage { try OutputPath.checkFile(self.url("x/../x/a.sqlite"), named: "--report", protected: report) })
        XCTAssertNil(usageMessage { try OutputPath.checkFile(self.url("x/a.report.json"), named: "--report", protected: report) })
    }

    func testAFolderOutputMustBeAFolderAndNotThePipelineFolder() throws {
        let file = try write("x", to: "file.txt")
        try FileManager.default.createDirectory(at: url("p"), withIntermediateDirectories: true)
        let protected = [OutputPath.Protected(url("p"), "the pipeline folder")]
        XCTAssertEqual(usageMessage { try OutputPath.checkFolder(file, named: "--out", protected: protected) },
                       "--out \(file.path) is a regular file, not a folder")
        XCTAssertEqual(usageMessage { try OutputPath.checkFolder(self.url("p/."), named: "--out", protected: protected) },
                       "--out \(url("p/.").path) is the pipeline folder; files written there would replace its files")
        XCTAssertNil(usageMessage { try OutputPath.checkFolder(self.url("out"), named: "--out", protected: protected) })
    }

    // MARK: Manifest SQL

    private func database() throws -> Database {
        let database = try Database(path: url("t.sqlite").path, functions: KilnSQLFunctions.all)
        try database.execute("CREATE TABLE stop (code TEXT, name TEXT, lat REAL, lon REAL); INSERT INTO stop VALUES ('1', 'A', 38.2, 21.7), ('2', 'B', 38.3, 21.8)")
        return database
    }

    private func refusal(_ database: Database, _ sql: String) -> String? {
        do {
            _ = try database.prepareQuery(sql)
            return nil
        } catch let error as SQLiteError {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    func testManifestSQLMustBeOneStatementThatOnlyReads() throws {
        let database = try database()
        let target = url("copy.db").path
        let refused: [(String, String)] = [
            ("SELECT name FROM stop; UPDATE stop SET name = 'X'", "only one statement is allowed, but text follows the first: \"UPDATE stop SET name = 'X'\""),
            ("SELECT name FROM stop; garbage", "only one statement is allowed, but text follows the first: \"garbage\""),
            ("UPDATE stop SET name = 'X' RETURNING code", "manifest SQL may only read, but this one holds an UPDATE (stop)"),
            ("DELETE FROM stop RETURNING code", "manifest SQL may only read, but this one holds a DELETE (stop)"),
            ("INSERT INTO stop (code) VALUES ('3') RETURNING code", "manifest SQL may only read, but this one holds an INSERT (stop)"),
            ("PRAGMA writable_schema = ON", "manifest SQL may only read, but this one holds a PRAGMA (writable_schema)"),
            ("VACUUM INTO '\(target)'", "manifest SQL may only read, but this statement (VACUUM) writes"),
            ("ATTACH DATABASE '\(target)' AS other", "manifest SQL may only read, but this one holds an ATTACH or VACUUM INTO"),
            ("CREATE TABLE x AS SELECT * FROM stop", "manifest SQL may only read, but this one holds a change to the schema (CREATE, DROP or ALTER)"),
            ("SELECT load_extension('/tmp/x.so')", "manifest SQL may only read, but this one holds a call to load_extension()"),
        ]
        for (sql, message) in refused { XCTAssertEqual(refusal(database, sql), message, sql) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))

        let allowed = [
            "SELECT name FROM stop;", "SELECT name FROM stop; -- the names\n", "SELECT name FROM stop /* c */ ;  ;",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT i FROM n",
            "SELECT kiln_distance_km(a.lat, a.lon, b.lat, b.lon) FROM stop a, stop b", "SELECT kiln_median(lat), lower(name) FROM stop",
        ]
        for sql in allowed { XCTAssertNil(refusal(database, sql), sql) }
        // The data is as it was.
        XCTAssertEqual(try database.rows("SELECT group_concat(name, ',') FROM stop").first?.values.first, .text("A,B"))
        // Kiln's own statements on the same connection still write.
        try database.execute("UPDATE stop SET name = 'C' WHERE code = '2'")
        XCTAssertEqual(try database.rows("SELECT name FROM stop WHERE code = '2'").first?.values.first, .text("C"))
    }

    func testATimeLimitStopsARunawayStatementAndTheConnectionGoesOn() throws {
        let database = try database()
        let statement = try database.prepareQuery("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n WHERE i < 0")
        let start = Date()
        XCTAssertThrowsError(try database.withTimeLimit(0.3) { _ = try statement.step() }) { error in
            XCTAssertTrue((error as? SQLiteError)?.isInterrupted == true, "\(error)")
        }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(elapsed, 0.3)
        XCTAssertLessThan(elapsed, 10)
        XCTAssertEqual(try database.rows("SELECT count(*) FROM stop").first?.values.first, .integer(2), "the limit is gone afterwards")
    }

    // MARK: Through a build

    private func pipeline(table: String = "", rules: String = "", limits: String = "") throws -> CompiledPipeline {
        try write("""
            { bundle: "env", schemaVersion: 1,\(limits)
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }\(table)],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }]\(rules) }
            """, to: "env/kiln.json5")
        try write("a\nb\n", to: "env/in.txt")
        return try ManifestLoader.load(url("env").path)
    }

    func testARuleThatWritesIsAManifestErrorAndNothingShips() throws {
        let output = url("out/env.sqlite")
        // Refused when the manifest loads, before any input is read.
        XCTAssertThrowsError(try pipeline(rules: #", rules: [{ code: "x", kind: "sql", sql: "UPDATE t SET v = 'X' RETURNING _file, _line", message: "x" }]"#)) { error in
            guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(issue.keyPath, "rules[0].sql")
            XCTAssertEqual(issue.line, 3)
            XCTAssertEqual(issue.message, "SQLite refuses the rule's query: manifest SQL may only read, but this one holds an UPDATE (t)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testASlowRuleIsAnErrorFindingNamingItAndASlowQueryTableAManifestError() throws {
        let slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS v FROM n WHERE i < 0"
        let rulePipeline = try pipeline(rules: ", rules: [{ code: \"slow\", kind: \"sql\", sql: \"\(slow)\", message: \"x\" }]",
                                        limits: " limits: { sqlSeconds: 0.5 },")
        XCTAssertEqual(rulePipeline.manifest.limits.sqlSeconds, 0.5)
        let outcome = try Builder.build(rulePipeline, options: BuildOptions(output: url("out/env.sqlite")))
        XCTAssertFalse(outcome.built)
        XCTAssertEqual(outcome.diagnostics.map(\.formatted),
                       ["error: rule slow (rules[0]) ran longer than 0.5 s and was stopped, so it checked nothing; make it cheaper or raise limits.sqlSeconds [sql.time-limit]"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("out/env.sqlite").path))

        let tablePipeline = try pipeline(table: ", { name: \"u\", columns: [{ name: \"v\", type: \"text\" }], query: \"\(slow)\" }",
                                         limits: " limits: { sqlSeconds: 0.5 },")
        XCTAssertThrowsError(try Builder.build(tablePipeline, options: BuildOptions(output: url("out/env.sqlite")))) { error in
            guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(issue.keyPath, "tables[1].query")
            XCTAssertEqual(issue.message, "the query of table \"u\" ran longer than 0.5 s and was stopped; make it cheaper or raise limits.sqlSeconds")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: url("out").path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }
        XCTAssertEqual(left, [], "no staging database or lock is left behind")
    }

    func testTheLimitIsDecodedStrictly() throws {
        XCTAssertEqual(try pipeline().manifest.limits.sqlSeconds, ManifestLimits.defaultSQLSeconds)
        for (limits, message) in [(" limits: { sqlSeconds: 0 },", "expected a number of seconds greater than 0"),
                                  (" limits: { seconds: 5 },", "unknown key \"seconds\"; expected one of: sqlSeconds, bundleBytes, tables, occurrencesPerFile, regexSecondsPerFile")] {
            XCTAssertThrowsError(try pipeline(limits: limits)) { error in
                guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(issue.message.hasSuffix(message), issue.message)
                XCTAssertEqual(issue.line, 1)
            }
        }
    }

    func testBuildOutputsMayNotBeTheManifestAnInputOrEachOther() throws {
        let pipeline = try pipeline()
        let manifestBytes = try Data(contentsOf: url("env/kiln.json5"))
        let cases: [(BuildOptions, String)] = [
            (BuildOptions(output: url("env/in.txt")), "the bundle file \(url("env/in.txt").path) is the input in.txt; it would be overwritten"),
            (BuildOptions(output: url("out/a.sqlite"), report: url("env/kiln.json5")),
             "the report \(url("env/kiln.json5").path) is the manifest; it would be overwritten"),
            (BuildOptions(output: url("out/a.sqlite"), report: url("out/a.sqlite")),
             "the report \(url("out/a.sqlite").path) is the bundle; it would be overwritten"),
        ]
        // The command line names its options instead (`HostileEnvironmentCommandTests`).
        for (options, message) in cases {
            XCTAssertEqual(usageMessage { _ = try Builder.build(pipeline, options: options) }, message)
        }
        XCTAssertEqual(try Data(contentsOf: url("env/kiln.json5")), manifestBytes)
        XCTAssertEqual(try String(contentsOf: url("env/in.txt"), encoding: .utf8), "a\nb\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: url("out").path), "nothing is written, not even the folder")
    }

    // MARK: Findings are capped per code

    func testTheLogStoresTheFirstFindingsOfEachCodeAndSeverityAndCountsTheRest() {
        let log = DiagnosticLog()
        for index in 0..<250 { log.report(ruleCode: "value", .warning, "w\(index)") }
        log.report(ruleCode: "value", .error, "the error after 250 warnings of its code")
        for index in 0..<3 { log.report(ruleCode: "other", .info, "i\(index)") }
        XCTAssertEqual(log.diagnostics.count, DiagnosticTally.defaultExamplesPerCode + 1 + 3)
        XCTAssertEqual(log.count(.warning), 250)
        XCTAssertEqual(log.count(.error), 1)
        XCTAssertEqual(log.count(.info), 3)
        XCTAssertTrue(log.hasErrors, "an error is never hidden behind warnings of its code")
        XCTAssertEqual(log.tally.notStored, [DiagnosticTally.Key(code: "value", severity: .warning): 150])
        XCTAssertEqual(log.diagnostics.filter { $0.severity == .warning }.last?.message, "w99")
    }

    func testABuildWithManyFindingsReportsExactCountsAndStoresTheFirst() throws {
        try write("""
            { bundle: "many", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "n", type: "integer" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["n"] }, into: "t", columns: { n: "n" } }] }
            """, to: "many/kiln.json5")
        let lines = (0..<1500).map { "x\($0)" }
        try write(lines.joined(separator: "\n") + "\n", to: "many/in.txt")
        let outcome = try Builder.build(try ManifestLoader.load(url("many").path), options: BuildOptions(output: url("out/many.sqlite")))
        XCTAssertFalse(outcome.built)
        XCTAssertEqual(outcome.diagnostics.count, DiagnosticTally.defaultExamplesPerCode)
        XCTAssertEqual(outcome.notStored, [DiagnosticTally.Key(code: "value", severity: .error): lines.count - DiagnosticTally.defaultExamplesPerCode])
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: outcome.reportURL)) as? [String: Any]
        XCTAssertEqual((report?["summary"] as? [String: Int])?["error"], lines.count)
        XCTAssertEqual((report?["diagnostics"] as? [Any])?.count, DiagnosticTally.defaultExamplesPerCode)
        let notStored = report?["notStored"] as? [[String: Any]]
        XCTAssertEqual(notStored?.first?["code"] as? String, "value")
        XCTAssertEqual(notStored?.first?["count"] as? Int, lines.count - DiagnosticTally.defaultExamplesPerCode)
    }

    func testBundlesDifferingInTheirExtensionHaveTheirOwnReports() {
        let sqlite = BuildOptions.defaultReport(for: URL(fileURLWithPath: "/x/a.sqlite"))
        let db = BuildOptions.defaultReport(for: URL(fileURLWithPath: "/x/a.db"))
        XCTAssertEqual(sqlite.path, "/x/a.report.json")
        XCTAssertEqual(db.path, "/x/a.db.report.json")
    }
}
