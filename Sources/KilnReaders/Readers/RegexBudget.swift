import Foundation
import KilnC
import KilnCore
import KilnManifest

/// The CPU time a line-based reader's patterns may spend on one file (`limits.regexSecondsPerFile`). PCRE2's match
/// limit bounds one line; without this, 10 000 lines each hitting it took 19 s with no end in sight for a longer file.
/// Once the budget is spent, the remaining lines are read past (counted, not examined) and `report` names them in one
/// error finding.
package struct RegexBudget {
    /// How many lines pass between two looks at the clock: a line at PCRE2's match limit costs about 2 ms, so the
    /// budget is overshot by a fraction of a second at most.
    package static let linesPerCheck = 64

    package let seconds: Double
    private var start: Double?
    private var sinceCheck = 0
    /// The first line not examined, and how many were not.
    package private(set) var firstSkipped: Int?
    package private(set) var skipped = 0
    private var lastSkipped = 0

    package init(seconds: Double) { self.seconds = seconds }

    /// True when the line `number` may be examined; false (and counted) once the budget is spent.
    package mutating func admits(line number: Int) -> Bool {
        if firstSkipped != nil {
            skipped += 1
            lastSkipped = number
            return false
        }
        if start == nil { start = ThreadCPUClock.seconds() }
        sinceCheck += 1
        if sinceCheck >= RegexBudget.linesPerCheck { check(before: number) }
        return admitsCurrent(number)
    }

    private mutating func admitsCurrent(_ number: Int) -> Bool {
        guard let first = firstSkipped, first <= number else { return true }
        skipped += 1
        lastSkipped = number
        return false
    }

    private mutating func check(before number: Int) {
        sinceCheck = 0
        guard firstSkipped == nil, let start, ThreadCPUClock.seconds() - start > seconds else { return }
        firstSkipped = number
    }

    /// Reports the lines not examined, if any: an error naming the file, the lines and the limit.
    package func report(_ input: InputFile, code: DiagnosticCode, log: DiagnosticLog) {
        guard let first = firstSkipped, skipped > 0 else { return }
        let lines = skipped == 1 ? "line \(first) was" : "lines \(first)–\(lastSkipped) (\(skipped) lines) were"
        log.report(code,
                   "the patterns spent more than \(sqlNumber(seconds)) s of CPU time on this file (limits.regexSecondsPerFile): \(lines) not examined; "
                       + "simplify the patterns (catastrophic backtracking?) or raise the limit",
                   at: input.at(first))
    }
}
