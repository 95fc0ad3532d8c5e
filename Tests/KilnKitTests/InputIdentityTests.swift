import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// An input swapped for a link to another file after the manifest was loaded and its paths checked (the time-of-
/// check to time-of-use race a hostile neighbour can win): the build refuses it and ships nothing of the other file.
final class InputIdentityTests: KilnTestCase {
    private let manifest = """
        { bundle: "swap", schemaVersion: 1,
          tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
          sources: [{ name: "s", format: "delimited", path: "rows.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
        """

    func testAnInputSwappedForALinkAfterItWasCheckedIsRefused() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "public\n")
        let secret = try write("secret line\n", to: "outside/secret.txt")
        let input = temporaryDirectory.appendingPathComponent("pipeline/rows.txt")
        try FileManager.default.removeItem(at: input)
        try FileManager.default.createSymbolicLink(at: input, withDestinationURL: secret)
        let output = temporaryDirectory.appendingPathComponent("out/swap.sqlite")
        XCTAssertThrowsError(try Builder.build(pipeline, options: BuildOptions(output: output))) { error in
            XCTAssertEqual("\(error)", "input \(input.path) changed after it was checked: it is now a symbolic link to \(secret.resolvingSymlinksInPath().path), not the file the build started with; nothing of it is read")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "nothing shipped")
    }

    func testAnInputReplacedByAnotherFileIsRefusedAndAnUntouchedOneIsRead() throws {
        let pipeline = try loadPipeline(manifest: manifest, rows: "public\n")
        let output = temporaryDirectory.appendingPathComponent("out/swap.sqlite")
        let built = try Builder.build(pipeline, options: BuildOptions(output: output))
        XCTAssertTrue(built.built, "the file the manifest checked is read")
        let input = temporaryDirectory.appendingPathComponent("pipeline/rows.txt")
        try "replaced\n".write(to: input, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Builder.build(pipeline, options: BuildOptions(output: output))) { error in
            XCTAssertTrue("\(error)".hasSuffix("changed after it was checked: it is now a regular file, not the file the build started with; nothing of it is read"), "\(error)")
        }
        XCTAssertTrue(try Builder.build(try ManifestLoader.load(input.deletingLastPathComponent().path), options: BuildOptions(output: output)).built,
                      "loading the manifest again checks the new file")
    }
}
