import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// Messages that came late or said what was not true (issue 31, item 15), through the `kiln` binary: each is now
/// one sentence at load (exit 64) or naming the real cause, and the bundle in place is as it was.
final class LateErrorsCommandTests: CLITestCase {
    private let manifest = """
        { bundle: "late", schemaVersion: 1,
          tables: [{ name: "t", columns: [{ name: "v", type: "text" }], indexes: [{ columns: ["v"] }], fullText: { name: "t_fts", columns: ["v"] } }],
          sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
        """

    /// The pipeline, built once, and the bundle's digest.
    private func built() throws -> String {
        try writePipeline("p", manifest: manifest)
        try "a\nb\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        return try sha256("build/late.sqlite")
    }

    private func rewrite(_ replace: String, with replacement: String) throws {
        let text = manifest.replacingOccurrences(of: replace, with: replacement)
        XCTAssertNotEqual(text, manifest)
        try text.write(to: file("p/kiln.json5"), atomically: true, encoding: .utf8)
    }

    func testAnUnknownTokenizerIsAManifestErrorAtLoad() throws {
        let bundle = try built()
        try rewrite(#"columns: ["v"] } }"#, with: #"columns: ["v"], tokenize: "bogus" } }"#)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64, "at load, not at the end of the build: \(run.stderr)")
        XCTAssertTrue(run.stderr.hasSuffix(#"kiln.json5:2: manifest error at tables[0].fullText.tokenize: SQLite's FTS5 refuses the tokenizer "bogus": no such tokenizer: bogus"# + "\n"), run.stderr)
        XCTAssertEqual(try sha256("build/late.sqlite"), bundle)
        // A tokenizer FTS5 knows still builds.
        try rewrite(#"columns: ["v"] } }"#, with: #"columns: ["v"], tokenize: "porter unicode61" } }"#)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
    }

    func testAKeyWrittenTwiceIsFoundThroughItsEscapes() throws {
        let bundle = try built()
        try rewrite("schemaVersion: 1,", with: #"schemaVersion: 1, "bu\u006edle": "other","#)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix("kiln.json5:1: manifest error at bundle: this key is written twice in one object (first on line 1); only one of the two values would be read: remove one\n"), run.stderr)
        XCTAssertEqual(try sha256("build/late.sqlite"), bundle)
        // Escaped keys that differ stay different keys.
        try rewrite("schemaVersion: 1,", with: #"schemaVersion: 1, "\u0062undles": "x","#)
        XCTAssertTrue(try kiln("build", "p").stderr.contains(#"unknown key "bundles""#))
    }

    func testASecondByteOrderMarkIsNamed() throws {
        let bundle = try built()
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        try Data(bom + bom + Array(manifest.utf8)).write(to: file("p/kiln.json5"))
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix("kiln.json5:1: manifest error: not valid JSON5: the manifest holds a byte-order mark (U+FEFF) inside it, where only its first character may be one (was the file saved twice with a BOM?); remove it\n"), run.stderr)
        XCTAssertFalse(run.stderr.contains("after the end"), run.stderr)
        XCTAssertEqual(try sha256("build/late.sqlite"), bundle)
        try Data(bom + Array(manifest.utf8)).write(to: file("p/kiln.json5"))
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0, "one BOM is fine")
    }

    func testAPathThroughAFileSaysTheFileIsNoFolder() throws {
        let bundle = try built()
        try rewrite(#"path: "in.txt""#, with: #"path: "in.txt/.""#)
        let run = try kiln("build", "p")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.hasSuffix(#"manifest error at sources[0].path: input "in.txt/." names nothing: "in.txt" is a regular file, not a folder"# + "\n"), run.stderr)
        try rewrite(#"path: "in.txt""#, with: #"path: "in.txt/more/x.txt""#)
        XCTAssertTrue(try kiln("build", "p").stderr.hasSuffix(#"input "in.txt/more/x.txt" names nothing: "in.txt" is a regular file, not a folder"# + "\n"))
        XCTAssertEqual(try sha256("build/late.sqlite"), bundle)
    }

    /// A full TMPDIR (a 16 KiB tmpfs, mounted where the tests run as root): the error names that folder, not the
    /// bundle, whose disk has room.
    func testAFullTemporaryFolderIsNamedNotTheBundle() throws {
        let bundle = try built()
        let small = try smallDisk("small-tmp", kilobytes: 16)
        try? Data(count: 16 << 10).write(to: small.appendingPathComponent("fill"))  // fills it (the write itself may fall short)
        // Enough rows that the index and the full-text sort spill into temporary files.
        var generator = SeededGenerator(seed: 31)
        let rows = (0..<300_000).map { _ in String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 16) }
        try (rows.joined(separator: "\n") + "\n").write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        let run = try kilnInShell("", prefix: "TMPDIR=\(small.path)", ["build", "p", "--quiet"])
        XCTAssertEqual(run.status, 74, run.stderr)
        XCTAssertTrue(run.stderr.contains("database or disk is full: the disk with no room is SQLite's temporary folder \(small.path) (TMPDIR, "), run.stderr)
        XCTAssertTrue(run.stderr.contains("set TMPDIR to a folder with room"), run.stderr)
        XCTAssertEqual(try sha256("build/late.sqlite"), bundle, "the bundle in place is as it was")
    }
}
