import Foundation
import Synchronization
import KilnC

/// Counts of what the build's threads have done so far in this process — bytes of input read, files and records
/// staged, rules run, bundle tables written — for a progress display to poll between stages (`BuildProgressDisplay`).
/// Each count only grows; a display takes differences from a `snapshot` taken when it started.
package final class BuildMeter: Sendable {
    /// The process's counts.
    package static let shared = BuildMeter()

    private let bytes = Atomic<Int>(0)
    private let files = Atomic<Int>(0)
    private let fileBytes = Atomic<Int>(0)
    private let records = Atomic<Int>(0)
    private let rules = Atomic<Int>(0)
    private let tables = Atomic<Int>(0)
    private let table = Mutex<String?>(nil)

    /// The counts at one moment.
    package struct Snapshot: Sendable, Equatable {
        package var bytesRead = 0
        package var filesRead = 0
        /// The sizes of the files read to their end (readers that do not stream count only here).
        package var fileBytesRead = 0
        package var records = 0
        package var rulesRun = 0
        package var tablesWritten = 0
        /// The bundle table being written, if any.
        package var table: String?
    }

    package func snapshot() -> Snapshot {
        Snapshot(bytesRead: bytes.load(ordering: .relaxed), filesRead: files.load(ordering: .relaxed),
                 fileBytesRead: fileBytes.load(ordering: .relaxed), records: records.load(ordering: .relaxed), rulesRun: rules.load(ordering: .relaxed),
                 tablesWritten: tables.load(ordering: .relaxed), table: table.withLock { $0 })
    }

    package func readBytes(_ count: Int) { bytes.wrappingAdd(count, ordering: .relaxed) }
    /// A file was read to its end.
    package func readFile(at url: URL) {
        let size = FileStatus(path: url.path, followingLinks: false).map { Int($0.size) } ?? 0
        fileBytes.wrappingAdd(size, ordering: .relaxed)
        files.wrappingAdd(1, ordering: .relaxed)
    }
    package func staged(_ count: Int) { records.wrappingAdd(count, ordering: .relaxed) }
    package func ranRule() { rules.wrappingAdd(1, ordering: .relaxed) }

    /// The bundle's thread starts writing `name`.
    package func writing(table name: String) { table.withLock { $0 = name } }

    /// The bundle's thread wrote the table it started.
    package func wroteTable() {
        table.withLock { $0 = nil }
        tables.wrappingAdd(1, ordering: .relaxed)
    }
}
