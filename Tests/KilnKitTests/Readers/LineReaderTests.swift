import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class LineReaderTests: KilnTestCase {
    /// Reads every line of `data` written to a file, with `LineReader`.
    private func lines(_ data: Data, encoding: String = "utf-8", chunkSize: Int = 1 << 16) throws -> [TextLine] {
        let url = try write(data, to: "lines.txt")
        let reader = try LineReader(url: url, encoding: encoding, chunkSize: chunkSize)
        var result: [TextLine] = []
        while let line = try reader.next() { result.append(line) }
        // Reading past the end stays at the end.
        XCTAssertNil(try reader.next())
        return result
    }

    private func lines(_ bytes: [UInt8], encoding: String = "utf-8", chunkSize: Int = 1 << 16) throws -> [TextLine] {
        try lines(Data(bytes), encoding: encoding, chunkSize: chunkSize)
    }

    func testByteOrderMarkIsStrippedFromTheFirstLineOnly() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("Αθήνα; 0102\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("x\n".utf8)
        let read = try lines(bytes)
        XCTAssertEqual(read.map(\.number), [1, 2])
        XCTAssertEqual(read[0].text.map { Array($0.utf8) }, Array("Αθήνα; 0102".utf8))
        XCTAssertEqual(Array(read[0].bytes), Array("Αθήνα; 0102".utf8))
        // A BOM later in the file is content (U+FEFF), not a marker.
        XCTAssertEqual(read[1].text.map { Array($0.unicodeScalars) }, ["\u{FEFF}", "x"])
    }

    func testMixedCRLFAndLFLineEndings() throws {
        let read = try lines(Data("one\r\ntwo\nthree\r\n\r\nfive\n".utf8))
        XCTAssertEqual(read.map(\.number), [1, 2, 3, 4, 5])
        XCTAssertEqual(read.map(\.text), ["one", "two", "three", "", "five"])
        XCTAssertFalse(read.contains { $0.bytes.contains(0x0D) })
    }

    func testCarriageReturnInsideALineIsKept() throws {
        let read = try lines(Data("a\rb\r\n".utf8))
        XCTAssertEqual(read.map(\.text), ["a\rb"])
    }

    func testMissingFinalNewline() throws {
        let read = try lines(Data("first\nsecond".utf8))
        XCTAssertEqual(read.map(\.number), [1, 2])
        XCTAssertEqual(read.map(\.text), ["first", "second"])
    }

    func testMissingFinalNewlineAfterCRLF() throws {
        let read = try lines(Data("first\r\nsecond\r".utf8))
        XCTAssertEqual(read.map(\.text), ["first", "second"])
    }

    func testEmptyFileGivesNoLines() throws {
        XCTAssertEqual(try lines(Data()).count, 0)
    }

    func testSingleNewlineGivesOneEmptyLine() throws {
        let read = try lines(Data("\n".utf8))
        XCTAssertEqual(read.map(\.number), [1])
        XCTAssertEqual(read.map(\.text), [""])
    }

    func testInvalidUTF8GivesNilTextWithItsLineNumber() throws {
        let bytes: [UInt8] = Array("good\nΜον".utf8) + [0xFF] + Array("όδενδρι\nafter\n".utf8)
        let read = try lines(bytes)
        XCTAssertEqual(read.map(\.number), [1, 2, 3])
        XCTAssertEqual(read[0].text, "good")
        XCTAssertNil(read[1].text)
        XCTAssertEqual(read[1].number, 2)
        XCTAssertEqual(Array(read[1].bytes), Array("Μον".utf8) + [0xFF] + Array("όδενδρι".utf8))
        XCTAssertEqual(read[2].text, "after")
    }

    func testTruncatedMultibyteSequenceIsInvalid() throws {
        // 0xCE starts a two-byte Greek letter, but the line ends after it.
        let read = try lines([0x61, 0xCE, 0x0A, 0x62])
        XCTAssertNil(read[0].text)
        XCTAssertEqual(read[1].text, "b")
    }

    func testWindows1253DecodesGreek() throws {
        let read = try lines([0xC1, 0xE8, 0xDE, 0xED, 0xE1, 0x3B, 0x20, 0x31, 0x0D, 0x0A, 0xD0, 0xDC, 0xF4, 0xF1, 0xE1], encoding: "windows-1253")
        XCTAssertEqual(read.map(\.number), [1, 2])
        XCTAssertEqual(read[0].text.map { Array($0.unicodeScalars) }, Array("Αθήνα; 1".unicodeScalars))
        XCTAssertEqual(read[1].text.map { Array($0.unicodeScalars) }, Array("Πάτρα".unicodeScalars))
    }

    func testEncodingNameIsCaseInsensitive() throws {
        let url = try write(Data([0xC1, 0xE8, 0xDE, 0xED, 0xE1]), to: "upper.txt")
        let reader = try LineReader(url: url, encoding: "Windows-1253")
        XCTAssertEqual(reader.encoding, "windows-1253")
        XCTAssertEqual(try reader.next()?.text, "Αθήνα")
    }

    func testISO88597DecodesGreek() throws {
        // ISO-8859-7: 0xB6 is Ά (U+0386); 0xC1 0xE8 0xDE 0xED 0xE1 is Αθήνα, as in windows-1253.
        let read = try lines([0xB6, 0xED, 0xF9, 0x0A, 0xC1, 0xE8, 0xDE, 0xED, 0xE1, 0x0A], encoding: "iso-8859-7")
        XCTAssertEqual(read.count, 2)
        XCTAssertEqual(read[0].text.map { Array($0.unicodeScalars) }, ["\u{0386}", "\u{03BD}", "\u{03C9}"])
        XCTAssertEqual(read[1].text, "Αθήνα")
    }

    func testWindows1253AndISO88597DifferAt0xB6() throws {
        // In windows-1253 0xA2 is Ά; 0xB6 is the pilcrow ¶.
        XCTAssertEqual(try lines([0xB6], encoding: "windows-1253").first?.text, "¶")
        XCTAssertEqual(try lines([0xA2], encoding: "windows-1253").first?.text.map { Array($0.unicodeScalars) }, ["\u{0386}"])
    }

    func testByteUndefinedInTheCodePageGivesNilText() throws {
        // 0xFF is unassigned in windows-1253, 0xAE in ISO-8859-7.
        let cp1253 = try lines([0x41, 0xFF, 0x0A, 0x42, 0x0A], encoding: "windows-1253")
        XCTAssertEqual(cp1253.map(\.number), [1, 2])
        XCTAssertNil(cp1253[0].text)
        XCTAssertEqual(Array(cp1253[0].bytes), [0x41, 0xFF])
        XCTAssertEqual(cp1253[1].text, "B")
        let iso = try lines([0x41, 0xAE, 0x0A, 0x42], encoding: "iso-8859-7")
        XCTAssertNil(iso[0].text)
        XCTAssertEqual(iso[1].text, "B")
    }

    func testUnknownEncodingThrows() throws {
        let url = try write("x\n", to: "plain.txt")
        XCTAssertThrowsError(try LineReader(url: url, encoding: "klingon-42")) { error in
            guard let error = error as? EncodingError else { return XCTFail("expected EncodingError, got \(error)") }
            XCTAssertEqual(error.message, "unknown encoding \"klingon-42\"")
        }
    }

    func testMissingFileThrowsIOError() throws {
        let url = temporaryDirectory.appendingPathComponent("absent.txt")
        XCTAssertThrowsError(try LineReader(url: url)) { error in
            guard case KilnError.io(let failure) = error else { return XCTFail("expected KilnError.io, got \(error)") }
            XCTAssertTrue(failure.message.contains("absent.txt"), failure.message)
            XCTAssertTrue({ if case .io? = error as? KilnError { return true }; return false }(), "\(error)")
        }
    }

    func testLineLongerThanTheChunkComesBackWhole() throws {
        let long = String(repeating: "Αθήνα-0123456789", count: 20) // 420 bytes, many chunks of 16
        let read = try lines(Data("short\n\(long)\r\nend".utf8), chunkSize: 16)
        XCTAssertEqual(read.map(\.number), [1, 2, 3])
        XCTAssertEqual(read[0].text, "short")
        XCTAssertEqual(read[1].text, long)
        XCTAssertEqual(read[1].bytes.count, long.utf8.count)
        XCTAssertEqual(read[2].text, "end")
    }

    func testCRLFSplitAcrossChunksAndBOMWithTinyChunks() throws {
        // With chunks of 4 bytes, the BOM, the multibyte letters and CR/LF pairs all straddle chunk boundaries.
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("abc\r\nΣτάση\r\n\r\nz".utf8)
        let read = try lines(bytes, chunkSize: 4)
        XCTAssertEqual(read.map(\.text), ["abc", "Στάση", "", "z"])
        XCTAssertEqual(read.map(\.number), [1, 2, 3, 4])
    }

    func testManyLinesWithSmallChunks() throws {
        let text = (1...500).map { "line \($0)" }.joined(separator: "\n") + "\n"
        let read = try lines(Data(text.utf8), chunkSize: 7)
        XCTAssertEqual(read.count, 500)
        XCTAssertEqual(read.last?.text, "line 500")
        XCTAssertEqual(read.last?.number, 500)
        XCTAssertEqual(read[249].text, "line 250")
    }
    func testForEachLineUTF8AgreesWithASplitOfTheFile() throws {
        // `forEachLineUTF8` hands plain ASCII lines over without a `TextLine` or a UTF-8 check; every other line
        // (the first, one with a NUL, one not ASCII) goes the general way. The oracle: the file's bytes split at
        // each line feed by the standard library, a final CR and the first line's BOM dropped, the pieces that are
        // valid UTF-8 without NUL handed over, each other one reported with its line number. Enough rows to cross
        // several reads of 64 KiB, with a CRLF and the odd line between them.
        var pieces: [[UInt8]] = [[0xEF, 0xBB, 0xBF] + Array("12:00  13:00  20\r".utf8), Array("Στάση".utf8), [],
                                 Array("a\u{0}b".utf8), [0x31, 0xFF, 0x32], Array("\r".utf8), Array(" \t ".utf8)]
        for index in 0..<12_000 {
            let row = String(format: "%02d:%02d  %02d:%02d  %d", index % 24, index % 60, (index + 1) % 24, index % 60, index % 120)
            pieces.append(Array((index % 1000 == 7 ? row + "\r" : index % 1000 == 9 ? "Καθημερινές" : row).utf8))
        }
        pieces.append(Array("last".utf8))
        let data = Data(pieces.joined(separator: [0x0A]))
        let url = try write(data, to: "mixed.txt")

        var expected: [String] = [], expectedReported: [Int] = []
        for (index, piece) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            var bytes = Array(piece)
            if bytes.last == 0x0D { bytes.removeLast() }
            if index == 0, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            if let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) {
                expected.append("\(index + 1) \(bytes.allSatisfy { $0 < 0x80 }) \(text)")
            } else {
                expectedReported.append(index + 1)
            }
        }
        let log = DiagnosticLog()
        var read: [String] = []
        try LineReader.forEachLineUTF8(of: InputFile(url: url, relativePath: "mixed.txt"), encoding: "utf-8", log: log) { number, line in
            read.append("\(number) \(line.isKnownASCII) \(line.text)")
        }
        XCTAssertEqual(read.count, expected.count)
        XCTAssertEqual(read, expected)
        XCTAssertEqual(log.diagnostics.compactMap(\.provenance?.line), expectedReported)
        XCTAssertEqual(expectedReported, [4, 5])
    }
}
