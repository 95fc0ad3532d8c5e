import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The threaded staging load's writer: the bounded queue keeps order and stops on cancel, the writer's SQLite errors
/// reach the staging thread, a file whose reading failed leaves no rows, and findings made on another thread are
/// replayed under the log's cap.
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

    /// The bench's delimited pipeline (stop: code, name, latitude, longitude) with an empty staging database.
    private func stagingSetUp() throws -> (staging: StagingArea, source: CompiledSource, input: InputFile) {
        let folder = try copyRepositoryFolder("scripts/bench-data/load", as: "load")
        try Data("Πλατεία; 1; 21.7; 38.2\n".utf8).write(to: folder.appendingPathComponent("stops.txt"))
        let pipeline = try ManifestLoader.load(folder.path)
        let staging = try StagingArea(url: temporaryDirectory.appendingPathComponent("staging.sqlite"), pipeline: pipeline)
        let source = pipeline.sources[0]
        return (staging, source, source.files[0])
    }

    /// The shaped row of one stop record, as a reader thread hands it to the writer.
    private func row(_ source: CompiledSource, _ name: String, latitude: String, line: Int, input: InputFile, log: DiagnosticLog = DiagnosticLog()) -> ShapedRow {
        let record = Record(source.reader.kinds[0], values: [name, String(line), "21.7", latitude], line: line)
        return ShapedRow(target: 0, values: source.shaper.row(record, target: 0, input: input, log: log))
    }

    private let insertSQL = "INSERT INTO stop (code, latitude, longitude, name, _file, _line) VALUES (?, ?, ?, ?, ?, ?)"

    func testRowsAreInsertedInOrderAndOnlyCommittedFilesStay() throws {
        let (staging, source, input) = try stagingSetUp()
        XCTAssertEqual(source.targets.first?.mappings.map(\.column.name), ["code", "latitude", "longitude", "name"])
        let recorded = try XCTUnwrap(try staging.file.lendForWriting { connection in
            let writer = StagingWriter(lending: connection, insertSQL: [insertSQL],
                                       recorder: StagedRowRecorder(targets: source.targets, continuing: [:]))
            try writer.send(.begin)
            for start in stride(from: 1, to: 5_001, by: 500) {
                try writer.send(.rows((start..<start + 500).map { row(source, "stop \($0)", latitude: "38.\($0)", line: $0, input: input) }))
            }
            try writer.send(.commit)
            // A second file whose reading failed before its commit: its rows are rolled back.
            try writer.send(.begin)
            try writer.send(.rows([row(source, "lost", latitude: "1", line: 9, input: input)]))
            return try writer.finish()
        })
        // The facts the writer recorded are those of the rows that stayed: 5 000, none without a name.
        XCTAssertEqual(recorded.facts["stop"]?.rows, 5_000)
        XCTAssertEqual(recorded.facts["stop"]?.mayHoldNull("name"), false)
        let rows = try staging.database.rows("SELECT code, name, latitude, _file, _line FROM stop ORDER BY rowid")
        XCTAssertEqual(rows.count, 5_000)
        XCTAssertEqual(rows.map { $0.values[4].number }, (1...5_000).map { Double($0) })
        XCTAssertEqual(rows.last?.values.map(\.textValue), ["5000", "stop 5000", "38.5", "stops.txt", "5000"])
        XCTAssertEqual(rows.first?.values[2], .real(38.1))
    }

    func testFindingsMadeElsewhereAreReplayedWithTheLogsCap() throws {
        let (_, source, input) = try stagingSetUp()
        let fileLog = DiagnosticLog()
        fileLog.tally = DiagnosticTally(examplesPerCode: 2)
        for line in 1...5 { _ = row(source, "stop", latitude: "north \(line)", line: line, input: input, log: fileLog) }
        let log = DiagnosticLog()
        log.tally = DiagnosticTally(examplesPerCode: 2)
        fileLog.replay(into: log)
        XCTAssertEqual(log.diagnostics.map(\.code), ["value", "value"])
        XCTAssertEqual(log.diagnostics.map { $0.provenance?.line }, [1, 2])
        XCTAssertTrue(log.diagnostics[0].message.contains("north 1"), log.diagnostics[0].message)
        XCTAssertEqual(log.count(.error), 5)
    }

    func testWriterErrorReachesTheReadingThread() throws {
        let (staging, source, input) = try stagingSetUp()
        var thrown: Error?
        try staging.file.lendForWriting { connection in
            let writer = StagingWriter(lending: connection, insertSQL: ["INSERT INTO stop (code) VALUES (?)"],
                                       recorder: StagedRowRecorder(targets: source.targets, continuing: [:]))
            do {
                try writer.send(.begin)
                for line in 1...2_000 { try writer.send(.rows([row(source, "stop", latitude: "1", line: line, input: input)])) }
                try writer.send(.commit)
            } catch {
                thrown = error
            }
            XCTAssertThrowsError(try writer.finish()) { error in
                XCTAssertTrue(error is SQLiteError, "\(error)")
            }
        }
        if let thrown { XCTAssertTrue(thrown is SQLiteError, "\(thrown)") }
        XCTAssertEqual(try staging.database.rows("SELECT count(*) FROM stop").first?.values.first?.number, 0)
    }

    func testMissingTableIsReportedByFinish() throws {
        let (staging, _, _) = try stagingSetUp()
        try staging.file.lendForWriting { connection in
            let writer = StagingWriter(lending: connection, insertSQL: ["INSERT INTO missing (n) VALUES (?)"],
                                       recorder: StagedRowRecorder(targets: [], continuing: [:]))
            XCTAssertThrowsError(try writer.finish()) { error in
                XCTAssertTrue("\(error)".contains("no such table"), "\(error)")
            }
            // Again, as the load's error path does: it must not wait a second time.
            XCTAssertThrowsError(try writer.finish())
        }
    }
}
