import Foundation
import KilnC
import KilnKit
import XCTest

/// `kiln build` writes each bundle table as soon as the sources filling it are staged (and the tables declared before
/// it are written), while later sources are still read. The bytes must not depend on that: a table staged early and
/// one staged late give the same bundle, and a later source's error leaves no bundle behind. The rows are real: the
/// Patras stop list, cut in two.
final class BundleTablesCommandTests: CLITestCase {
    private let columns = #"[{ name: "code", type: "text" }, { name: "name", type: "text" }, { name: "longitude", type: "real" }, { name: "latitude", type: "real" }]"#
    private let fields = #"options: { fields: ["name", "code", "longitude", "latitude"] }, columns: { code: "code", name: "name", longitude: "longitude", latitude: "latitude" }"#

    /// Writes a pipeline in `name` with two tables (`stop`, with a full-text index, declared first; `other`) filled
    /// by one source each, the sources in `sourceOrder`; `otherRows` are the lines of the second table's file.
    private func pipeline(_ name: String, sourceOrder: [String], otherRows: [String]? = nil) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stops = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(stops.count, 100)
        try (stops[..<90].joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try ((otherRows ?? Array(stops[90...])).joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("b.txt"), atomically: true, encoding: .utf8)
        let sources = [
            "stops": #"{ name: "stops", format: "delimited", path: "a.txt", \#(fields), into: "stop" }"#,
            "others": #"{ name: "others", format: "delimited", path: "b.txt", \#(fields), into: "other" }"#,
        ]
        try """
            { bundle: "stops", schemaVersion: 1,
              tables: [
                { name: "stop", columns: \(columns), primaryKey: ["code"], fullText: { name: "stop_search", columns: ["name"], unindexed: ["code"] } },
                { name: "other", columns: \(columns), primaryKey: ["code"] },
              ],
              sources: [\(sourceOrder.compactMap { sources[$0] }.joined(separator: ", "))] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        return folder
    }

    func testTheBundleIsTheSameWhicheverTableIsStagedFirst() throws {
        // The table declared first is staged first (written while the second source is read), or last (the table
        // staged first waits for it).
        let early = try pipeline("early", sourceOrder: ["stops", "others"])
        let late = try pipeline("late", sourceOrder: ["others", "stops"])
        let stops = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt"), encoding: .utf8)
            .split(separator: "\n").count
        var digests: [String] = []
        for (folder, run) in [(early, 1), (late, 1), (early, 2)] {
            let name = "out/\(folder.lastPathComponent)-\(run).sqlite"
            let output = file(name)
            let result = try kiln("build", folder.path, "--out", output.path)
            XCTAssertEqual(result.status, 0, result.stderr)
            digests.append(try sha256(name))
            let database = try Database(path: output.path)
            XCTAssertEqual(try database.rows("SELECT count(*) FROM stop").first?.values.first, .integer(90))
            XCTAssertEqual(try database.rows("SELECT count(*) FROM other").first?.values.first, .integer(Int64(stops - 90)))
            XCTAssertEqual(try database.rows("SELECT count(*) FROM stop_search").first?.values.first, .integer(90))
        }
        XCTAssertEqual(Set(digests).count, 1, "\(digests)")
    }

    func testALaterSourcesErrorLeavesNoBundleAfterAnEarlyTable() throws {
        // The stops are staged (and their table written) before the second file shows a line with too few fields.
        let folder = try pipeline("broken-later", sourceOrder: ["stops", "others"], otherRows: ["Ακτή Δυμαίων;900;21.7"])
        let output = file("out/broken-later.sqlite")
        let run = try kiln("build", folder.path, "--out", output.path, "--format", "json")
        XCTAssertEqual(run.status, 1, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        let parse = diagnostics.filter { $0["code"] as? String == "parse" }
        XCTAssertEqual(parse.count, 1, "\(diagnostics)")
        XCTAssertEqual(parse.first?["file"] as? String, "b.txt", "\(diagnostics)")
        XCTAssertEqual(parse.first?["line"] as? Int, 1, "\(diagnostics)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path).filter { $0 != ".kiln-cache" }.sorted(), ["broken-later.report.json"],
                       "the build cache keeps what was read; nothing else is left")
    }
}
