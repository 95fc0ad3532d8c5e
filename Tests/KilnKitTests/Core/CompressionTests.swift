import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The four decompression wrappers (zlib, libbz2, liblzma, libzstd) and `InputBytes`, against archives the formats'
/// own command-line tools make (the oracle): several streams concatenated decode to the concatenated texts, in any
/// step sizes; a truncated archive fails at its length, a damaged one as damaged; formats are told by content.
final class CompressionTests: XCTestCase {
    static let tools: [(format: CompressionFormat, command: [String])] = [
        (.gzip, ["gzip", "-c"]), (.bzip2, ["bzip2", "-c"]), (.xz, ["xz", "-c"]), (.zstd, ["zstd", "-q", "-c"]),
    ]

    private func compress(_ bytes: [UInt8], _ command: [String]) throws -> [UInt8] {
        [UInt8](try Compressor.compress(Data(bytes), command))
    }

    /// A real text: the Patras stops file.
    private let stops = [UInt8](FileManager.default.contents(atPath: PythonOracle.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt").path)!)

    /// Drives a decoder as `InputBytes` does, with small pieces and a small output capacity.
    private func decode(_ archive: [UInt8], _ format: CompressionFormat, piece: Int, capacity: Int) throws -> [UInt8] {
        let decoder = try format.makeDecompressor()
        var output: [UInt8] = []
        var position = 0
        while true {
            switch try decoder.step(capacity: capacity, inputEnded: position >= archive.count) {
            case .output(let bytes): output += bytes
            case .needsInput:
                let end = min(archive.count, position + piece)
                if end > position { decoder.feed(Array(archive[position..<end])) }
                position = max(end, position + 1)
            case .finished: return output
            }
        }
    }

    func testEachDecoderReadsConcatenatedStreamsInAnySteps() throws {
        for tool in CompressionTests.tools {
            let archive = try compress(stops, tool.command) + compress(Array("second stream\n".utf8), tool.command) + compress(stops, tool.command)
            let expected = stops + Array("second stream\n".utf8) + stops
            XCTAssertEqual(CompressionFormat.detect(archive), tool.format)
            for (piece, capacity) in [(1, 1), (7, 5), (65536, 1 << 18)] {
                XCTAssertEqual(try decode(archive, tool.format, piece: piece, capacity: capacity), expected, "\(tool.format) \(piece)/\(capacity)")
            }
        }
    }

    func testTruncatedArchiveFailsAtItsLength() throws {
        for tool in CompressionTests.tools {
            let archive = Array(try compress(stops, tool.command).dropLast(5))
            XCTAssertThrowsError(try decode(archive, tool.format, piece: 1000, capacity: 4096), "\(tool.format)") { error in
                let failure = error as? DecompressionFailure
                XCTAssertEqual(failure?.truncated, true, "\(tool.format): \(error)")
                XCTAssertEqual(failure?.offset, archive.count, "\(tool.format): \(error)")
                XCTAssertEqual(failure?.format, tool.format)
            }
        }
    }

    func testDamagedArchiveFailsAsDamaged() throws {
        for tool in CompressionTests.tools {
            var archive = try compress(stops, tool.command)
            archive[archive.count / 2] ^= 0xFF
            XCTAssertThrowsError(try decode(archive, tool.format, piece: 1000, capacity: 4096), "\(tool.format)") { error in
                let failure = error as? DecompressionFailure
                XCTAssertEqual(failure?.truncated, false, "\(tool.format): \(error)")
                XCTAssertTrue((0...archive.count).contains(failure?.offset ?? -1), "\(tool.format): \(error)")
            }
        }
    }

    func testFormatIsToldByContentNotName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-compression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let misnamed = folder.appendingPathComponent("stops.txt")
        try Data(try compress(stops, ["xz", "-c"])).write(to: misnamed)
        let plainNamedGz = folder.appendingPathComponent("stops.txt.gz")
        try Data(stops).write(to: plainNamedGz)
        for url in [misnamed, plainNamedGz] {
            for threaded in [true, false] {
                let bytes = try InputBytes(url: url, name: url.lastPathComponent, log: nil, threaded: threaded)
                XCTAssertEqual(try bytes.readAll(), stops, url.lastPathComponent)
            }
        }
        XCTAssertEqual(try InputBytes(url: misnamed, name: "", log: nil).format, .xz)
        XCTAssertNil(try InputBytes(url: plainNamedGz, name: "", log: nil).format)
        // A text that starts with bzip2's letters but no block marker stays text.
        XCTAssertNil(CompressionFormat.detect(Array("BZh91 is a text".utf8)))
    }

    /// A damaged archive with a log: reported once (`input.compression`), the bytes before the damage handed out,
    /// then the end; without a log, reading it throws.
    func testDamageIsReportedWithTheFileAndOffset() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-compression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("stops.txt")
        let first = try compress(stops, ["bzip2", "-c"])
        let archive = first + Array(try compress(stops, ["bzip2", "-c"]).prefix(100))
        try Data(archive).write(to: url)
        let log = DiagnosticLog()
        XCTAssertEqual(try InputBytes(url: url, name: "stops.txt", log: log).readAll(), stops)
        XCTAssertEqual(log.diagnostics.map(\.code), [DiagnosticCode.inputCompression.rawValue])
        XCTAssertEqual(log.diagnostics.first?.provenance?.file, "stops.txt")
        XCTAssertTrue(log.diagnostics.first?.message.contains("bzip2-compressed file is truncated") == true)
        XCTAssertTrue(log.diagnostics.first?.message.contains("compressed byte \(archive.count) of \(archive.count)") == true)
        XCTAssertThrowsError(try InputBytes(url: url, name: "stops.txt", log: nil).readAll())
    }

