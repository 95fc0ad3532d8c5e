import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Manifests that try to read outside their pipeline folder or to smuggle SQL through names, beyond the cases
/// `ManifestLoaderTests` covers; and the command line's way out, `allowedPaths` (`kiln build --allow-path`).
final class HostileManifestTests: KilnTestCase {
    /// A pipeline whose one source reads `path` into a table named `table` with a column named `column`.
    private func manifest(path: String, table: String = "stop", column: String = "name", bundle: String = "tiny") -> String {
        """
        {
          bundle: \(json(bundle)),
          schemaVersion: 1,
          tables: [{ name: \(json(table)), columns: [{ name: \(json(column)), type: "text" }] }],
          sources: [{ name: "stops", format: "delimited", path: \(json(path)), options: { fields: ["name"] },
                      into: \(json(table)), columns: { \(json(column)): "name" } }],
        }
        """
    }

    /// `text` as a JSON string literal.
    private func json(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// Writes a pipeline `pipe` with `manifest` and a `stops.txt`; returns its folder.
    @discardableResult
    private func pipeline(_ manifest: String) throws -> URL {
        try write(manifest, to: "pipe/kiln.json5")
        try write("Πάτρα\n", to: "pipe/stops.txt")
        return temporaryDirectory.appendingPathComponent("pipe")
    }

    /// The manifest issue loading `folder` fails with (key path and message).
    private func issue(_ folder: URL, allowed: [URL] = [], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try ManifestLoader.load(folder.path, allowedPaths: allowed)
            XCTFail("the manifest loaded, but should have failed", file: file, line: line)
        } catch KilnError.manifest(let issue) {
            return "\(issue.keyPath): \(issue.message)"
        } catch {
            XCTFail("expected KilnError.manifest, got \(error)", file: file, line: line)
        }
        return nil
    }

    // MARK: Paths

    func testPathsEscapingThePipelineFolderAreRefused() throws {
        XCTAssertEqual(issue(try pipeline(manifest(path: "../../etc/passwd"))),
                       "sources[0].path: \"../../etc/passwd\" leaves the pipeline folder")
        XCTAssertEqual(issue(try pipeline(manifest(path: "data/../../stops.txt"))),
                       "sources[0].path: \"data/../../stops.txt\" leaves the pipeline folder")
        XCTAssertEqual(issue(try pipeline(manifest(path: "/etc/passwd"))),
                       "sources[0].path: \"/etc/passwd\" is an absolute path; source paths are relative to the pipeline folder")
        XCTAssertEqual(issue(try pipeline(manifest(path: "/etc/*"))),
                       "sources[0].path: \"/etc/*\" is an absolute path; source paths are relative to the pipeline folder")
    }

