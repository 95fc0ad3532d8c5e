import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The `files` reader: one record per file, sizes of JPEG and PNG images (written and read back by Pillow, the
/// oracle), SHA-256 compared with `sha256sum`, and damaged images as findings.
final class FilesReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue] = [:]) throws -> FilesReader {
        try FilesReader(options: JSONValue.object(options).decode(FilesReader.Options.self, codingPath: []))
    }

    private func field(_ record: Record, _ name: String, in reader: FilesReader) -> String? {
        record.values[reader.fieldNames.firstIndex(of: name)!]
    }

    /// Writes an image of the given size with Pillow.
    private func image(_ name: String, _ format: String, _ width: Int, _ height: Int) throws -> URL {
        let url = temporaryDirectory.appendingPathComponent(name)
        _ = try PythonOracle.text("images.py", ["write", url.path, format, String(width), String(height)])
        return url
    }

    func testSizesOfJPEGAndPNGAsPillowReadsThem() throws {
        let files = [try image("Boletus_edulis.jpg", "JPEG", 123, 45), try image("wide.png", "PNG", 300, 7),
                     try image("tiny.jpg", "JPEG", 1, 1)]
        let pillow = try PythonOracle.text("images.py", ["read"] + files.map(\.path)).split(separator: "\n")
            .map { $0.split(separator: "\t").map(String.init) }
        let reader = try reader()
        for (file, expected) in zip(files, pillow) {
            let (records, log) = try read(reader, url: file)
            XCTAssertEqual(log.diagnostics.count, 0, "\(log.diagnostics)")
            XCTAssertEqual(records.count, 1)
            let record = records[0]
            XCTAssertEqual(field(record, "name", in: reader), expected[0])
            XCTAssertEqual(field(record, "mediaType", in: reader), expected[1] == "PNG" ? "image/png" : "image/jpeg")
            XCTAssertEqual(field(record, "width", in: reader), expected[2])
            XCTAssertEqual(field(record, "height", in: reader), expected[3])
            let bytes = try Data(contentsOf: file)
            XCTAssertEqual(field(record, "bytes", in: reader), String(bytes.count))
        }
        let (records, _) = try read(reader, url: files[0])
        XCTAssertEqual(field(records[0], "stem", in: reader), "Boletus_edulis")
        XCTAssertEqual(field(records[0], "extension", in: reader), "jpg")
    }

    func testDigestIsTheFilesSHA256() throws {
        let url = try write("Hřib smrkový\n", to: "note.txt")
        let (records, log) = try read(try reader(), url: url)
        XCTAssertTrue(log.diagnostics.isEmpty)
        // SHA-256 of the UTF-8 bytes of "Hřib smrkový\n", as `printf 'Hřib smrkový\n' | sha256sum` prints it.
        let expected = try shell("printf 'Hřib smrkový\\n' | sha256sum | cut -c1-64")
        XCTAssertEqual(records[0].values[5], expected)
        XCTAssertEqual(records[0].values[6], "text/plain")
        XCTAssertNil(records[0].values[7])
        XCTAssertNil(records[0].values[8])
    }

    func testTruncatedImagesAreErrorsNamingTheFile() throws {
        for (name, format) in [("cut.jpg", "JPEG"), ("cut.png", "PNG")] {
            let whole = try Data(contentsOf: try image(name, format, 200, 150))
            let url = try write(whole.prefix(whole.count / 2), to: name)
            XCTAssertEqual(try PythonOracle.text("images.py", ["read", url.path]), "\(name)\terror\n", "Pillow agrees the file is damaged")
            let (records, log) = try read(try reader(), url: url)
            XCTAssertEqual(records.count, 1, "the file is still listed")
            XCTAssertNil(records[0].values[7])
            XCTAssertEqual(log.diagnostics.map(\.code), ["image.corrupt"])
            XCTAssertEqual(log.diagnostics.first?.severity, .error)
            XCTAssertEqual(log.diagnostics.first?.provenance?.file, name)
            XCTAssertTrue(log.diagnostics.first?.message.hasPrefix("\(name) is not a sound \(format == "PNG" ? "PNG" : "JPEG") image: ") == true,
                          log.diagnostics.first?.message ?? "")
        }
    }

    func testANonImageNamedJPEGAndAMisnamedImage() throws {
        let text = try write("not a picture", to: "Amanita_muscaria.jpg")
        let (_, log) = try read(try reader(), url: text)
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.corrupt"])
        XCTAssertTrue(log.diagnostics[0].message.contains("Not a JPEG file"), log.diagnostics[0].message)

        let empty = try write("", to: "empty.jpg")
        XCTAssertEqual(try read(try reader(), url: empty).log.diagnostics.map(\.message), ["empty.jpg is not a sound JPEG image: the file is empty"])

        let png = try image("really-a-png.jpg", "PNG", 10, 20)
        let (records, misnamed) = try read(try reader(), url: png)
        XCTAssertEqual(misnamed.diagnostics.map(\.code), ["image.media-type"])
        XCTAssertEqual(records[0].values[6], "image/png")
        XCTAssertEqual(records[0].values[7], "10")

        let jpeg = try image("really-a-jpeg.png", "JPEG", 30, 40)
        let (jpegRecords, jpegLog) = try read(try reader(), url: jpeg)
        XCTAssertEqual(jpegLog.diagnostics.map(\.message), ["really-a-jpeg.png is named .png but is a JPEG image"])
        XCTAssertEqual(jpegRecords[0].values[8], "40")

        let notPNG = try write("plain text", to: "fake.png")
        XCTAssertEqual(try read(try reader(), url: notPNG).log.diagnostics.map(\.message),
                       ["fake.png is not a sound PNG image: the file does not start with the PNG signature"])
    }

    func testImagesOverTheLimitAreNotDecoded() throws {
        let url = try image("big.png", "PNG", 400, 300)
        let (records, log) = try read(try reader(["maxPixels": .number(1000)]), url: url)
        XCTAssertEqual(log.diagnostics.map(\.code), ["image.too-large"])
        XCTAssertTrue(log.diagnostics[0].message.contains("400×300"))
        XCTAssertNil(records[0].values[7])
        XCTAssertThrowsError(try reader(["maxPixels": .number(0)]))
        XCTAssertThrowsError(try reader(["size": .number(1)]))
    }

    private func shell(_ command: String) throws -> String {
        try ExternalProgram.output(["sh", "-c", command]).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
