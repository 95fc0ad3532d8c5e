import KilnC

/// How serious a finding is. `off` silences a rule entirely.
public enum Severity: String, Codable, Comparable, Sendable, CaseIterable {
    case off, info, warning, error

    private var rank: Int { Severity.allCases.firstIndex(of: self)! }
    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// Where a record or a finding came from: a file relative to the pipeline folder, and a 1-based line.
public struct Provenance: Hashable, Codable, Sendable {
    /// The input file, relative to the pipeline's folder.
    public var file: String
    /// The 1-based line, or `nil` when the finding concerns the whole file.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?
    /// The URL the file was fetched from (`kiln fetch`'s capture record), when it was.
    public var url: String?

    public init(file: String, line: Int? = nil, column: Int? = nil, url: String? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.url = url
    }

    /// `file:line:column`, as compilers print it.
    public var location: String {
        var text = file
        if let line { text += ":\(line)" }
        if let column { text += ":\(column)" }
        return text
    }
}

/// One finding: a stable code, a severity, a sentence and where it came from.
public struct Diagnostic: Codable, Hashable, Sendable {
    /// Stable identifier of the kind of finding, e.g. `duplicate-key`; severities are overridden by it.
    public var code: String
    public var severity: Severity
    /// A sentence a user can act on.
    public var message: String
    /// Where the offending record came from, when it is known.
    public var provenance: Provenance?

    public init(code: String, severity: Severity, message: String, provenance: Provenance? = nil) {
        self.code = code
        self.severity = severity
        self.message = message
        self.provenance = provenance
    }

    /// A finding of one of Kiln's own codes, at the severity the catalogue gives it (the manifest may override it
    /// when the finding is reported).
    public init(code: DiagnosticCode, message: String, provenance: Provenance? = nil) {
        self.init(code: code.rawValue, severity: code.severity, message: message, provenance: provenance)
    }

    /// The finding of `code` for a validation `failure`: its sentence, and its file, line and column as provenance.
    public init(code: DiagnosticCode, _ failure: ValidationFailure) {
        self.init(code: code, message: failure.message, provenance: failure.provenance)
    }

    /// The longest message a finding keeps, in characters: a rule message carrying a 5 MB value made 5 MB lines in
    /// every report format.
    public static let maximumMessageLength = 2000

    /// This finding with its message cut to at most `maximumMessageLength` characters: its start and its end (where
    /// a sentence says what was expected, after the value it quotes), the cut between them said with the full length.
    public var capped: Diagnostic {
        guard message.utf8.count > Diagnostic.maximumMessageLength else { return self }
        let length = message.count
        guard length > Diagnostic.maximumMessageLength else { return self }
        var result = self
        // The note fits within the bound, so that a capped finding replayed into another log stays as it is.
        let shown = Diagnostic.maximumMessageLength - 80, end = Diagnostic.keptMessageEnd
        result.message = String(message.prefix(shown - end)) + " … (message cut: \(shown) of its \(length) characters are shown) … "
            + String(message.suffix(end))
        return result
    }

    /// The characters of a cut message's end that are kept.
    public static let keptMessageEnd = 400

    /// `file:line: severity: message [code]`, and the URL the file came from when the message does not name it.
    public var formatted: String {
        let place = provenance.map { $0.location + ": " } ?? ""
        return "\(place)\(severity.rawValue): \(message) [\(code)]" + fetchedFrom
    }

    /// ` (fetched from URL)` for a finding about a fetched file whose message does not name its URL; else empty.
    public var fetchedFrom: String {
        guard let url = provenance?.url, !message.contains(url) else { return "" }
        return " (fetched from \(url))"
    }
}

/// Collects the findings of a run, applying the manifest's severity overrides as they arrive.
/// Not `Sendable`: one build owns it.
public final class DiagnosticLog {
    /// Every finding kept so far (those turned `off` are dropped).
    public private(set) var diagnostics: [Diagnostic] = []
    /// Severities by diagnostic code, from the manifest (a log for findings made apart is made with the same).
    package let overrides: [String: Severity]
    /// Counts every finding; only the first of each code and severity are stored in `diagnostics` (`DiagnosticTally`).
    public var tally = DiagnosticTally()

