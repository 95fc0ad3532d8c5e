import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// A target's bundle (`PendingTargetBundle.write`) is converted in a plain copy of the main bundle and laid out by one
/// `VACUUM INTO`. Its bytes must be those the earlier sequence wrote, which is the oracle here, run step by step with
/// SQLite: a `VACUUM INTO` copy of the main bundle, the same conversion in one transaction, then a VACUUM in place.
final class TargetBundleLayoutTests: KilnTestCase {
    /// The target bundle of `pipeline` written the earlier way from the main bundle `main`, into `destination`.
    private func writtenTheEarlierWay(from main: URL, to destination: URL, manifest: Manifest, target: SQLiteTarget) throws {
        let original = try Database(path: main.path, mode: .readOnly, functions: KilnSQLFunctions.all)
        try original.execute("VACUUM INTO \(quoteLiteral(destination.path))")
        try original.close()
        let database = try Database(path: destination.path, mode: .readWrite, functions: KilnSQLFunctions.all)
        try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        try database.execute("ATTACH DATABASE \(quoteLiteral(main.path)) AS kiln_source")
        try database.transaction {
            try TargetSQL.convert(database, manifest: manifest, target: target, source: "kiln_source")
            try database.execute("INSERT INTO kiln_metadata (key, value) VALUES ('bundle.target', \(quoteLiteral(target.platform)))")
            for table in manifest.tables where table.ship {
                guard let spatial = table.spatial, !target.supports(module: "rtree") else { continue }
                try database.execute("INSERT INTO kiln_metadata (key, value) SELECT 'rows.' || \(quoteLiteral(spatial.name)), count(*) FROM \(quoteIdentifier(spatial.name))")
            }
        }
        try database.execute("DETACH DATABASE kiln_source")
        try database.execute("VACUUM")
        try database.close()
    }

    /// Builds the sample `path` (a pipeline with an Android target), then writes its Android bundle both ways.
    private func assertBothWaysAgree(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let folder = try copyRepositoryFolder(path, as: URL(fileURLWithPath: path).lastPathComponent)
        let pipeline = try ManifestLoader.load(folder.path)
        let main = temporaryDirectory.appendingPathComponent("\(pipeline.manifest.bundle).sqlite")
        let outcome = try Builder.build(pipeline, options: BuildOptions(output: main))
        XCTAssertTrue(outcome.built, file: file, line: line)
        let android = try XCTUnwrap(pipeline.manifest.targets.first { $0.platform == "android" }, file: file, line: line)
        let earlier = temporaryDirectory.appendingPathComponent("earlier.sqlite")
        try? FileManager.default.removeItem(at: earlier)
        try writtenTheEarlierWay(from: main, to: earlier, manifest: pipeline.manifest, target: android)
        let destination = temporaryDirectory.appendingPathComponent("now.android.sqlite")
        let (pending, _, _) = try PendingTargetBundle.write(from: main, to: destination, manifest: pipeline.manifest, target: android)
        defer { pending.discard() }
        let now = try Data(contentsOf: pending.temporary), then = try Data(contentsOf: earlier)
        XCTAssertGreaterThan(now.count, 8192, file: file, line: line)
        XCTAssertEqual(now.count, then.count, "\(path): sizes", file: file, line: line)
        let differing = zip(now, then).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        XCTAssertEqual(Array(differing.prefix(8)), [], "\(path): the first bytes that differ", file: file, line: line)
        // The bundle Kiln wrote beside the main one is the same file.
        let built = try Data(contentsOf: KilnFileNames.targetBundle(for: main, platform: "android"))
        XCTAssertEqual(built, now, "\(path): the build's own Android bundle", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: KilnFileNames.staging(for: destination).path), "the scratch copy is gone",
                       file: file, line: line)
    }

    func testTheTravelGuidesAndroidBundleHasTheBytesTheEarlierSequenceWrote() throws {
        try assertBothWaysAgree("raw/itravel")
    }

    func testTheBusAppsAndroidBundleHasTheBytesTheEarlierSequenceWrote() throws {
        try assertBothWaysAgree("raw/patras")
    }
}
