import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `kiln export room`'s generator: Room's identity hash and create statements against a schema file Room's compiler
/// wrote (Tests/Fixtures/real/room-schema-warmongr), Kotlin names, the package, FTS4 options as Room spells them.
final class RoomExportTests: XCTestCase {
    private func fixture(_ path: String = "room-schema-warmongr/1.json") throws -> [String: Any] {
        let url = KilnTestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/" + path)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try XCTUnwrap(document["database"] as? [String: Any])
    }

    /// The entities of Room's own schema file, as `RoomSchema` values.
    private func entities(_ database: [String: Any]) throws -> [(RoomSchema.Entity, createSql: String)] {
        try XCTUnwrap(database["entities"] as? [[String: Any]]).map { entity in
            let fields = try XCTUnwrap(entity["fields"] as? [[String: Any]]).map { field in
                RoomSchema.Field(column: field["columnName"] as? String ?? "", affinity: field["affinity"] as? String ?? "",
                                 notNull: field["notNull"] as? Bool ?? false, defaultValue: field["defaultValue"] as? String, primaryKeyPosition: 0)
            }
            let key = try XCTUnwrap((entity["primaryKey"] as? [String: Any])?["columnNames"] as? [String])
            var fullText: RoomSchema.FullText?
            if let options = entity["ftsOptions"] as? [String: Any] {
                let content = options["contentTable"] as? String ?? ""
                fullText = RoomSchema.FullText(tokenizer: options["tokenizer"] as? String ?? "", tokenizerArguments: options["tokenizerArgs"] as? [String] ?? [],
                                               contentTable: content.isEmpty ? nil : content, notIndexed: options["notIndexedColumns"] as? [String] ?? [], options: [])
            }
            let table = RoomSchema.Entity(table: entity["tableName"] as? String ?? "", fields: fields, primaryKey: key, indexes: [], foreignKeys: [], fullText: fullText)
            return (table, try XCTUnwrap(entity["createSql"] as? String))
        }
    }

    func testIdentityHashAndCreateStatementsAreRoomCompilers() throws {
        let database = try fixture()
        let entities = try entities(database)
        XCTAssertEqual(entities.count, 4)
        for (entity, createSql) in entities {
            XCTAssertEqual(RoomExport.createSQL(entity), createSql, entity.table)
        }
        let schema = RoomSchema(bundle: "warmongr", fileName: "warmongr.sqlite", version: 1, entities: entities.map(\.0))
        let export = try RoomExport(schema, package: "com.sirekanian.acf.data.local", contentDigest: "0123")
        XCTAssertEqual(export.identityHash, try XCTUnwrap(database["identityHash"] as? String))
        let setup = try XCTUnwrap(database["setupQueries"] as? [String])
        XCTAssertTrue(export.schemaJSON().contains(JSONText.string(setup[1])), "the room_master_table insert as Room writes it")
    }

    /// An FTS4 entity reading its text from a table, as Room's own integration tests export it (androidx
    /// FtsMigrationDb version 6): its create statement and the content-sync triggers. (That file's other FTS
    /// entities use matchinfo=fts3 and languageid, which Kiln does not write.)
    func testExternalContentFTS4EntityIsRoomCompilers() throws {
        let database = try fixture("room-schema-androidx-fts/6.json")
        let entities = try entities(database).filter { ["User", "AddressFts"].contains($0.0.table) }
        XCTAssertEqual(entities.count, 2)
        for (entity, createSql) in entities { XCTAssertEqual(RoomExport.createSQL(entity), createSql, entity.table) }
        let raw = try XCTUnwrap((database["entities"] as? [[String: Any]])?.first { $0["tableName"] as? String == "AddressFts" })
        let fts = try XCTUnwrap(entities.first { $0.0.table == "AddressFts" }).0
        XCTAssertEqual(RoomExport.contentSyncTriggers(fts), try XCTUnwrap(raw["contentSyncTriggers"] as? [String]))
    }

