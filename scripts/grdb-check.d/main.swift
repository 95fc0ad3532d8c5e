// scripts/grdb-check's program: opens each bundle read-only with GRDB, fetches every table through the records
// `kiln export swift` wrote, and compares them with what the file's own reader reads. Prints `bundle table count`.
import Bundles
import GRDB

/// Every row of `T` through GRDB (in the reader's order, and the first three) against the generated reader's rows;
/// a mismatch throws.
func compare<T: FetchableRecord & TableRecord & Equatable & Sendable>(_ type: T.Type, order: String, path: String, own: [T]) throws -> Int {
    let queue = try readOnly(path)
    let viaGRDB = try queue.read { db in try T.all().order(sql: order).fetchAll(db) }
    let first = try queue.read { db in try T.all().order(sql: order).limit(3).fetchAll(db) }
    guard viaGRDB == own, first == Array(own.prefix(3)) else {
        throw CheckError(message: "\(T.databaseTableName): GRDB read other rows than the generated reader")
    }
    return viaGRDB.count
}

struct CheckError: Error { var message: String }

func readOnly(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.readonly = true
    return try DatabaseQueue(path: path, configuration: configuration)
}

/// A generated row type as a GRDB record (the conformances under `#if canImport(GRDB)`).
func record<Record>(_ type: Any.Type, as record: Record.Type) throws -> Record {
    guard let type = type as? Record else { throw CheckError(message: "\(type) is no GRDB record") }
    return type
}

typealias PatrasRecord = PatrasBundle.Row & FetchableRecord & TableRecord & Equatable
typealias PatrasRecordType = any PatrasRecord.Type
typealias ItravelRecord = ItravelBundle.Row & FetchableRecord & TableRecord & Equatable
typealias ItravelRecordType = any ItravelRecord.Type

func patras(_ path: String) throws {
    let reader = try PatrasBundle.Reader(path: path)
    func one<T: PatrasRecord>(_ type: T.Type) throws -> Int { try compare(type, order: T.order, path: path, own: reader.all(type)) }
    for type in PatrasBundle.rowTypes { print("patras", type.tableName, try one(record(type, as: PatrasRecordType.self))) }
}

func itravel(_ path: String) throws {
    let reader = try ItravelBundle.Reader(path: path)
    func one<T: ItravelRecord>(_ type: T.Type) throws -> Int { try compare(type, order: T.order, path: path, own: reader.all(type)) }
    for type in ItravelBundle.rowTypes { print("itravel", type.tableName, try one(record(type, as: ItravelRecordType.self))) }
}

/// A bundle whose stop 0102 has the text 'north' as latitude: the record must throw, neither trap nor read 0.0.
func wrongType(_ path: String) throws {
    do {
        _ = try readOnly(path).read { db in try PatrasBundle.Stop.fetchAll(db) }
        throw CheckError(message: "a text latitude decoded as a Double")
    } catch let error as PatrasBundle.ReaderError {
        print("wrong type: the record threw:", error)
    }
}

let arguments = CommandLine.arguments
try patras(arguments[1])
try itravel(arguments[2])
try wrongType(arguments[3])
