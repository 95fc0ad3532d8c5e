import Foundation
import KilnTestSupport
import XCTest

/// `kiln export datasette` and `kiln export docs`, through the binary. The Datasette metadata is tried with Datasette
/// itself and sqlite-utils from PyPI (pinned in scripts/oracles/requirements.txt), served on 127.0.0.1 on a free
/// port; expected rows come from Python's sqlite3.
final class DatasetteExportCommandTests: CLITestCase {
    private static let oracles = CLITestCase.repositoryRoot.appendingPathComponent(".build/oracles/bin")

    private func built(_ name: String) throws -> URL {
        try copy("raw/\(name)", to: name)
        let build = try kiln("build", name, "--out", "build/\(name).sqlite", "--quiet")
        XCTAssertEqual(build.status, 0, build.stderr)
        return file("build/\(name).sqlite")
    }

    /// Serves `bundle` with Datasette (with `metadata` when given) and returns `body` run against its port.
    private func withDatasette<T>(_ bundle: URL, metadata: URL?, _ body: (Int) throws -> T) throws -> T {
        let datasette = DatasetteExportCommandTests.oracles.appendingPathComponent("datasette")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: datasette.path), "datasette is not installed in .build/oracles")
        let port = try XCTUnwrap(Int(try PythonOracle.lines(ofProgram: "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])", [])[0]))
        let process = Process()
        process.executableURL = datasette
        process.arguments = ["serve", bundle.path, "--host", "127.0.0.1", "--port", String(port)] + (metadata.map { ["--metadata", $0.path] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        for _ in 0..<100 {
            if (try? get(port, "/-/versions.json")) != nil { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try body(port)
    }

    /// What Datasette answers at `path`, fetched by Python (no proxy).
    private func page(_ port: Int, _ path: String) throws -> String {
        try PythonOracle.lines(ofProgram: """
            import sys, urllib.request
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            try:
                print(opener.open("http://127.0.0.1:" + sys.argv[1] + sys.argv[2], timeout=5).read().decode())
            except OSError as error:
                sys.exit(1)
            """, [String(port), path]).joined(separator: "\n")
    }

    /// The JSON Datasette answers at `path`.
    private func get(_ port: Int, _ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try page(port, path).utf8))
    }

    private func pythonRows(_ bundle: URL, _ sql: String) throws -> [String] {
        try PythonOracle.lines(ofProgram: "import sqlite3, sys\nfor row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print(row[0])", [bundle.path, sql])
    }

    func testSearchReturnsOnlyTheMatchingRowsWithTheMetadataAndTheShadowTablesAreHidden() throws {
        try TestTier.requireFull("the Python oracles (Datasette, sqlite-utils)")
        let bundle = try built("patras")
        let export = try kiln("export", "datasette", "build/patras.sqlite", "--manifest", "patras", "--out", "meta")
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertEqual(export.stderr, "wrote meta/patras.metadata.json\n")
        let metadata = file("meta/patras.metadata.json")
        let expected = try pythonRows(bundle, "SELECT code FROM stop_search WHERE stop_search MATCH 'κορινθου' ORDER BY code")
        XCTAssertEqual(expected.count, 3)
        let all = try pythonRows(bundle, "SELECT count(*) FROM stop")
        let search = "/patras/stop.json?_shape=array&_size=max&_search=%CE%BA%CE%BF%CF%81%CE%B9%CE%BD%CE%B8%CE%BF%CF%85"
        // Even without the metadata, Datasette finds stop's FTS table through its `content="stop"`: only the matches.
        XCTAssertGreaterThan(Int(all[0]) ?? 0, expected.count)
        let without = try withDatasette(bundle, metadata: nil) { port in try get(port, search) as? [[String: Any]] }
        XCTAssertEqual(without?.compactMap { $0["code"] as? String }.sorted(), expected)
        try withDatasette(bundle, metadata: metadata) { port in
            let rows = try XCTUnwrap(try get(port, search) as? [[String: Any]])
            XCTAssertEqual(rows.compactMap { $0["code"] as? String }.sorted(), expected)
            let database = try XCTUnwrap(try get(port, "/patras.json") as? [String: Any])
            let tables = try XCTUnwrap(database["tables"] as? [[String: Any]])
            let hidden = Set(tables.filter { $0["hidden"] as? Bool == true }.compactMap { $0["name"] as? String })
            let shadow = try pythonRows(bundle, "SELECT name FROM pragma_table_list WHERE type IN ('shadow', 'virtual')")
            XCTAssertEqual(hidden, Set(shadow))
            XCTAssertTrue(tables.contains { $0["name"] as? String == "stop" && $0["hidden"] as? Bool == false })
            // The table's page shows its description and source.
            let page = try page(port, "/patras/stop")
            XCTAssertTrue(page.contains("Bus stops. Codes are unique; names are not (several stops are called Κορίνθου)."), page)
            XCTAssertTrue(page.contains("stops (delimited, StopsUTF8.txt)"), page)
        }
        // Two exports give the same bytes.
        let first = try sha256("meta/patras.metadata.json")
        XCTAssertEqual(try kiln("export", "datasette", "build/patras.sqlite", "--manifest", "patras", "--out", "meta").status, 0)
        XCTAssertEqual(try sha256("meta/patras.metadata.json"), first)
    }

    func testATableWhoseRowidsHaveGapsIsSearchedThroughItsOwnRowids() throws {
        try TestTier.requireFull("the Python oracles (Datasette, sqlite-utils)")
        let bundle = try built("itravel")
        XCTAssertEqual(try kiln("export", "datasette", "build/itravel.sqlite", "--manifest", "itravel", "--out", "meta").status, 0)
        let metadata = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file("meta/itravel.metadata.json"))) as? [String: Any])
        let database = try XCTUnwrap((metadata["databases"] as? [String: Any])?["itravel"] as? [String: Any])
        let listing = try XCTUnwrap((database["tables"] as? [String: Any])?["listing"] as? [String: Any])
        // The listings' rowids are their stable ids, far from 1, 2, 3…; the full-text table shares them.
        XCTAssertEqual(try pythonRows(bundle, "SELECT min(rowid) = 1 AND max(rowid) = count(*) FROM listing")[0], "0")
        XCTAssertEqual(listing["fts_table"] as? String, "listing_search")
        XCTAssertEqual(listing["fts_pk"] as? String, "rowid")
        // A word of the first listing's name: letters only, so that no FTS syntax is involved.
        let words = try pythonRows(bundle, "SELECT name FROM listing ORDER BY id").flatMap { $0.split(separator: " ").map(String.init) }
        let word = try XCTUnwrap(words.first { $0.count >= 4 && $0.allSatisfy { $0.isASCII && $0.isLetter } })
        let expected = try pythonRows(bundle, "SELECT id FROM listing_search WHERE listing_search MATCH '\(word)' ORDER BY id")
        XCTAssertFalse(expected.isEmpty)
        try withDatasette(bundle, metadata: file("meta/itravel.metadata.json")) { port in
            let path = "/itravel/listing.json?_shape=array&_size=max&_search=\(word)"
            let rows = try XCTUnwrap(try get(port, path) as? [[String: Any]])
            XCTAssertEqual(rows.compactMap { ($0["id"] as? Int).map(String.init) }.sorted { Int($0)! < Int($1)! }, expected)
        }
    }

    func testSqliteUtilsSearchesTheFullTextTable() throws {
        try TestTier.requireFull("the Python oracles (Datasette, sqlite-utils)")
        let bundle = try built("patras")
        let tool = DatasetteExportCommandTests.oracles.appendingPathComponent("sqlite-utils")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: tool.path), "sqlite-utils is not installed in .build/oracles")
        let expected = try pythonRows(bundle, "SELECT code FROM stop_search WHERE stop_search MATCH 'κορινθου' ORDER BY code")
        XCTAssertFalse(expected.isEmpty)
        // The full-text table itself, and the data table: sqlite-utils finds its index through `content='stop'`.
        for table in ["stop_search", "stop"] {
            let process = Process(), out = Pipe(), err = Pipe()
            process.executableURL = tool
            process.arguments = ["search", bundle.path, table, "κορινθου", "--csv", "-c", "code"]
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, table + ": " + String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            let codes = text.split(whereSeparator: \.isNewline).dropFirst().map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }.sorted()
            XCTAssertEqual(codes, expected, table)
        }
    }

    func testTheDataDictionarySaysWhatTheManifestSays() throws {
        let bundle = try built("atlas")
        let export = try kiln("export", "docs", "build/atlas.sqlite", "--manifest", "atlas", "--out", "docs")
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertEqual(export.stderr, "wrote docs/atlas.md\nwrote docs/atlas.html\n")
        let markdown = try String(contentsOf: file("docs/atlas.md"), encoding: .utf8)
        let html = try String(contentsOf: file("docs/atlas.html"), encoding: .utf8)
        // Every table's row count (Python's sqlite3) and the manifest's descriptions, in both.
        let manifest = try String(contentsOf: file("atlas/kiln.json5"), encoding: .utf8)
        for table in ["mushroom", "synonym", "finds"] {
            let rows = try pythonRows(bundle, "SELECT count(*) FROM \(table)")[0]
            XCTAssertTrue(markdown.contains("## \(table)\n\n"), table)
            XCTAssertTrue(markdown.contains("| \(table) | \(rows) |"), table)
            XCTAssertTrue(html.contains("<h2 id=\"\(table)\">\(table)</h2>"), table)
        }
        let findsDescription = "The user's finds: shipped empty, filled by the app. The CHECKs keep the app's inserts valid."
        XCTAssertTrue(manifest.contains(findsDescription))
        XCTAssertTrue(markdown.contains(findsDescription))
        XCTAssertTrue(html.contains("The user&#39;s finds") || html.contains("The user's finds"), "the description, escaped")
        XCTAssertTrue(markdown.contains("filled by the app (userFilled)"))
        XCTAssertTrue(markdown.contains("| category | TEXT | no |  | one of mushroom, raspberries, blueberries, elder |"), markdown)
        XCTAssertTrue(markdown.contains("| latin | TEXT | yes |  | → mushroom.latin |"), markdown)
        XCTAssertFalse(html.contains("<script"))
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"))
    }
}
