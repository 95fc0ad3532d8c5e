import Foundation
import XCTest
import KilnC
import KilnKit

/// A hostile environment through the `kiln` binary: outputs that are not regular files or name an input, manifest
/// SQL that writes or runs forever. Each case has its exit code and one sentence, and every file is as it was.
final class HostileEnvironmentCommandTests: CLITestCase {
    /// A pipeline `name` reading `in.txt` into `t(v)`, with `extra` appended to the manifest's top level.
    @discardableResult
    private func pipeline(_ name: String = "p", extra: String = "", table: String = "") throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "env", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }\(table)],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
              exports: [{ name: "text", files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }] }],\(extra)
            }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try "a\nb\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        return folder
    }

    private func manifestLine(_ folder: URL, containing marker: String) throws -> Int {
        let lines = try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8).components(separatedBy: "\n")
        return (lines.firstIndex { $0.contains(marker) } ?? -1) + 1
    }

    /// The digest of every regular file under the working folder, by relative path.
    private func snapshot() throws -> [String: String] {
        var digests: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: workingDirectory.path)
        while let path = enumerator?.nextObject() as? String {
            var status = stat()
            guard lstat(file(path).path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            digests[path] = try sha256(path)
        }
        return digests
    }

    private func firstLine(_ run: Run) -> String { String(run.stderr.prefix { $0 != "\n" }) }

    // MARK: Outputs

    func testBuildRefusesOutputsThatAreNotRegularFilesAndKeepsThem() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try "elsewhere\n".write(to: file("target.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: file("link.sqlite").path, withDestinationPath: "target.txt")
        try FileManager.default.createSymbolicLink(atPath: file("link.json").path, withDestinationPath: "/proc/self/fd/1")
        XCTAssertEqual(mkfifo(file("fifo").path, 0o644), 0)
        try FileManager.default.createDirectory(at: file("folder"), withIntermediateDirectories: true)
        let before = try snapshot()

        let cases: [([String], String)] = [
            (["--out", "link.sqlite"], "Error: --out link.sqlite is a symbolic link; Kiln replaces only regular files"),
            (["--report", "link.json"], "Error: --report link.json is a symbolic link; Kiln replaces only regular files"),
            (["--out", "fifo"], "Error: --out fifo is a FIFO (named pipe); Kiln replaces only regular files"),
            (["--report", "folder"], "Error: --report folder is a folder; Kiln replaces only regular files"),
            (["--out", ""], "Error: --out needs a path, not an empty string"),
        ]
        for (options, message) in cases {
            let run = try kiln(["build", "p"] + options)
            XCTAssertEqual(run.status, 64, "\(options)")
            XCTAssertEqual(firstLine(run), message)
        }
        XCTAssertEqual(try snapshot(), before, "every file is as it was")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: file("link.sqlite").path), "target.txt")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: file("link.json").path), "/proc/self/fd/1")
        XCTAssertEqual(OutputPathKind.of(file("fifo")), S_IFIFO)
        XCTAssertEqual(try hiddenFiles("build"), [], "no lock or staging file is left")
    }

    func testBuildRefusesOutputsThatAreAnInputTheManifestOrTheOtherOutput() throws {
        let folder = try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let before = try snapshot()
        let manifest = folder.appendingPathComponent("kiln.json5").path
        let cases: [([String], String)] = [
            (["--out", "p/in.txt"], "Error: --out p/in.txt is the input in.txt; it would be overwritten"),
            (["--report", "p/kiln.json5"], "Error: --report p/kiln.json5 is the manifest; it would be overwritten"),
            (["--report", manifest], "Error: --report \(manifest) is the manifest; it would be overwritten"),
            (["--report", "build/env.sqlite"], "Error: --report build/env.sqlite is the bundle (--out); it would be overwritten"),
            (["--out", "x/a.sqlite", "--report", "x/../x/a.sqlite"], "Error: --report x/../x/a.sqlite is the bundle (--out); it would be overwritten"),
            (["--baseline", "build/env.sqlite", "--out", "new/env.sqlite", "--report", "build/env.sqlite"],
             "Error: --report build/env.sqlite is the baseline; it would be overwritten"),
        ]
        for (options, message) in cases {
            let run = try kiln(["build", "p"] + options)
            XCTAssertEqual(run.status, 64, "\(options)")
            XCTAssertEqual(firstLine(run), message)
        }
        XCTAssertEqual(try snapshot(), before, "the last good bundle, the manifest and the input are as they were")
        // The bundle being replaced remains a valid baseline.
        XCTAssertEqual(try kiln("build", "p", "--baseline", "build/env.sqlite", "--quiet").status, 0)
    }

    func testExportRefusesAnEmptyPathThePipelineFolderAndFilesThatAreNotRegular() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: file("out/out.txt").path, withDestinationPath: "../p/in.txt")
        let before = try snapshot()
        let cases: [(String, String)] = [
            ("", "Error: --out needs a path, not an empty string"),
            ("p", "Error: --out p is the pipeline folder; files written there would replace its files"),
            ("p/in.txt", "Error: --out p/in.txt is a regular file, not a folder"),
            ("out", "Error: the export file out/out.txt is a symbolic link; Kiln replaces only regular files"),
        ]
        for (out, message) in cases {
            let run = try kiln("export", "text", "build/env.sqlite", "--out", out, "--manifest", "p")
            XCTAssertEqual(run.status, 64, out)
            XCTAssertEqual(firstLine(run), message)
        }
        XCTAssertEqual(try snapshot(), before)
        XCTAssertEqual(try kiln("export", "text", "build/env.sqlite", "--out", "fresh", "--manifest", "p").status, 0)
        XCTAssertEqual(try String(contentsOf: file("fresh/out.txt"), encoding: .utf8), "a\nb\n")
    }

    func testTestUpdateRefusesToOverwriteTheManifestOrAnInput() throws {
        let folder = try pipeline(extra: #" fixtures: [{ source: "s", input: "in.txt", expected: "kiln.json5" }],"#)
        let before = try snapshot()
        let run = try kiln("test", "p", "--update")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "fixtures")): manifest error at fixtures[0].expected: the expected file \(folder.appendingPathComponent("kiln.json5").path) is the manifest; it would be overwritten")
        try pipeline(extra: #" fixtures: [{ source: "s", input: "in.txt", expected: "in.txt" }],"#)
        let input = try kiln("test", "p", "--update")
        XCTAssertEqual(input.status, 64)
        XCTAssertTrue(firstLine(input).hasSuffix("manifest error at fixtures[0].expected: the expected file \(folder.appendingPathComponent("in.txt").path) is the input in.txt; it would be overwritten"), input.stderr)
        XCTAssertEqual(try snapshot().filter { $0.key != "p/kiln.json5" }, before.filter { $0.key != "p/kiln.json5" })
    }

    // MARK: Manifest SQL

    func testManifestSQLThatWritesIsAManifestErrorAndTheBundleIsUnchanged() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let shipped = try sha256("build/env.sqlite")
        let cases: [(table: String, extra: String, marker: String, message: String)] = [
            (#", { name: "u", columns: [{ name: "v", type: "text" }], query: "SELECT v FROM t; UPDATE t SET v = 'X'" }"#, "", "query:",
             "manifest error at tables[1].query: SQLite refuses the query: only one statement is allowed, but text follows the first: \"UPDATE t SET v = 'X'\""),
            ("", #" rules: [{ code: "x", kind: "sql", sql: "UPDATE t SET v = 'X' RETURNING _file, _line", message: "x" }],"#, "rules:",
             "manifest error at rules[0].sql: SQLite refuses the rule's query: manifest SQL may only read, but this one holds an UPDATE (t)"),
            ("", #" rules: [{ code: "x", kind: "sql", sql: "SELECT v FROM t WHERE v IS NULL; garbage", message: "x" }],"#, "rules:",
             "manifest error at rules[0].sql: SQLite refuses the rule's query: only one statement is allowed, but text follows the first: \"garbage\""),
            ("", #" rules: [{ code: "x", kind: "sql", sql: "PRAGMA writable_schema = ON", message: "x" }],"#, "rules:",
             "manifest error at rules[0].sql: SQLite refuses the rule's query: manifest SQL may only read, but this one holds a PRAGMA (writable_schema)"),
        ]
        for item in cases {
            let folder = try pipeline(extra: item.extra, table: item.table)
            let run = try kiln("build", "p")
            XCTAssertEqual(run.status, 64, item.message)
            let manifest = shown(folder.appendingPathComponent("kiln.json5"))
            XCTAssertEqual(firstLine(run), "Error: \(manifest):\(try manifestLine(folder, containing: item.marker)): \(item.message)")
            XCTAssertEqual(try sha256("build/env.sqlite"), shipped, "the shipped bundle is unchanged")
        }
        XCTAssertEqual(try hiddenFiles("build"), [])
    }

    func testExportQueriesOnlyRead() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let manifest = file("p/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
            .replacingOccurrences(of: "SELECT v FROM t ORDER BY v", with: "VACUUM INTO 'copy.sqlite'")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("export", "text", "build/env.sqlite", "--out", "out", "--manifest", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(manifest)):\(try manifestLine(file("p"), containing: "exports:")): manifest error at exports[0].files[0].query: SQLite refuses the export query: manifest SQL may only read, but this statement (VACUUM) writes")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("copy.sqlite").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("out").path), [], "no file, no temporary")
    }

    func testARunawayRuleIsStoppedAtTheTimeLimitAndNamed() throws {
        let slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n WHERE i < 0"
        try pipeline(extra: " limits: { sqlSeconds: 1 }, rules: [{ code: \"cartesian\", kind: \"sql\", sql: \"\(slow)\", message: \"x\" }],")
        let start = Date()
        let run = try kiln("build", "p")
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("    rule cartesian (rules[0]) ran longer than 1 s and was stopped, so it checked nothing; make it cheaper or raise limits.sqlSeconds\n"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/env.sqlite").path))
        XCTAssertEqual(try hiddenFiles("build"), [], "no lock or staging file is left")

        let folder = try pipeline(extra: " limits: { sqlSeconds: 1 },", table: ", { name: \"u\", columns: [{ name: \"v\", type: \"text\" }], query: \"\(slow.replacingOccurrences(of: "SELECT i FROM n", with: "SELECT i AS v FROM n"))\" }")
        let table = try kiln("build", "p")
        XCTAssertEqual(table.status, 64)
        XCTAssertEqual(firstLine(table), "Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "query:")): manifest error at tables[1].query: the query of table \"u\" ran longer than 1 s and was stopped; make it cheaper or raise limits.sqlSeconds")
        XCTAssertEqual(try hiddenFiles("build"), [])
    }

    // MARK: SQLite's files beside the bundle

    /// Builds `p` into `build/env.sqlite` and the same pipeline into `reference/env.sqlite`.
    private func builtTwice() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "reference/env.sqlite").status, 0)
    }

    /// Leaves beside the bundle the side files a writer that stopped mid-way leaves: `mode` WAL (an edit in the log
    /// that was never checkpointed) or DELETE (a hot rollback journal of an edit).
    private func leaveSideFiles(journalMode mode: String) throws -> [String] {
        let path = file("build/env.sqlite").path
        let database = try Database(path: path, mode: .readWrite)
        _ = try database.rows("PRAGMA journal_mode = \(mode)")
        try database.execute("PRAGMA cache_size = 1; BEGIN; UPDATE t SET v = 'EDITED'")
        if mode == "WAL" { try database.execute("COMMIT; BEGIN; SELECT count(*) FROM t") }
        let suffixes = mode == "WAL" ? ["-wal", "-shm"] : ["-journal"]
        for suffix in suffixes { try FileManager.default.copyItem(atPath: path + suffix, toPath: file("saved" + suffix).path) }
        try database.execute("ROLLBACK")
        try database.close()
        for suffix in suffixes {
            try? FileManager.default.removeItem(atPath: path + suffix)
            try FileManager.default.copyItem(atPath: file("saved" + suffix).path, toPath: path + suffix)
        }
        return suffixes.map { "env.sqlite" + $0 }
    }

    func testLeftoverSideFilesAreNeverAppliedToTheNewBundle() throws {
        try builtTwice()
        let reference = try sha256("reference/env.sqlite")
        for mode in ["WAL", "DELETE"] {
            let left = try leaveSideFiles(journalMode: mode)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("build").path).filter { left.contains($0) }.sorted(), left.sorted())
            let run = try kiln("build", "p", "--quiet")
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("build").path).sorted(), [KilnFileNames.cacheFolder, "env.report.json", "env.sqlite"], mode)
            XCTAssertEqual(try sha256("build/env.sqlite"), reference, "\(mode): the new bundle is exactly a fresh build's")
            let check = try kiln("check", "build/env.sqlite", "--manifest", "p")
            XCTAssertEqual(check.status, 0, check.stdout)
            let database = try Database(path: file("build/env.sqlite").path, mode: .readOnly)
            XCTAssertEqual(try database.rows("SELECT count(*) FROM t WHERE v = 'EDITED'").first?.values.first, .integer(0), mode)
        }
    }

    func testABundleAnotherProcessHoldsIsNotReplacedNorRead() throws {
        try builtTwice()
        let bundle = file("build/env.sqlite").path
        let locked = "Error: build/env.sqlite is locked by another process (an app or a database browser has it open); close it and try again"
        // The report in place describes the bundle in place: a refused build leaves it too (it was replaced by a
        // `"built": false` report before).
        let report = try sha256("build/env.report.json")

        // A browser with the bundle open in WAL mode: the build stops before replacing anything.
        let browser = try Database(path: bundle, mode: .readWrite)
        _ = try browser.rows("PRAGMA journal_mode = WAL")
        XCTAssertEqual(try browser.rows("SELECT count(*) FROM t").first?.values.first, .integer(2))
        XCTAssertTrue(FileManager.default.fileExists(atPath: bundle + "-wal"))
        let build = try kiln("build", "p", "--quiet")
        XCTAssertEqual(build.status, 74)
        XCTAssertEqual(firstLine(build), locked)
        XCTAssertTrue(FileManager.default.fileExists(atPath: bundle + "-wal"), "the browser's log is left to it")
        XCTAssertEqual(try sha256("build/env.report.json"), report, "the report is as it was")
        XCTAssertEqual(try browser.rows("SELECT count(*) FROM t").first?.values.first, .integer(2))
        _ = try browser.rows("PRAGMA journal_mode = DELETE")

        // A writer holding an exclusive lock: nothing reads the bundle as "not an SQLite database".
        try browser.execute("BEGIN EXCLUSIVE; UPDATE t SET v = 'EDITED'")
        let runs: [(String, [String])] = [
            ("build", ["build", "p", "--quiet"]),
            ("baseline guard", ["build", "p", "--quiet", "--out", "other/env.sqlite", "--baseline", "build/env.sqlite"]),
            ("check", ["check", "build/env.sqlite", "--manifest", "p"]),
            ("diff", ["diff", "build/env.sqlite", "reference/env.sqlite", "--manifest", "p"]),
            ("export", ["export", "text", "build/env.sqlite", "--out", "out", "--manifest", "p"]),
        ]
        for (name, arguments) in runs {
            let run = try kiln(arguments)
            XCTAssertEqual(run.status, 74, name)
            XCTAssertEqual(firstLine(run), locked, name)
            XCTAssertEqual(try sha256("build/env.report.json"), report, "\(name) left the report as it was")
        }
        try browser.execute("ROLLBACK")
        try browser.close()
        // The browser's switches of journal mode changed header bytes; the rows are the build's.
        let rows = try Database(path: bundle, mode: .readOnly).rows("SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY v)")
        XCTAssertEqual(rows.first?.values.first, .text("a,b"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("other/env.sqlite").path))
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0, "once it is closed, the build goes on")
    }

    // MARK: Output

    func testScrapedTextCannotDriveTheTerminalOrTheCIRunner() throws {
        let folder = file("p")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "esc", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }, { name: "n", type: "integer" }] }],
              sources: [{ name: "x", format: "xml", path: "in.xml", options: { record: "r", fields: { v: "v" } }, into: "t", columns: { v: "v", n: "v" } },
                        { name: "d", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
              rules: [{ code: "looks-like-a-command", kind: "sql", severity: "warning", sql: "SELECT v FROM t WHERE v LIKE '::%'", message: "{v}" }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try "<d><r><v>1\n::error file=x.swift::boom</v></r></d>\n".write(to: folder.appendingPathComponent("in.xml"), atomically: true, encoding: .utf8)
        try "::error file=a.swift,line=1::injected \u{1B}[31mred\u{1B}[0m \u{202E}txt.exe\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)

        func assertSafe(_ output: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertFalse(output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" || $0 == "\r" }, what, file: file, line: line)
            for text in output.split(separator: "\n") where text.drop(while: { $0 == " " }).hasPrefix("::") {
                XCTFail("\(what): a workflow command: \(text)", file: file, line: line)
            }
        }
        let build = try kiln("build", "p")
        XCTAssertEqual(build.status, 1)
        assertSafe(build.stderr, "build")
        XCTAssertTrue(build.stderr.contains(#"p/in.xml:1: t.n: expected a whole number, found "1\n::error file=x.swift::boom""#), build.stderr)
        XCTAssertTrue(build.stderr.contains(#"    \::error file=a.swift,line=1::injected \u{1B}[31mred\u{1B}[0m \u{202E}txt.exe"#), build.stderr)

        let extract = try kiln("extract", "d", "p/in.txt", "--manifest", "p")
        XCTAssertEqual(extract.status, 0)
        assertSafe(extract.stdout, "extract")
        XCTAssertTrue(extract.stdout.contains(#"p/in.txt:1  ::error file=a.swift,line=1::injected \u{1B}[31mred\u{1B}[0m \u{202E}txt.exe"#), extract.stdout)

        // Only the annotations of --format github are workflow commands; the value inside stays escaped.
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: #"n: "v" }"#, with: "}")
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let github = try kiln("check", "build/esc.sqlite", "--manifest", "p", "--format", "github")
        XCTAssertFalse(github.stdout.contains("\u{1B}"), github.stdout)
        XCTAssertTrue(github.stdout.contains("::warning file=build/esc.sqlite,title=looks-like-a-command::::error file=a.swift,line=1::injected \\u{1B}[31mred"), github.stdout)
        let text = try kiln("check", "build/esc.sqlite", "--manifest", "p")
        assertSafe(text.stdout, "check")
    }

    func testTheSummarySaysHowManyFindingsWereNotStored() throws {
        let folder = try pipeline()
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: #"{ name: "v", type: "text" }"#, with: #"{ name: "v", type: "integer" }"#)
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let count = 20_000
        try (0..<count).map { "not a number \($0)\n" }.joined().write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("diagnostics: \(count) errors, 0 warnings, 0 info\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  value (error) ×\(count)\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("    … 97 more in the report\n    … and \(count - 100) more not stored (the report keeps the first 100 of each code)\n"), run.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: file("build/env.report.json"))) as? [String: Any]
        XCTAssertEqual((report?["diagnostics"] as? [Any])?.count, 100)
        XCTAssertEqual((report?["summary"] as? [String: Int])?["error"], count)
    }

    // MARK: Signals

    /// A pipeline `big` of `rows` stops with a full-text table, and an export of them, so that each stage takes a while.
    private func bigPipeline(rows: Int) throws {
        let folder = file("big")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "big", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text" }], primaryKey: ["code"],
                         fullText: { name: "stop_search", columns: ["name"] } }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["name", "code"] }, into: "stop", columns: { code: "code", name: "name" } }],
              exports: [{ name: "text", files: [{ path: "stops.txt", format: "delimited", query: "SELECT name, code FROM stop ORDER BY code" }] },
                        { name: "slow", files: [{ path: "stops.txt", format: "delimited",
                          query: "SELECT name, code FROM stop WHERE (WITH RECURSIVE n(i) AS (SELECT length(code) UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT count(*) FROM n) > 0 ORDER BY code" }] }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        var lines = ""
        for row in 0..<rows { lines += "Στάση Πανεπιστημίου \(row); \(100_000 + row)\n" }
        try lines.write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
    }

    /// Starts `kiln arguments…`, waits until a file of `folder` matches `ready`, sends `signal`, and returns the exit
    /// status and stderr; `nil` when the run ended before the file appeared.
    private func interrupt(_ arguments: [String], when folder: String, has ready: (String) -> Bool, with signal: Int32) throws -> (status: Int32, stderr: String)? {
        let process = Process()
        process.executableURL = CLITestCase.executable
        process.arguments = arguments
        process.currentDirectoryURL = workingDirectory
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        var seen = false
        while process.isRunning, Date() < deadline {
            if ((try? FileManager.default.contentsOfDirectory(atPath: file(folder).path)) ?? []).contains(where: ready) {
                seen = true
                break
            }
            usleep(2_000)
        }
        if seen { kill(process.processIdentifier, signal) }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return seen ? (process.terminationStatus, stderr) : nil
    }

    func testSignalsDuringABuildRemoveItsTemporaryFilesAndKeepTheBundle() throws {
        try bigPipeline(rows: 60_000)
        XCTAssertEqual(try kiln("build", "big", "--quiet").status, 0)
        let previous = try sha256("build/big.sqlite")
        let stages: [(signal: Int32, status: Int32, name: String, ready: (String) -> Bool)] = [
            (SIGINT, 130, "SIGINT", { $0.hasPrefix(".big.sqlite.staging.") }),
            (SIGTERM, 143, "SIGTERM", { $0.hasPrefix(".big.sqlite.") && $0.hasSuffix(".tmp") }),
            (SIGHUP, 129, "SIGHUP", { $0.hasPrefix(".big.sqlite.staging.") }),
        ]
        var interrupted = 0
        for stage in stages {
            guard let run = try interrupt(["build", "big", "--quiet", "--no-cache"], when: "build", has: stage.ready, with: stage.signal) else { continue }
            interrupted += 1
            XCTAssertEqual(run.status, stage.status, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("kiln: interrupted by \(stage.name): removed the temporary files .big.sqlite."), run.stderr)
            XCTAssertTrue(run.stderr.hasSuffix("; the bundle in place, if any, is whole (the previous one or the new one)\n"), run.stderr)
            XCTAssertEqual(try hiddenFiles("build"), [], stage.name)
            XCTAssertEqual(try sha256("build/big.sqlite"), previous, stage.name)
        }
        XCTAssertGreaterThanOrEqual(interrupted, 2, "the builds were interrupted, not finished first")
        XCTAssertEqual(try kiln("build", "big", "--quiet").status, 0)
    }

    func testAnInterruptedExportLeavesNoTemporaryAndStaleOnesAreRemoved() throws {
        try bigPipeline(rows: 60_000)
        XCTAssertEqual(try kiln("build", "big", "--quiet").status, 0)
        // A temporary of an export that died (its process is gone) is removed by the next export into the folder.
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        try "half".write(to: file("out/.stops.txt.\(finished.processIdentifier).tmp"), atomically: true, encoding: .utf8)
        if let run = try interrupt(["export", "slow", "build/big.sqlite", "--out", "out", "--manifest", "big"], when: "out",
                                   has: { $0.hasPrefix(".stops.txt.") && $0 != ".stops.txt.\(finished.processIdentifier).tmp" }, with: SIGTERM) {
            XCTAssertEqual(run.status, 143, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("kiln: interrupted by SIGTERM: removed the temporary files .stops.txt."), run.stderr)
        } else {
            XCTFail("the export ended before it could be interrupted")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("out").path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }, [])
        XCTAssertEqual(try kiln("export", "text", "build/big.sqlite", "--out", "out", "--manifest", "big").status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("out").path), ["stops.txt"])
    }

    // MARK: Exports as a set

    func testAFailedExportLeavesTheFolderAsItWas() throws {
        let folder = try pipeline()
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: #"files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }]"#,
                                  with: #"files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }, { path: "second.txt", format: "delimited", query: "SELECT no_such_column FROM t" }]"#)
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        try "old\n".write(to: file("out/out.txt"), atomically: true, encoding: .utf8)
        let run = try kiln("export", "text", "build/env.sqlite", "--out", "out", "--manifest", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(firstLine(run).hasSuffix("manifest error at exports[0].files[1].query: SQLite refuses the export query: no such column: no_such_column"), run.stderr)
        XCTAssertEqual(try String(contentsOf: file("out/out.txt"), encoding: .utf8), "old\n", "the first file was not replaced alone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("out").path), ["out.txt"])
    }

    func testParallelExportsIntoOneFolderBothSucceed() throws {
        try bigPipeline(rows: 20_000)
        XCTAssertEqual(try kiln("build", "big", "--quiet").status, 0)
        XCTAssertEqual(try kiln("export", "text", "build/big.sqlite", "--out", "alone", "--manifest", "big").status, 0)
        var processes: [Process] = []
        for _ in 0..<3 {
            let process = Process()
            process.executableURL = CLITestCase.executable
            process.arguments = ["export", "text", "build/big.sqlite", "--out", "shared", "--manifest", "big"]
            process.currentDirectoryURL = workingDirectory
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes.append(process)
        }
        for process in processes {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
        }
        XCTAssertEqual(try sha256("shared/stops.txt"), try sha256("alone/stops.txt"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("shared").path), ["stops.txt"])
    }

    // MARK: Exit codes and messages

    func testTableNamesDifferingOnlyInCaseAreAManifestError() throws {
        let folder = try pipeline(table: #", { name: "T", columns: [{ name: "v", type: "text" }] }"#)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "tables:")): manifest error at tables[1].name: \"T\" and \"t\" differ only in case, and SQLite does not tell them apart")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build").path))
    }

    func testExportRefusesAnotherPipelinesBundleAndADamagedOne() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        let other = try kiln("export", "text", "build/patras.sqlite", "--out", "out", "--manifest", "p")
        XCTAssertEqual(other.status, 1)
        XCTAssertEqual(firstLine(other), "Error: build/patras.sqlite is a bundle of pipeline \"patras\", not of \"env\" (p/kiln.json5)")

        // Bytes overwritten inside pages (the header stays whole): SQLite finds the damage while the query reads.
        try FileManager.default.copyItem(at: file("build/patras.sqlite"), to: file("damaged.sqlite"))
        let handle = try FileHandle(forUpdating: file("damaged.sqlite"))
        let size = try handle.seekToEnd()
        for offset in stride(from: UInt64(4096 * 3), to: size - 4096, by: 4096 * 7) {
            try handle.seek(toOffset: offset + 200)
            try handle.write(contentsOf: Data(repeating: 0xFF, count: 300))
        }
        try handle.close()
        let damaged = try kiln("export", "legacy-text", "damaged.sqlite", "--out", "legacy", "--manifest", "raw/patras")
        XCTAssertEqual(damaged.status, 1)
        XCTAssertEqual(firstLine(damaged), "Error: damaged.sqlite is damaged: database disk image is malformed")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("legacy").path), [], "no file of a damaged bundle")
    }

    func testBundlesThatAreNotFilesOrHaveEmptyMetadataAreNamedAsSuch() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        XCTAssertEqual(mkfifo(file("fifo.sqlite").path, 0o644), 0)
        let fifo = try kiln("check", "fifo.sqlite", "--manifest", "p")
        XCTAssertEqual(fifo.status, 74)
        XCTAssertEqual(firstLine(fifo), "Error: fifo.sqlite is a FIFO (named pipe), not a bundle file")
        let folder = try kiln("diff", "p", "build/env.sqlite")
        XCTAssertEqual(folder.status, 74)
        XCTAssertEqual(firstLine(folder), "Error: p is a folder, not a bundle file")

        try FileManager.default.copyItem(at: file("build/env.sqlite"), to: file("empty-metadata.sqlite"))
        let database = try Database(path: file("empty-metadata.sqlite").path, mode: .readWrite)
        try database.execute("DELETE FROM kiln_metadata")
        try database.close()
        let check = try kiln("check", "empty-metadata.sqlite")
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.stdout.contains("empty-metadata.sqlite is not a Kiln bundle: its kiln_metadata table names no bundle (no bundle.name entry; the table is empty)"), check.stdout)
    }

    func testAMalformedFixtureFileIsOneSentence() throws {
        let folder = try pipeline(extra: #" fixtures: [{ source: "s", input: "in.txt", expected: "expected.json" }],"#)
        try #"{ "fields": ["v"], "records": "not a list", "unmatched": [] }"#.write(to: folder.appendingPathComponent("expected.json"), atomically: true, encoding: .utf8)
        let run = try kiln("test", "p")
        XCTAssertEqual(run.status, 74)
        XCTAssertEqual(firstLine(run), "Error: expected.json is not a fixture file (expected the JSON object {fields, records, unmatched} that kiln test --update writes): records does not have the expected type")
        try "{ not json".write(to: folder.appendingPathComponent("expected.json"), atomically: true, encoding: .utf8)
        XCTAssertTrue(firstLine(try kiln("test", "p")).hasSuffix("that kiln test --update writes): it is not valid JSON"))
    }

    func testDiffOfATableOnlyOneBundleHasCountsItsRows() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "old/env.sqlite").status, 0)
        try pipeline(table: #", { name: "u", columns: [{ name: "v", type: "text" }], query: "SELECT v FROM t" }"#)
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "new/env.sqlite").status, 0)
        let run = try kiln("diff", "old/env.sqlite", "new/env.sqlite", "--manifest", "p")
        XCTAssertTrue(run.stdout.contains("\n      added: 2 rows\n"), run.stdout)
        let back = try kiln("diff", "new/env.sqlite", "old/env.sqlite", "--manifest", "p")
        XCTAssertTrue(back.stdout.contains("\n      removed: 2 rows\n"), back.stdout)
        XCTAssertFalse(back.stdout.contains("removed: ;"), back.stdout)
    }

    func testBundlesDifferingInTheirExtensionKeepTheirOwnReports() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "x/a.sqlite").status, 0)
        XCTAssertEqual(try kiln("build", "p", "--quiet", "--out", "x/a.db").status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("x").path).sorted(),
                       [KilnFileNames.cacheFolder, "a.db", "a.db.report.json", "a.report.json", "a.sqlite"])
    }

    // MARK: Progress

    /// Runs `kiln arguments…` with stderr on a terminal (a pseudo-terminal from `script`); returns what it showed.
    private func kilnOnATerminal(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", ([CLITestCase.executable.path] + arguments).joined(separator: " "), "/dev/null"]
        process.currentDirectoryURL = workingDirectory
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // The live line, redrawn in place after "\r\u{1B}[K" until the next line clears it, is left out.
        let parts = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\r\u{1B}[K")
        return parts.enumerated().filter { $0.offset == parts.count - 1 || $0.element.hasSuffix("\n") }.map(\.element).joined()
    }

    func testProgressShowsOnATerminalOnlyAndNamesALockWait() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a terminal")
        try pipeline()
        let shown = try kilnOnATerminal(["build", "p"])
        XCTAssertTrue(shown.hasPrefix("reading s: 1 file, 4 bytes\n  s: 2 records in "), shown)
        XCTAssertTrue(shown.contains(" s\nchecking 0 rules\nwriting build/env.sqlite\nbuilt build/env.sqlite (bundle env)\n"), shown)
        XCTAssertFalse(try kiln("build", "p").stderr.contains("reading"), "no progress when stderr is not a terminal")
        XCTAssertFalse(try kilnOnATerminal(["build", "p", "--quiet"]).contains("reading"), "nor with --quiet")

        // Another build holds the lock for a second: the wait is shown, then the build goes on.
        let lockPath = file("build/.env.sqlite.lock").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(flock(descriptor, LOCK_EX), 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            unlink(lockPath)
            close(descriptor)
        }
        let waited = try kilnOnATerminal(["build", "p", "--no-cache"])
        XCTAssertTrue(waited.hasPrefix("waiting for another build of build/env.sqlite to finish (lock .env.sqlite.lock)\nreading s: "), waited)
        XCTAssertTrue(waited.contains("built build/env.sqlite (bundle env)\n"), waited)
    }

    func testAnHTMLPageOverItsLimitIsAFinding() throws {
        let folder = file("web")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "web", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "pages", format: "html", path: "*.html", options: { records: "//p", fields: { v: "." }, maxPageBytes: 100 }, into: "t", columns: { v: "v" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let big = "<p>" + String(repeating: "Πάτρα ", count: 20) + "</p>"
        try big.write(to: folder.appendingPathComponent("big.html"), atomically: true, encoding: .utf8)
        try "<p>small</p>".write(to: folder.appendingPathComponent("small.html"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "web")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("  html.too-large (error) ×1\n    web/big.html: the page is \(big.utf8.count) bytes, over the limit of 100 bytes per page (the source's maxPageBytes option); it is not read\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains("  t  1 rows\n"), run.stderr)
    }

    func testAFractionalSchemaVersionSaysWhatWasExpected() throws {
        let folder = try pipeline()
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: 1.5,")
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(folder.appendingPathComponent("kiln.json5"))):1: manifest error at schemaVersion: expected a whole number, not 1.5")
    }

    func testASchemaVersionSQLiteCannotHoldIsRefusedAtItsLine() throws {
        let folder = try pipeline()
        // 2^32 + 1: SQLite keeps the low 32 bits of user_version, so the bundle would say 1 and kiln_metadata 4294967297.
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: "schemaVersion: 1,", with: "\n  schemaVersion: 4294967297,")
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        for command in [["build", "p"], ["check", "build/env.sqlite", "--manifest", "p"]] {
            let run = try kiln(command)
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertEqual(firstLine(run), "Error: p/kiln.json5:2: manifest error at schemaVersion: the schema version 4294967297 is over 2147483647, the largest SQLite's user_version holds (a 32-bit integer)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/env.sqlite").path))
    }

    func testAManifestStringHoldingANulIsNamedAtItsLine() throws {
        let folder = try pipeline()
        try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: #"columns: [{ name: "v", type: "text" }]"#, with: "\n  columns: [{ name: \"v\\u0000\", type: \"text\" }]")
            .write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: p/kiln.json5:3: manifest error: not valid JSON5: the string at tables[0].columns[0].name holds a NUL character (\\u0000), which a manifest may not hold")
    }

    func testInputThatIsNotMarkupIsSaidSoWithoutLibxml2sAdvice() throws {
        let folder = file("x")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "x", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "x", format: "xml", path: "*.xml", options: { record: "r", fields: { v: "." } }, into: "t", columns: { v: "v" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try "plain text, not XML\n".write(to: folder.appendingPathComponent("a.xml"), atomically: true, encoding: .utf8)
        try ("<d>" + String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300) + "</d>")
            .write(to: folder.appendingPathComponent("b.xml"), atomically: true, encoding: .utf8)
        let run = try kiln("build", "x")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("    x/a.xml:1:1: malformed XML: the file holds no XML element: is it XML at all? (libxml2: Document is empty); the rest of this file is not read\n"), run.stderr)
        XCTAssertTrue(run.stderr.contains(": malformed XML: Excessive depth in document: 256 (libxml2's limit, which Kiln keeps); the rest of this file is not read\n"), run.stderr)
        XCTAssertFalse(run.stderr.contains("XML_PARSE_HUGE"), run.stderr)
    }

    func testAStagingDatabaseOfAnyDeadBuildInTheFolderIsRemoved() throws {
        try pipeline()
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        try FileManager.default.createDirectory(at: file("build"), withIntermediateDirectories: true)
        let dead = ".other.sqlite.staging.\(finished.processIdentifier).sqlite"
        let alive = ".other.sqlite.staging.\(ProcessInfo.processInfo.processIdentifier).sqlite"
        let foreign = ".other.sqlite.\(finished.processIdentifier).tmp"
        for name in [dead, alive, foreign] { try "x".write(to: file("build/" + name), atomically: true, encoding: .utf8) }
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        XCTAssertEqual(try hiddenFiles("build"), [alive, foreign].sorted(), "only a dead build's staging database is removed")
    }

    func testCheckCountsEveryFindingAndSaysHowManyWereNotStored() throws {
        let folder = try pipeline(extra: #" rules: [{ code: "every-row", kind: "sql", severity: "warning", sql: "SELECT v FROM t", message: "row {v}" }],"#)
        let count = 250
        try (0..<count).map { "v\($0)\n" }.joined().write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        let text = try kiln("check", "build/env.sqlite", "--manifest", "p")
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains("  … and \(count - 100) more findings not stored (the first 100 of each code are listed)\npassed: 0 errors, \(count) warnings, 0 info\n"), text.stdout)
        let json = try kiln("check", "build/env.sqlite", "--manifest", "p", "--format", "json")
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual((report?["summary"] as? [String: Int])?["warning"], count)
    }

    func testAFolderOrAFIFOGivenAsAnInputIsNamedAndNothingHangs() throws {
        let folder = try pipeline()
        try FileManager.default.removeItem(at: folder.appendingPathComponent("in.txt"))
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("in.txt").path, 0o644), 0)
        let start = Date()
        let fifo = try kiln("build", "p")
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
        XCTAssertEqual(fifo.status, 64)
        XCTAssertEqual(firstLine(fifo), "Error: \(shown(folder.appendingPathComponent("kiln.json5"))):\(try manifestLine(folder, containing: "sources:")): manifest error at sources[0].path: input \"in.txt\" is a FIFO (named pipe), not a regular file")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("in.txt"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("in.txt"), withIntermediateDirectories: true)
        XCTAssertTrue(firstLine(try kiln("build", "p")).hasSuffix("manifest error at sources[0].path: input \"in.txt\" is a folder, not a regular file"))

        try FileManager.default.removeItem(at: folder.appendingPathComponent("in.txt"))
        try "a\n".write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(mkfifo(file("fifo.txt").path, 0o644), 0)
        for (name, kind) in [("fifo.txt", "a FIFO (named pipe)"), ("p", "a folder")] {
            let run = try kiln("extract", "s", name, "--manifest", "p")
            XCTAssertEqual(run.status, 74, name)
            XCTAssertEqual(firstLine(run), "Error: \(name) is \(kind), not a file to extract from")
        }
    }

    func testAGlobOverManyFilesRefusesTheLinksLeadingOutOfThePipelineFolder() throws {
        let folder = try pipeline()
        let manifest = folder.appendingPathComponent("kiln.json5")
        try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "path: \"in.txt\"", with: "path: \"pages/*.txt\"")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let pages = folder.appendingPathComponent("pages")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        for index in 0..<300 { try "v\(index)\n".write(to: pages.appendingPathComponent(String(format: "%03d.txt", index)), atomically: false, encoding: .utf8) }
        try "secret\n".write(to: file("secret.txt"), atomically: true, encoding: .utf8)
        let line = try manifestLine(folder, containing: "sources:")
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0, "300 pages inside the folder")

        // One link among them leading out, through a relative path or a second link.
        try FileManager.default.createSymbolicLink(atPath: pages.appendingPathComponent("150-link.txt").path, withDestinationPath: "../../secret.txt")
        var run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(manifest)):\(line): manifest error at sources[0].path: \"pages/150-link.txt\" leads outside the pipeline "
                           + "folder (to \(file("secret.txt").resolvingSymlinksInPath().path)); inputs must stay inside it")
        try FileManager.default.removeItem(at: pages.appendingPathComponent("150-link.txt"))
        try FileManager.default.createSymbolicLink(atPath: pages.appendingPathComponent("000-link.txt").path, withDestinationPath: "150.txt")
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0, "a link staying inside is read")

        // The folder itself a link leading out: every page of it is refused, the first one named.
        try FileManager.default.moveItem(at: pages, to: file("pages-outside"))
        try FileManager.default.createSymbolicLink(atPath: pages.path, withDestinationPath: "../pages-outside")
        run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(firstLine(run), "Error: \(shown(manifest)):\(line): manifest error at sources[0].path: \"pages/000-link.txt\" leads outside the pipeline "
                           + "folder (to \(file("pages-outside/150.txt").resolvingSymlinksInPath().path)); inputs must stay inside it")
        try FileManager.default.removeItem(at: file("pages-outside/000-link.txt"))
        XCTAssertEqual(firstLine(try kiln("build", "p")), "Error: \(shown(manifest)):\(line): manifest error at sources[0].path: \"pages/000.txt\" leads "
                           + "outside the pipeline folder (to \(file("pages-outside").resolvingSymlinksInPath().path)/000.txt); inputs must stay inside it")
    }

    private func hiddenFiles(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: file(folder).path).filter { $0.hasPrefix(".") && $0 != KilnFileNames.cacheFolder }.sorted()
    }
}

/// The file type bits of a path, without following a link (shared by the output-guard tests).
enum OutputPathKind {
    static func of(_ url: URL) -> mode_t? {
        var status = stat()
        return lstat(url.path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }
}
