import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild
import KilnTestSupport

/// The checks behind issue 31, item 15: manifest keys compared after their escapes are decoded, a byte-order mark
/// past the first character, FTS5 tokenizers asked at load, and SQLite's temporary folder as SQLite chooses it.
final class LateErrorsTests: KilnTestCase {
    func testKeysAreComparedAfterTheirEscapesAreDecoded() throws {
        for (text, duplicate) in [(#"{ bundle: 1, "bu\u006edle": 2 }"#, "bundle"), (#"{ "a\x62": 1, 'ab': 2 }"#, "ab"),
                                  (#"{ "\ud83d\ude00": 1, "😀": 2 }"#, "😀"), (#"{ "a\"b": 1, 'a"b': 2 }"#, #"a"b"#),
                                  (#"{ "a\nb": 1, "anb": 2 }"#, nil), (#"{ "\u0062undles": 1, bundle: 2 }"#, nil)] {
            XCTAssertEqual(JSON5Locator(text: text).duplicateKey?.keyPath, duplicate, text)
            XCTAssertNil(JSON5Locator(text: text).syntaxError, text)
        }
        // Python's json decodes the escaped keys the same way (it keeps the last of a duplicate).
        let decoded = try PythonOracle.lines(ofProgram: #"import json; print(sorted(json.loads('{"bu\\u006edle": 1, "\\ud83d\\ude00": 2, "a\\"b": 3}')))"#, [])
        XCTAssertEqual(decoded, [#"['a"b', 'bundle', '😀']"#])
    }

    func testAByteOrderMarkMayOnlyStartTheManifest() {
        XCTAssertNil(JSON5Locator(text: "\u{FEFF}{ a: 1 }").syntaxError)
        XCTAssertEqual(JSON5Locator(text: "\u{FEFF}\u{FEFF}{ a: 1 }").syntaxError?.message.hasPrefix("the manifest holds a byte-order mark (U+FEFF) inside it"), true)
        XCTAssertEqual(JSON5Locator(text: "{ a: 1,\n\u{FEFF} b: 2 }").syntaxError?.line, 2)
    }

    func testFullTextTokenizersAreAskedOfFTS5() {
        func spec(_ tokenize: String) -> FullTextSpec {
            FullTextSpec(name: "f", columns: ["v"], unindexed: [], tokenize: tokenize)
        }
        XCTAssertNil(SchemaSQL.fullTextProblem(spec("unicode61 remove_diacritics 2")))
        XCTAssertNil(SchemaSQL.fullTextProblem(spec("porter ascii")))
        XCTAssertEqual(SchemaSQL.fullTextProblem(spec("bogus")), "no such tokenizer: bogus")
        XCTAssertNotNil(SchemaSQL.fullTextProblem(spec("unicode61 remove_diacritics 7")))
    }

    func testSQLitesTemporaryFolderIsChosenAsSQLiteChoosesIt() throws {
        let folder = temporaryDirectory.path
        XCTAssertEqual(TemporaryFolder.sqlite(environment: ["SQLITE_TMPDIR": folder, "TMPDIR": "/tmp"])?.source, "SQLITE_TMPDIR")
        XCTAssertEqual(TemporaryFolder.sqlite(environment: ["TMPDIR": folder])?.path, folder)
        XCTAssertEqual(TemporaryFolder.sqlite(environment: ["TMPDIR": folder + "/missing"])?.source, "the system's")
        // An error that is not a full disk, or a full disk on the bundle's own file system, is said as SQLite says it.
        let full = SQLiteError(code: 13, message: "database or disk is full", sql: nil)
        let io = SQLiteError(code: 10, message: "disk I/O error", sql: nil)
        let here = temporaryDirectory!
        XCTAssertEqual(TemporaryFolder.storageFailure(io, writing: "b.sqlite", in: here, environment: ["TMPDIR": "/dev/shm"]).message, "cannot write b.sqlite: disk I/O error")
        XCTAssertEqual(TemporaryFolder.storageFailure(full, writing: "b.sqlite", in: here, environment: ["TMPDIR": folder]).message, "cannot write b.sqlite: database or disk is full")
    }

    func testTemplatesNestUpToMediaWikisLimitAndDeeperIsSaidToBeTooDeep() {
        func nested(_ depth: Int) -> String { String(repeating: "{{x|", count: depth) + "core" + String(repeating: "}}", count: depth) }
        var tooDeep = false
        XCTAssertEqual(WikiTemplateParser.parse(WikiSource(nested(40)), at: 0, tooDeep: &tooDeep)?.range.upperBound, nested(40).utf8.count)
        XCTAssertNotNil(WikiTemplateParser.parse(WikiSource(nested(100)), at: 0, tooDeep: &tooDeep))
        XCTAssertFalse(tooDeep)
        XCTAssertNil(WikiTemplateParser.parse(WikiSource(nested(101)), at: 0, tooDeep: &tooDeep))
        XCTAssertTrue(tooDeep)
        tooDeep = false
        XCTAssertNil(WikiTemplateParser.parse(WikiSource("{{x|{{y}}"), at: 0, tooDeep: &tooDeep))
        XCTAssertFalse(tooDeep, "never closed is not too deep")
        // A page of 20 000 unclosed openings stays linear: each scan stops at the limit.
        let started = Date()
        let page = WikiPageScanner.scan(String(repeating: "{{", count: 20_000))
        XCTAssertEqual(page.unclosedTemplates.count, 20_000)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
    }
}
