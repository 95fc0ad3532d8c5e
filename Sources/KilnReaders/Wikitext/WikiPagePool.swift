import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Parses pages and extracts their listings on worker threads while the thread reading the file applies each page's
/// outcome (emits its records, reports its findings, adds to the file's tally) strictly in page order, so the
/// records and findings are exactly those of a serial read, whatever the timing. Pages go to the workers in turn
/// (page n to worker n mod count), each worker through a queue of its own and back through another, so the reading
/// thread knows which queue holds the next page's outcome. Memory is bounded: at most `defaultMaxPages` pages, and
/// about `defaultMaxBytes` of their text, are in flight; beyond that the reading thread applies outcomes before it hands over
/// another page.
///
/// `ThreadSettings.pageWorkerCount` (the input's `threads`) says how many workers a file gets; none: the pages are
/// processed on the reading thread, with the same code (`WikiPageProcessor.process`).
package final class WikiPagePool {
    /// Pages handed over and not yet applied, at most, by default.
    package static let defaultMaxPages = 64
    /// About how many bytes of page text may be in flight by default (a page larger than this goes alone).
    package static let defaultMaxBytes = 16 << 20

    private let inputs: [BoundedQueue<WikiPageText>]
    private let outputs: [BoundedQueue<WikiPageOutcome>]
    private let workers: [BackgroundThread<Void>]
    /// The text sizes of the pages handed over since the pool was last empty, oldest first; those from
    /// `sizes[applied]` on are in flight.
    private var sizes: [Int] = []
    private var bytesInFlight = 0
    private var submitted = 0
    private var applied = 0
    private let maxPages: Int
    private let maxBytes: Int

    /// Starts `count` workers (at least 1), each with a processor of its own made like `processor` (same conventions
    /// and wanted kinds); `kept` is the log's examples per code (`WikiPageProcessor.analyze`).
    /// - Throws: what `WikiPageProcessor.init` throws (never in practice).
    package init(like processor: WikiPageProcessor, workers count: Int, kept: Int, maxPages: Int = WikiPagePool.defaultMaxPages,
         maxBytes: Int = WikiPagePool.defaultMaxBytes) throws {
        let count = max(count, 1)
        self.maxPages = max(maxPages, 1)
        self.maxBytes = maxBytes
        // A worker holds at most `maxPages` pages and outcomes between its two queues, so neither queue ever fills.
        inputs = (0..<count).map { _ in BoundedQueue(capacity: max(maxPages, 1)) }
        outputs = (0..<count).map { _ in BoundedQueue(capacity: max(maxPages, 1)) }
        var workers: [BackgroundThread<Void>] = []
        for number in 0..<count {
            var own = try WikiPageProcessor(conventions: processor.conventions)
            own.wanted = processor.wanted
            let handedOver = Handoff(own)
            let input = inputs[number], output = outputs[number]
            workers.append(BackgroundThread(name: "kiln pages \(number + 1)") {
                defer { output.finish() }
                while let page = input.pop() {
                    guard output.push(handedOver.value.analyze(page, kept: kept)) else { return }
                }
            })
        }
        self.workers = workers
    }

    /// Hands `page` to its worker, first applying (with `apply`) as many outcomes, in order, as keep the pages in
    /// flight within bounds.
    package func submit(_ page: WikiPageText, apply: (WikiPageOutcome) throws -> Void) rethrows {
        let size = page.text.utf8.count
        while submitted > applied && (submitted - applied >= maxPages || bytesInFlight + size > maxBytes) {
            try applyNext(apply)
        }
        _ = inputs[submitted % inputs.count].push(page)
        sizes.append(size)
        bytesInFlight += size
        submitted += 1
    }

    /// Applies the outcomes of every page handed over, in order.
    package func drain(apply: (WikiPageOutcome) throws -> Void) rethrows {
        while applied < submitted { try applyNext(apply) }
    }

    /// Stops the workers (pages not yet processed are dropped) and waits for them to end.
    package func close() {
        for queue in inputs { queue.cancel() }
        for queue in outputs { queue.cancel() }
        for worker in workers { try? worker.wait() }
    }

    private func applyNext(_ apply: (WikiPageOutcome) throws -> Void) rethrows {
        let worker = applied % outputs.count
        // A worker's queue yields an outcome for every page pushed to it until `close()`: `pop` returns `nil` only
        // after a cancel, which the reading thread alone makes.
        guard let outcome = outputs[worker].pop() else {
            applied = submitted
            return
        }
        bytesInFlight -= sizes[applied]
        applied += 1
        if applied == submitted {
            sizes.removeAll(keepingCapacity: true)
            submitted = 0
            applied = 0
        }
        try apply(outcome)
    }
}
