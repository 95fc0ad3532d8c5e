import Foundation
import KilnTestSupport
import XCTest

/// The search accessors of `kiln export swift` and `kiln export room` on what users type into a search box: the
/// generated Swift is compiled and run against the iOS bundle (FTS5), the generated Kotlin compiled and run on the
/// JVM, its FTS4 queries run on the Android bundle through the sqlite3 shell with Android's build options
/// (scripts/android-sqlite). The rows expected come from an independent oracle: Python's fold (scripts/oracles/
/// text_fold.py, Kiln's rule over Python's Unicode database), every word quoted, the last a prefix, run by Python's
/// sqlite3 on the iOS bundle. Each generated fold is also checked against the folded column Kiln stored.
final class SearchAccessorCommandTests: CLITestCase {
    /// Stop names with apostrophes, hyphens, quotes, FTS syntax, accents, Greek (monotonic and polytonic), and
    /// letters whose case folding is not their lower case.
    private static let stops = [
        "O'Higgins", "Avenida Eva Perón", "Eva-Perón Plaza", "\"Near\" Station", "Near And Far", "Star*Point", "Not Or And",
        "Straße der Einheit", "Πανεπιστήμιο", "ΚΟΡΙΝΘΟΥ & Αγίου Ανδρέου", "Ὁδὸς Ἑρμοῦ", "Οδός Κορίνθου", "ﬁre station",
        "Ꭰꭱ Cherokee", "İstanbul Caddesi", "Łódź Fabryczna", "Plaça de l'Àngel", "Σίσυφος", "^Caret", "name:Colon",
    ]

    /// What users type, one a line (the empty line is the empty search).
    private static let queries = [
        "O'Higgins", "o'hig", "Higgins", "eva-peron", "Eva Perón", "EVA PERON", "eva\"peron", "\"Near\"", "\"", "*", "near*",
        "NEAR", "NEAR(eva peron)", "eva NEAR peron", "AND", "and or not", "OR", "NOT Eva", "-eva", "eva OR plaza", "", "   ",
        "'", "--", "Πανεπιστήμιο", "πανεπ", "ΠΑΝΕΠΙΣΤΗΜΙΟ", "κορίνθου", "ΚΟΡΙΝΘΟΥ", "οδος ερμου", "σισυφοσ", "ΣΊΣΥΦΟΣ", "Straße",
        "STRASSE", "strasse einheit", "star*point", "star", "^caret", "name:colon", "name : colon", "ꭰꭱ", "ᏐᏑ", "FIRE", "fi",
        "istanbul", "lodz", "placa de l'angel", "l'àngel", "pérón plaza", "{name}: eva", "eva)", "(eva", "e\u{301}va",
    ]