    /// - Parameter overrides: severities by diagnostic code.
    public init(overrides: [String: Severity] = [:]) {
        self.overrides = overrides
    }

    /// A log for findings made apart, to replay into one with these overrides that stores `examplesPerCode` of each.
    public convenience init(overrides: [String: Severity], examplesPerCode: Int) {
        self.init(overrides: overrides)
        tally = DiagnosticTally(examplesPerCode: examplesPerCode)
    }

    /// The severity a finding of `code` reported at `severity` is given: the manifest's override, if any.
    public func severity(of code: String, _ severity: Severity) -> Severity { overrides[code] ?? severity }

    /// Records a finding, with its severity replaced when the manifest overrides its code.
    public func report(_ diagnostic: Diagnostic) { take(diagnostic, once: nil) }

    /// Told of every finding this log takes in that is not `off` (its severity overridden, before the cap), with the
    /// key of `report(_:once:)` when it came that way: the build cache keeps a source's findings to replay them.
    package var observer: ((Diagnostic, String?) -> Void)?

    private func take(_ diagnostic: Diagnostic, once key: String?) {
        var finding = diagnostic
        if let severity = overrides[diagnostic.code] { finding.severity = severity }
        guard finding.severity != .off else { return }
        observer?(finding, key)
        guard tally.admit(finding) else { return }
        diagnostics.append(finding.capped)
    }

    /// The source whose file a reader is reading (the staging area and `kiln extract` set it around each file), for
    /// findings that name the source and are made once for it (`report(_:once:)`).
    public var readingSource: String?
    /// The keys given to `report(_:once:)` so far, and the key of each stored finding that had one (by its index).
    private var onceKeys: Set<String> = []
    private var onceKeyOfStored: [Int: String] = [:]

    /// Records `diagnostic` unless a finding with the same `key` was reported to (or replayed into) this log before:
    /// for findings made once per source over all its files, the first file's in file order.
    public func report(_ diagnostic: Diagnostic, once key: String) {
        guard onceKeys.insert(key).inserted else {
            // Kept for a replay: the finding this one repeats may not be replayed before it.
            if let observer, severity(of: diagnostic.code, diagnostic.severity) != .off { observer(diagnostic, key) }
            return
        }
        let index = diagnostics.count
        take(diagnostic, once: key)
        if diagnostics.count > index { onceKeyOfStored[index] = key }
    }

    /// Records a finding of one of Kiln's own codes, at its catalogue severity (or the manifest's override).
    public func report(_ code: DiagnosticCode, _ message: String, at provenance: Provenance? = nil) {
        report(Diagnostic(code: code, message: message, provenance: provenance))
    }

    /// Records a finding of a manifest rule, whose code the manifest chose.
    public func report(ruleCode code: String, _ severity: Severity, _ message: String, at provenance: Provenance? = nil) {
        report(Diagnostic(code: code, severity: severity, message: message, provenance: provenance))
    }

    /// Reports this log's findings into `target` as if they had been reported there: the stored ones in order, then
    /// those the cap left out, counted. For findings made on another thread (a reader's file, the staging writer).
    public func replay(into target: DiagnosticLog) {
        for (index, diagnostic) in diagnostics.enumerated() {
            if let key = onceKeyOfStored[index] { target.report(diagnostic, once: key) } else { target.report(diagnostic) }
        }
        ReplayableFindings.replayLeftOut(tally.notStored.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, into: target)
    }

    /// The number of findings at `severity`.
    public func count(_ severity: Severity) -> Int { diagnostics.lazy.filter { $0.severity == severity }.count + tally.notStored(severity) }

    /// True when any finding is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The findings in a stable order: by file, line, code and message.
    public var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let left = a.element, right = b.element
            let leftKey = (left.provenance?.file ?? "", left.provenance?.line ?? 0, left.code, left.message)
            let rightKey = (right.provenance?.file ?? "", right.provenance?.line ?? 0, right.code, right.message)
            if leftKey != rightKey { return leftKey < rightKey }
            return a.offset < b.offset
        }.map(\.element)
    }
}
