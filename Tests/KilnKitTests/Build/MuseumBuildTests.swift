import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The museum pipeline (`raw/museum`): sanitized pages checked by parsing them back with libxml2, links rewritten,
/// phones against libphonenumber (`phonenumbers`), occurrences against `recurring-ical-events`, the tour's rules
/// on broken copies of the sample.
final class MuseumBuildTests: KilnTestCase {
    private static let shippedElements: Set<String> = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "strong", "em", "ul", "ol", "li", "a", "img"]

    /// Builds a copy of `raw/museum`, after `change` edits it.
    private func build(_ change: (URL) throws -> Void = { _ in }) throws -> (bundle: URL, outcome: BuildOutcome) {
        let folder = try copyRepositoryFolder("raw/museum", as: "museum")
        try change(folder)
        let bundle = temporaryDirectory.appendingPathComponent("museum.sqlite")
        return (bundle, try Builder.build(try ManifestLoader.load(folder.path), options: BuildOptions(output: bundle)))
    }

    private func edit(_ folder: URL, _ path: String, _ old: String, _ new: String, encoding: String.Encoding = .utf8) throws {
        let url = folder.appendingPathComponent(path)
        let text = try XCTUnwrap(String(data: Data(contentsOf: url), encoding: encoding))
        XCTAssertTrue(text.contains(old), "\(path) holds no \(old)")
        try XCTUnwrap(text.replacingOccurrences(of: old, with: new).data(using: encoding)).write(to: url)
    }

    private func rows(_ bundle: URL, _ sql: String) throws -> [String] {
        let database = try Database(path: bundle.path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    private func describe(_ outcome: BuildOutcome) -> String { outcome.diagnostics.map(\.formatted).joined(separator: "\n") }

    private func oracle(_ script: String, _ arguments: [String], input: String = "") throws -> [String] {
        try PythonOracle.text(script, arguments, input: input).split(separator: "\n").map(String.init)
    }

    func testTheSampleBuildsWithoutErrorsOrWarnings() throws {
        let (bundle, outcome) = try build()
        XCTAssertTrue(outcome.built, describe(outcome))
        XCTAssertEqual(outcome.diagnostics.filter { $0.severity >= .warning }.map(\.formatted), [])
        XCTAssertEqual(try rows(bundle, "SELECT slug FROM page ORDER BY slug"),
                       ["activities", "contact", "educational-programmes", "events", "goals", "history", "opening-hours", "volunteering"])
        XCTAssertEqual(try rows(bundle, "SELECT count(*) FROM hotspot"), ["16"])
        XCTAssertEqual(try rows(bundle, "SELECT inventory FROM exhibit WHERE id = 'foucault'"), ["9007199254740993"])
    }

    /// Parsed back by libxml2, the shipped HTML holds only the shipped subset, and every link is one the app opens.
    func testShippedHTMLHoldsOnlyTheSubset() throws {
        let (bundle, _) = try build()
        for html in try rows(bundle, "SELECT html FROM page") {
            let document = try HTMLDocument(fragment: "<html><body>\(html)</body></html>")
            var elements: [(String, [String: String])] = []
            func walk(_ node: MarkupNode) {
                guard case .element(let name, let attributes, _, let children) = node else { return }
                elements.append((name, attributes))
                children.forEach(walk)
            }
            document.select(try XPathExpression("//body")).forEach { node in
                if case .element(_, _, _, let children) = node { children.forEach(walk) }
            }
            XCTAssertFalse(elements.isEmpty)
            for (name, attributes) in elements {
                XCTAssertTrue(MuseumBuildTests.shippedElements.contains(name), "<\(name)> shipped")
                XCTAssertTrue(Set(attributes.keys).isSubset(of: ["href", "src", "alt", "width", "height", "id"]), "\(name) \(attributes)")
                if let href = attributes["href"] {
                    XCTAssertTrue(["page:", "http://", "https://", "mailto:", "tel:", "#"].contains { href.hasPrefix($0) }, href)
                }
            }
        }
    }

    /// Each script, style, iframe and form inside the content, and each on… attribute outside them, is one finding:
    /// counted in the source pages with libxml2's XPath.
    func testEveryRemovalIsAFinding() throws {
        let (_, outcome) = try build()
        let pages = KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/pages")
        let dropped = "//div[@id='content']//*[self::script or self::noscript or self::style or self::iframe or self::form][not(ancestor::form or ancestor::script or ancestor::noscript)]"
        let handlers = "//div[@id='content']//@*[starts-with(name(), 'on')][not(ancestor::form or ancestor::script or ancestor::iframe)]"
        let javascript = "//div[@id='content']//a[starts-with(@href, 'javascript:') or @href = '#']"
        for name in try FileManager.default.contentsOfDirectory(atPath: pages.path).filter({ $0.hasSuffix(".html") }).sorted() {
            let document = try HTMLDocument(path: pages.appendingPathComponent(name).path)
            func count(_ path: String) throws -> Int { Int(try document.string(XPathExpression("count(\(path))")) ?? "") ?? -1 }
            let findings = outcome.diagnostics.filter { $0.code == "html.sanitized" && $0.provenance?.file.hasSuffix("/" + name) == true }
            XCTAssertEqual(findings.filter { $0.message.contains("<") && !$0.message.contains("event handler") && !$0.message.contains("style attribute") }.count,
                           try count(dropped), name)
            XCTAssertEqual(findings.filter { $0.message.contains("event handler") }.count, try count(handlers), name)
            XCTAssertEqual(findings.filter { $0.message.contains("javascript:") || $0.message.contains("\"#\"") }.count, try count(javascript), name)
        }
        XCTAssertGreaterThan(outcome.diagnostics.filter { $0.code == "html.sanitized" }.count, 8)
    }

    func testPhonesAreE164AsLibphonenumberWritesThem() throws {
        let (bundle, _) = try build()
        let phones = try rows(bundle, "SELECT display, value FROM contact WHERE kind IN ('phone', 'mobile', 'fax') ORDER BY position")
        XCTAssertEqual(phones.count, 4)
        let displays = phones.map { String($0.split(separator: "|")[0]) }
        let expected = try oracle("e164.py", [], input: displays.joined(separator: "\n") + "\n")
        XCTAssertEqual(phones.map { String($0.split(separator: "|")[1]) }, expected)
    }

    func testOccurrencesMatchRecurringIcalEvents() throws {
        let (bundle, _) = try build()
        var expected: [String] = []
        for feed in ["events.ics", "activities.ics"] {
            expected += try oracle("ics-occurrences.py", [KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/\(feed)").path,
                                                          "2026-01-01", "2027-12-31"])
        }
        let actual = try rows(bundle, "SELECT event_uid, COALESCE(start_utc, ''), COALESCE(end_utc, ''), start_local, end_local, all_day FROM occurrence")
            .map { $0.replacingOccurrences(of: "|", with: "\t") }
        XCTAssertEqual(actual.sorted(), expected.sorted())
        XCTAssertEqual(try rows(bundle, "SELECT DISTINCT category FROM event ORDER BY 1"), ["Δραστηριότητες", "Εκδηλώσεις"])
    }

    func testSearchIgnoresAccentsAndCase() throws {
        let (bundle, _) = try build()
        XCTAssertEqual(try rows(bundle, "SELECT slug FROM page_search WHERE page_search MATCH 'αντικυθηρων' ORDER BY slug"), ["goals", "history"])
    }

    func testALinkToAPageNotInTheBundleIsAnError() throws {
        let (_, outcome) = try build { folder in
            try self.edit(folder, "pages/volunteering.html", "<a href=\"events.html\">", "<a href=\"museum-shop.html\">")
        }
        XCTAssertFalse(outcome.built)
        let finding = try XCTUnwrap(outcome.diagnostics.first { $0.code == "page.broken-link" }, describe(outcome))
        XCTAssertEqual(finding.severity, .error)
        XCTAssertTrue(finding.message.contains("museum-shop"), finding.message)
        XCTAssertEqual(finding.provenance?.file, "pages/volunteering.html")
        XCTAssertNotNil(finding.provenance?.line)
    }

    func testTourRules() throws {
        let (_, outcome) = try build { folder in
            try self.edit(folder, "tour/tour.json", "{ \"id\": 202,", "{ \"id\": 201,")
            try self.edit(folder, "tour/tour.json", "{ \"id\": 104, \"kind\": \"none\",", "{ \"id\": 999, \"kind\": \"none\",")
            try self.edit(folder, "tour/tour.json", "\"atv\": 89.0", "\"atv\": 95.0")
            try self.edit(folder, "tour/tour.json", "\"exhibit\": \"enigma\"", "\"exhibit\": \"sputnik\"")
            try self.edit(folder, "tour/tour.json", "{ \"id\": 403, \"kind\": \"link\", \"target\": \"physics\"", "{ \"id\": 403, \"kind\": \"exhibit\", \"target2\": \"physics\"")
        }
        XCTAssertFalse(outcome.built)
        let codes = Set(outcome.diagnostics.filter { $0.severity == .error }.map(\.code))
        for code in ["hotspot.duplicate-id", "hotspot.dummy", "range", "foreign-key", "hotspot.no-exhibit", "tour.xml-differs"] {
            XCTAssertTrue(codes.contains(code), "\(code) missing in\n\(describe(outcome))")
        }
        let duplicate = try XCTUnwrap(outcome.diagnostics.first { $0.code == "hotspot.duplicate-id" })
        XCTAssertEqual(duplicate.provenance?.file, "tour/tour.json")
        let tour = try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/museum/tour/tour.json"), encoding: .utf8)
        let secondLine = tour.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("{ \"id\": 202,") }.map { $0 + 1 }
        XCTAssertEqual(duplicate.provenance?.line, secondLine)
    }

    func testAHotspotInASpaceThatDoesNotExist() throws {
        let (_, outcome) = try build { folder in
            try self.edit(folder, "tour/tour.json", "\"id\": \"technology\",", "\"id\": \"technology-hall\",")
        }
        XCTAssertFalse(outcome.built)
        XCTAssertTrue(outcome.diagnostics.contains { $0.code == "foreign-key" && $0.message.contains("technology") }, describe(outcome))
    }
}
