import Foundation
import KilnTestSupport
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `FileDigest`: a file longer than one chunk is digested on a thread of its own while it is read; the digest must
/// be the file's SHA-256 (oracle: coreutils' `sha256sum`) and the head its first bytes, whatever the size.
final class FileDigestTests: KilnTestCase {
    private func sha256sum(_ url: URL) throws -> String { try ExternalDigest.sha256sum(url.path) }

    func testDigestsAndHeadsOnBothSidesOfTheChunkSize() throws {
        var random = SeededGenerator(seed: 0xD16E57)
        let chunk = FileDigest.chunkSize
        for size in [0, 1, InputFile.headLength - 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 12_345] {
            // Eight random bytes per draw, written in place: a byte per draw took seconds in a debug build.
            var bytes = [UInt8](repeating: 0, count: size)
            var word: UInt64 = 0
            for index in bytes.indices {
                if index % 8 == 0 { word = random.next() }
                bytes[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
            }
            let url = try write(Data(bytes), to: "file-\(size).bin")
            let started = try FileDigest.start(url)
            XCTAssertEqual(try started.digest.wait(), try sha256sum(url), "size \(size)")
            XCTAssertEqual(started.head, Array(bytes.prefix(InputFile.headLength)), "size \(size)")
        }
    }

    func testAFileThatCannotBeReadIsAnIOError() throws {
        XCTAssertThrowsError(try FileDigest.sha256(of: temporaryDirectory.appendingPathComponent("missing.xml"))) { error in
            guard case KilnError.io(let failure) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(failure.message.contains("missing.xml"), failure.message)
        }
    }
}
