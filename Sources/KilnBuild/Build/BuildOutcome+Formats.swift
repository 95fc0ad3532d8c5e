import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

extension BuildOutcome {
    /// The findings counted by severity, e.g. `1 error, 0 warnings, 3 info` (those not stored included).
    public var counts: String {
        Severity.allCases.reversed().compactMap { severity -> String? in
            let count = diagnostics.filter { $0.severity == severity }.count
                + notStored.filter { $0.key.severity == severity }.reduce(0) { $0 + $1.value }
            return severity == .off ? nil : "\(count) \(severity.rawValue)\(count == 1 || severity == .info ? "" : "s")"
        }.joined(separator: ", ")
    }

    /// GitHub Actions workflow commands: one annotation per stored finding, its file a path from the current folder
    /// (`summary.pathPrefix`), then the verdict. The warnings and infos of the `acknowledged` codes (the manifest's)
    /// are not annotated: the verdict counts them.
    public func github(_ summary: BuildSummary, acknowledged: Set<String> = []) -> String {
        let quiet = diagnostics.filter { $0.severity < .error && acknowledged.contains($0.code) }
        var lines = diagnostics.filter { !($0.severity < .error && acknowledged.contains($0.code)) }.map { githubAnnotation(summary.shown($0)) }
        if let comparison { lines.append(comparison.summaryLine) }
        let unsaid = quiet.isEmpty ? "" : "; \(quiet.count) acknowledged in the manifest, not annotated"
        lines.append("kiln build \(bundle): " + (built ? "built \(output.relativePath)" : "not built") + " (\(counts)\(unsaid))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The manifest rule a finding belongs to: the rule of its code, of the code less `.identical` (a `unique` rule's
    /// identical repeats), or the rule a time-limit finding names (`RuleEngine.timeLimitMessage`).
    static func rule(of diagnostic: Diagnostic, among rules: [String]) -> String? {
        if rules.contains(diagnostic.code) { return diagnostic.code }
        if diagnostic.code.hasSuffix(".identical"), case let code = String(diagnostic.code.dropLast(".identical".count)), rules.contains(code) {
            return code
        }
        if diagnostic.code == RuleEngine.timeLimitCode.rawValue {
            return rules.first { diagnostic.message.hasPrefix("rule \($0) (") }
        }
        return nil
    }

    /// JUnit XML: a suite `sources` with a test case per source of `pipeline` (the findings about its files), a suite
    /// `rules` with one per manifest rule (the findings of its code), and a suite `build` with one case for the rest
    /// (the bundle, the baseline). Each error is in its case's failure.
    public func junit(_ pipeline: CompiledPipeline, _ summary: BuildSummary) -> String {
        let rules = pipeline.manifest.rules.map(\.code)
        var sourceOfFile: [String: String] = [:]
        for source in pipeline.sources {
            for file in source.files where sourceOfFile[file.relativePath] == nil { sourceOfFile[file.relativePath] = source.spec.name }
        }
        var bySource: [String: [Diagnostic]] = [:], byRule: [String: [Diagnostic]] = [:], rest: [Diagnostic] = []
        for diagnostic in diagnostics {
            let shown = summary.shown(diagnostic)
            if let rule = BuildOutcome.rule(of: diagnostic, among: rules) {
                byRule[rule, default: []].append(shown)
            } else if let file = diagnostic.provenance?.file, let source = sourceOfFile[file] {
                bySource[source, default: []].append(shown)
            } else {
                rest.append(shown)
            }
        }
        var seenRules: Set<String> = []
        let suites = [
            JUnitSuite(name: "sources", cases: pipeline.manifest.sources.map { source in
                JUnitCase(classname: "kiln.build.source", name: source.name, findings: bySource[source.name] ?? [])
            }),
            JUnitSuite(name: "rules", cases: rules.filter { seenRules.insert($0).inserted }.map { code in
                JUnitCase(classname: "kiln.build.rule", name: code, findings: byRule[code] ?? [])
            }),
            JUnitSuite(name: "build", cases: [JUnitCase(classname: "kiln.build", name: bundle, findings: rest)]),
        ]
        return junitXML(name: "kiln build " + bundle, suites: suites)
    }
}