    /// A small archive that inflates to much: streamed in chunks of bounded size, and refused whole past a limit.
    func testInflationIsBounded() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-compression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("zeros")
        let archive = try compress([UInt8](repeating: 0x20, count: 64 << 20), ["zstd", "-q", "-19", "-c"])
        XCTAssertLessThan(archive.count, 1 << 16)
        try Data(archive).write(to: url)
        let bytes = try InputBytes(url: url, name: "zeros", log: nil)
        var buffer: [UInt8] = []
        var total = 0
        while true {
            buffer.removeAll(keepingCapacity: true)
            let count = try bytes.read(into: &buffer, upTo: 1 << 20)
            guard count > 0 else { break }
            XCTAssertLessThanOrEqual(count, InputBytes.outputChunk)
            total += count
        }
        XCTAssertEqual(total, 64 << 20)
        let log = DiagnosticLog()
        XCTAssertNil(try InputBytes(url: url, name: "zeros", log: log).readAll(limit: 1 << 20))
        XCTAssertEqual(log.diagnostics.map(\.code), [DiagnosticCode.inputCompression.rawValue])
    }

    /// libxml2 is fed bytes and inflates nothing itself: gzip bytes handed to the XML reader as they are on disk are
    /// no XML (before, `xmlReaderForFile` opened the file and inflated gzip behind Kiln's back).
    func testLibXML2DoesNotInflateGzipItself() throws {
        let xml = Array("<a><b>1</b></a>\n".utf8)
        let raw = RawBytes(try compress(xml, ["gzip", "-c"]))
        let reader = try XMLStreamReader(source: raw, path: "raw.xml.gz")
        XCTAssertNil(reader.next())
        XCTAssertFalse(reader.issues.isEmpty)
        let plain = try XMLStreamReader(source: RawBytes(xml), path: "a.xml")
        XCTAssertEqual(plain.next(), .start(localName: "a", namespace: nil, depth: 0))
    }
}

/// Bytes in memory, as a parser reads them.
private final class RawBytes: ByteStream {
    private let bytes: [UInt8]
    private var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func read(into buffer: inout [UInt8], upTo count: Int) throws -> Int {
        let taken = min(count, bytes.count - position)
        buffer += bytes[position..<position + taken]
        position += taken
        return taken
    }
    func leadingBytes(_ count: Int) -> [UInt8] { Array(bytes.prefix(count)) }
}

/// The two readers that do not stream text: `sqlite` reads a compressed database decompressed, `files` describes a
/// compressed file as the archive it is on disk.
final class CompressedWholeFileReaderTests: KilnTestCase {
    func testACompressedDatabaseGivesTheRowsOfThePlainOne() throws {
        let database = temporaryDirectory.appendingPathComponent("t.sqlite")
        let writer = try Database(path: database.path)
        try writer.execute("CREATE TABLE t (a TEXT, b TEXT); INSERT INTO t VALUES ('Hřib', 'jedlá'); INSERT INTO t VALUES ('Liška', 'jedlá');")
        try writer.close()
        let reader = try SQLiteReader(options: JSONValue.object(["query": .string("SELECT a, b FROM t ORDER BY rowid"),
                                                                 "fields": .array([.string("a"), .string("b")])])
            .decode(SQLiteReader.Options.self, codingPath: []))
        let plain = try read(reader, url: database)
        XCTAssertEqual(plain.records.count, 2)
        for codec in Compressor.codecs {
            let compressed = try write(Compressor.compress(Data(contentsOf: database), codec.command), to: "t-\(codec.name).sqlite")
            let (records, log) = try read(reader, url: compressed)
            XCTAssertTrue(log.diagnostics.isEmpty, "\(codec.name): \(log.diagnostics)")
            XCTAssertEqual(records.map(\.values), plain.records.map(\.values), codec.name)
        }
    }

    func testTheFilesReaderDescribesACompressedFileAsItIsOnDisk() throws {
        let reader = try FilesReader(options: JSONValue.object([:]).decode(FilesReader.Options.self, codingPath: []))
        let bytes = try Compressor.compress(Data("notes\n".utf8), ["bzip2", "-c"])
        let url = try write(bytes, to: "notes.bz2")
        let (records, log) = try read(reader, url: url)
        XCTAssertTrue(log.diagnostics.isEmpty, "\(log.diagnostics)")
        let record = try XCTUnwrap(records.first)
        XCTAssertEqual(record["mediaType"], "application/x-bzip2")
        XCTAssertEqual(record["bytes"], String(bytes.count))
        let digest = SHA256Digest()
        digest.update([UInt8](bytes)[...])
        XCTAssertEqual(record["sha256"], digest.hexDigest())
    }
}
