import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The pieces of the app-side exports that the CLI tests do not reach one by one: Swift names, the userFilled schema
/// rule.
final class AppExportTests: KilnTestCase {
    func testSwiftNamesAreCamelCaseAndKeywordsAreEscaped() {
        XCTAssertEqual(SwiftExport.typeName("route_stop"), "RouteStop")
        XCTAssertEqual(SwiftExport.typeName("line-timetable2"), "LineTimetable2")
        XCTAssertEqual(SwiftExport.typeName("2020_events"), "T2020Events")
        XCTAssertEqual(SwiftExport.memberName("line_id"), "lineId")
        XCTAssertEqual(SwiftExport.memberName("default"), "`default`")
        XCTAssertEqual(SwiftExport.memberName("in"), "`in`")
        XCTAssertEqual(SwiftExport.memberName("description"), "description")
        XCTAssertEqual(SwiftExport.namespace("patras-web"), "PatrasWebBundle")
    }

    /// The one clash checker of both exports: a reserved name names what it is, a second owner names both, backticks
    /// aside; the Kotlin classes also clash in another case.
    func testGeneratedNamesRefuseReservedNamesAndASecondOwner() throws {
        XCTAssertEqual(SwiftExport.memberName("self"), "`self`")
        XCTAssertEqual(SwiftExport.typeName("self"), "Self")
        var types = GeneratedNames("Swift type", reserved: ["Value": "the reader's type of SQLite values"])
        XCTAssertThrowsError(try types.claim("Value", for: .table("value"))) { error in
            XCTAssertEqual("\(error)", "table \"value\" would be the Swift type Value, which is the reader's type of SQLite values in the generated code: rename it in the manifest")
        }
        try types.claim("AB", for: .table("a_b"))
        try types.claim("Ab", for: .table("ab"))
        XCTAssertThrowsError(try types.claim("AB", for: .table("a__b"))) { error in
            XCTAssertEqual("\(error)", "tables \"a_b\" and \"a__b\" would both be the Swift type AB: rename one in the manifest")
        }
        var classes = GeneratedNames("Kotlin class", ignoringCase: true)
        try classes.claim("AB", for: .table("a_b"))
        XCTAssertThrowsError(try classes.claim("Ab", for: .table("ab"))) { error in
            XCTAssertEqual("\(error)", "tables \"a_b\" and \"ab\" would both be the Kotlin class Ab (AB differs from it only in case): rename one in the manifest")
        }
        var properties = GeneratedNames("Swift property")
        try properties.claim("`in`", for: .column("in", table: "t"))
        XCTAssertThrowsError(try properties.claim("in", for: .column("In", table: "t"))) { error in
            XCTAssertEqual("\(error)", "columns \"in\" and \"In\" of table t would both be the Swift property in: rename one in the manifest")
        }
        var functions = GeneratedNames("Swift function of the reader")
        try functions.claim("stopByX(x:)", for: .query("foreign key query", table: "stop"))
        XCTAssertThrowsError(try functions.claim("stopByX(x:)", for: .query("key query", table: "stop_by_x"))) { error in
            XCTAssertEqual("\(error)", "the foreign key query of table stop and the key query of table stop_by_x would both be the Swift function of the reader stopByX(x:): rename one in the manifest")
        }
    }

    private func database(_ name: String, _ sql: String) throws -> URL {
        let url = temporaryDirectory.appendingPathComponent(name)
        let database = try Database(path: url.path)
        try database.execute(sql + "; CREATE TABLE kiln_metadata (key TEXT PRIMARY KEY, value TEXT); INSERT INTO kiln_metadata VALUES ('bundle.name', 'b')")
        try database.close()
        return url
    }

