import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `_file`: every reader's records can map the input file's path (relative to the pipeline folder, as provenance
/// names it) into a column, through normalizers like any field.
final class FileFieldTests: KilnTestCase {
    private func manifest(format: String, path: String, options: String, columns: String) -> String {
        """
        { bundle: "files", schemaVersion: 1,
          tables: [{ name: "t", columns: [{ name: "v", type: "text" }, { name: "file", type: "text" }, { name: "loud", type: "text" }] }],
          sources: [{ name: "s", format: "\(format)", path: "\(path)", options: \(options), into: "t", columns: \(columns) }] }
        """
    }

    func testFileIsAFieldOfEveryReadersRecords() throws {
        let pipeline = try loadPipeline(manifest: manifest(format: "delimited", path: "rows.txt", options: #"{ fields: ["v"] }"#,
                                                           columns: #"{ v: "v", file: "_file", loud: { field: "_file", normalize: ["upper"] } }"#),
                                        rows: "Πάτρα\nΡίο\n")
        let mappings = try XCTUnwrap(pipeline.sources.first?.targets.first?.mappings)
        XCTAssertEqual(mappings.filter { $0.fileProperty == .file }.map(\.column.name), ["file", "loud"])
        let output = temporaryDirectory.appendingPathComponent("out/files.sqlite")
        _ = try Builder.build(pipeline, options: BuildOptions(output: output))
        let database = try Database(path: output.path, mode: .readOnly)
        XCTAssertEqual(try database.rows("SELECT v, file, loud FROM t ORDER BY v").map { $0.values.map { $0.textValue ?? "NULL" } },
                       [["Πάτρα", "rows.txt", "ROWS.TXT"], ["Ρίο", "rows.txt", "ROWS.TXT"]])
    }

    func testAnUnknownFieldListsFileAmongTheFields() throws {
        try write("<r><s n=\"1\"/></r>", to: "pipeline/stops.xml")
        XCTAssertThrowsError(try loadPipeline(manifest: manifest(format: "xml", path: "stops.xml", options: #"{ record: "r/s", fields: { n: "@n" } }"#,
                                                                 columns: #"{ v: "n", file: "_fiel" }"#), rows: "")) { error in
            XCTAssertTrue("\(error)".contains("has no field \"_fiel\"; fields: n, _ordinal, _position, _file"), "\(error)")
        }
    }
}