    func testSymlinkedFolderLeadingOutsideIsRefusedForGlobsToo() throws {
        let outside = try write("secret\n", to: "outside/secret.txt").deletingLastPathComponent()
        let folder = try pipeline(manifest(path: "data/*.txt"))
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("data"), withDestinationURL: outside)
        let found = try XCTUnwrap(issue(folder))
        XCTAssertTrue(found.hasPrefix("sources[0].path: \"data/secret.txt\" leads outside the pipeline folder (to "), found)
        XCTAssertTrue(found.hasSuffix("outside/secret.txt); inputs must stay inside it"), found)
    }

    func testAGlobOverManyFilesStillRefusesTheOneLinkLeadingOut() throws {
        try write("secret\n", to: "outside/secret.txt")
        let folder = try pipeline(manifest(path: "data/*.txt"))
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let names = (0..<200).map { String(format: "page-%03d.txt", $0) } + ["page 50% Πάτρα.txt"]
        for name in names { try "x\n".write(to: data.appendingPathComponent(name), atomically: false, encoding: .utf8) }
        try FileManager.default.createSymbolicLink(atPath: data.appendingPathComponent("page-100b.txt").path, withDestinationPath: "../../outside/secret.txt")
        let found = try XCTUnwrap(issue(folder))
        XCTAssertTrue(found.hasPrefix("sources[0].path: \"data/page-100b.txt\" leads outside the pipeline folder (to "), found)
        XCTAssertTrue(found.hasSuffix("outside/secret.txt); inputs must stay inside it"), found)

        // Without it, every file is read, by its path in the pipeline folder, also through a link to a folder inside it.
        try FileManager.default.removeItem(at: data.appendingPathComponent("page-100b.txt"))
        let loaded = try ManifestLoader.load(folder.path).sources[0].files
        XCTAssertEqual(loaded.map(\.relativePath), names.sorted().map { "data/" + $0 })
        XCTAssertEqual(loaded.map(\.url.path), names.sorted().map { data.appendingPathComponent($0).path })
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("linked"), withDestinationURL: data)
        try (manifest(path: "linked/*.txt")).write(to: folder.appendingPathComponent("kiln.json5"), atomically: false, encoding: .utf8)
        XCTAssertEqual(try ManifestLoader.load(folder.path).sources[0].files.map(\.relativePath), names.sorted().map { "linked/" + $0 })
    }

    func testSymlinkToEtcPasswdIsRefused() throws {
        let folder = try pipeline(manifest(path: "passwd.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("passwd.txt").path, withDestinationPath: "/etc/passwd")
        XCTAssertEqual(issue(folder), "sources[0].path: \"passwd.txt\" leads outside the pipeline folder (to /etc/passwd); inputs must stay inside it")
    }

    func testSymlinkChainLeavingThroughASecondLinkIsRefused() throws {
        try write("secret\n", to: "outside/secret.txt")
        let folder = try pipeline(manifest(path: "one.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("two.txt").path, withDestinationPath: "../outside/secret.txt")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("one.txt").path, withDestinationPath: "two.txt")
        let found = try XCTUnwrap(issue(folder))
        XCTAssertTrue(found.hasPrefix("sources[0].path: \"one.txt\" leads outside the pipeline folder (to "), found)
    }

    // MARK: Allowed paths

    func testAnAllowedFolderMayBeReadByAbsolutePathAndThroughLinks() throws {
        let shared = try write("Αθήνα\n", to: "shared/stops.txt").deletingLastPathComponent()
        let absolute = try pipeline(manifest(path: shared.appendingPathComponent("*.txt").path))
        let loaded = try ManifestLoader.load(absolute.path, allowedPaths: [shared])
        XCTAssertEqual(loaded.sources[0].files.map(\.relativePath), [shared.appendingPathComponent("stops.txt").path],
                       "a file outside the pipeline is named by its absolute path")

        let linked = try pipeline(manifest(path: "shared/stops.txt"))
        try FileManager.default.createSymbolicLink(at: linked.appendingPathComponent("shared"), withDestinationURL: shared)
        XCTAssertEqual(try ManifestLoader.load(linked.path, allowedPaths: [shared]).sources[0].files.map(\.relativePath), ["shared/stops.txt"])

        let parent = try pipeline(manifest(path: "../shared/stops.txt"))
        XCTAssertEqual(try ManifestLoader.load(parent.path, allowedPaths: [shared]).sources[0].files.count, 1)

        // A single file may be allowed too.
        let file = shared.appendingPathComponent("stops.txt")
        XCTAssertEqual(try ManifestLoader.load(try pipeline(manifest(path: file.path)).path, allowedPaths: [file]).sources[0].files.count, 1)
    }

    func testAllowedPathsAllowNothingElse() throws {
        let shared = try write("Αθήνα\n", to: "shared/stops.txt").deletingLastPathComponent()
        try write("secret\n", to: "shared-not/secret.txt")
        let allowed = [shared]
        XCTAssertEqual(issue(try pipeline(manifest(path: "/etc/passwd")), allowed: allowed),
                       "sources[0].path: \"/etc/passwd\" is outside the pipeline folder and the allowed paths (\(shared.path))")
        let sibling = temporaryDirectory.appendingPathComponent("shared-not/secret.txt").path
        XCTAssertEqual(issue(try pipeline(manifest(path: sibling)), allowed: allowed),
                       "sources[0].path: \"\(sibling)\" is outside the pipeline folder and the allowed paths (\(shared.path))")
        XCTAssertEqual(issue(try pipeline(manifest(path: "../../etc/passwd")), allowed: allowed),
                       "sources[0].path: \"../../etc/passwd\" is outside the pipeline folder and the allowed paths (\(shared.path))")

        // A link inside the allowed folder that leads further out is still refused.
        try FileManager.default.createSymbolicLink(atPath: shared.appendingPathComponent("passwd").path, withDestinationPath: "/etc/passwd")
        let through = shared.appendingPathComponent("passwd").path
        XCTAssertEqual(issue(try pipeline(manifest(path: through)), allowed: allowed),
                       "sources[0].path: \"\(through)\" leads outside the pipeline folder and the allowed paths (\(shared.path)) (to /etc/passwd); inputs must stay inside it")
    }

    // MARK: Names

    func testNamesThatAreNotPlainIdentifiersAreRefused() throws {
        let message = "is not a plain identifier (ASCII letters, digits and \"_\", not starting with a digit)"
        for name in ["stop\" (x); DROP TABLE y; --", "a\"b", "όνομα", "", "two words", "stop--", "[stop]", "`stop`", "stop\tx"] {
            XCTAssertEqual(issue(try pipeline(manifest(path: "stops.txt", table: name))), "tables[0].name: \"\(name)\" \(message)", name)
            XCTAssertEqual(issue(try pipeline(manifest(path: "stops.txt", column: name))), "tables[0].columns[0].name: \"\(name)\" \(message)", name)
        }
    }

    /// The names FTS5 refuses as columns are the ones the manifest check refuses, whatever their case: SQLite decides.
    func testFullTextColumnNamesFTS5RefusesAreRefusedAtLoad() throws {
        let database = try Database(path: ":memory:")
        for name in ["rank", "RANK", "Rowid", "rowid", "_rowid_", "oid", "docid", "t_search", "T_Search", "content", "rank2", "v"] {
            var refused = false
            do { try database.execute("CREATE VIRTUAL TABLE temp.t_search USING fts5(\(quoteIdentifier(name)))") } catch { refused = true }
            try? database.execute("DROP TABLE temp.t_search")
            XCTAssertEqual(ManifestChecker.isReservedInFullText(name, table: "t_search"), refused, name)
        }
        let text = manifest(path: "stops.txt", column: "rank").replacingOccurrences(of: #"type: "text" }] }"#, with: #"type: "text" }], fullText: { name: "stop_search", columns: ["rank"] } }"#)
        XCTAssertEqual(issue(try pipeline(text)), "tables[0].fullText.columns[0]: a full-text table cannot have a column named \"rank\": FTS5 keeps \"rank\", \"rowid\" and the full-text table's own name (\"stop_search\") for itself, in any case; rename the column")
    }

    func testTheSchemaVersionFitsSQLitesUserVersion() throws {
        let one = manifest(path: "stops.txt")
        XCTAssertNoThrow(try ManifestLoader.load(try pipeline(one.replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: 2147483647,")).path))
        XCTAssertNoThrow(try ManifestLoader.load(try pipeline(one.replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: 0,")).path))
        for (version, message) in [("2147483648", "the schema version 2147483648 is over 2147483647, the largest SQLite's user_version holds (a 32-bit integer)"),
                                   ("4294967297", "the schema version 4294967297 is over 2147483647, the largest SQLite's user_version holds (a 32-bit integer)"),
                                   ("-1", "the schema version must not be negative")] {
            XCTAssertEqual(issue(try pipeline(one.replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: \(version),"))), "schemaVersion: \(message)")
        }
    }

    func testDeeplyNestedManifestsAreManifestErrors() throws {
        // Once a stack overflow in the scan that finds key paths' lines.
        let depth = 100_000
        for nested in [String(repeating: "[", count: depth) + String(repeating: "]", count: depth),
                       String(repeating: "{a:", count: depth) + "1" + String(repeating: "}", count: depth)] {
            try write("{ bundle: \"deep\", schemaVersion: 1, tables: [], sources: [], x: \(nested) }", to: "pipe/kiln.json5")
            let start = Date()
            XCTAssertEqual(issue(temporaryDirectory.appendingPathComponent("pipe")), ": not valid JSON5: values nest deeper than 64 levels")
            XCTAssertLessThan(Date().timeIntervalSince(start), 30)
        }
    }

    func testAManifestThatIsNotUTF8IsAManifestError() throws {
        // Foundation's JSON5 reader traps on these six bytes (found by `scripts/fuzz manifest`); Kiln refuses them first.
        try write(Data([0x7B, 0xFA, 0xFF, 0x09, 0xFF, 0x09]), to: "pipe/kiln.json5")
        XCTAssertEqual(issue(temporaryDirectory.appendingPathComponent("pipe")), ": not valid JSON5: the manifest is not UTF-8 (byte 0xFA at column 2)")
        try write(Data("{\n  bundle: \"caf".utf8) + Data([0xE9]) + Data("\",\n}".utf8), to: "pipe/kiln.json5")
        XCTAssertEqual(issue(temporaryDirectory.appendingPathComponent("pipe")), ": not valid JSON5: the manifest is not UTF-8 (byte 0xE9 at column 15)")
    }

    func testBundleNamesCannotLeaveTheOutputFolder() throws {
        let message = "may hold only letters, digits, \"-\", \"_\" and \".\""
        for name in ["../escape", "a/b", "/abs", ".hidden", "", "x\ny"] {
            let found = try XCTUnwrap(issue(try pipeline(manifest(path: "stops.txt", bundle: name))), name)
            XCTAssertTrue(found.hasPrefix("bundle: the bundle name "), found)
            XCTAssertTrue(found.hasSuffix(message), found)
        }
    }
}

/// SQL a manifest writes (query tables, rules) runs on the staging database only: what would reach another file —
/// `ATTACH`, `VACUUM INTO` — is refused as a manifest error, and the file is never created.
final class HostileManifestSQLTests: KilnTestCase {
    private func build(query: String? = nil, rule: String? = nil) throws -> KilnError? {
        let table = query.map { ", { name: \"copy\", columns: [{ name: \"v\", type: \"text\" }], query: \"\($0)\" }" } ?? ""
        let rules = rule.map { ", rules: [{ code: \"x\", kind: \"sql\", sql: \"\($0)\", message: \"x\" }]" } ?? ""
        try write("""
            { bundle: "sql", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }\(table)],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }]\(rules) }
            """, to: "sql/kiln.json5")
        try write("a\n", to: "sql/in.txt")
        do {
            _ = try Builder.build(try ManifestLoader.load(temporaryDirectory.appendingPathComponent("sql").path),
                                  options: BuildOptions(output: temporaryDirectory.appendingPathComponent("out/sql.sqlite")))
            return nil
        } catch let error as KilnError {
            return error
        }
    }

    func testSQLCannotReachOtherFiles() throws {
        let target = temporaryDirectory.appendingPathComponent("written.db").path
        let attempts: [(query: String?, rule: String?, keyPath: String)] = [
            ("SELECT v FROM t; VACUUM INTO '\(target)'", nil, "tables[1].query"),
            ("SELECT v FROM t; ATTACH DATABASE '\(target)' AS x; CREATE TABLE x.y (z)", nil, "tables[1].query"),
            (nil, "ATTACH DATABASE '\(target)' AS x", "rules[0].sql"),
            (nil, "VACUUM INTO '\(target)'", "rules[0].sql"),
        ]
        for attempt in attempts {
            let error = try build(query: attempt.query, rule: attempt.rule)
            guard case .manifest(let issue)? = error else { XCTFail("\(attempt): got \(String(describing: error))"); continue }
            XCTAssertEqual(issue.keyPath, attempt.keyPath)
            XCTAssertTrue(issue.message.contains("only one statement is allowed, but text follows the first: ")
                          || issue.message.hasSuffix("manifest SQL may only read, but this one holds an ATTACH or VACUUM INTO")
                          || issue.message.hasSuffix("manifest SQL may only read, but this statement (VACUUM) writes"), issue.message)
            XCTAssertFalse(FileManager.default.fileExists(atPath: target), "\(attempt)")
        }
    }
}
