import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// The museum's assets through the binary: every referenced image shipped, dimensions as Pillow reads them, and the
/// broken fixtures (a truncated panorama, one that is not 2:1), a missing and an orphan file, each named.
final class MuseumAssetsCommandTests: CLITestCase {
    private func build() throws -> Run {
        try copy("raw/museum", to: "raw/museum")
        return try kiln("build", "raw/museum")
    }

    func testAssetsShipWithTheDimensionsPillowReads() throws {
        let run = try build()
        XCTAssertEqual(run.status, 0, run.stderr)
        let database = try Database(path: file("build/museum.sqlite").path, mode: .readOnly)
        let rows = try database.rows("SELECT path, width, height FROM asset ORDER BY path")
        let paths = rows.map { file("raw/museum/assets/" + ($0["path"].textValue ?? "")).path }
        let pillow = String(decoding: try PythonOracle.run("images.py", ["read"] + paths), as: UTF8.self)
            .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        XCTAssertEqual(rows.count, 14)
        XCTAssertEqual(rows.map { "\($0["width"].textValue ?? "∅")×\($0["height"].textValue ?? "∅")" },
                       pillow.map { $0.count == 4 ? "\($0[2])×\($0[3])" : "unreadable" })
        XCTAssertEqual(try database.rows("SELECT count(*) FROM space JOIN asset ON asset.path = space.panorama WHERE width = 2 * height")
                        .first?.values.first?.textValue, "4")
    }

    func testBrokenPanoramasAreErrorsNamingTheFile() throws {
        try copy("raw/museum", to: "raw/museum")
        for name in ["lobby.jpg", "physics.jpg"] {
            let target = file("raw/museum/assets/panoramas/" + name)
            try FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/museum-broken/assets/panoramas/" + name),
                                             to: target)
        }
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("raw/museum/assets/panoramas/physics.jpg: physics.jpg is not a sound JPEG image"), run.stderr)
        XCTAssertTrue(run.stderr.contains("raw/museum/assets/panoramas/lobby.jpg:1: space lobby: panorama panoramas/lobby.jpg is 240×160 pixels; an equirectangular panorama is twice as wide as high"),
                      run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/museum.sqlite").path))
    }

    func testAMissingImageIsAnErrorAndAnOrphanAWarning() throws {
        try copy("raw/museum", to: "raw/museum")
        try FileManager.default.removeItem(at: file("raw/museum/assets/exhibits/enigma.jpg"))
        try FileManager.default.copyItem(at: file("raw/museum/assets/images/workshop.jpg"), to: file("raw/museum/assets/images/unused.jpg"))
        let run = try kiln("build", "raw/museum")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("the image of exhibit enigma is exhibits/enigma.jpg, which is not in assets/"), run.stderr)
        XCTAssertTrue(run.stderr.contains("assets/images/unused.jpg is referenced by no space, exhibit or page"), run.stderr)
    }
}
