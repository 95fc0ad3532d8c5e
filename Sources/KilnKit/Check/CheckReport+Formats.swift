import Foundation

/// The output formats of `kiln check`.
public enum CheckFormat: String, Sendable, CaseIterable {
    /// A summary per category, then every finding as `path: severity: message [code]`.
    case text
    /// The whole report as JSON with sorted keys.
    case json
    /// JUnit XML: one test suite per category, one test case per check; errors are failures.
    case junit
    /// GitHub Actions workflow commands: `::error file=…,title=CODE::message`, `::warning`, `::notice`.
    case github
}

extension CheckReport {
    /// The report in `format`, ending with a newline.
    /// - Throws: `EncodingError` only if JSON encoding fails, which plain strings and numbers do not.
    public func rendered(as format: CheckFormat) throws -> String {
        switch format {
        case .text: return text
        case .json: return try json
        case .junit: return junit
        case .github: return github
        }
    }

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
        var xml = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
        let total = results.count, failures = results.filter(\.failed).count, skipped = results.filter { $0.notRun != nil && !$0.failed }.count
        xml.append("<testsuites name=\(xmlAttribute("kiln check " + bundle)) tests=\"\(total)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\">")
        for category in CheckCategory.allCases {
            let checks = results.filter { $0.category == category }
            guard !checks.isEmpty else { continue }
            let suiteFailures = checks.filter(\.failed).count, suiteSkipped = checks.filter { $0.notRun != nil && !$0.failed }.count
            xml.append("  <testsuite name=\(xmlAttribute(category.rawValue)) tests=\"\(checks.count)\" failures=\"\(suiteFailures)\" errors=\"0\" skipped=\"\(suiteSkipped)\">")
            for check in checks {
                let opening = "    <testcase classname=\(xmlAttribute("kiln.check." + category.rawValue)) name=\(xmlAttribute(check.name))"
                guard !check.findings.isEmpty || check.notRun != nil else {
                    xml.append(opening + "/>")
                    continue
                }
                xml.append(opening + ">")
                let errors = check.findings.filter { $0.severity == .error }, others = check.findings.filter { $0.severity != .error }
                if let first = errors.first {
                    let message = errors.count == 1 ? first.message : "\(first.message) (and \(errors.count - 1) more)"
                    xml.append("      <failure message=\(xmlAttribute(message)) type=\(xmlAttribute(first.code))>"
                               + xmlText(errors.map(\.formatted).joined(separator: "\n")) + "</failure>")
                } else if let reason = check.notRun {
                    xml.append("      <skipped message=\(xmlAttribute("not run on a bundle: " + reason))/>")
                }
                if !others.isEmpty {
                    xml.append("      <system-out>" + xmlText(others.map(\.formatted).joined(separator: "\n")) + "</system-out>")
                }
                xml.append("    </testcase>")
            }
            xml.append("  </testsuite>")
        }
        xml.append("</testsuites>")
        return xml.joined(separator: "\n") + "\n"
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
    init(_ diagnostic: Diagnostic) {
        self.init(code: diagnostic.code, severity: diagnostic.severity, message: diagnostic.message,
                  file: diagnostic.provenance?.file, line: diagnostic.provenance?.line, column: diagnostic.provenance?.column)
    }
}

/// `value` as pretty-printed JSON with sorted keys, ending with a newline.
func encodeJSON<Value: Encodable>(_ value: Value) throws -> String {
    String(decoding: try KilnJSON.encode(value), as: UTF8.self) + "\n"
}

/// A GitHub Actions annotation: `::error file=PATH,line=N,title=CODE::message` (`warning` and `notice` for the
/// lower severities), with the characters the runner reserves escaped.
public func githubAnnotation(_ diagnostic: Diagnostic) -> String {
    let command = diagnostic.severity == .error ? "error" : diagnostic.severity == .warning ? "warning" : "notice"
    func escapeData(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }
    func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
    var properties: [String] = []
    if let place = diagnostic.provenance {
        properties.append("file=" + escapeProperty(place.file))
        if let line = place.line { properties.append("line=\(line)") }
        if let column = place.column { properties.append("col=\(column)") }
    }
    properties.append("title=" + escapeProperty(diagnostic.code))
    return "::\(command) \(properties.joined(separator: ","))::\(escapeData(diagnostic.message))"
}

/// Text as XML character data: `&`, `<`, `>` escaped, and characters XML 1.0 cannot hold replaced by U+FFFD.
func xmlText(_ text: String) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": escaped += "&amp;"
        case "<": escaped += "&lt;"
        case ">": escaped += "&gt;"
        case "\"": escaped += "&quot;"
        case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
        default:
            let value = scalar.value
            let allowed = value >= 0x20 && value != 0xFFFE && value != 0xFFFF
            escaped.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
        }
    }
    return escaped
}

/// Text as a double-quoted XML attribute value, line breaks kept as character references.
func xmlAttribute(_ text: String) -> String {
    "\"" + xmlText(text).replacingOccurrences(of: "\n", with: "&#10;").replacingOccurrences(of: "\r", with: "&#13;")
        .replacingOccurrences(of: "\t", with: "&#9;") + "\""
}