    func testNamesKeywordsAndCollisions() throws {
        XCTAssertEqual(RoomExport.propertyName("line_id"), "lineId")
        XCTAssertEqual(RoomExport.propertyName("in"), "`in`")
        XCTAssertEqual(RoomExport.propertyName("2nd value"), "_2ndValue")
        XCTAssertEqual(RoomExport.propertyName("αριθμός"), "αριθμός")
        XCTAssertEqual(RoomExport.propertyName("-"), "column")
        XCTAssertEqual(RoomExport.propertyName("stop_code"), SwiftExport.memberName("stop_code"), "as the Swift export names it")
        XCTAssertEqual(RoomExport.kdoc("a */ b", indent: "  "), ["  /** a * / b */"])
        XCTAssertEqual(RoomExport.kdoc("a\n\nb", indent: ""), ["/**", " * a", " *", " * b", " */"])
        XCTAssertEqual(RoomExport.typeName("route_stop"), "RouteStop")
        XCTAssertEqual(RoomExport.defaultPackage("patras-web"), "patras_web")
        XCTAssertEqual(RoomExport.defaultPackage("2go"), "bundle_2go")
        XCTAssertTrue(RoomExport.isPackage("gr.patras.bus"))
        for bad in ["", "gr..bus", "gr.in", "1gr", "gr.bus-lines", "gr.λεωφορεία"] { XCTAssertFalse(RoomExport.isPackage(bad), bad) }

        let field = { (name: String) in RoomSchema.Field(column: name, affinity: "TEXT", notNull: true, defaultValue: nil, primaryKeyPosition: name == "id" ? 1 : 0) }
        let clash = RoomSchema.Entity(table: "stop", fields: [field("id"), field("a b"), field("a-b")], primaryKey: ["id"], indexes: [], foreignKeys: [], fullText: nil)
        XCTAssertThrowsError(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [clash]), package: nil, contentDigest: "0123")) { error in
            XCTAssertTrue("\(error)".contains("columns \"a b\" and \"a-b\" of table stop would both be the Kotlin property aB"), "\(error)")
        }
        let one = RoomSchema.Entity(table: "route_stop", fields: [field("id")], primaryKey: ["id"], indexes: [], foreignKeys: [], fullText: nil)
        var two = one
        two.table = "route-stop"
        XCTAssertThrowsError(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [one, two]), package: nil, contentDigest: "0123")) { error in
            XCTAssertTrue("\(error)".contains("tables \"route_stop\" and \"route-stop\" would both be the Kotlin class RouteStop"), "\(error)")
        }
        XCTAssertThrowsError(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 0, entities: [one]), package: nil, contentDigest: "0123"))
        var child = RoomSchema.Entity(table: "child", fields: [field("id"), field("name")], primaryKey: ["id"], indexes: [], foreignKeys: [
            RoomSchema.ForeignKey(table: "route_stop", columns: ["name"], referencedColumns: ["name"], onDelete: "NO ACTION", onUpdate: "NO ACTION"),
        ], fullText: nil)
        var parent = one
        parent.fields.append(field("name"))
        XCTAssertThrowsError(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [parent, child]), package: nil, contentDigest: "0123")) { error in
            XCTAssertTrue("\(error)".contains("table child's foreign key to route_stop (name) names neither its primary key nor a unique index, which Room requires"), "\(error)")
        }
        parent.indexes = [RoomSchema.Index(name: "route_stop_name", unique: true, columns: ["name"], orders: ["ASC"])]
        XCTAssertNoThrow(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [parent, child]), package: nil, contentDigest: "0123"))
        child.foreignKeys[0].referencedColumns = ["id"]
        XCTAssertNoThrow(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [one, child]), package: nil, contentDigest: "0123"))
        XCTAssertThrowsError(try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 1, entities: [one]), package: "a.fun", contentDigest: "0123"))
    }

    /// Kotlin string literals escape `$` (no templates) and quotes; a keyword column keeps its name in @ColumnInfo.
    func testKotlinSourceEscapes() throws {
        let fields = [RoomSchema.Field(column: "id", affinity: "INTEGER", notNull: true, defaultValue: nil, primaryKeyPosition: 1),
                      RoomSchema.Field(column: "val", affinity: "TEXT", notNull: false, defaultValue: "'$x'", primaryKeyPosition: 0)]
        let entity = RoomSchema.Entity(table: "price\"s", fields: fields, primaryKey: ["id"], indexes: [], foreignKeys: [], fullText: nil)
        let export = try RoomExport(RoomSchema(bundle: "x", fileName: "x.sqlite", version: 3, entities: [entity]), package: "a.b", contentDigest: "0123")
        let source = try XCTUnwrap(export.files().first { $0.path == "a/b/PriceS.kt" }).text
        XCTAssertTrue(source.contains(#"tableName = "price\"s""#), source)
        XCTAssertTrue(source.contains(#"@androidx.room.ColumnInfo(name = "val", typeAffinity = androidx.room.ColumnInfo.TEXT, defaultValue = "'\$x'")"#), source)
        XCTAssertTrue(source.contains("    val `val`: kotlin.String?\n)"), source)
        XCTAssertEqual(export.files().map(\.path), ["a/b/PriceS.kt", "a/b/XDatabase.kt", "schemas/a.b.XDatabase/3.json"])
    }

    /// The FTS4 statement Kiln writes for a target spells its options as Room's compiler does, so that Room's
    /// `FtsTableInfo` (which compares them as text) accepts it; `tokenize=simple` is left out as Room leaves it out.
    func testTargetFTS4OptionsAreRoomsSpelling() {
        let fullText = FullTextSpec(name: "stop_search", columns: ["name"], unindexed: ["code"], tokenize: "unicode61 remove_diacritics 2")
        let table = TableSpec(name: "stop", columns: [], primaryKey: ["code"], unique: [], foreignKeys: [], indexes: [], fullText: fullText, spatial: nil, query: nil, ship: true)
        let sql = TargetSQL.createFullText4(fullText, of: table, tokenizer: "unicode61 `remove_diacritics=1`")
        let options = Set(RoomSchema.moduleArguments(sql).filter { !$0.hasPrefix("\"") })
        let room = RoomSchema.FullText(tokenizer: "unicode61", tokenizerArguments: ["remove_diacritics=1"], contentTable: "stop", notIndexed: ["code"], options: [])
        XCTAssertEqual(options, Set(RoomSchema.roomOptions(room)))
        XCTAssertFalse(TargetSQL.createFullText4(fullText, of: table, tokenizer: "simple").contains("tokenize"))
    }
}
