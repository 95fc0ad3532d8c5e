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

    /// The byte scan that lets `InputIdentity.key` skip Foundation agrees with Foundation's `standardizedFileURL`:
    /// a path it calls standard is one Foundation leaves as it is, and every path Foundation would change (a `.`,
    /// `..` or empty component) is sent to Foundation.
    func testThePathScanAgreesWithFoundationsStandardization() {
        let components = ["a", ".", "..", "", "...", ".a", "a.", "..b", "b..", "é", "x y", "%2e"]
        var paths: [String] = []
        for first in components { for second in components { for third in components {
            paths.append("/\(first)/\(second)/\(third)")
            paths.append("/\(first)/\(second)")
        } } }
        paths += ["/", "relative/a", "a", "", "/./", "/..", "/a/."]
        var standardCount = 0
        for path in paths {
            let url = URL(fileURLWithPath: path)
            let foundation = url.standardizedFileURL.path
            if InputIdentity.isStandard(url.path) {
                standardCount += 1
                XCTAssertEqual(foundation, url.path, "the scan called \(url.path) standard; Foundation makes it \(foundation)")
            }
            XCTAssertEqual(InputIdentity.key(url), foundation, path)
            let names = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            if path.hasPrefix("/"), names.dropLast().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) || ["." , ".."].contains(names.last ?? "") {
                XCTAssertFalse(InputIdentity.isStandard(path), path)
            }
        }
        XCTAssertGreaterThan(standardCount, 100, "most of the paths are standard and skip Foundation")
        XCTAssertFalse(InputIdentity.isStandard("a/b"), "a relative path is not standard")
    }
}
