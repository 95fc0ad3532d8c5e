import Foundation
import XCTest
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Each list Kiln keeps (reader formats, built-in exports and export writers, rule kinds) is declared once in the
/// code; the docs, the fuzz targets and the manifest's messages are held to that declaration here, so that adding to
/// the list in one place only fails a test.
final class DeclaredListsTests: KilnTestCase {
    private func repositoryText(_ path: String) throws -> String {
        try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    private func fileNames(in folder: String, ending suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: KilnTestCase.repositoryRoot.appendingPathComponent(folder).path)
            .filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }.sorted()
    }

    /// `ReaderRegistry` is the list of formats: the manifest reference's `format` line names them in its order, each
    /// has a reference page (and no page is left over), linked from the manifest reference, and some fuzz target
    /// reads it; a fuzz target reads no other format; an unknown format is refused naming them all.
    func testTheReaderFormatsAreTheRegistrys() throws {
        let formats = ReaderRegistry.formats
        XCTAssertEqual(Set(formats).count, formats.count, "a format is registered twice")
        let manifest = try repositoryText("docs/reference/manifest.md")
        let listed = try XCTUnwrap(manifest.components(separatedBy: "\n").first { $0.contains("format: \"delimited\",") }?
            .components(separatedBy: "//").last?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) })
        XCTAssertEqual(listed, formats, "docs/reference/manifest.md's format line lists ReaderRegistry.readerTypes in order")
        XCTAssertEqual(try fileNames(in: "docs/reference/readers", ending: ".md"), formats.sorted(),
                       "docs/reference/readers/ holds one page per registered format")
        for format in formats {
            let page = "docs/reference/readers/\(format).md"
            XCTAssertTrue(try repositoryText(page).hasPrefix("# The `\(format)` reader\n"), page)
            XCTAssertTrue(manifest.contains("(readers/\(format).md)"), "manifest.md links \(page)")
        }
        var fuzzed = Set<String>()
        for target in try fileNames(in: "Fuzz/targets", ending: ".json5") {
            let text = try repositoryText("Fuzz/targets/\(target).json5")
            for match in text.matches(of: /format: "([a-z0-9-]+)"/) {
                XCTAssertTrue(formats.contains(String(match.1)), "Fuzz/targets/\(target).json5 reads format \(match.1), which no reader has")
                fuzzed.insert(String(match.1))
            }
        }
        XCTAssertEqual(fuzzed.sorted(), formats.sorted(), "every format has a fuzz target that reads it")
        XCTAssertThrowsError(try ReaderRegistry.makeReader(format: "nope", options: .object([:]), codingPath: [])) { error in
            XCTAssertTrue("\(error)".contains("expected one of: \(formats.joined(separator: ", "))"), "\(error)")
        }
    }

    /// `kiln fetch` accepts, for a source that names no `contentTypes`, the media types its reader declares; a
    /// sitemap is markup; an unknown format any.
    func testEachFormatsAcceptedMediaTypesAreItsReaders() {
        for type in ReaderRegistry.readerTypes {
            XCTAssertEqual(ReaderRegistry.acceptedMediaTypes(for: type.format), type.acceptedMediaTypes, type.format)
            XCTAssertFalse(type.acceptedMediaTypes.isEmpty, type.format)
        }
        XCTAssertTrue(FetchSettings.accepts("application/xml", ReaderRegistry.acceptedMediaTypes(for: "xml")))
        XCTAssertTrue(FetchSettings.accepts("text/csv", ReaderRegistry.acceptedMediaTypes(for: "delimited")))
        XCTAssertFalse(FetchSettings.accepts("image/png", ReaderRegistry.acceptedMediaTypes(for: "json")))
        XCTAssertEqual(ReaderRegistry.acceptedMediaTypes(for: "nope"), ["*/*"])
    }
}