    /// The oracle: for each query of argv[3] (one a line), the codes the iOS bundle argv[1] holds for it, sorted,
    /// after the query is folded by text_fold.py (argv[2]'s folder) and quoted word by word.
    private static let oracle = #"""
        import sqlite3, sys, unicodedata
        sys.path.insert(0, sys.argv[2])
        from text_fold import rule_fold
        db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
        def term(c): return unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Co"
        for query in open(sys.argv[3], encoding="utf-8").read().split("\n")[:-1]:
            words = [w for w in rule_fold(query).split() if any(term(c) for c in w)]
            if not words:
                print(query + "\t")
                continue
            fts = " ".join('"' + w.replace('"', '""') + '"' for w in words) + "*"
            codes = [r[0] for r in db.execute("SELECT t.code FROM stop_search AS f JOIN stop AS t ON t.rowid = f.rowid WHERE stop_search MATCH ? ORDER BY t.code", (fts,))]
            print(query + "\t" + ",".join(codes))
        """#

    private static let swiftMain = #"""
        import Foundation
        let reader = try NAMESPACE.Reader(path: CommandLine.arguments[1])
        let queries = try String(contentsOfFile: CommandLine.arguments[2], encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for query in queries {
            print(String(query) + "\t" + (try reader.searchStop(String(query), limit: 1000)).map(\.code).sorted().joined(separator: ","))
        }
        for stop in try reader.allStop() where NAMESPACE.Search.fold(stop.name) != stop.searchName {
            print("fold differs: \(stop.name) -> \(NAMESPACE.Search.fold(stop.name)), stored \(stop.searchName)")
        }
        """#

    private static let kotlinMain = #"""
        fun main(args: Array<String>) {
            for (query in java.io.File(args[0]).readText().split("\n").dropLast(1)) {
                println(query + "\t" + (OBJECT.stopSearchMatch(query) ?: "-"))
            }
            for (line in java.io.File(args[1]).readText().split("\n").dropLast(1)) {
                val (name, stored) = line.split("\t")
                if (OBJECT.fold(name) != stored) println("fold differs: " + name + " -> " + OBJECT.fold(name) + ", stored " + stored)
            }
        }
        """#

    private func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.currentDirectoryURL = workingDirectory
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data((input ?? "").utf8))
        try stdin.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The stops pipeline with both targets, built; returns the oracle's lines (`query\tcodes`).
    private func builtStreets() throws -> [String] {
        let folder = try writePipeline("streets", manifest: """
            {
              bundle: "streets",
              schemaVersion: 1,
              targets: { ios: "15", android: "24" },
              tables: [{
                name: "stop",
                columns: [
                  { name: "code", type: "text" },
                  { name: "name", type: "text", notNull: true },
                  { name: "search_name", type: "text", notNull: true },
                ],
                primaryKey: ["code"],
                fullText: { name: "stop_search", columns: ["name", "search_name"], unindexed: ["code"] },
              }],
              sources: [{
                name: "stops", format: "delimited", path: "stops.txt",
                options: { separator: "\\t", fields: ["code", "name"] },
                into: "stop",
                columns: { code: "code", name: "name", search_name: { field: "name", normalize: ["fold"] } },
              }],
            }
            """)
        let lines = SearchAccessorCommandTests.stops.enumerated().map { String(format: "%04d", $0.offset + 1) + "\t" + $0.element }
        try (lines.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("stops.txt"), atomically: true, encoding: .utf8)
        let build = try kiln("build", "streets", "--quiet")
        XCTAssertEqual(build.status, 0, build.stderr + build.stdout)
        try (SearchAccessorCommandTests.queries.joined(separator: "\n") + "\n").write(to: file("queries.txt"), atomically: true, encoding: .utf8)
        let expected = try PythonOracle.lines(ofProgram: SearchAccessorCommandTests.oracle,
                                              [file("build/streets.sqlite").path, CLITestCase.repositoryRoot.appendingPathComponent("scripts/oracles").path, file("queries.txt").path])
        XCTAssertEqual(expected.count, SearchAccessorCommandTests.queries.count)
        // The oracle finds what a person would: the apostrophe, the hyphen and Greek without accents find their stop.
        XCTAssertTrue(expected.contains("O'Higgins\t0001"), "\(expected)")
        XCTAssertTrue(expected.contains("eva-peron\t0002,0003"), "\(expected)")
        XCTAssertTrue(expected.contains("ΠΑΝΕΠΙΣΤΗΜΙΟ\t0009"), "\(expected)")
        XCTAssertTrue(expected.contains("\t"), "\(expected)")
        return expected
    }

    func testTheSwiftSearchFindsWhatTheOracleFindsOnTheIOSBundle() throws {
        let expected = try builtStreets()
        let export = try kiln("export", "swift", "build/streets.sqlite", "--manifest", "streets", "--out", "swift")
        XCTAssertEqual(export.status, 0, export.stderr)
        let generated = file("swift/StreetsBundle.swift")
        try FileManager.default.createDirectory(at: file("main"), withIntermediateDirectories: true)
        try SearchAccessorCommandTests.swiftMain.replacingOccurrences(of: "NAMESPACE", with: "StreetsBundle")
            .write(to: file("main/main.swift"), atomically: true, encoding: .utf8)
        let compile = try run("swiftc", ["-I", CLITestCase.repositoryRoot.appendingPathComponent("Sources/CSQLite").path, "-lsqlite3",
                                         generated.path, file("main/main.swift").path, "-o", file("main/run").path])
        XCTAssertEqual(compile.status, 0, "swiftc: " + compile.stderr)
        let swift = try run(file("main/run").path, [file("build/streets.sqlite").path, file("queries.txt").path])
        XCTAssertEqual(swift.status, 0, swift.stderr)
        let lines = swift.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        XCTAssertEqual(lines, expected)
    }

    func testTheKotlinQueriesFindWhatTheOracleFindsOnTheAndroidBundle() throws {
        try TestTier.requireFull("kotlinc and the Android sqlite3 shell")
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/kotlinc") else {
            throw XCTSkip("kotlinc is not installed (scripts/install-deps installs Debian's kotlin)")
        }
        let shell = CLITestCase.repositoryRoot.appendingPathComponent(".build/android-sqlite/bin/sqlite3").path
        guard FileManager.default.isExecutableFile(atPath: shell) else {
            throw XCTSkip("the Android sqlite3 shell is not built (scripts/android-sqlite builds it)")
        }
        let expected = try builtStreets()
        let export = try kiln("export", "room", "build/streets.sqlite", "--manifest", "streets", "--out", "room")
        XCTAssertEqual(export.status, 0, export.stderr)
        let search = file("room/streets/StreetsSearch.kt")
        let source = try String(contentsOf: search, encoding: .utf8)
        XCTAssertTrue(source.contains("public fun stopSearchMatch(text: kotlin.String): kotlin.String? = fts4Query(text, fold = true)"), source)
        try SearchAccessorCommandTests.kotlinMain.replacingOccurrences(of: "OBJECT", with: "streets.StreetsSearch")
            .write(to: file("Main.kt"), atomically: true, encoding: .utf8)
        // The folded column as Kiln stored it, for the Kotlin fold to be compared with.
        let stored = try run(shell, ["-separator", "\t", file("build/streets.android.sqlite").path, "SELECT name, search_name FROM stop ORDER BY code"])
        XCTAssertEqual(stored.status, 0, stored.stderr)
        try stored.stdout.write(to: file("stored.txt"), atomically: true, encoding: .utf8)
        let compile = try run("/usr/bin/kotlinc", [search.path, file("Main.kt").path, "-include-runtime", "-d", file("search.jar").path])
        XCTAssertEqual(compile.status, 0, "kotlinc: " + compile.stderr)
        XCTAssertFalse(compile.stderr.contains("error:"), compile.stderr)
        let kotlin = try run("java", ["-jar", file("search.jar").path, file("queries.txt").path, file("stored.txt").path])
        XCTAssertEqual(kotlin.status, 0, kotlin.stderr)
        let lines = kotlin.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        XCTAssertEqual(lines.count, SearchAccessorCommandTests.queries.count, kotlin.stdout)
        // Each query the Kotlin builds, run on the Android bundle as the DAO would run it.
        var found: [String] = []
        for line in lines {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { XCTFail(line); continue }
            guard parts[1] != "-" else { found.append(parts[0] + "\t"); continue }
            let sql = "SELECT t.code FROM stop AS t JOIN stop_search AS f ON t.rowid = f.rowid WHERE stop_search MATCH '\(parts[1].replacingOccurrences(of: "'", with: "''"))' ORDER BY t.code;"
            let result = try run(shell, [file("build/streets.android.sqlite").path], input: sql)
            XCTAssertEqual(result.status, 0, "\(parts[1]): " + result.stderr)
            XCTAssertEqual(result.stderr, "", parts[1])
            found.append(parts[0] + "\t" + result.stdout.split(separator: "\n").joined(separator: ","))
        }
        XCTAssertEqual(found, expected)
    }
}
