import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// `Database.prepareQuery` refuses manifest SQL whose result chance or the clock decides, and only that: the calls
/// SQLite's authorizer names, and a date function in SQL holding the literal `'now'`, `'localtime'` or `'utc'` (the
/// scan of literals passes over comments and quoted identifiers, and survives any bytes).
final class DeterministicSQLTests: XCTestCase {
    private func refusal(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String? {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (v TEXT)")
        do {
            _ = try database.prepareQuery(sql)
            return nil
        } catch let error as SQLiteError where error.isNotDeterministic {
            return String(error.message.prefix { $0 != " " })
        }
    }

    func testTheCallsOfChanceAndTheClockAreRefusedAndOnlyThey() throws {
        let refused: [(String, String)] = [
            ("SELECT random()", "random()"), ("SELECT randomblob(2)", "randomblob()"), ("SELECT changes()", "changes()"),
            ("SELECT total_changes()", "total_changes()"), ("SELECT CURRENT_DATE", "current_date()"),
            ("SELECT current_time", "current_time()"), ("SELECT v FROM t WHERE v < CURRENT_TIMESTAMP", "current_timestamp()"),
            ("SELECT date('now')", "date(…'now'…)"), ("SELECT time('12:00', 'LocalTime')", "time(…'localtime'…)"),
            ("SELECT datetime(v, ' utc ') FROM t", "datetime(…'utc'…)"), ("SELECT strftime('%s', 'now')", "strftime(…'now'…)"),
            ("SELECT unixepoch('now')", "unixepoch(…'now'…)"), ("SELECT julianday(v) FROM t WHERE v = 'now'", "julianday(…'now'…)"),
        ]
        for (sql, call) in refused { XCTAssertEqual(try refusal(sql), call, sql) }
        let allowed = [
            "SELECT date('2026-03-01', '+1 day')", "SELECT v FROM t WHERE v = 'now'", "SELECT date(v) FROM t AS \"now\"",
            "SELECT date(v) FROM t -- 'now'", "SELECT date(v) /* 'utc' */ FROM t", "SELECT date(v) FROM t WHERE v = 'it''s now'",
            "SELECT date(v) FROM t WHERE v = 'nowhere'", "SELECT date(v) AS [now] FROM t", "SELECT abs(-1), upper('now')",
        ]
        for sql in allowed { XCTAssertNil(try refusal(sql), sql) }
    }

    func testAnyBytesGoThroughTheScanWithoutATrap() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (v TEXT)")
        let seeds = Array("SELECT date(v, 'now', [x], \"y\", `z`) FROM t -- 'utc'\n /* 'now' */ WHERE v = 'a''b'".utf8)
        let alphabet = Array("'\"`[]-/*\n now".utf8)
        var generator = SeededGenerator(seed: 31)
        for _ in 0..<5000 {
            var bytes = seeds
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                default: bytes = Array(bytes[..<index])
                }
                if bytes.isEmpty { bytes = seeds }
            }
            _ = try? database.prepareQuery(String(decoding: bytes, as: UTF8.self))
        }
    }
}
