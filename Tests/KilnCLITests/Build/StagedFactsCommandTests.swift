import Foundation
import KilnC
import KilnKit
import XCTest

/// `kiln build` answers the key and not-null rules from what the staging writer saw as it inserted the rows
/// (`StagedTableFacts`) when the source lists them in key order, as the real Patras stop list does; otherwise SQL
/// answers. Either way the bundle and every finding must be the same, each finding pointing at the line that holds
/// the bad record. The oracle is the same real file reversed (so nothing is in order) and the file's own lines.
final class StagedFactsCommandTests: CLITestCase {
    private var stops: [String] {
        get throws {
            try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt"), encoding: .utf8)
                .split(separator: "\n").map(String.init)
        }
    }

    /// The stop code of a line of the stop list (its second field).
    private func code(_ line: String) -> String {
        line.split(separator: ";", omittingEmptySubsequences: false)[1].trimmingCharacters(in: .whitespaces)
    }

    /// Builds a pipeline over `lines` (the stop list's format; a blank name is a missing one) in `name`; returns the
    /// exit status, the findings and the bundle's stop rows, in the order it holds them, when one was written.
    private func build(_ name: String, _ lines: [String]) throws -> (status: Int32, findings: [[String: Any]], bundle: [[SQLValue]]?) {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("stops.txt"), atomically: true, encoding: .utf8)
        try """
            { bundle: "stops", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true },
                                                 { name: "longitude", type: "real" }, { name: "latitude", type: "real" }],
                         primaryKey: ["code"] }],
              sources: [{ name: "stops", format: "delimited", path: "stops.txt", options: { fields: ["name", "code", "longitude", "latitude"] },
                          into: "stop", columns: { code: "code", name: { field: "name", normalize: ["trim", "emptyToNull"] }, longitude: "longitude", latitude: "latitude" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        let output = file("out/\(name).sqlite")
        let run = try kiln("build", folder.path, "--out", output.path, "--format", "json")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stderr)
        let findings = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        guard FileManager.default.fileExists(atPath: output.path) else { return (run.status, findings, nil) }
        let rows = try Database(path: output.path).rows("SELECT * FROM stop ORDER BY rowid").map(\.values)
        return (run.status, findings, rows)
    }

    func testTheRealStopListInOrderGivesTheBundleItGivesReversed() throws {
        let lines = try stops
        XCTAssertEqual(lines.map(code), lines.map(code).sorted(), "the real stop list is in code order")
        let inOrder = try build("in-order", lines)
        let reversed = try build("reversed", lines.reversed())
        XCTAssertEqual(inOrder.status, 0)
        XCTAssertEqual(reversed.status, 0)
        // The same rows in the same order (the bundles differ only in the recorded digest of their input).
        XCTAssertEqual(inOrder.bundle?.count, lines.count)
        XCTAssertEqual(inOrder.bundle, reversed.bundle)
        XCTAssertEqual(inOrder.findings.count, reversed.findings.count)
    }

    func testRepeatedKeysAndMissingNamesAreFoundInEitherOrder() throws {
        var lines = try stops
        // A real line repeated next to itself under another name, which sorts after its own (Ω after any other
        // Greek capital), so that the file stays in the bundle's order; and a real line whose name is blanked.
        let changed = lines[10].replacingOccurrences(of: lines[10].split(separator: ";")[0], with: "Ωραίο όνομα")
        lines.insert(changed, at: 11)
        let blank = 60
        lines[blank] = ";" + lines[blank].split(separator: ";", omittingEmptySubsequences: false).dropFirst().joined(separator: ";")
        var expected = [(DiagnosticCode.duplicateKey.rawValue, code(lines[10])), (DiagnosticCode.notNull.rawValue, code(lines[blank]))]
        try assertFound(expected, in: ("broken-in-order", lines), ("broken-reversed", Array(lines.reversed())))
        // An exact repeat too: two equal rows are not in order, so SQL answers for both files.
        lines.insert(lines[40], at: 41)
        expected.append((DiagnosticCode.duplicateRow.rawValue, code(lines[40])))
        try assertFound(expected, in: ("repeat-in-order", lines), ("repeat-reversed", Array(lines.reversed())))
    }

    /// A file out of order is written sorted on its key alone; an exact repeat makes the bundle's key refuse a row,
    /// and the table is written again, sorted on every column with the repeat dropped (undone through a journal in
    /// memory). Either way the bundle holds the rows of the file in order, once each, in a sound file with no page
    /// left free; the repeat is a warning pointing at its line.
    func testAnExactRepeatOutOfOrderIsWrittenOnceAsTheFileInOrderGivesIt() throws {
        let lines = try stops
        let inOrder = try build("once-in-order", lines)
        var repeated = Array(lines.reversed())
        repeated.insert(repeated[25], at: 70)
        let result = try build("once-repeated", repeated)
        XCTAssertEqual(result.status, 0, "\(result.findings)")
        XCTAssertEqual(result.bundle?.count, lines.count)
        XCTAssertEqual(result.bundle, inOrder.bundle)
        let warning = try XCTUnwrap(result.findings.first { $0["code"] as? String == DiagnosticCode.duplicateRow.rawValue }, "\(result.findings)")
        XCTAssertEqual(warning["line"] as? Int, 71)
        let bundle = try Database(path: file("out/once-repeated.sqlite").path)
        XCTAssertEqual(try bundle.rows("PRAGMA integrity_check").first?.values.first?.textValue, "ok")
        XCTAssertEqual(try bundle.rows("PRAGMA freelist_count").first?.values.first?.number, 0)
        XCTAssertEqual(try bundle.rows("PRAGMA journal_mode").first?.values.first?.textValue, "delete", "no journal mode is stored in the file")
    }

    /// Builds each variant and checks that it fails with exactly the `expected` key and not-null findings (code,
    /// stop), each pointing at a line of that variant that holds the stop.
    private func assertFound(_ expected: [(code: String, stop: String)], in variants: (String, [String])...) throws {
        let codes = [DiagnosticCode.duplicateKey, .duplicateRow, .notNull].map(\.rawValue)
        for (name, variant) in variants {
            let result = try build(name, variant)
            XCTAssertEqual(result.status, 1, name)
            XCTAssertNil(result.bundle, name)
            let found = result.findings.filter { codes.contains($0["code"] as? String ?? "") }
            XCTAssertEqual(found.count, expected.count, "\(name): \(result.findings)")
            for (code, stop) in expected {
                let finding = try XCTUnwrap(found.first { $0["code"] as? String == code }, "\(name): no \(code) in \(found)")
                let line = try XCTUnwrap(finding["line"] as? Int, "\(finding)")
                XCTAssertEqual(finding["file"] as? String, "stops.txt")
                XCTAssertEqual(self.code(variant[line - 1]), stop, "\(name): \(finding)")
                XCTAssertTrue((finding["message"] as? String)?.contains(stop) == true, "\(name): \(finding)")
            }
        }
    }
}
