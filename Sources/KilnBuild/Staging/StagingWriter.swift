import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// One row bound for staging, shaped (the declared columns' values, then `_file` and `_line`), with the index of
/// the source's target (table) it goes into.
package struct ShapedRow: Sendable {
    package let target: Int
    package let values: [SQLValue]
}

/// What the staging thread hands the writing thread, in order: each source's rows inside one transaction.
package enum StagingMessage: Sendable {
    case begin
    case rows([ShapedRow])
    case commit
}

/// Inserts shaped rows on a thread of its own, through the staging connection a write phase lends it
/// (`StagingDatabase.lendForWriting`), while reader threads read and shape the next ones (`ReadAhead`). Rows are
/// inserted in the order they are sent, so the staging tables hold exactly what a single-threaded load puts there.
/// The lending thread gets the connection back once `finish()` has returned.
package final class StagingWriter: Sendable {
    private let queue = BoundedQueue<StagingMessage>(capacity: 16)
    /// The writing thread; it ends with the recorder that took in every row inserted.
    private let writer: BackgroundThread<StagedRowRecorder>

    /// Starts the writing thread on the lent staging `connection`, with one insert statement per target
    /// (`insertSQL`); `recorder` takes in each row inserted.
    package init(lending connection: Handoff<Database>, insertSQL: [String], recorder: StagedRowRecorder) {
        let queue = queue
        writer = BackgroundThread(name: "kiln staging writer") {
            var recorder = recorder
            do {
                try StagingWriter.drain(queue, into: connection.value, insertSQL: insertSQL, recorder: &recorder)
            } catch {
                queue.cancel()
                throw error
            }
            return recorder
        }
    }

    /// Hands `message` to the writing thread, waiting while the queue is full.
    /// - Throws: the writer's error when it has stopped (SQLite refused a row or the file).
    package func send(_ message: StagingMessage) throws {
        guard queue.push(message) else {
            _ = try writer.wait()
            throw CancellationError()
        }
    }

    /// Waits for the writing thread to finish everything sent and be done with the connection; returns the recorder that
    /// took in every row inserted. A transaction left open (the reader threw before `.commit`) is rolled back.
    /// Calling it again returns (or throws) the same at once.
    /// - Throws: the writer's error, if it stopped on one.
    @discardableResult
    package func finish() throws -> StagedRowRecorder? {
        queue.finish()
        return try writer.wait()
    }

    private static func drain(_ queue: BoundedQueue<StagingMessage>, into database: Database, insertSQL: [String],
                              recorder: inout StagedRowRecorder) throws {
        var open = false
        // The recorder as it was when the open transaction began: a rollback takes its rows back.
        var atBegin = recorder
        do {
            let inserts = try insertSQL.map { try database.prepare($0) }
            while let message = queue.pop() {
                switch message {
                case .begin:
                    try database.execute("BEGIN")
                    open = true
                    atBegin = recorder
                case .rows(let rows):
                    guard open else { continue }
                    for row in rows {
                        try inserts[row.target].run(row.values)
                        recorder.record(row.values, target: row.target)
                    }
                case .commit:
                    try database.execute("COMMIT")
                    open = false
                }
            }
        } catch {
            if open {
                try? database.execute("ROLLBACK")
                recorder = atBegin
            }
            throw error
        }
        if open {
            try database.execute("ROLLBACK")
            recorder = atBegin
        }
    }
}
