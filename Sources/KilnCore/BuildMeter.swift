import Foundation
import Synchronization
import KilnC

/// Counts of what the build's threads have done so far in this process — bytes of input read, files and records
/// staged, rules run, bundle tables written — for a progress display to poll between stages (`BuildProgressDisplay`).
/// Each count only grows; a display takes differences from a `snapshot` taken when it started.
public final class BuildMeter: Sendable {
    /// The process's counts.
    public static let shared = BuildMeter()

    private let bytes = Atomic<Int>(0)
    private let files = Atomic<Int>(0)
    private let fileBytes = Atomic<Int>(0)
    private let records = Atomic<Int>(0)
    private let rules = Atomic<Int>(0)
    private let tables = Atomic<Int>(0)
    private let table = Mutex<String?>(nil)

    /// The counts at one moment.
    public struct Snapshot: Sendable, Equatable {
        public var bytesRead = 0
        public var filesRead = 0
        /// The sizes of the files read to their end (readers that do not stream count only here).
        public var fileBytesRead = 0
        public var records = 0
        public var rulesRun = 0
        public var tablesWritten = 0
        /// The bundle table being written, if any.
        public var table: String?
    }

    public func snapshot() -> Snapshot {
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
