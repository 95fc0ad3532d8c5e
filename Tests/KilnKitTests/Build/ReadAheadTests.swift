import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Reading ahead on worker threads: every file's rows and findings come back in file order whatever the number of
/// workers and however little may wait, a file whose reading failed is reported at its place, and cancelling stops
/// workers that wait for room.
final class ReadAheadTests: KilnTestCase {
    /// A pipeline over `count` delimited files `stops/NNN.txt`, each with `lines` stops; every seventh line of a file
    /// has a latitude that is not a number (a shaping finding) and every eleventh too few fields (a reading finding).
    private func pipeline(files count: Int, lines: Int) throws -> CompiledPipeline {
        let folder = temporaryDirectory.appendingPathComponent("pipeline")
        let stops = folder.appendingPathComponent("stops")
        try FileManager.default.createDirectory(at: stops, withIntermediateDirectories: true)
        try Data("""
            { bundle: "ahead", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text" }, { name: "latitude", type: "real" }] }],
              sources: [{ name: "stops", format: "delimited", path: "stops/*.txt", options: { fields: ["name", "code", "latitude"] },
                          into: "stop", columns: { code: "code", name: { field: "name", normalize: ["fold"] }, latitude: "latitude" } }] }
            """.utf8).write(to: folder.appendingPathComponent("kiln.json5"))
        for file in 0..<count {
            let text = (1...lines).map { line -> String in
                if line % 11 == 0 { return "Στάση \(file)-\(line)" }
                return "Στάση \(file)-\(line); \(file * 1000 + line); \(line % 7 == 0 ? "north" : "38.\(line)")"
            }.joined(separator: "\n")
            try Data(text.utf8).write(to: stops.appendingPathComponent(String(format: "%03d.txt", file)))
        }
        return try ManifestLoader.load(folder.path)
    }

    /// Every file's rows, findings and digest as the consumer takes them, shaping the records a worker left as read
    /// (the file the consumer was on) as `StagingArea` does.
    private func drain(_ readAhead: ReadAhead, _ source: CompiledSource) -> [(rows: [[SQLValue]], findings: [Diagnostic], digest: String?, error: Error?, shapedHere: Int)] {
        let shaper = source.shaper
        return readAhead.items.indices.map { index in
            var rows: [[SQLValue]] = []
            let consumerLog = DiagnosticLog()
            var shapedHere = 0
            while true {
                switch readAhead.next(index) {
                case .batch(.shaped(let batch)): rows += batch.map(\.values)
                case .batch(.records(let batch)):
                    shapedHere += batch.count
                    rows += batch.map { shaper.row($0.record, target: $0.target, input: readAhead.items[index].input, log: consumerLog) }
                case .finished(let log, let digest): return (rows, consumerLog.diagnostics + log.diagnostics, digest, nil, shapedHere)
                case .failed(let error): return (rows, [], nil, error, shapedHere)
                }
            }
        }
    }

    /// Findings by code, each code's in order: what a log keeps under its cap depends on nothing else.
    private func byCode(_ findings: [Diagnostic]) -> [String: [String]] {
        Dictionary(grouping: findings, by: \.code).mapValues { $0.map(\.message) }
    }

    private func start(_ pipeline: CompiledPipeline, workers: Int, aheadBytes: Int) throws -> ReadAhead {
        let source = pipeline.sources[0]
        let items = source.files.map { ReadAhead.Item(source: 0, input: $0, digest: true) }
        let tools = try (0..<workers).map { _ in [try source.plan.instantiate()] }
        return ReadAhead(items: items, sources: pipeline.sources, tools: tools, examplesPerCode: 1_000, aheadBytes: aheadBytes)
    }

    /// The same files read and shaped on this thread, one after the other: what the workers must reproduce.
    private func expected(_ pipeline: CompiledPipeline) throws -> [(rows: [[SQLValue]], findings: [Diagnostic], digest: String)] {
        let source = pipeline.sources[0]
        let shaper = source.shaper
        return try source.files.map { input in
            let log = DiagnosticLog()
            var rows: [[SQLValue]] = []
            try source.reader.read(input, log: log) { record in rows.append(shaper.row(record, target: 0, input: input, log: log)) }
            return (rows, log.diagnostics, try FileDigest.sha256(of: input.url))
        }
    }

    func testFilesComeBackInOrderWithTheirFindingsWhateverTheWorkers() throws {
        let pipeline = try pipeline(files: 40, lines: 300)
        let expected = try expected(pipeline)
        XCTAssertEqual(expected.count, 40)
        XCTAssertEqual(expected[3].rows.count, 273)
        XCTAssertEqual(Set(expected[3].findings.map(\.code)), ["parse", "value"])
        for (workers, aheadBytes) in [(1, ReadAhead.defaultAheadBytes), (3, 1), (4, 4_096)] {
            let readAhead = try start(pipeline, workers: workers, aheadBytes: aheadBytes)
            let got = drain(readAhead, pipeline.sources[0])
            readAhead.cancel()
            XCTAssertEqual(got.count, expected.count)
            for (file, (got, want)) in zip(got, expected).enumerated() {
                XCTAssertNil(got.error, "file \(file)")
                XCTAssertEqual(got.rows, want.rows, "rows of file \(file), \(workers) workers")
                XCTAssertEqual(byCode(got.findings), byCode(want.findings), "findings of file \(file)")
                XCTAssertEqual(got.digest, want.digest)
            }
            // The first file is the consumer's from the start: its records come as read, to be shaped by the consumer.
            XCTAssertEqual(got[0].shapedHere, expected[0].rows.count)
        }
    }

    func testAFileThatCannotBeReadFailsAtItsPlace() throws {
        let pipeline = try pipeline(files: 6, lines: 50)
        let gone = pipeline.sources[0].files[3]
        try FileManager.default.removeItem(at: gone.url)
        let readAhead = try start(pipeline, workers: 2, aheadBytes: 1)
        let got = drain(readAhead, pipeline.sources[0])
        readAhead.cancel()
        XCTAssertEqual(got.map { $0.error == nil }, [true, true, true, false, true, true])
        XCTAssertTrue("\(got[3].error!)".contains(gone.url.lastPathComponent), "\(got[3].error!)")
        XCTAssertEqual(got[4].rows.count, 46)
    }

    func testCancelStopsWorkersWaitingForRoom() throws {
        let pipeline = try pipeline(files: 30, lines: 2_000)
        let readAhead = try start(pipeline, workers: 3, aheadBytes: 1)
        // Take part of the first file only: the other workers fill their room and wait.
        guard case .batch(.records(let first)) = readAhead.next(0) else { return XCTFail("expected the first file's records first") }
        XCTAssertFalse(first.isEmpty)
        readAhead.cancel()  // returns only once every worker has stopped
        XCTAssertEqual(readAhead.items.count, 30)
    }
}
