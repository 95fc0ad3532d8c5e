import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `kiln extract` streams its output through a spool: it must print exactly what the in-memory `Extraction` gives.
final class ExtractionStreamTests: KilnTestCase {
    private func streamed(_ source: CompiledSource, _ files: [URL], _ names: [String], _ format: ExtractionStream.Format) throws -> String {
        let url = temporaryDirectory.appendingPathComponent("out-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        try ExtractionStream.write(source, files: files, displayNames: names, format: format, to: handle) { TerminalText.sanitize($0) }
        try handle.close()
        return try String(contentsOf: url, encoding: .utf8)
    }

    func testStreamedOutputIsWhatTheInMemoryExtractionGives() throws {
        let folder = try copyRepositoryFolder("raw/patras-web", as: "web")
        let pipeline = try ManifestLoader.load(folder.path)
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("timetables").path).sorted()
        let cases: [(String, [String])] = [
            ("timetables", pages.map { "timetables/" + $0 }),
            ("stops", ["stops-1.xml", "stops-2.xml"]),
            ("timetables", []),
        ]
        for (name, files) in cases {
            let source = try pipeline.source(named: name).source
            let urls = files.map { folder.appendingPathComponent($0) }
            let expected = try Extraction.run(source, files: urls, displayNames: files)
            XCTAssertEqual(try streamed(source, urls, files, .table), TerminalText.sanitize(expected.table()), name)
            XCTAssertEqual(try streamed(source, urls, files, .json), String(decoding: try expected.json(), as: UTF8.self) + "\n", name)
            if !files.isEmpty { XCTAssertGreaterThan(expected.items.count, 0, name) }
        }
    }

    func testRowsPaddedAsBytesAreTheRowsFormatRowGives() throws {
        // The oracle is `formatRow`: on random rows of ASCII, Greek, emoji (two UTF-16 units), no-break and plain
        // spaces and empty cells, a row padded as bytes must be exactly its line; a row it declines must be one that
        // formatRow cuts or trims (or of another shape).
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "Z9", "Ακτή", "😀", "\u{00A0}", " ", "", "::", "x y"]
        var plain = 0, declined = 0
        for _ in 0..<3_000 {
            let count = Int.random(in: 1...4, using: &generator)
            let cells = (0..<count).map { _ in (0..<Int.random(in: 0...3, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() }
            let widths = (0..<(Int.random(in: 0..<10, using: &generator) == 0 ? count + 1 : count)).map { _ in Int.random(in: 0...8, using: &generator) }
            var bytes: [UInt8] = [0x2A]
            let expected = Extraction.formatRow(cells, widths: widths)
            if Extraction.appendPlainRow(cells.map { Array($0.utf8)[...] }, widths: widths, to: &bytes) {
                plain += 1
                XCTAssertEqual(String(decoding: bytes.dropFirst(), as: UTF8.self), expected + "\n", "\(cells) \(widths)")
            } else {
                declined += 1
                XCTAssertEqual(bytes, [0x2A], "nothing is left behind")
                let cut = zip(cells, widths).contains { $0.utf16.count > $1 }
                // The line before trimming ends with the last cell, or with padding when that cell is empty.
                let trimmed = cells.last?.unicodeScalars.last.map { $0.value <= 0x20 || $0.value >= 0x7F } ?? true
                XCTAssertTrue(cut || trimmed || cells.count != widths.count, "\(cells) \(widths) → \(expected)")
            }
        }
        XCTAssertGreaterThan(plain, 300)
        XCTAssertGreaterThan(declined, 300)
    }

    func testAFileThatCannotBeReadStopsTheExtractionAtItsPlace() throws {
        // The files are parsed on a thread of their own: a folder listed between two pages still fails the whole
        // extraction with its own error, and nothing is written.
        let folder = try copyRepositoryFolder("raw/patras-web", as: "web-broken")
        let pipeline = try ManifestLoader.load(folder.path)
        let source = try pipeline.source(named: "stops").source
        let files = ["stops-1.xml", "timetables", "stops-2.xml"]
        let url = temporaryDirectory.appendingPathComponent("out-broken.txt")
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        for format in [ExtractionStream.Format.table, .json] {
            XCTAssertThrowsError(try ExtractionStream.write(source, files: files.map { folder.appendingPathComponent($0) }, displayNames: files,
                                                            format: format, to: handle)) { error in
                guard case KilnError.io(let failure) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(failure.message.hasPrefix("timetables is a"), failure.message)
            }
        }
        try handle.close()
        XCTAssertEqual(try Data(contentsOf: url).count, 0)
    }

    func testAwkwardValuesAreEscapedAndPaddedAsBefore() throws {
        let folder = temporaryDirectory.appendingPathComponent("awkward")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("scripts/bench-data/load/kiln.json5"), encoding: .utf8).utf8)
            .write(to: folder.appendingPathComponent("kiln.json5"))
        let lines = [
            "Plain; 1; 21.7; 38.2",
            "say \"hi\" \\ back/slash; 2; 1; 2",
            "tab\there\u{01}\u{1F}\u{7F}; 3; 1; 2",
            "emoji 😀👩‍👩‍👧 wide; 4; 1; ",
            "Άγιος Ανδρέας; ; ; 😀😀",
            "; 5; 6; 7",
            "trailing\u{00A0}; 8; 9; 10\u{2003}",
        ]
        let input = folder.appendingPathComponent("stops.txt")
        try Data(lines.joined(separator: "\n").utf8).write(to: input)
        let source = try ManifestLoader.load(folder.path).source(named: "stops").source
        let expected = try Extraction.run(source, files: [input], displayNames: ["stops.txt"])
        XCTAssertGreaterThanOrEqual(expected.items.count, lines.count - 1)
        for name in ["stops.txt", "::warning ::stops.txt"] {
            let expected = try Extraction.run(source, files: [input], displayNames: [name])
            let table = try streamed(source, [input], [name], .table)
            XCTAssertEqual(table, TerminalText.sanitize(expected.table()))
            XCTAssertEqual(table.hasPrefix("file:line"), true)
            XCTAssertEqual(try streamed(source, [input], [name], .json), String(decoding: try expected.json(), as: UTF8.self) + "\n")
        }
        XCTAssertTrue(try streamed(source, [input], ["::warning ::stops.txt"], .table).contains("\n\\::warning ::stops.txt:1"))
    }
}
