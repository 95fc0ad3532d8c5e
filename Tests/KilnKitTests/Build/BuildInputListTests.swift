import Foundation
import XCTest
@testable import KilnBuild

/// `BuildInputList`: the list of a build's inputs beside its record reads back as written, whatever the paths hold,
/// and anything else is refused rather than half read.
final class BuildInputListTests: KilnTestCase {
    private func input(_ path: String, stamp: FileStamp?) -> BuildCacheRecord.Input {
        BuildCacheRecord.Input(path: path, sha256: String(repeating: "ab", count: 32), stamp: stamp)
    }

    func testEveryPathAndStampReadsBackAsWritten() throws {
        let stamp = FileStamp(device: UInt64.max, inode: 0, size: Int64.max, modified: Int64.min, changed: -1)
        // Paths a file system allows: tabs, line feeds, carriage returns (one before a line feed, which Swift counts as
        // one character), backslashes before the letters the escapes use, spaces, and text outside ASCII.
        let paths = ["pages/line-1.html", "with\ttab", "line\nfeed", "cr\r\nlf", "ends in cr\r", "back\\slash\\n", "\\", "ω é 木", " ", "-"]
        var inputs = paths.map { input($0, stamp: stamp) }
        inputs.append(input("no stamp", stamp: nil))
        let data = BuildInputList.encode(inputs)
        let read = try XCTUnwrap(BuildInputList.decode(data))
        XCTAssertEqual(read.map(\.path), inputs.map(\.path))
        XCTAssertEqual(read.map(\.sha256), inputs.map(\.sha256))
        XCTAssertEqual(read.map(\.stamp), inputs.map(\.stamp))
        XCTAssertEqual(String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).count, inputs.count + 2,
                       "one line an input, after the header, and a last line feed: no raw line feed from a path")
        XCTAssertEqual(BuildInputList.decode(BuildInputList.encode([])).map(\.count), 0)
    }

    func testAListCutShortOrMalformedIsRefused() throws {
        let data = BuildInputList.encode([input("a.txt", stamp: FileStamp(device: 1, inode: 2, size: 3, modified: 4, changed: 5)), input("b.txt", stamp: nil)])
        let text = String(decoding: data, as: UTF8.self)
        for bad in [String]([
            String(text.dropLast()),                                             // cut inside the last line
            text.replacingOccurrences(of: "kiln build inputs 1", with: "kiln build inputs 2"),
            text.replacingOccurrences(of: "1 2 3 4 5", with: "1 2 3 4"),         // a stamp with a number missing
            text.replacingOccurrences(of: "1 2 3 4 5", with: "1 2 x 4 5"),
            text.replacingOccurrences(of: "1 2 3 4 5", with: "1 2 3 4 99999999999999999999"),
            text.replacingOccurrences(of: "\tb.txt", with: "b.txt"),             // one tab missing
            text.replacingOccurrences(of: "b.txt", with: "b\\q.txt"),             // an escape that is none
            text.replacingOccurrences(of: "b.txt", with: "b.txt\\"),
            text.replacingOccurrences(of: String(repeating: "ab", count: 32) + "\t1", with: "abab\t1"),  // a digest cut short
        ]).enumerated() {
            XCTAssertNil(BuildInputList.decode(Data(bad.element.utf8)), "case \(bad.offset): \(bad.element)")
        }
    }
}
