import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

extension FixtureRunner.Outcome {
    /// The test name of the fixture: `INPUT (source NAME)`.
    public var name: String { "\(fixture.input) (source \(fixture.source))" }

    /// The finding of a fixture that did not pass, at its expected file (`pathPrefix` prepended): the number of
    /// differing lines and the first of them; nil when it passed.
    public func finding(pathPrefix: String = "") -> Diagnostic? {
        let place = Provenance(file: pathPrefix + fixture.expected)
        if missingExpectation {
            return Diagnostic(code: .fixtureMissing,
                              message: "\(name): \(fixture.expected) does not exist; run kiln test --update to write it", provenance: place)
        }
        guard !differences.isEmpty else { return nil }
        let count = differences.count
        return Diagnostic(code: .fixtureDiffers,
                          message: "\(name) differs from \(fixture.expected) (\(count) line\(count == 1 ? "" : "s")):\n" + differences.joined(separator: "\n"),
                          provenance: place)
    }
}

extension Array where Element == FixtureRunner.Outcome {
    /// `N passed, M failed`.
    public var verdict: String {
        let failed = filter { !$0.passed }.count
        return "\(count - failed) passed, \(failed) failed"
    }

    /// JUnit XML: one suite, a test case per fixture, failed when its extraction differs.
    public func junit(pathPrefix: String = "") -> String {
        junitXML(name: "kiln test", suites: [JUnitSuite(name: "fixtures", cases: map { outcome in
            JUnitCase(classname: "kiln.test." + outcome.fixture.source, name: outcome.name,
                      findings: outcome.finding(pathPrefix: pathPrefix).map { [$0] } ?? [])
        })])
    }

    /// GitHub Actions annotations: an error per fixture that did not pass, then the verdict.
    public func github(pathPrefix: String = "") -> String {
        (compactMap { $0.finding(pathPrefix: pathPrefix) }.map(githubAnnotation) + ["kiln test: " + verdict])
            .joined(separator: "\n") + "\n"
    }
}
