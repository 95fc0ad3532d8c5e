import Foundation
import Synchronization
import XCTest
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `SourcePlan`: a source compiled once, from which each thread makes its own reader and shaper — reading as the
/// loader's own do, and restricted to the kinds the source maps.
final class SourcePlanTests: KilnTestCase {
    /// Readers and shapers made from one plan on several threads at once (each with its own patterns and match
    /// buffers) give the rows and findings the loader's reader and shaper give.
    func testThreadsReadWithToolsOfTheirOwnAsTheLoadersDo() throws {
        let lines = (1...400).map { "Στάση \($0); code-\($0); \($0 % 9 == 0 ? "north" : "38.\($0)")" }
        let pipeline = try loadPipeline(manifest: """
            { bundle: "plan", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "integer" }, { name: "name", type: "text" }, { name: "latitude", type: "real" }] }],
              sources: [{ name: "stops", format: "delimited", path: "rows.txt", options: { fields: ["name", "code", "latitude"] }, into: "stop",
                          columns: { code: { field: "code", normalize: [{ capture: "code-(\\\\d+)" }] }, name: { field: "name", normalize: ["fold"] },
                                     latitude: "latitude" } }] }
            """, rows: lines.joined(separator: "\n") + "\n")
        let source = pipeline.sources[0], input = source.files[0]
        let expected = try Self.rows(of: input, source.reader, source.shaper)
        XCTAssertEqual(expected.count, 400 + 44)
        XCTAssertTrue(expected[0].contains("integer(1)"), expected[0])

        let plan = source.plan
        let read = Mutex<[Int: [String]]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let result = (try? plan.instantiate()).map { tools in (try? Self.rows(of: input, tools.reader, tools.shaper)) ?? ["failed"] } ?? ["no tools"]
            read.withLock { $0[worker] = result }
        }
        for worker in 0..<4 { XCTAssertEqual(read.withLock { $0[worker] }, expected, "worker \(worker)") }
    }

    /// The rows of `input` as `reader` and `shaper` give them, then the findings.
    private static func rows(of input: InputFile, _ reader: RecordReader, _ shaper: RowShaper) throws -> [String] {
        let log = DiagnosticLog()
        var rows: [String] = []
        try reader.read(input, log: log) { record in rows.append("\(shaper.row(record, target: 0, input: input, log: log))") }
        return rows + log.diagnostics.map { "\($0.code) \($0.message)" }
    }

    /// The plan's readers emit only the kinds the source maps: a calendar source that maps only its events reads no
    /// occurrences.
    func testAPlansReadersEmitOnlyTheMappedKinds() throws {
        let pipeline = try loadPipeline(manifest: """
            { bundle: "plan", schemaVersion: 1,
              tables: [{ name: "event", columns: [{ name: "uid", type: "text" }] }],
              sources: [{ name: "events", format: "ics", path: "rows.txt", into: { event: { table: "event", columns: { uid: "uid" } } } }] }
            """, rows: """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            BEGIN:VEVENT\r
            UID:weekly\r
            DTSTART:20260105T100000Z\r
            DTEND:20260105T110000Z\r
            RRULE:FREQ=WEEKLY;COUNT=3\r
            SUMMARY:Weekly\r
            END:VEVENT\r
            END:VCALENDAR\r

            """)
        let source = pipeline.sources[0]
        XCTAssertEqual(source.targets.map(\.kind), ["event"])
        let reader = try source.plan.instantiate().reader
        var kinds: [String] = []
        try reader.read(source.files[0], log: DiagnosticLog()) { kinds.append($0.kind.name) }
        XCTAssertEqual(kinds, ["event"])
        var unrestricted: [String] = []
        try ReaderRegistry.makeReader(format: "ics", options: .object([:]), codingPath: []).read(source.files[0], log: DiagnosticLog()) {
            unrestricted.append($0.kind.name)
        }
        XCTAssertEqual(unrestricted.filter { $0 == "occurrence" }.count, 3, "the calendar has occurrences to leave out")
    }
}
