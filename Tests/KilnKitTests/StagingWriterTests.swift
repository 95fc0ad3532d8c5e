import Foundation
import XCTest
@testable import KilnKit

/// The two-thread staging load: the bounded queue keeps order and stops on cancel, the writer's SQLite errors reach
/// the reading thread, and a file whose reading failed leaves no rows.
final class StagingWriterTests: KilnTestCase {
    func testQueueDeliversEveryElementInOrderThroughFewSlots() {
        let queue = BoundedQueue<Int>(capacity: 3)
        let count = 20_000
        let producer = Thread {
            for value in 0..<count { _ = queue.push(value) }
            queue.finish()
        }
        producer.start()
        var received: [Int] = []
        while let value = queue.pop() { received.append(value) }
        XCTAssertEqual(received, Array(0..<count))
    }

    func testQueueRefusesPushesOnceCancelled() {
        let queue = BoundedQueue<Int>(capacity: 1)
        XCTAssertTrue(queue.push(1))
        queue.cancel()
        XCTAssertFalse(queue.push(2))
        XCTAssertNil(queue.pop())
    }

    func testRowsArriveInOrderAndCommittedFilesStay() throws {
        let url = temporaryDirectory.appendingPathComponent("staging.sqlite")
        let database = try Database(path: url.path)
        try database.execute("CREATE TABLE t (n INTEGER, label TEXT)")
        let writer = StagingWriter(path: url.path, insertSQL: ["INSERT INTO t (n, label) VALUES (?, ?)"])
        try writer.send(.begin)
        for start in stride(from: 0, to: 5_000, by: 500) {
            try writer.send(.rows((start..<start + 500).map { StagedRow(target: 0, values: [.integer(Int64($0)), .text("row \($0)")]) }))
        }
        try writer.send(.commit)
        // A second file whose reading failed before its commit: its rows are rolled back.
        try writer.send(.begin)
        try writer.send(.rows([StagedRow(target: 0, values: [.integer(-1), .text("lost")])]))
        try writer.finish()
        let rows = try database.rows("SELECT n, label FROM t ORDER BY rowid")
        XCTAssertEqual(rows.count, 5_000)
        XCTAssertEqual(rows.map { $0.values[0].number }, (0..<5_000).map { Double($0) })
        XCTAssertEqual(rows.last?.values[1].textValue, "row 4999")
    }

    func testWriterErrorReachesTheReadingThread() throws {
        let url = temporaryDirectory.appendingPathComponent("staging.sqlite")
        let database = try Database(path: url.path)
        try database.execute("CREATE TABLE t (n INTEGER NOT NULL)")
        let writer = StagingWriter(path: url.path, insertSQL: ["INSERT INTO t (n) VALUES (?)"])
        var thrown: Error?
        do {
            try writer.send(.begin)
            for _ in 0..<1_000 { try writer.send(.rows([StagedRow(target: 0, values: [.null])])) }
            try writer.send(.commit)
        } catch {
            thrown = error
        }
        XCTAssertThrowsError(try writer.finish()) { error in
            XCTAssertTrue("\(error)".contains("NOT NULL"), "\(error)")
        }
        if let thrown { XCTAssertTrue("\(thrown)".contains("NOT NULL"), "\(thrown)") }
        XCTAssertEqual(try database.rows("SELECT count(*) FROM t").first?.values.first?.number, 0)
    }

    func testMissingTableIsReportedByFinish() throws {
        let url = temporaryDirectory.appendingPathComponent("staging.sqlite")
        _ = try Database(path: url.path)
        let writer = StagingWriter(path: url.path, insertSQL: ["INSERT INTO missing (n) VALUES (?)"])
        XCTAssertThrowsError(try writer.finish()) { error in
            XCTAssertTrue("\(error)".contains("no such table"), "\(error)")
        }
    }
}
