import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Real images the decoder cannot or can only just decode: libjpeg-turbo's own test images (a 12-bit JPEG, an
/// arithmetic-coded one) and PngSuite's 16-bit and interlaced PNGs. Sizes, precisions and processes come from
/// `exiftool`, an independent reader of image headers.
final class ImageHeaderTests: KilnTestCase {
    private static let jpegFolder = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/libjpeg-turbo-testimages")
    private static let pngFolder = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/pngsuite")

    /// exiftool's reading of `url`: the tags asked for, as text.
    private func exiftool(_ url: URL, _ tags: [String]) throws -> [String: String] {
        let data = try standardOutput(of: URL(fileURLWithPath: "/usr/bin/exiftool"), ["-j", "-n"] + tags.map { "-" + $0 } + [url.path])
        let object = try XCTUnwrap((JSONSerialization.jsonObject(with: data) as? [[String: Any]])?.first)
        return object.mapValues { "\($0)" }
    }

    private func reader() throws -> FilesReader {
        try FilesReader(options: JSONValue.object([:]).decode(FilesReader.Options.self, codingPath: []))
    }

    private func size(_ record: Record) -> [String?] { [record["width"], record["height"]] }

    func testJPEGHeadersAsExiftoolReadsThem() throws {
        for name in ["testorig12.jpg", "testimgari.jpg", "testorig.jpg"] {
            let url = ImageHeaderTests.jpegFolder.appendingPathComponent(name)
            let header = try XCTUnwrap(JPEGHeader.read([UInt8](try Data(contentsOf: url))), name)
            let expected = try exiftool(url, ["ImageWidth", "ImageHeight", "BitsPerSample", "ColorComponents"])
            XCTAssertEqual([header.width, header.height, header.precision, header.components].map(String.init),
                           [expected["ImageWidth"], expected["ImageHeight"], expected["BitsPerSample"], expected["ColorComponents"]], name)
            let process = try exiftool(url, ["EncodingProcess"])
            XCTAssertNotNil(process["EncodingProcess"], name)
        }
        XCTAssertEqual(JPEGHeader.read([UInt8](try Data(contentsOf: ImageHeaderTests.jpegFolder.appendingPathComponent("testorig12.jpg"))))?.process,
                       "extended sequential DCT, Huffman coding")
        XCTAssertEqual(JPEGHeader.read([UInt8](try Data(contentsOf: ImageHeaderTests.jpegFolder.appendingPathComponent("testimgari.jpg"))))?.process,
                       "extended sequential DCT, arithmetic coding")
    }

    func testA12BitJPEGIsNotDamageItsSizeComesFromItsHeader() throws {
        let url = ImageHeaderTests.jpegFolder.appendingPathComponent("testorig12.jpg")
        let expected = try exiftool(url, ["ImageWidth", "ImageHeight"])
        let reader = try reader()
        let (records, log) = try read(reader, url: url)
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(size(records[0]), [expected["ImageWidth"], expected["ImageHeight"]])
        XCTAssertEqual(records[0]["mediaType"], "image/jpeg")
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.unsupported"])
        XCTAssertEqual(log.diagnostics.first?.severity, .warning)
        XCTAssertEqual(log.diagnostics.first?.message,
                       "testorig12.jpg is a 12-bit JPEG (extended sequential DCT, Huffman coding, 3 components), which libjpeg-turbo "
                           + "cannot decode here (\"Unsupported JPEG data precision 12\"): its size, 227×149, is taken from its header; "
                           + "its image data is not checked")
    }

    func testAnArithmeticCodedJPEGDecodes() throws {
        let url = ImageHeaderTests.jpegFolder.appendingPathComponent("testimgari.jpg")
        let expected = try exiftool(url, ["ImageWidth", "ImageHeight"])
        let (records, log) = try read(try reader(), url: url)
        XCTAssertEqual(log.diagnostics.count, 0, "\(log.diagnostics)")
        XCTAssertEqual(size(records[0]), [expected["ImageWidth"], expected["ImageHeight"]])
    }

    func testA12BitJPEGCutBeforeItsFrameHeaderIsStillCorrupt() throws {
        let whole = try Data(contentsOf: ImageHeaderTests.jpegFolder.appendingPathComponent("testorig12.jpg"))
        let url = try write(whole.prefix(20), to: "cut12.jpg")
        let (records, log) = try read(try reader(), url: url)
        XCTAssertNil(records[0]["width"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.corrupt"])
    }

    func testA12BitJPEGOverMaxPixelsIsTooLarge() throws {
        let reader = try FilesReader(options: JSONValue.object(["maxPixels": .number(1000)]).decode(FilesReader.Options.self, codingPath: []))
        let (records, log) = try read(reader, url: ImageHeaderTests.jpegFolder.appendingPathComponent("testorig12.jpg"))
        XCTAssertNil(records[0]["width"])
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.too-large"])
        XCTAssertTrue(log.diagnostics[0].message.contains("227×149"), log.diagnostics[0].message)
    }

    func testAnEightBitJPEGCutShortIsStillCorrupt() throws {
        let whole = try Data(contentsOf: ImageHeaderTests.jpegFolder.appendingPathComponent("testorig.jpg"))
        let url = try write(whole.prefix(whole.count / 2), to: "cut8.jpg")
        let (_, log) = try read(try reader(), url: url)
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.corrupt"])
        XCTAssertEqual(log.diagnostics.first?.severity, .error)
    }

    func testSixteenBitAndInterlacedPNGsDecodeWithExiftoolsSizes() throws {
        let reader = try reader()
        for name in ["basn0g16.png", "basn2c16.png", "ibasn2c16.png", "ibasn0g08.png"] {
            let url = ImageHeaderTests.pngFolder.appendingPathComponent(name)
            let expected = try exiftool(url, ["ImageWidth", "ImageHeight"])
            let (records, log) = try read(reader, url: url)
            XCTAssertEqual(log.diagnostics.count, 0, "\(name): \(log.diagnostics)")
            XCTAssertEqual(size(records[0]), [expected["ImageWidth"], expected["ImageHeight"]], name)
            XCTAssertEqual(records[0]["mediaType"], "image/png")
        }
    }

    func testALosslessFrameHeaderNamesItsProcess() {
        // SOI, then an SOF3 segment (16-bit, 2×3, one component): the marker layout of ITU T.81, B.2.2.
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC3, 0x00, 0x0B, 0x10, 0x00, 0x03, 0x00, 0x02, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9]
        XCTAssertEqual(JPEGHeader.read(bytes), JPEGHeader(width: 2, height: 3, precision: 16, components: 1, marker: 0xC3))
        XCTAssertEqual(JPEGHeader.read(bytes)?.process, "lossless, Huffman coding")
        XCTAssertNil(JPEGHeader.read(Array(bytes.prefix(8))), "cut inside the frame header")
        XCTAssertNil(JPEGHeader.read([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02]), "a scan before any frame header")
    }
}
