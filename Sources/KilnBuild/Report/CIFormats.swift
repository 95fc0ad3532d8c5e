import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The output formats of the commands CI runs (`kiln check`, `build`, `diff`, `test`).
public enum ReportFormat: String, Sendable, CaseIterable {
    /// For people: a summary, then every finding as `path: severity: message [code]`.
    case text
    /// The whole report as JSON with sorted keys.
    case json
    /// JUnit XML: test suites of test cases; a case with an error finding is a failure.
    case junit
    /// GitHub Actions workflow commands: `::error file=…,title=CODE::message`, `::warning`, `::notice`.
    case github
}

/// A report that `kiln check` and `kiln diff` print in every `ReportFormat`.
public protocol RenderableReport {
    var text: String { get }
    var json: String { get throws }
    var junit: String { get }
    var github: String { get }
}

extension RenderableReport {
    /// The report in `format`, ending with a newline.
    /// - Throws: `EncodingError` only if JSON encoding fails, which plain strings and numbers do not.
    public func rendered(as format: ReportFormat) throws -> String {
        switch format {
        case .text: return text
        case .json: return try json
        case .junit: return junit
        case .github: return github
        }
    }
}

/// One test case of a JUnit report (a check, a source, a rule, a table, a fixture) and the findings about it:
/// its errors make the failure, the other findings go to `system-out`.
public struct JUnitCase: Sendable {
    public var classname: String
    public var name: String
    public var findings: [Diagnostic]
    /// Why the case was not run, when it was not (and has no error).
    public var skipped: String?

    public init(classname: String, name: String, findings: [Diagnostic] = [], skipped: String? = nil) {
        self.classname = classname
        self.name = name
        self.findings = findings
        self.skipped = skipped
    }

    package var failed: Bool { findings.contains { $0.severity == .error } }
    package var isSkipped: Bool { skipped != nil && !failed }
}

/// A named group of JUnit test cases.
public struct JUnitSuite: Sendable {
    public var name: String
    public var cases: [JUnitCase]

    public init(name: String, cases: [JUnitCase]) {
        self.name = name
        self.cases = cases
    }
}

/// JUnit XML as CI servers read it: one `testsuite` per non-empty suite, a `failure` per case with errors (the first
/// error's message and code, every error in the body), `skipped`, and the other findings in `system-out`.
public func junitXML(name: String, suites: [JUnitSuite]) -> String {
    let suites = suites.filter { !$0.cases.isEmpty }
    let cases = suites.flatMap(\.cases)
    var xml = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
    xml.append("<testsuites name=\(xmlAttribute(name)) tests=\"\(cases.count)\" failures=\"\(cases.filter(\.failed).count)\" errors=\"0\" skipped=\"\(cases.filter(\.isSkipped).count)\">")
    for suite in suites {
        xml.append("  <testsuite name=\(xmlAttribute(suite.name)) tests=\"\(suite.cases.count)\" failures=\"\(suite.cases.filter(\.failed).count)\" errors=\"0\" skipped=\"\(suite.cases.filter(\.isSkipped).count)\">")
        for test in suite.cases {
            let opening = "    <testcase classname=\(xmlAttribute(test.classname)) name=\(xmlAttribute(test.name))"
            guard !test.findings.isEmpty || test.skipped != nil else {
                xml.append(opening + "/>")
                continue
            }
            xml.append(opening + ">")
            let errors = test.findings.filter { $0.severity == .error }, others = test.findings.filter { $0.severity != .error }
            if let first = errors.first {
                let message = errors.count == 1 ? first.message : "\(first.message) (and \(errors.count - 1) more)"
                xml.append("      <failure message=\(xmlAttribute(message)) type=\(xmlAttribute(first.code))>"
                           + xmlText(errors.map(\.formatted).joined(separator: "\n")) + "</failure>")
            } else if let reason = test.skipped {
                xml.append("      <skipped message=\(xmlAttribute(reason))/>")
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
    return "::\(command) \(properties.joined(separator: ","))::\(escapeData(diagnostic.message + diagnostic.fetchedFrom))"
}

/// Text as XML character data: `&`, `<`, `>` escaped, and characters XML 1.0 cannot hold replaced by U+FFFD.
package func xmlText(_ text: String) -> String {
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
package func xmlAttribute(_ text: String) -> String {
    "\"" + xmlText(text).replacingOccurrences(of: "\n", with: "&#10;").replacingOccurrences(of: "\r", with: "&#13;")
        .replacingOccurrences(of: "\t", with: "&#9;") + "\""
}