    func testAUserFilledTablesSchemaChangeNeedsANewVersionAndOtherChangesKeepTheirCode() throws {
        let old = try database("old.sqlite", "PRAGMA user_version = 3; CREATE TABLE finds (id INTEGER PRIMARY KEY, note TEXT); CREATE TABLE species (id INTEGER PRIMARY KEY)")
        let sameVersion = try database("same.sqlite", "PRAGMA user_version = 3; CREATE TABLE finds (id INTEGER PRIMARY KEY, note TEXT NOT NULL); CREATE TABLE species (id INTEGER PRIMARY KEY, name TEXT)")
        let raised = try database("raised.sqlite", "PRAGMA user_version = 4; CREATE TABLE finds (id INTEGER PRIMARY KEY, note TEXT NOT NULL); CREATE TABLE species (id INTEGER PRIMARY KEY)")
        let diff = try BundleDiff.compare(old: old, new: sameVersion, userFilled: ["finds"])
        XCTAssertEqual(diff.findings.map(\.code), ["diff.user-version", "diff.user-filled-schema"])
        XCTAssertTrue(diff.findings[0].message.contains("(1 difference)"), diff.findings[0].message)
        XCTAssertTrue(diff.findings[1].message.contains("the schema of finds, which the app fills (userFilled), changed since"), diff.findings[1].message)
        XCTAssertTrue(diff.findings[1].message.contains("column finds.note is TEXT NOT NULL in the new bundle, TEXT in the old bundle"), diff.findings[1].message)
        // Without userFilled, both differences are the general rule's.
        let plain = try BundleDiff.compare(old: old, new: sameVersion)
        XCTAssertEqual(plain.findings.map(\.code), ["diff.user-version"])
        XCTAssertTrue(plain.findings[0].message.contains("(2 differences)"))
        XCTAssertEqual(try BundleDiff.compare(old: old, new: raised, userFilled: ["finds"]).findings.map(\.code), [])
    }

    func testASizeLimitFromTheManifestIsCheckedAgainstShippedTables() throws {
        let manifest = """
            { bundle: "b", schemaVersion: 1, limits: { bundleBytes: "2 MiB", tables: { t: "10 KB" } },
              tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }] }
            """
        let url = try write(manifest, to: "kiln.json5")
        let loaded = try ManifestLoader.load(url.path, resolvingInputs: false).manifest
        XCTAssertEqual(loaded.limits.bundleBytes?.bytes, 2_097_152)
        XCTAssertEqual(loaded.limits.tables["t"]?.bytes, 10_000)
    }

    /// The fold data the search accessors carry decodes to ICU's full case folding of every code point it changes,
    /// and leaves every other code point as it is.
    func testTheSearchFoldTablesAreICUsCaseFolding() {
        let tables = SearchAccessor.tables
        let folds = ICUText.foldData.caseFolds
        XCTAssertGreaterThan(folds.count, 1_000)
        let decoded = tables.decoded()
        XCTAssertEqual(decoded, Dictionary(uniqueKeysWithValues: folds))
        // Each fold, read through the decoded tables, is what TextFolding.fold does to the letter alone.
        for (letter, folded) in [("ß", "ss"), ("ς", "σ"), ("ﬁ", "fi"), ("ꭰ", "Ꭰ"), ("K", "k"), ("Σ", "σ")] {
            XCTAssertEqual(String(String.UnicodeScalarView((decoded[letter.unicodeScalars.first!.value] ?? []).compactMap(Unicode.Scalar.init))), folded)
            XCTAssertEqual(TextFolding.fold(letter), folded)
        }
        // Marks after letters: the combining acute (below U+0510) is no extending range's, the Hebrew point is.
        XCTAssertFalse(stride(from: 0, to: tables.extending.count, by: 2).contains { 0x301 >= tables.extending[$0] && 0x301 <= tables.extending[$0 + 1] })
        XCTAssertTrue(stride(from: 0, to: tables.extending.count, by: 2).contains { 0x5B4 >= tables.extending[$0] && 0x5B4 <= tables.extending[$0 + 1] })
    }

    /// A search query is folded only where an indexed column of the full-text table was filled through `fold`.
    func testASearchQueryIsFoldedOnlyWhereTheIndexedColumnWasFolded() throws {
        let manifest = """
            { bundle: "b", schemaVersion: 1,
              tables: [
                { name: "a", columns: [{ name: "id", type: "integer" }, { name: "name", type: "text" }, { name: "folded", type: "text" }],
                  primaryKey: ["id"], fullText: { name: "a_search", columns: ["name", "folded"], unindexed: ["id"] } },
                { name: "b", columns: [{ name: "id", type: "integer" }, { name: "name", type: "text" }, { name: "folded", type: "text" }],
                  primaryKey: ["id"], fullText: { name: "b_search", columns: ["name"], unindexed: ["id"] } },
              ],
              sources: [
                { name: "a", format: "delimited", path: "a.txt", options: { fields: ["id", "name"] }, into: "a",
                  columns: { id: "id", name: "name", folded: { field: "name", normalize: ["trim", "fold"] } } },
                { name: "b", format: "delimited", path: "b.txt", options: { fields: ["id", "name"] }, into: "b",
                  columns: { id: "id", name: "name", folded: { field: "name", normalize: ["fold"] } } },
              ] }
            """
        let loaded = try ManifestLoader.load(try write(manifest, to: "kiln.json5").path, resolvingInputs: false).manifest
        XCTAssertEqual(SearchAccessor.foldedTables(loaded), ["a_search"], "b's folded column is not indexed")
    }
}
