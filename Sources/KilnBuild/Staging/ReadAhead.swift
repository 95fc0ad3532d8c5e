import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Reads (and shapes) the input files of every source on worker threads, ahead of staging, and hands each file's
/// records back in file order: the pages of one source, and the files of the next source while the current one is
/// still being read, are parsed and shaped on different cores. Each worker has readers and shapers of its own (they
/// keep compiled patterns and match buffers). A file read ahead is shaped by its worker as it is read; the file the
/// consumer is on when its worker starts it is handed over as records, for the consumer to shape (`Batch`). The
/// consumer takes the files strictly in order, so staging gets exactly the rows, in exactly the order, of a
/// single-threaded load; each file's findings are kept in a log of its own and replayed into the build's log when
/// the consumer reaches that file (shaping findings the consumer makes go straight to the build's log; reading and
/// shaping report different codes, so what each code keeps under its cap is the same).
///
/// Memory stays bounded: the file the consumer is on streams through (at most `currentBatches` wait), and the files
/// read ahead may hold about `aheadBytes` of records between them (`estimatedSize(of:)`) before their workers wait.
package final class ReadAhead: Sendable {
    /// One file of one source, in the order staging takes them.
    package struct Item {
        package let source: Int
        package let input: InputFile
        /// True for the first time a file is listed: its worker computes the SHA-256 (keeping the file's first bytes
        /// for the reader's checks of its start); a file listed again by a later source is not digested twice.
        package let digest: Bool
    }

    /// Records of a file, in order: shaped by the worker (a file read ahead), or as read, for the consumer to shape
    /// (the file the consumer was on when its worker started it: the consumer has nothing else to do meanwhile, so
    /// reading, shaping and inserting it run on three threads).
    package enum Batch {
        case shaped([ShapedRow])
        case records([StagedRecord])
    }

    /// What the consumer gets from `next(_:)` for the file it is on.
    package enum Event {
        /// Records of the file, in order.
        case batch(Batch)
        /// The file was read whole: its findings and, when it was digested, its SHA-256.
        case finished(log: DiagnosticLog, digest: String?)
        /// Reading the file failed (the reader threw).
        case failed(Error)
    }

    /// One file's output, waiting to be taken. Guarded by `state`.
    private final class Slot {
        package var batches: [Batch] = []
        package var taken = 0
        package var bytes = 0
        package var end: Event?
    }

    package let items: [Item]
    /// The indices in `items` of each source's files, by source.
    private let itemsBySource: [Int: [Int]]
    /// What the workers and the consumer share.
    private struct State {
        var slots: [Slot]
        var nextToRead = 0
        var current = 0
        var aheadBytes = 0
        var cancelled = false
        /// True once the workers should step back for a full-text index (`stepBack()`).
        var steppingBack = false
        var running: Int
        /// The file whose next event the consumer waits for, while it waits; workers wake it only for that file.
        var consumerWaitingFor: Int?
        /// How many workers wait for room to publish; the consumer wakes them only when some do.
        var workersWaiting = 0
    }

    private let state: ConditionLock<State>
    private let limit: Int
    private let examplesPerCode: Int

    /// Records in one batch, and the estimated bytes after which a batch is handed over early (large pages).
    package static let batchRecords = 512
    package static let batchBytes = 1 << 20

    /// The batches of the current file that may wait to be taken.
    package static let currentBatches = 8

    /// About how much memory the rows of the files read ahead may take between them (the current file's rows are
    /// not counted: they stream through).
    package static let defaultAheadBytes = 8 << 20

    /// One worker's tools for one source: its reader and the shaper of its targets, made for that worker alone.
    package struct Tools {
        package let reader: RecordReader
        package let shaper: RowShaper
    }

    /// Starts one thread per element of `tools` reading `items`.
    /// - Parameter tools: for each worker, one reader and shaper per source. Records of kinds a source does not map
    ///   are counted and reported as `source.unmapped-kind`.
    package init(items: [Item], sources: [CompiledSource], tools: [[Tools]], examplesPerCode: Int,
         aheadBytes: Int = ReadAhead.defaultAheadBytes) {
        self.items = items
        itemsBySource = Dictionary(grouping: items.indices, by: { items[$0].source })
        state = ConditionLock(State(slots: items.map { _ in Slot() }, running: tools.count))
        limit = aheadBytes
        self.examplesPerCode = examplesPerCode
        let targetIndexes = sources.map(StagingArea.targetIndex(of:))
        let names = sources.map(\.spec.name)
        for (number, workerTools) in tools.enumerated() {
            let handedOver = Handoff(workerTools)
            DetachedThread.start(name: "kiln reader \(number + 1)") { [self] in
                work(handedOver.value, targetIndexes: targetIndexes, sourceNames: names)
            }
        }
    }

    /// The indices in `items` of the files of source `source`, in order.
    package func items(of source: Int) -> [Int] { itemsBySource[source] ?? [] }

    /// The next event of file `index`, waiting for it. The consumer takes the files in order (`index` never goes
    /// back) and takes each file's events until `.finished` or `.failed`.
    package func next(_ index: Int) -> Event {
        state.waitFor { state in
            if state.current != index {
                state.current = index
                // The file becomes the current one: its buffered records no longer count against the limit.
                state.aheadBytes -= state.slots[index].bytes
                state.slots[index].bytes = 0
                wakeWaitingWorkers(state)
            }
            let slot = state.slots[index]
            if slot.taken == slot.batches.count && slot.end == nil {
                state.consumerWaitingFor = index
                return .wait
            }
            state.consumerWaitingFor = nil
            if slot.taken < slot.batches.count {
                let batch = slot.batches[slot.taken]
                slot.batches[slot.taken] = .records([])
                slot.taken += 1
                if slot.taken == slot.batches.count {
                    slot.batches.removeAll(keepingCapacity: true)
                    slot.taken = 0
                }
                wakeWaitingWorkers(state)
                return .ready(.batch(batch))
            }
            let end = slot.end!
            state.slots[index] = Slot()  // let the file's records and log go
            return .ready(end)
        }
    }

    /// Wakes the workers waiting for room to publish, if any (with `state` locked): every wake-up of a thread that
    /// has nothing to do is a context switch, and there are several per file.
    private func wakeWaitingWorkers(_ state: State) {
        if state.workersWaiting > 0 { self.state.broadcast() }
    }

    /// Wakes the consumer if it waits for file `index` (with `state` locked).
    private func wakeConsumer(for index: Int, _ state: State) {
        if state.consumerWaitingFor == index { self.state.broadcast() }
    }

    /// Lowers the workers' priority from their next file on, for the rest of the read-ahead: a full-text index is
    /// being built, and the end of the build waits for it, not for the files read ahead (`ThreadPriority.stepBack`).
    package func stepBack() {
        state.withLock { $0.steppingBack = true }
    }

    /// Stops the workers (they finish the record in hand and read no further file) and waits for them to end.
    package func cancel() {
        state.change { $0.cancelled = true }
        state.wait(until: { $0.running == 0 })
    }

    /// A worker: claims the next unread file, reads it, repeats.
    private func work(_ tools: [Tools], targetIndexes: [[String: Int]], sourceNames: [String]) {
        var steppedBack = false
        while let (index, current, stepBack) = claim() {
            if stepBack && !steppedBack {
                ThreadPriority.stepBack()
                steppedBack = true
            }
            let item = items[index]
            let log = DiagnosticLog()
            log.tally = DiagnosticTally(examplesPerCode: examplesPerCode)
            let end: Event
            do {
                let digest = try read(item, at: index, shaping: !current, tools: tools[item.source],
                                      targetIndex: targetIndexes[item.source], sourceName: sourceNames[item.source], log: log)
                end = .finished(log: log, digest: digest)
            } catch is ReadAheadCancelled {
                break
            } catch {
                end = .failed(error)
            }
            state.withLock { state in
                state.slots[index].end = end
                wakeConsumer(for: index, state)
            }
        }
        state.change { $0.running -= 1 }
    }

    /// The next unread file, whether it is the file the consumer is on, and whether workers should step back.
    private func claim() -> (index: Int, current: Bool, stepBack: Bool)? {
        state.withLock { state in
            guard !state.cancelled, state.nextToRead < items.count else { return nil }
            state.nextToRead += 1
            return (state.nextToRead - 1, state.nextToRead - 1 == state.current, state.steppingBack)
        }
    }

    /// Reads one file into its slot in batches, shaping its records (`shaping`) or leaving that to the consumer;
    /// returns its digest when it was asked for.
    private func read(_ item: Item, at index: Int, shaping: Bool, tools: Tools, targetIndex: [String: Int], sourceName: String,
                      log: DiagnosticLog) throws -> String? {
        var rows: [ShapedRow] = []
        var records: [StagedRecord] = []
        var batchBytes = 0
        func flush() throws {
            try publish(shaping ? .shaped(rows) : .records(records), bytes: batchBytes, at: index)
            rows.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            batchBytes = 0
        }
        let digest = try StagingArea.readFile(item.input, digest: item.digest, reader: tools.reader, targetIndex: targetIndex,
                                              sourceName: sourceName, log: log) { target, record, input in
            if shaping {
                let row = tools.shaper.row(record, target: target, input: input, log: log)
                batchBytes += ReadAhead.estimatedSize(of: row)
                rows.append(ShapedRow(target: target, values: row))
            } else {
                batchBytes += ReadAhead.estimatedSize(of: record)
                records.append(StagedRecord(target: target, record: record))
            }
            if rows.count + records.count >= ReadAhead.batchRecords || batchBytes >= ReadAhead.batchBytes { try flush() }
        }
        if !rows.isEmpty || !records.isEmpty { try flush() }
        return digest
    }

    /// About how much memory a record takes: its values and the text of its strings.
    package static func estimatedSize(of record: Record) -> Int {
        record.values.reduce(32) { $0 + 32 + ($1?.utf8.count ?? 0) }
    }

    /// About how much memory a shaped row takes: its values and the text of its strings.
    package static func estimatedSize(of row: [SQLValue]) -> Int {
        row.reduce(32) { total, value in
            switch value {
            case .text(let text): return total + 32 + text.utf8.count
            case .blob(let bytes): return total + 32 + bytes.count
            default: return total + 16
            }
        }
    }

    /// Adds a batch to file `index`'s slot. The current file waits while `currentBatches` of its batches are not yet
    /// taken (the consumer is taking them); a file ahead of the consumer waits while the files ahead hold more than
    /// the limit.
    private func publish(_ batch: Batch, bytes: Int, at index: Int) throws {
        // A worker counts itself in `workersWaiting` while it waits, so that the consumer wakes it.
        var waiting = false
        try state.waitFor { state -> ConditionLock<State>.Step<Void> in
            if waiting {
                state.workersWaiting -= 1
                waiting = false
            }
            let mustWait = index == state.current
                ? state.slots[index].batches.count - state.slots[index].taken >= ReadAhead.currentBatches
                : state.aheadBytes + bytes > limit && state.aheadBytes > 0
            if mustWait && !state.cancelled {
                state.workersWaiting += 1
                waiting = true
                return .wait
            }
            guard !state.cancelled else { throw ReadAheadCancelled() }
            state.slots[index].batches.append(batch)
            if index != state.current {
                state.slots[index].bytes += bytes
                state.aheadBytes += bytes
            }
            wakeConsumer(for: index, state)
            return .ready(())
        }
    }
}

/// One record bound for staging, not yet shaped, with the index of the source's target (table and mappings) it goes
/// into.
package struct StagedRecord: Sendable {
    package let target: Int
    package let record: Record
}

/// Thrown inside a worker when the consumer has cancelled: the worker stops reading.
private struct ReadAheadCancelled: Error {}

