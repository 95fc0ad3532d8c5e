import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The human summary of a build: rows per table, then findings counted by code with the first examples.
public struct BuildSummary {
    /// How many examples to show per code.
    public var examplesPerCode = 3
    /// Prepended to each diagnostic's file so that it reads as a path from the current folder (e.g. `raw/patras/`).
    public var pathPrefix = ""

    public init(pathPrefix: String = "") {
        self.pathPrefix = pathPrefix
    }

    /// The summary of `outcome` as lines of text.
    public func text(_ outcome: BuildOutcome) -> String {
        var lines: [String] = []
        if outcome.reusedBundle {
            lines.append("up to date: \(outcome.output.relativePath) (bundle \(outcome.bundle)); nothing changed since the last build, "
                             + "every source reused (\(outcome.reusedSources.joined(separator: ", "))): the bundle and report in place were kept "
                             + "(--no-cache builds in full)")
        } else if outcome.built {
            lines.append("built \(outcome.output.relativePath) (bundle \(outcome.bundle))")
        } else {
            let previous = FileManager.default.fileExists(atPath: outcome.output.path)
                ? "\(outcome.output.relativePath) was left as it was" : "no bundle was written (there was none at \(outcome.output.relativePath))"
            lines.append("not built: \(outcome.bundle) has errors; \(previous)")
        }
        if !outcome.reusedBundle { lines.append(contentsOf: reuseLines(outcome)) }
        let width = outcome.tables.map(\.name.count).max() ?? 0
        for table in outcome.tables {
            lines.append("  " + table.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + String(table.rows) + " rows")
        }
        if let bytes = outcome.bytes {
            lines.append("size: \(BundleBytes.size(bytes.total))" + (bytes.other > 0 ? " (schema and metadata \(BundleBytes.size(bytes.other)))" : ""))
            for table in outcome.tables {
                guard let share = bytes.tables[table.name] else { continue }
                lines.append("  " + table.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + share.phrase)
            }
        }
        if outcome.built {
            for target in outcome.targets {
                lines.append("target \(target.target.name): \(target.output.relativePath)")
            }
        }
        lines.append("diagnostics: " + outcome.counts)
        var codes: [String] = []
        for diagnostic in outcome.diagnostics where !codes.contains(diagnostic.code) { codes.append(diagnostic.code) }
        let ordered = codes.sorted { left, right in
            let a = severity(of: left, in: outcome), b = severity(of: right, in: outcome)
            return a != b ? a > b : left < right
        }
        for code in ordered {
            let findings = outcome.diagnostics.filter { $0.code == code }
            let notStored = outcome.notStored.filter { $0.key.code == code }.reduce(0) { $0 + $1.value }
            lines.append("  \(code) (\(findings[0].severity.rawValue)) ×\(findings.count + notStored)")
            for finding in findings.prefix(examplesPerCode) { lines.append("    " + format(finding)) }
            if findings.count > examplesPerCode { lines.append("    … \(findings.count - examplesPerCode) more in the report") }
            if notStored > 0 { lines.append("    … and \(notStored) more not stored (the report keeps the first \(DiagnosticTally.defaultExamplesPerCode) of each code)") }
        }
        lines.append("report: \(outcome.reportURL.relativePath)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One finding as `--quiet` prints it, the way `kiln check` does: place, severity, message and code
    /// (`raw/patras/Routes_UTF8.txt:22: error: route_stop.line_id "5.2" refers to no line [foreign-key]`).
    public func line(_ diagnostic: Diagnostic) -> String {
        shown(diagnostic).displayLine
    }

    /// `diagnostic` with its file as a path from the current folder (`pathPrefix` prepended).
    public func shown(_ diagnostic: Diagnostic) -> Diagnostic {
        var shown = diagnostic
        shown.provenance?.file = pathPrefix + (diagnostic.provenance?.file ?? "")
        return shown
    }

    /// One finding as `path:line: message`, control characters in the path and the message escaped.
    public func format(_ diagnostic: Diagnostic) -> String {
        guard var place = diagnostic.provenance else { return TerminalText.escape(diagnostic.message) }
        place.file = pathPrefix + place.file
        return TerminalText.escape(place.location) + ": " + TerminalText.escape(diagnostic.message + diagnostic.fetchedFrom)
    }

    /// The lines saying what came from the build cache: the sources whose rows came (in part) from it (`reused from
    /// the build cache …: stops (1 of 1 file)`), then the full-text indexes copied from it, then the bundle's first
    /// tables, then the rules whose findings it replayed.
    private func reuseLines(_ outcome: BuildOutcome) -> [String] {
        var lines: [String] = []
        if !outcome.reusedSources.isEmpty {
            lines.append("reused from the build cache (unchanged files, not read again): " + outcome.reusedSources.map { source in
                guard let reuse = outcome.reusedFiles[source] else { return source }
                return "\(source) (\(reuse.files) of \(reuse.of) file\(reuse.of == 1 ? "" : "s"))"
            }.joined(separator: ", "))
        }
        if !outcome.reusedIndexes.isEmpty {
            lines.append("reused from the build cache (the same rows, not indexed again): full-text index "
                         + outcome.reusedIndexes.joined(separator: ", "))
        }
        if let last = outcome.reusedTables.last {
            lines.append("reused from the build cache (the same rows, not written again): the bundle's tables through \(last)")
        }
        if outcome.reusedRules > 0 {
            lines.append("reused from the build cache (the same rows, not checked again): the findings of \(outcome.reusedRules) rule\(outcome.reusedRules == 1 ? "" : "s")")
        }
        return lines
    }

    private func severity(of code: String, in outcome: BuildOutcome) -> Severity {
        outcome.diagnostics.first { $0.code == code }?.severity ?? .info
    }
}
