import Foundation
import KilnTestSupport
import XCTest

/// `kiln export swift`: the generated file is compiled with `swiftc` against the system libsqlite3 (through Kiln's
/// own CSQLite module map, `-I Sources/CSQLite`) and run on each sample bundle; what it reads is compared with what
/// Python's sqlite3 reads (the oracle).
final class SwiftExportCommandTests: CLITestCase {
    /// Renders values the same way in Swift and in Python: a type letter, then the value (floats as the shortest
    /// repr both languages print; control characters and backslashes as `\u{hex}`).
    private static let pythonDump = #"""
        import sqlite3, sys
        db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
        def render(v):
            if v is None: return "null"
            if isinstance(v, int): return "i:%d" % v
            if isinstance(v, float): return "r:" + repr(v)
            if isinstance(v, bytes): return "b:" + "".join("%x" % b for b in v)
            return "t:" + "".join("\\u{%x}" % ord(c) if ord(c) < 0x20 or c == "\\" else c for c in v)
        for table in sys.argv[2:]:
            columns = [r[1] for r in db.execute("PRAGMA table_xinfo(%s)" % table) if r[6] == 0]
            key = [r[1] for r in sorted(db.execute("PRAGMA table_info(%s)" % table), key=lambda r: r[5]) if r[5] > 0]
            order = ", ".join('"%s"' % k for k in key) or "rowid"
            for row in db.execute("SELECT %s FROM \"%s\" ORDER BY %s" % (", ".join('"%s"' % c for c in columns), table, order)):
                print(table + "\t" + "\t".join(render(v) for v in row))
        """#

    private static let swiftDump = #"""
        let reader = try NAMESPACE.Reader(path: CommandLine.arguments[1])
        func render(_ value: NAMESPACE.Value) -> String {
            switch value {
            case .null: return "null"
            case .integer(let number): return "i:\(number)"
            case .real(let number): return "r:\(number)"
            case .text(let text): return "t:" + text.unicodeScalars.map { $0.value < 0x20 || $0 == "\\" ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
            case .blob(let bytes): return "b:" + bytes.map { String($0, radix: 16) }.joined()
            }
        }
        for type in NAMESPACE.rowTypes {
            for row in try reader.all(type) { print(type.tableName + "\t" + row.values.map(render).joined(separator: "\t")) }
        }
        """#

    /// Builds sample `name`, exports its Swift file, compiles it with `main` (NAMESPACE replaced) and returns the
    /// binary, the bundle and the generated file's text.
    /// A pipeline already in the working folder with its bundle built is exported as it is.
    private func compiled(_ name: String, main: String) throws -> (binary: URL, bundle: URL, source: String) {
        if !FileManager.default.fileExists(atPath: file("build/\(name).sqlite").path) {
            try copy("raw/\(name)", to: name)
            let build = try kiln("build", name, "--out", "build/\(name).sqlite", "--quiet")
            XCTAssertEqual(build.status, 0, build.stderr)
        }
        let export = try kiln("export", "swift", "build/\(name).sqlite", "--manifest", name, "--out", "swift-\(name)")
        XCTAssertEqual(export.status, 0, export.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: file("swift-\(name)").path)
        XCTAssertEqual(files.count, 1, "\(files)")
        let generated = file("swift-\(name)").appendingPathComponent(try XCTUnwrap(files.first))
        let source = try String(contentsOf: generated, encoding: .utf8)
        let namespace = try XCTUnwrap(source.firstMatch(of: /public enum (\w+) \{/)?.1).description
        let mainURL = file("swift-\(name)-main/main.swift")
        try FileManager.default.createDirectory(at: mainURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try main.replacingOccurrences(of: "NAMESPACE", with: namespace).write(to: mainURL, atomically: true, encoding: .utf8)
        let binary = file("swift-\(name)-main/run")
        let compile = try run(URL(fileURLWithPath: "/usr/bin/env"),
                              ["swiftc", "-I", CLITestCase.repositoryRoot.appendingPathComponent("Sources/CSQLite").path, "-lsqlite3",
                               generated.path, mainURL.path, "-o", binary.path])
        XCTAssertEqual(compile.status, 0, "swiftc: " + compile.stderr)
        return (binary, file("build/\(name).sqlite"), source)
    }

    private func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// The shipped tables of a bundle, in the bundle's metadata order (`rows.<table>` entries name them).
    private func tables(of bundle: URL, order source: String) throws -> [String] {
        source.matches(of: /public static let tableName = "(\w+)"/).map { String($0.1) }
    }

    /// The tables the sample's manifest declares `userFilled`, read from its text (a table's `name` at six spaces).
    private func userFilledTables(_ name: String) throws -> Set<String> {
        let text = try String(contentsOf: file("\(name)/kiln.json5"), encoding: .utf8)
        var found: Set<String> = []
        var current: String?
        for line in text.split(separator: "\n") {
            if let match = line.firstMatch(of: /^      name: "(\w+)",/) { current = String(match.1) }
            if line.contains("userFilled: true"), let current { found.insert(current) }
        }
        return found
    }

    func testEveryRowOfEverySampleBundleDecodesAsPythonReadsIt() throws {
        try TestTier.requireFull("the Python oracles")
        for name in ["patras", "atlas", "itravel", "museum", "patras-web"] {
            let (binary, bundle, source) = try compiled(name, main: SwiftExportCommandTests.swiftDump)
            let swift = try run(binary, [bundle.path])
            XCTAssertEqual(swift.status, 0, "\(name): " + swift.stderr)
            let tables = try tables(of: bundle, order: source)
            XCTAssertFalse(tables.isEmpty, name)
            let python = try PythonOracle.lines(ofProgram: SwiftExportCommandTests.pythonDump, [bundle.path] + tables)
            let lines = swift.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            XCTAssertEqual(lines.count, python.count, name)
            XCTAssertEqual(lines, python, name)
            // Constants: the schema version, and the content digest kiln patch would compute.
            XCTAssertTrue(source.contains("public static let schemaVersion: Swift.Int = 1\n"), name)
            // The content digest from its definition (scripts/oracles/bundle_patch.py): the shipped tables the app
            // does not fill, and kiln_metadata.
            let userFilled = try userFilledTables(name)
            let digest = try PythonOracle.text("bundle_patch.py", ["digest", bundle.path] + tables.filter { !userFilled.contains($0) } + ["kiln_metadata"])
            XCTAssertTrue(source.contains("public static let contentDigest: Swift.String = \"\(digest.trimmingCharacters(in: .newlines))\"\n"), name)
            XCTAssertTrue(source.contains("#if canImport(GRDB)\nextension "), name)
            // GRDB's DatabaseValue through its throwing decode, checked as the reader checks it: never GRDB's subscript
            // (it traps) nor its typed decoding (SQLite's conversion: a text latitude reads as 0.0). scripts/grdb-check
            // compiles and runs these against GRDB.
            XCTAssertTrue(source.contains(".Value(try row.decode(GRDB.DatabaseValue.self, forColumn: "), name)
            XCTAssertFalse(source.contains("row[\""), name)
            XCTAssertFalse(source.contains("try row.decode(forColumn: "), name)
        }
    }

    func testKeyForeignKeySearchAndRegionQueriesAnswerAsSQLiteDoes() throws {
        try TestTier.requireFull("the Python oracles")
        let patrasMain = #"""
            let reader = try NAMESPACE.Reader(path: CommandLine.arguments[1])
            print(try reader.stop(code: "0102")?.name ?? "none")
            print(try reader.stop(code: "9999")?.name ?? "none")
            print(try reader.searchStop("κορινθου", limit: 100).map(\.code).joined(separator: ","))
            print(try reader.routeStopByStopCode(stopCode: "0102").map { "\($0.lineId)/\($0.position)" }.joined(separator: ","))
            """#
        let (binary, bundle, _) = try compiled("patras", main: patrasMain)
        let swift = try run(binary, [bundle.path])
        XCTAssertEqual(swift.status, 0, swift.stderr)
        let python = try PythonOracle.lines(ofProgram: #"""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            print(db.execute("SELECT name FROM stop WHERE code = '0102'").fetchone()[0])
            print("none")
            print(",".join(r[0] for r in db.execute("SELECT s.code FROM stop_search s WHERE stop_search MATCH 'κορινθου' ORDER BY rank, rowid LIMIT 100")))
            print(",".join("%s/%d" % r for r in db.execute("SELECT line_id, position FROM route_stop WHERE stop_code = '0102' ORDER BY line_id, position")))
            """#, [bundle.path])
        XCTAssertEqual(swift.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init), python)
        XCTAssertGreaterThan(python[2].split(separator: ",").count, 1, "several stops are called Κορίνθου")

        // A region around the first listing with coordinates, 0.2° each way; and one in the Gulf of Guinea.
        let itravelMain = #"""
            let reader = try NAMESPACE.Reader(path: CommandLine.arguments[1])
            let lat = Double(CommandLine.arguments[2])!, lon = Double(CommandLine.arguments[3])!
            print("ids " + (try reader.listingIn(latitude: (lat - 0.2)...(lat + 0.2), longitude: (lon - 0.2)...(lon + 0.2)).map { String($0.id) }.joined(separator: ",")))
            print(try reader.listingIn(latitude: 0...1, longitude: 0...1).count)
            """#
        let (itravel, itravelBundle, _) = try compiled("itravel", main: itravelMain)
        let first = try PythonOracle.lines(ofProgram: "import sqlite3, sys; print(*sqlite3.connect(sys.argv[1]).execute('SELECT lat, lon FROM listing WHERE lat IS NOT NULL ORDER BY id LIMIT 1').fetchone())",
                                           [itravelBundle.path])[0].split(separator: " ").map(String.init)
        let region = try run(itravel, [itravelBundle.path] + first)
        XCTAssertEqual(region.status, 0, region.stderr)
        let expected = try PythonOracle.lines(ofProgram: #"""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            lat, lon = float(sys.argv[2]), float(sys.argv[3])
            print("ids " + ",".join(str(r[0]) for r in db.execute("SELECT id FROM listing WHERE lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? ORDER BY id", (lat - 0.2, lat + 0.2, lon - 0.2, lon + 0.2))))
            print(0)
            """#, [itravelBundle.path] + first)
        XCTAssertEqual(region.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init), expected)
        XCTAssertGreaterThan(expected[0].split(separator: ",").count, 1, "the region holds several listings")
    }

    func testAReaderRefusesABundleOfAnotherSchemaVersion() throws {
        let main = #"""
            do { _ = try NAMESPACE.Reader(path: CommandLine.arguments[1]); print("opened") } catch { print(error) }
            """#
        let (binary, bundle, _) = try compiled("atlas", main: main)
        let database = try PythonOracle.lines(ofProgram: "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA user_version = 7'); db.commit(); print('ok')", [bundle.path])
        XCTAssertEqual(database, ["ok"])
        let opened = try run(binary, [bundle.path])
        XCTAssertEqual(opened.stdout, "SQLite error 20: \(bundle.path) has schema version 7; this code reads version 1\n")
    }

    /// Keywords, the reader's own method names and a column `self` as names: the file compiles, and every row, a key
    /// query, a foreign-key query through the column `self` and a search read what the inputs hold.
    func testHostileNamesCompileAndReadTheirRows() throws {
        try buildHostileNames("hostile")
        let main = #"""
            let reader = try NAMESPACE.Reader(path: CommandLine.arguments[1])
            for row in try reader.allIn() { print(row.`self`, row.statement, row.row, row.`init`, row.tableName, row.`in`) }
            print(try reader.`in`(self: "s2")?.`init` ?? "none")
            print(try reader.defaultBySelf(self: "s1").map(\.rows).joined(separator: ","), try reader.`default`(rows: "r2")?.type ?? 0)
            print(try reader.searchIn("second").map(\.`self`), try reader.select(handle: 2)?.value ?? "none", try reader.handle(id: 10)?.`protocol` ?? "none")
            """#
        let (binary, bundle, source) = try compiled("hostile", main: main)
        XCTAssertTrue(source.contains("public struct In: Row, Swift.Equatable, Swift.Sendable {"), source)
        let swift = try run(binary, [bundle.path])
        XCTAssertEqual(swift.status, 0, swift.stderr)
        // What the inputs hold (CLITestCase.hostileNamesInputs).
        XCTAssertEqual(swift.stdout, "s1 t1 7 first words n1 k1\ns2 t2 8 second words n2 k2\nsecond words\nr1,r3 2.5\n[\"s2\"] v2 p10\n")
    }

    /// A table or column whose Swift name would be one of the generated runtime's (`Value`, `Row`, `Reader`,
    /// `Statement`, `ReaderError`), a keyword type (`Self`, `Protocol`), another table's (`a_b`, `a__b`) or the row's
    /// `values` is refused naming it and the clash, and no file is written.
    func testNamesThatWouldClashInTheSwiftFileAreRefusedNamingTheClash() throws {
        let cases: [(tables: [(name: String, columns: [String])], message: String)] = [
            ([("value", ["v"])], "table \"value\" would be the Swift type Value, which is the reader's type of SQLite values in the generated code: rename it in the manifest"),
            ([("row", ["v"])], "table \"row\" would be the Swift type Row, which is the protocol of every row type"),
            ([("reader", ["v"])], "table \"reader\" would be the Swift type Reader, which is the reader"),
            ([("statement", ["v"])], "table \"statement\" would be the Swift type Statement, which is the reader's statement type"),
            ([("reader_error", ["v"])], "table \"reader_error\" would be the Swift type ReaderError, which is the reader's error type"),
            ([("self", ["v"])], "table \"self\" would be the Swift type Self, which is a Swift keyword"),
            ([("protocol", ["v"])], "table \"protocol\" would be the Swift type Protocol, which is a Swift keyword"),
            ([("swift", ["v"])], "table \"swift\" would be the Swift type Swift, which is a module the file names"),
            ([("hostile_bundle", ["v"])], "table \"hostile_bundle\" would be the Swift type HostileBundle, which is the namespace of every generated type"),
            ([("a_b", ["v"]), ("a__b", ["v"])], "tables \"a_b\" and \"a__b\" would both be the Swift type AB: rename one in the manifest"),
            ([("t", ["values"])], "column \"values\" of table t would be the Swift property values, which is the row's values in column order"),
            ([("t", ["a_b", "a__b"])], "columns \"a_b\" and \"a__b\" of table t would both be the Swift property aB: rename one in the manifest"),
        ]
        for (index, (tables, message)) in cases.enumerated() {
            let name = "clash\(index)"
            try buildHostileNames(name, manifest: CLITestCase.namesOnlyManifest(tables), inputs: [:])
            let export = try kiln("export", "swift", "build/\(name).sqlite", "--manifest", name, "--out", "swift-\(name)")
            XCTAssertEqual(export.status, 1, export.stderr)
            XCTAssertTrue(export.stderr.contains(message), export.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("swift-\(name)").path), "nothing was written")
        }
    }

    func testBadBundlesAndOutputsAreClearErrors() throws {
        try copy("raw/patras", to: "patras")
        try copy("raw/atlas", to: "atlas")
        XCTAssertEqual(try kiln("build", "atlas", "--out", "atlas.sqlite", "--quiet").status, 0)
        let other = try kiln("export", "swift", "atlas.sqlite", "--manifest", "patras", "--out", "out")
        XCTAssertEqual(other.status, 1)
        XCTAssertTrue(other.stderr.contains("atlas.sqlite is a bundle of pipeline \"atlas\", not of \"patras\""), other.stderr)
        let missing = try kiln("export", "swift", "nothing.sqlite", "--manifest", "patras", "--out", "out")
        XCTAssertEqual(missing.status, 74, missing.stderr)
        try "not a database".write(to: file("text.sqlite"), atomically: true, encoding: .utf8)
        let foreign = try kiln("export", "docs", "text.sqlite", "--manifest", "patras", "--out", "out")
        XCTAssertEqual(foreign.status, 1)
        XCTAssertTrue(foreign.stderr.contains("text.sqlite is not an SQLite database"), foreign.stderr)
        let intoPipeline = try kiln("export", "datasette", "atlas.sqlite", "--manifest", "atlas", "--out", "atlas")
        XCTAssertEqual(intoPipeline.status, 64, intoPipeline.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out").path), "nothing was written")
        let unknown = try kiln("export", "kotlin", "atlas.sqlite", "--manifest", "atlas", "--out", "out")
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("declares no export \"kotlin\"; exports: swift, datasette, docs"), unknown.stderr)
    }
}
