import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

extension CheckReport: RenderableReport {
    /// The human summary: one line per category, the findings, what was not run, and the verdict.
    public var text: String {
        var lines = ["check \(bundle)" + (manifest.map { " with \($0)" } ?? "")]
        for category in CheckCategory.allCases {
            let checks = results.filter { $0.category == category }
            guard !checks.isEmpty else { continue }
            let failed = checks.filter(\.failed).count, notRun = checks.filter { $0.notRun != nil }.count
            let run = checks.count - notRun
            let plural = run == 1 ? "" : "s"
            var status = failed > 0 ? "FAILED (\(failed) of \(run) check\(plural))" : "passed (\(run) check\(plural))"
            if notRun > 0 { status += ", \(notRun) not run on a bundle" }
            lines.append("  " + category.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0) + status)
        }
        lines += diagnostics.map { "  " + $0.displayLine }
        if notStoredTotal > 0 {
            lines.append("  … and \(notStoredTotal) more findings not stored (the first \(DiagnosticTally.defaultExamplesPerCode) of each code are listed)")
        }
        let notRun = notRunSummary
        if !notRun.isEmpty { lines.append("not run on a bundle: " + notRun.joined(separator: "; ")) }
        lines.append((passed ? "passed: " : "failed: ") + counts)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as pretty-printed JSON with sorted keys.
    public var json: String {
        get throws {
            struct Check: Encodable {
                var category: String
                var name: String
                var status: String
                var reason: String?
                var findings: [BuildReport.Entry]
                var notStored: Int?
            }
            struct Document: Encodable {
                var bundle: String
                var manifest: String?
                var passed: Bool
                var summary: [String: Int]
                var checks: [Check]
            }
            let checks = results.map { result in
                Check(category: result.category.rawValue, name: result.name, status: result.status, reason: result.notRun,
                      findings: result.findings.map(BuildReport.Entry.init),
                      notStored: result.notStored.isEmpty ? nil : result.notStored.values.reduce(0, +))
            }
            let summary = ["error": count(.error), "warning": count(.warning), "info": count(.info),
                           "notRun": results.filter { $0.notRun != nil }.count]
            return try encodeJSON(Document(bundle: bundle, manifest: manifest, passed: passed, summary: summary, checks: checks))
        }
    }

    /// JUnit XML as CI servers read it: a suite per category, a test case per check, a failure per failed check
    /// (its errors in the body), `skipped` for checks not run, warnings and info in `system-out`.
    public var junit: String {
        let suites = CheckCategory.allCases.map { category in
            JUnitSuite(name: category.rawValue, cases: results.filter { $0.category == category }.map { check in
                JUnitCase(classname: "kiln.check." + category.rawValue, name: check.name, findings: check.findings,
                          skipped: check.notRun.map { "not run on a bundle: " + $0 })
            })
        }
        return junitXML(name: "kiln check " + bundle, suites: suites)
    }

    /// GitHub Actions workflow commands, one per finding, one notice for what was not run, and the verdict.
    public var github: String {
        var lines = diagnostics.map(githubAnnotation)
        let notRun = notRunSummary
        if !notRun.isEmpty {
            lines.append(githubAnnotation(Diagnostic(code: .checkNotRun, message: "not run on a bundle: " + notRun.joined(separator: "; "),
                                                     provenance: Provenance(file: bundle))))
        }
        lines.append("kiln check \(bundle): " + (passed ? "passed" : "failed") + " (\(counts))")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension BuildReport.Entry {
    /// The entry of one diagnostic, its place flattened.
    package init(_ diagnostic: Diagnostic) {
        self.init(code: diagnostic.code, severity: diagnostic.severity, message: diagnostic.message,
                  file: diagnostic.provenance?.file, line: diagnostic.provenance?.line, column: diagnostic.provenance?.column)
    }
}

/// `value` as pretty-printed JSON with sorted keys, ending with a newline.
package func encodeJSON<Value: Encodable>(_ value: Value) throws -> String {
    String(decoding: try KilnJSON.encode(value), as: UTF8.self) + "\n"
}
