import Foundation
import XCTest
import KilnC
import KilnKit

/// The `files` reader's images through the `kiln` binary: a valid 12-bit JPEG (libjpeg-turbo's own test image)
/// builds with the size its header states and a finding naming its precision; a JPEG cut short still fails the build.
final class ImageHeaderCommandTests: CLITestCase {
    private func pipeline(_ photos: [String: Data]) throws {
        let folder = file("p/photos")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, data) in photos { try data.write(to: folder.appendingPathComponent(name)) }
        try """
            { bundle: "photos", schemaVersion: 1,
              tables: [{ name: "photo", columns: [{ name: "name", type: "text" }, { name: "width", type: "integer" },
                                                  { name: "height", type: "integer" }, { name: "file", type: "text" }] }],
              sources: [{ name: "photos", format: "files", path: "photos/*", into: "photo",
                          columns: { name: "name", width: "width", height: "height", file: "_file" } }] }
            """.write(to: file("p/kiln.json5"), atomically: true, encoding: .utf8)
    }

    private func testImage(_ name: String) throws -> Data {
        try Data(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/libjpeg-turbo-testimages/" + name))
    }

    private func report(_ path: String) throws -> [[String: Any]] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(path))) as? [String: Any])
        return object["diagnostics"] as? [[String: Any]] ?? []
    }

    func testATwelveBitJPEGBuildsWithItsHeadersSize() throws {
        try pipeline(["monkey12.jpg": try testImage("testorig12.jpg"), "plain.jpg": try testImage("testorig.jpg")])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let database = try Database(path: file("p.sqlite").path, mode: .readOnly)
        XCTAssertEqual(try database.rows("SELECT name, width, height, file FROM photo ORDER BY name").map { $0.values.map { $0.textValue ?? "NULL" } },
                       [["monkey12.jpg", "227", "149", "photos/monkey12.jpg"], ["plain.jpg", "227", "149", "photos/plain.jpg"]])
        let findings = try report("p.report.json")
        XCTAssertEqual(findings.map { $0["code"] as? String }, ["image.unsupported"])
        XCTAssertEqual(findings.first?["severity"] as? String, "warning")
        XCTAssertEqual(findings.first?["file"] as? String, "photos/monkey12.jpg")
        XCTAssertTrue((findings.first?["message"] as? String ?? "").hasPrefix("monkey12.jpg is a 12-bit JPEG (extended sequential DCT"),
                      "\(findings)")
    }

    func testAJPEGCutShortStillFailsTheBuild() throws {
        let whole = try testImage("testorig.jpg")
        try pipeline(["cut.jpg": whole.prefix(whole.count / 2), "monkey12.jpg": try testImage("testorig12.jpg")])
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("p.sqlite").path))
        let findings = try report("p.report.json")
        XCTAssertEqual(findings.map { "\($0["file"] ?? "") \($0["code"] ?? "") \($0["severity"] ?? "")" }.sorted(),
                       ["photos/cut.jpg image.corrupt error", "photos/monkey12.jpg image.unsupported warning"])
    }
}
