import KilnC

/// Counts every finding of a run exactly, but lets a log store only the first `examplesPerCode` of each code and
/// severity: 200 MB of garbage makes hundreds of thousands of findings of a few codes, and storing them all would
/// take gigabytes of memory and a report as large. The count of those not stored is kept per code and severity, so
/// that summaries and reports stay exact and say how many were left out. Every severity of a code keeps its own
/// examples, so an error is never hidden behind warnings of the same code.
public struct DiagnosticTally: Sendable {
    /// The default number of findings stored per code and severity.
    public static let defaultExamplesPerCode = 100

    /// A code and a severity, the unit the cap counts in.
    public struct Key: Hashable, Sendable, Comparable {
        public var code: String
        public var severity: Severity

        /// The key of findings `code` at `severity`.
        public init(code: String, severity: Severity) {
            self.code = code
            self.severity = severity
        }

        public static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.severity != rhs.severity ? lhs.severity > rhs.severity : lhs.code < rhs.code
        }
    }

    /// Findings stored per code and severity.
    public var examplesPerCode: Int
    private var stored: [Key: Int] = [:]
    /// Findings counted but not stored, per code and severity.
    public private(set) var notStored: [Key: Int] = [:]

    public init(examplesPerCode: Int = DiagnosticTally.defaultExamplesPerCode) {
        self.examplesPerCode = examplesPerCode
    }

    /// Counts `diagnostic`; true when it is among the first of its code and severity and should be stored.
    public mutating func admit(_ diagnostic: Diagnostic) -> Bool {
        let key = Key(code: diagnostic.code, severity: diagnostic.severity)
        let count = stored[key, default: 0]
        if count < examplesPerCode {
            stored[key] = count + 1
            return true
        }
        notStored[key, default: 0] += 1
        return false
    }

    /// The findings at `severity` that were counted but not stored.
    public func notStored(_ severity: Severity) -> Int {
        notStored.lazy.filter { $0.key.severity == severity }.reduce(0) { $0 + $1.value }
    }

    /// Every finding not stored.
    public var totalNotStored: Int { notStored.values.reduce(0, +) }
}
