import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Numbers and times that only look like values — `1e309`, `NaN`, `-0`, `38,25`, `24:00`, `25:99`, `7:5` — through
/// the staging area of a build: each is converted as declared or reported at its line, never stored as something else.
final class HostileValueTests: HostileTestCase {
    private let manifest = """
        {
          bundle: "values",
          schemaVersion: 1,
          tables: [
            { name: "real_value", columns: [{ name: "id", type: "integer" }, { name: "value", type: "real" }], primaryKey: ["id"] },
            { name: "decimal_value", columns: [{ name: "id", type: "integer" }, { name: "value", type: "real" }], primaryKey: ["id"] },
            { name: "whole_value", columns: [{ name: "id", type: "integer" }, { name: "value", type: "integer" }], primaryKey: ["id"] },
            { name: "time_value", columns: [{ name: "id", type: "integer" }, { name: "value", type: "integer" }], primaryKey: ["id"] },
          ],
          sources: [
            { name: "reals", format: "delimited", path: "numbers.txt", options: { fields: ["id", "value"] },
              into: "real_value", columns: { id: "id", value: "value" } },
            { name: "decimals", format: "delimited", path: "numbers.txt", options: { fields: ["id", "value"] },
              into: "decimal_value", columns: { id: "id", value: { field: "value", normalize: ["decimal"] } } },
            { name: "wholes", format: "delimited", path: "wholes.txt", options: { fields: ["id", "value"] },
              into: "whole_value", columns: { id: "id", value: "value" } },
            { name: "times", format: "delimited", path: "times.txt", options: { fields: ["id", "value"] },
              into: "time_value", columns: { id: "id", value: { field: "value", normalize: ["minutes"] } } },
          ],
        }
        """

    private func build(numbers: String, wholes: String? = nil, times: String) throws -> BuildOutcome {
        try write(manifest, to: "values/kiln.json5")
        try write(numbers, to: "values/numbers.txt")
        try write(wholes ?? numbers, to: "values/wholes.txt")
        try write(times, to: "values/times.txt")
        let pipeline = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("values").path)
        return try Builder.build(pipeline, options: BuildOptions(output: temporaryDirectory.appendingPathComponent("out/values.sqlite")))
    }

    func testNumbersThatAreNotNumbersAreReportedAtTheirLine() throws {
        let numbers = "1; 1e309\n2; NaN\n3; -0\n4; 38,25\n5; inf\n6; 0x1p3\n7; 9223372036854775808\n8; 38.25\n"
        let outcome = try build(numbers: numbers, times: "1; 06:00\n")
        XCTAssertFalse(outcome.built)
        let found = outcome.diagnostics.map(\.formatted)
        for (line, text) in [(1, "1e309"), (2, "NaN"), (4, "38,25"), (5, "inf"), (6, "0x1p3")] {
            XCTAssertTrue(found.contains("numbers.txt:\(line): error: real_value.value: expected a decimal number, found \"\(text)\" [value]"),
                          "\(text)\n" + found.joined(separator: "\n"))
        }
        for (line, text) in [(1, "1e309"), (2, "NaN"), (5, "inf"), (6, "0x1p3")] {
            XCTAssertTrue(found.contains("numbers.txt:\(line): error: decimal_value.value: expected a decimal number, found \"\(text)\" [value]"),
                          "\(text)\n" + found.joined(separator: "\n"))
        }
        for (line, text) in [(1, "1e309"), (2, "NaN"), (4, "38,25"), (5, "inf"), (6, "0x1p3"), (7, "9223372036854775808"), (8, "38.25")] {
            XCTAssertTrue(found.contains("wholes.txt:\(line): error: whole_value.value: expected a whole number, found \"\(text)\" [value]"),
                          "\(text)\n" + found.joined(separator: "\n"))
        }
        XCTAssertEqual(found.count, 5 + 4 + 7, found.joined(separator: "\n"))
    }

    func testValuesThatConvertAreStoredAsNumbers() throws {
        let outcome = try build(numbers: "1; -0\n2; 38,25\n3; 1e3\n", times: "1; 24:00\n2; 7:05\n3; 00:00\n")
        XCTAssertFalse(outcome.built, "38,25 is not a real without the decimal normalizer")
        XCTAssertEqual(outcome.diagnostics.map(\.formatted), [
            "numbers.txt:2: error: real_value.value: expected a decimal number, found \"38,25\" [value]",
            "wholes.txt:2: error: whole_value.value: expected a whole number, found \"38,25\" [value]",
            "wholes.txt:3: error: whole_value.value: expected a whole number, found \"1e3\" [value]",
        ])

        let built = try build(numbers: "1; -0\n2; 38.25\n", wholes: "1; -0\n2; +7\n", times: "1; 24:00\n2; 7:05\n3; 00:00\n")
        XCTAssertTrue(built.built, built.diagnostics.map(\.formatted).joined(separator: "\n"))
        let database = try Database(path: built.output.path, mode: .readOnly)
        let reals = try database.rows("SELECT value, typeof(value), CAST(value AS TEXT) FROM real_value ORDER BY id").map { $0.values.map(\.textValue) }
        XCTAssertEqual(reals, [["0.0", "real", "0.0"], ["38.25", "real", "38.25"]], "-0 is stored as 0")
        let minutes = try database.rows("SELECT value FROM time_value ORDER BY id").map { $0.values[0].textValue }
        XCTAssertEqual(minutes, ["1440", "425", "0"], "24:00 is the end of the day")
        let wholes = try database.rows("SELECT value FROM whole_value ORDER BY id").map { $0.values[0].textValue }
        XCTAssertEqual(wholes, ["0", "7"])
    }

    func testTimesThatAreNotTimes() throws {
        let outcome = try build(numbers: "1; 1\n", times: "1; 24:00\n2; 25:99\n3; 7:5\n4; 24:01\n5; 12:60\n6; -1:00\n7; ٠٧:٠٠\n")
        XCTAssertEqual(outcome.diagnostics.map(\.formatted), [
            "times.txt:2: error: time_value.value: \"25:99\" is not a time of day (hours 00–24, minutes 00–59) [value]",
            "times.txt:3: error: time_value.value: \"7:5\" is not a time; expected HH:MM [value]",
            "times.txt:4: error: time_value.value: \"24:01\" is not a time of day (hours 00–24, minutes 00–59) [value]",
            "times.txt:5: error: time_value.value: \"12:60\" is not a time of day (hours 00–24, minutes 00–59) [value]",
            "times.txt:6: error: time_value.value: \"-1:00\" is not a time; expected HH:MM [value]",
            "times.txt:7: error: time_value.value: \"٠٧:٠٠\" is not a time; expected HH:MM [value]",
        ])
    }
}
