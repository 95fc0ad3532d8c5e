/// A log's findings as `DiagnosticLog.replay` gives them, kept apart from the log: the stored ones in order, then how
/// many of each code and severity the cap left out. The build cache keeps a rule's findings this way, to replay them
/// into a later build's log as if the rule had been checked there.
package struct ReplayableFindings: Codable, Equatable, Sendable {
    /// The findings the log stored, in the order they came.
    package var stored: [Diagnostic]
    /// The findings the cap counted but did not store, by code and severity, in the tally's order.
    package var notStored: [LeftOut]

    /// How many findings of one code and severity the cap left out.
    package struct LeftOut: Codable, Equatable, Sendable {
        package var code: String
        package var severity: Severity
        package var count: Int
    }

    /// The findings of `log`; findings reported there with `report(_:once:)` replay without their key.
    package init(_ log: DiagnosticLog) {
        stored = log.diagnostics
        notStored = log.tally.notStored.sorted { $0.key < $1.key }.map { LeftOut(code: $0.key.code, severity: $0.key.severity, count: $0.value) }
    }

    /// Reports the findings into `target` as `DiagnosticLog.replay` would: the stored ones, then the left-out ones
    /// counted (their messages were never kept).
    package func replay(into target: DiagnosticLog) {
        for diagnostic in stored { target.report(diagnostic) }
        ReplayableFindings.replayLeftOut(notStored.map { (DiagnosticTally.Key(code: $0.code, severity: $0.severity), $0.count) }, into: target)
    }

    /// Counts `leftOut` findings in `target` without messages: the cap had stored other findings of their code first.
    static func replayLeftOut(_ leftOut: [(key: DiagnosticTally.Key, count: Int)], into target: DiagnosticLog) {
        for (key, count) in leftOut {
            let placeholder = Diagnostic(code: key.code, severity: key.severity, message: "", provenance: nil)
            for _ in 0..<count { target.report(placeholder) }
        }
    }
}
