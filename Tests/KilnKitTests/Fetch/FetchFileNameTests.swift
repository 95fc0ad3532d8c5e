import Foundation
import XCTest
import KilnTestSupport
@testable import KilnManifest

/// A URL never becomes a path: every name `FetchFileName` makes is one plain file name inside the source's folder,
/// the same for the same URLs, and distinct for distinct URLs.
final class FetchFileNameTests: KilnTestCase {
    func testNamesAreSafePlainAndDistinct() throws {
        var random = SeededGenerator(seed: 54)
        let pieces = ["..", ".", "%2F", "%2E%2E", "%00", "%5C", "a", "é", "%C3%A9", "CON", "nul", "x.html", "?q=1", "?q=2", "#f",
                      "/", "//", "\\", ":", "%25", String(repeating: "w", count: 90), "lpt9.txt", " ", "%20", "\u{202E}", "%E2%80%AE"]
        var urls: [String] = []
        for _ in 0..<2000 {
            let path = (0..<Int.random(in: 1...5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            urls.append("https://example.org/data/" + path)
        }
        urls = Array(Set(urls)).sorted()
        let fetch = SourceFetch(urls: urls, single: false)
        let files = FetchFileName.files(for: fetch, path: "site/pages/*")
        XCTAssertEqual(files.map(\.url), urls)
        XCTAssertEqual(FetchFileName.files(for: fetch, path: "site/pages/*").map(\.file), files.map(\.file), "the same every time")
        for (url, file) in files {
            XCTAssertTrue(file.hasPrefix("site/pages/"), file)
            let name = String(file.dropFirst("site/pages/".count))
            XCTAssertFalse(name.isEmpty || name.contains("/") || name.contains("\\") || name.contains("\0") || name.contains(":"), "\(url) → \(name)")
            XCTAssertFalse(name.hasPrefix("."), "\(url) → \(name)")
            XCTAssertLessThanOrEqual(name.utf8.count, FetchFileName.maximumBytes, url)
            XCTAssertFalse(["CON", "NUL", "LPT9"].contains(name.split(separator: ".").first.map { $0.uppercased() } ?? ""), name)
            XCTAssertFalse(name.unicodeScalars.contains { $0.properties.isDefaultIgnorableCodePoint || $0.properties.generalCategory == .format }, name)
        }
        // Distinct URLs, distinct files (case-insensitively, for file systems that fold case).
        XCTAssertEqual(Set(files.map { $0.file.lowercased() }).count, files.count)
        // Fixed points a user can rely on.
        XCTAssertEqual(FetchFileName.name(for: "https://example.org/stops.xml"), "stops.xml")
        XCTAssertEqual(FetchFileName.name(for: "https://example.org/guide/"), "index.html")
        XCTAssertEqual(FetchFileName.name(for: "https://example.org/%CE%A3%CF%84%CE%AC%CF%83%CE%B7.html"), "Στάση.html")
        XCTAssertEqual(FetchFileName.name(for: "https://example.org/CON.txt"), "_CON.txt")
        XCTAssertEqual(FetchFileName.name(for: "https://example.org/..%2F..%2Fx"), "_.._.._x")
    }
}
