import Foundation

/// One row bound for staging, shaped (the declared columns' values, then `_file` and `_line`), with the index of
/// the source's target (table) it goes into.
struct ShapedRow: Sendable {
    let target: Int
    let values: [SQLValue]
}

/// What the staging thread hands the writing thread, in order: each source's rows inside one transaction.
enum StagingMessage: Sendable {
    case begin
    case rows([ShapedRow])
    case commit
}

/// Inserts shaped rows on a thread of its own, through a connection of its own to the staging database, while
/// reader threads read and shape the next ones (`ReadAhead`). Rows are inserted in the order they are sent, so the
/// staging tables hold exactly what a single-threaded load puts there.
/// The calling thread must not use its connection to the staging database until `finish()`.
final class StagingWriter: Sendable {
    private let queue = BoundedQueue<StagingMessage>(capacity: 16)
    /// The writing thread; it ends with the recorder that took in every row inserted.
    private let writer: BackgroundThread<StagedRowRecorder>

    /// Starts the writing thread on the database at `path`, with one insert statement per target (`insertSQL`);
    /// `recorder` takes in each row inserted.
    init(path: String, insertSQL: [String], recorder: StagedRowRecorder) {
        let queue = queue
        writer = BackgroundThread(name: "kiln staging writer") {
            var recorder = recorder
            do {
                try StagingWriter.drain(queue, path: path, insertSQL: insertSQL, recorder: &recorder)
            } catch {
                queue.cancel()
                throw error
            }
            return recorder
        }
    }

    /// Hands `message` to the writing thread, waiting while the queue is full.
    /// - Throws: the writer's error when it has stopped (SQLite refused a row or the file).
    func send(_ message: StagingMessage) throws {
        guard queue.push(message) else {
            _ = try writer.wait()
            throw CancellationError()
        }
    }

    /// Waits for the writing thread to finish everything sent and close its connection; returns the recorder that
    /// took in every row inserted. A transaction left open (the reader threw before `.commit`) is rolled back.
    /// Calling it again returns (or throws) the same at once.
    /// - Throws: the writer's error, if it stopped on one.
    @discardableResult
    func finish() throws -> StagedRowRecorder? {
        queue.finish()
        return try writer.wait()
    }

    /// How long the writer waits for another connection's read of the staging file.
    static let busySeconds = 600.0

    private static func drain(_ queue: BoundedQueue<StagingMessage>, path: String, insertSQL: [String],
                              recorder: inout StagedRowRecorder) throws {
        let database = try Database(path: path, mode: .readWrite, functions: KilnSQLFunctions.all)
        var open = false
        // The recorder as it was when the open transaction began: a rollback takes its rows back.
        var atBegin = recorder
        do {
            // Rows are appended: a small page cache does, and keeps the second thread's memory small.
            try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -8192")
            // A full-text index may be copying the rows of a table an earlier source filled (`FullTextBuild.start`):
            // writing pages to the file waits for it.
            database.waitWhenBusy(seconds: StagingWriter.busySeconds)
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
            try? database.close()
            throw error
        }
        if open {
            try database.execute("ROLLBACK")
            recorder = atBegin
        }
        try database.close()
    }
}
