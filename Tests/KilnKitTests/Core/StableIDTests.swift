import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Ids from content: `StableID` and `kiln_stable_id()` in SQL, against Python's hashlib.
final class StableIDTests: XCTestCase {
    func testSQLFunctionMatchesHashlib() throws {
        let database = try Database(path: ":memory:", mode: .readWrite, functions: KilnSQLFunctions.all)
        let row = try XCTUnwrap(database.rows("SELECT kiln_stable_id('weekdays', 390, 1290, 30), kiln_stable_id('Πάτρα'), kiln_stable_id(NULL, 'x')").first)
        let expected = try [["weekdays", "390", "1290", "30"], ["Πάτρα"], ["", "x"]].map {
            String(decoding: try PythonOracle.run("stable_id.py", $0), as: UTF8.self)
        }
        XCTAssertEqual(row.values.map { $0.textValue ?? "NULL" }, expected)
        XCTAssertEqual(String(StableID.make(["weekdays", "390", "1290", "30"])), expected[0])
    }

    func testListingIDsAreUnchanged() throws {
        // The key StableListingID always hashed: page, path joined by U+001E, name, and the ordinal after the first.
        let expected = String(decoding: try PythonOracle.run("stable_id.py", ["Tokyo", "Eat\u{1E}Cheap", "Ramen", "2"]), as: UTF8.self)
        XCTAssertEqual(String(StableListingID.make(page: "Tokyo", path: ["Eat", "Cheap"], name: "Ramen", ordinal: 2)), expected)
    }
}
