import Foundation
import KilnKit
import XCTest

/// `kiln build` indexes full-text tables in scratch databases on a thread of their own and copies the index into the
/// bundle. The oracle is SQLite's FTS5 itself: the same FTS5 table filled in place from the shipped table, as an app
/// developer would, must hold exactly the rows the bundle's shadow tables hold, and answer queries the same.
final class FullTextIndexCommandTests: CLITestCase {
    func testTheBundlesFullTextIndexesAreTheOnesFTS5BuildsInPlace() throws {
        // Real scraped data: the Patras web pipeline (two full-text tables) and the museum pipeline.
        for (pipeline, bundle) in [("raw/patras-web", "patras-web"), ("raw/museum", "museum"), ("raw/itravel", "itravel")] {
            let output = file("out/\(bundle).sqlite")
            let run = try kiln("build", CLITestCase.repositoryRoot.appendingPathComponent(pipeline).path, "--out", output.path)
            XCTAssertEqual(run.status, 0, "\(pipeline): \(run.stderr)")
            let database = try Database(path: output.path, mode: .readWrite)
            let declared = try ManifestLoader.load(CLITestCase.repositoryRoot.appendingPathComponent(pipeline).path).manifest.tables
                .compactMap { table in table.fullText.map { (table: table.name, index: $0.name) } }
            XCTAssertFalse(declared.isEmpty, pipeline)
            try database.execute("ATTACH DATABASE ':memory:' AS oracle")
            for (table, name) in declared {
                let sql = try XCTUnwrap(database.rows("SELECT sql FROM sqlite_schema WHERE name = ?", [.text(name)]).first?["sql"].textValue)
                let shipped = try XCTUnwrap(sql.range(of: "CREATE VIRTUAL TABLE ")).upperBound
                try database.execute("CREATE VIRTUAL TABLE oracle.\(sql[shipped...])")
                let columns = try database.rows("SELECT name FROM pragma_table_info(?)", [.text(name)]).compactMap { $0["name"].textValue }
                let list = columns.map(quoteIdentifier).joined(separator: ", ")
                try database.execute("INSERT INTO oracle.\(quoteIdentifier(name)) (\(list)) SELECT \(list) FROM main.\(quoteIdentifier(table)) ORDER BY rowid")
                let shadows = try database.rows("SELECT name FROM oracle.sqlite_schema WHERE type = 'table' AND name LIKE ? ESCAPE '\\' ORDER BY name",
                                                [.text(name + "\\_%")]).compactMap { $0["name"].textValue }
                XCTAssertEqual(shadows.count, 5, "\(pipeline): \(name)")
                for shadow in shadows {
                    let ours = try database.rows("SELECT * FROM main.\(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    let theirs = try database.rows("SELECT * FROM oracle.\(quoteIdentifier(shadow)) ORDER BY 1, 2").map(\.values)
                    XCTAssertFalse(theirs.isEmpty, "\(pipeline): \(shadow)")
                    XCTAssertEqual(ours, theirs, "\(pipeline): \(shadow)")
                }
                try database.execute("INSERT INTO main.\(quoteIdentifier(name)) (\(quoteIdentifier(name))) VALUES ('integrity-check')")
            }
            try database.close()
        }
    }
}
