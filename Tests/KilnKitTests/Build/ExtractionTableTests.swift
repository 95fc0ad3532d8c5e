import Foundation
import KilnTestSupport
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The table of `kiln extract` narrowed to a width, and the fields chosen with `--fields`.
final class ExtractionTableTests: KilnTestCase {
    func testFittedWidthsAreTheWidestCommonCapThatFits() {
        // The oracle: every cap from the widest column down, tried in turn, the first that fits (or the narrowest).
        var generator = SeededGenerator(seed: 30)
        for _ in 0..<2_000 {
            let widths = (0..<Int.random(in: 1...8, using: &generator)).map { _ in Int.random(in: 0...60, using: &generator) }
            let limit = Int.random(in: 0...200, using: &generator)
            let fitted = Extraction.fittedWidths(widths, into: limit)
            func total(_ columns: [Int]) -> Int { columns.reduce(0, +) + 2 * (columns.count - 1) }
            guard widths.count > 1, total(widths) > limit else {
                XCTAssertEqual(fitted, widths, "\(widths) \(limit)")
                continue
            }
            let caps = stride(from: widths.dropFirst().max()!, through: Extraction.narrowestColumn, by: -1)
            let cap = caps.first { cap in total([widths[0]] + widths.dropFirst().map { min($0, cap) }) <= limit } ?? Extraction.narrowestColumn
            XCTAssertEqual(fitted, [widths[0]] + widths.dropFirst().map { min($0, cap) }, "\(widths) \(limit)")
        }
        XCTAssertEqual(Extraction.fittedWidths([10, 30, 5], into: nil), [10, 30, 5])
    }

    func testFittedCellsEndInAnEllipsisAndKeepWholeCharacters() {
        XCTAssertEqual(Extraction.fitted("Καθημερινές", to: 6), "Καθημ…")
        XCTAssertEqual(Extraction.fitted("short", to: 5), "short")
        // An emoji is two UTF-16 units (as formatRow counts): it is not split.
        XCTAssertEqual(Extraction.fitted("ab😀cd", to: 4), "ab…")
        XCTAssertEqual(Extraction.fitted("ab😀cd", to: 5), "ab😀…")
        XCTAssertEqual(Extraction.fitted("e\u{301}tude", to: 3), "e\u{301}…", "a combining accent stays with its letter")
    }

    func testFieldIndicesFollowTheOrderAskedAndRefuseUnknownNames() throws {
        XCTAssertEqual(try Extraction.fieldIndices(["every", "line"], in: ["line", "name", "every"], of: "t.record"), [2, 0])
        for (asked, message) in [(["stop"], "--fields: unknown field \"stop\"; the fields of t.record are: line, name, every"),
                                 (["line", "line"], "--fields: \"line\" is given twice; give it once"),
                                 ([], "--fields needs at least one field name; the fields of t.record are: line, name, every")] {
            XCTAssertThrowsError(try Extraction.fieldIndices(asked, in: ["line", "name", "every"], of: "t.record", listName: "--fields")) { error in
                guard case KilnError.usage(let text) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(text, message)
            }
        }
    }

    func testStreamedTableWithFieldsAndWidthIsTheInMemoryOne() throws {
        let folder = try copyRepositoryFolder("raw/patras-web", as: "web")
        let source = try ManifestLoader.load(folder.path).source(named: "timetables").source
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("timetables").path).sorted().map { "timetables/" + $0 }
        let urls = names.map { folder.appendingPathComponent($0) }
        let extraction = try Extraction.run(source, files: urls, displayNames: names)
        // ["line"] is narrower than 10 already but for file:line, which is never cut: nothing to cut.
        for (fields, width, cut) in [(["name", "days", "every"], 40, true), (["line"], 10, false), (["days", "line", "name"], nil, false)] as [([String], Int?, Bool)] {
            let chosen = extraction.selecting(try Extraction.fieldIndices(fields, in: extraction.fieldNames, of: "timetables"))
            XCTAssertEqual(chosen.fieldNames, fields)
            let url = temporaryDirectory.appendingPathComponent("out-\(UUID().uuidString).txt")
            XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try ExtractionStream.write(source, files: urls, displayNames: names, fields: fields, width: width, format: .table, to: handle)
            try handle.close()
            let expected = chosen.table(width: width)
            XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), expected, "\(fields) \(String(describing: width))")
            XCTAssertEqual(expected.contains("cells cut to fit"), cut, "\(fields)")
            XCTAssertEqual(expected.contains("…"), cut, "\(fields)")
        }
    }
}
