import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnFetch

/// The pieces of the WARC format Kiln writes and reads by itself: base-32 digests (against Python's `base64`),
/// chunked transfer coding split anywhere, one gzip member per record (read back by Python's `gzip`), and record
/// identifiers.
final class WARCFormatTests: KilnTestCase {
    func testBase32AgreesWithPythonsBase64Module() throws {
        var random = SeededGenerator(seed: 4648)
        let inputs: [[UInt8]] = [[], [0], [0xFF], Array("foobar".utf8)] + (0..<40).map { length in (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let hex = inputs.map { Hexadecimal.text(of: $0) }
        let expected = try PythonOracle.lines(ofProgram: "import base64, sys\nfor h in sys.argv[1:]: print(base64.b32encode(bytes.fromhex(h[1:])).decode() or '-')", hex.map { "x" + $0 })
        XCTAssertEqual(inputs.map { WARCFormat.base32($0).isEmpty ? "-" : WARCFormat.base32($0) }, expected)
    }

    func testChunkedBodiesDecodeWhereverTheBytesAreSplit() {
        let body = Data("Κορίνθου 1;0101\nΑγίου Ανδρέα;0104\n".utf8)
        var encoded = Data()
        for start in stride(from: 0, to: body.count, by: 5) {
            let piece = body[start..<min(body.count, start + 5)]
            encoded.append(Data(String(piece.count, radix: 16).utf8) + Data(";name=value\r\n".utf8) + piece + Data("\r\n".utf8))
        }
        encoded.append(Data("0\r\nExpires: never\r\n\r\n".utf8))
        for split in 0...encoded.count {
            var decoding = ChunkedDecoding()
            let first = decoding.feed(encoded.prefix(split))
            let second = decoding.feed(encoded.dropFirst(split))
            XCTAssertEqual(first.flatMap { a in second.map { a + $0 } }, body, "split at \(split)")
            XCTAssertTrue(decoding.ended, "split at \(split)")
        }
        var broken = ChunkedDecoding()
        XCTAssertNil(broken.feed(Data("zz\r\nabc".utf8)))
        var cut = ChunkedDecoding()
        XCTAssertNotNil(cut.feed(encoded.prefix(20)))
        XCTAssertFalse(cut.ended)
    }

    func testEachGzipMemberIsReadByPythonsGzipAndTheMembersTogetherAreTheText() throws {
        var file = Data()
        let texts = ["WARC/1.1\r\nfirst record\r\n\r\n", String(repeating: "σελίδα ", count: 20_000), ""]
        for text in texts {
            let compressor = try GzipCompressor()
            var member = Data()
            // Fed in uneven pieces, as bodies arrive.
            let bytes = Data(text.utf8)
            for start in stride(from: 0, to: bytes.count, by: 7_777) { member += compressor.compress(bytes[start..<min(bytes.count, start + 7_777)]) }
            member += compressor.finish()
            XCTAssertEqual(member.prefix(2), Data([0x1F, 0x8B]))
            file += member
        }
        let path = try write(file, to: "members.gz")
        let decoded = try PythonOracle.lines(ofProgram: "import gzip, hashlib, sys\nprint(hashlib.sha256(gzip.open(sys.argv[1]).read()).hexdigest())", [path.path])
        XCTAssertEqual(decoded, [SHA256Digest.hex(of: Data(texts.joined().utf8))])
    }

    func testRecordIDsAreUUIDURNsMadeFromTheRecord() {
        let id = WARCFormat.recordID(["1", "response", "https://example.org/", "2026-01-01T00:00:00Z"])
        XCTAssertNotNil(id.range(of: "^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$", options: .regularExpression), id)
        XCTAssertEqual(id, WARCFormat.recordID(["1", "response", "https://example.org/", "2026-01-01T00:00:00Z"]))
        XCTAssertNotEqual(id, WARCFormat.recordID(["2", "response", "https://example.org/", "2026-01-01T00:00:00Z"]))
    }

    func testAWARCDateIsKeptToTheSecond() {
        XCTAssertEqual(WARCImport.timestamp("2024-05-01T10:00:00.123456Z"), "2024-05-01T10:00:00Z")
        XCTAssertEqual(WARCImport.timestamp("2024-05-01T10:00:00Z"), "2024-05-01T10:00:00Z")
    }
}
