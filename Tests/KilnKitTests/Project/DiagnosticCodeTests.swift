import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The diagnostic code catalogue: one place for every code Kiln emits, checked against the sources.
final class DiagnosticCodeTests: KilnTestCase {
    func testCodesAreUniqueAndDescribed() {
        let names = DiagnosticCode.catalogue.map(\.rawValue)
        XCTAssertEqual(Set(names).count, names.count, "a code is declared twice")
        for code in DiagnosticCode.catalogue {
            XCTAssertFalse(code.meaning.isEmpty, code.rawValue)
            XCTAssertEqual(DiagnosticCode.named(code.rawValue), code)
            XCTAssertNotNil(code.rawValue.range(of: #"^[a-z]+(-[a-z]+)*(\.[a-z]+(-[a-z]+)*)?$"#, options: .regularExpression), code.rawValue)
        }
        XCTAssertNil(DiagnosticCode.named("dupliate-row"))
    }

    /// A code declared but left out of `catalogue` could not be overridden nor listed by `kiln codes`.
    func testEveryDeclaredCodeIsInTheCatalogue() throws {
        let file = KilnTestCase.repositoryRoot.appendingPathComponent("Sources/KilnCore/DiagnosticCode.swift")
        let declared = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
            .compactMap { line -> String? in
                guard let range = line.range(of: #"static let \w+ = DiagnosticCode\("[^"]+""#, options: .regularExpression) else { return nil }
                return line[range].components(separatedBy: "\"")[1]
            }
        XCTAssertGreaterThan(declared.count, 50)
        XCTAssertEqual(Set(declared), Set(DiagnosticCode.catalogue.map(\.rawValue)))
    }

    /// No file but the catalogue writes a code as a string: a code passed to `report(`, `code:` or `finding(` as a
    /// literal, or any literal spelled like a namespaced code of the catalogue, fails this test.
    func testNoCodeIsWrittenAsAStringOutsideTheCatalogue() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        let namespaced = DiagnosticCode.catalogue.map(\.rawValue).filter { $0.contains(".") }.map { (code: $0, quoted: "\"\($0)\"") }
        let literal = try NSRegularExpression(pattern: #"(report\(|finding\(|Diagnostic\(code: |\bcode: )"[a-z]"#)
        var offences: [String] = []
        var scanned = 0
        for case let url as URL in enumerator where url.pathExtension == "swift" && url.lastPathComponent != "DiagnosticCode.swift" {
            scanned += 1
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            // Both offences hold a quote: a line without one is passed over.
            for (index, line) in lines.enumerated() where line.utf8.contains(UInt8(ascii: "\"")) {
                let place = "\(url.lastPathComponent):\(index + 1)"
                if literal.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                    offences.append("\(place): a code as a string literal: \(line.trimmingCharacters(in: .whitespaces))")
                }
                for (code, quoted) in namespaced where line.contains(quoted) {
                    offences.append("\(place): \"\(code)\" written outside the catalogue")
                }
            }
        }
        XCTAssertGreaterThan(scanned, 50, "the scan saw the sources")
        XCTAssertEqual(offences, [])
    }

    func testASeverityOverrideOfAnUnknownCodeIsAManifestError() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "p")
        let url = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: #""duplicate-row": "warning","#,
                                                                                     with: #""duplicate-row": "warning", "xml.malformd": "off","#)
        try text.write(to: url, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ManifestLoader.load(folder.path)) { error in
            guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(issue.keyPath, "severity.xml.malformd")
            XCTAssertTrue(issue.message.hasPrefix("no finding has the code \"xml.malformd\""), issue.message)
        }
        // A rule's own code, and its ".identical" variant, may be overridden.
        let ruleCode = text.replacingOccurrences(of: #""xml.malformd": "off","#, with: #""route.order": "warning", "route.order.identical": "off","#)
        try ruleCode.write(to: url, atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try ManifestLoader.load(folder.path))
    }

    /// A code whose rows the bundle's schema refuses cannot be turned below an error where a shipped table declares
    /// such a constraint; where none does, or turned up, the override stands.
    func testAnOverrideTheBundlesSchemaCannotHonourIsAManifestError() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "p")
        let url = folder.appendingPathComponent("kiln.json5")
        let original = try String(contentsOf: url, encoding: .utf8)
        for code in ["duplicate-key", "not-null", "foreign-key"] {
            try original.replacingOccurrences(of: #""duplicate-row": "warning","#, with: "\"duplicate-row\": \"warning\", \"\(code)\": \"warning\",")
                .write(to: url, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try ManifestLoader.load(folder.path), code) { error in
                guard case KilnError.manifest(let issue) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(issue.keyPath, "severity.\(code)")
                XCTAssertTrue(issue.message.hasPrefix("\"\(code)\" cannot be \"warning\": the bundle's schema declares "), issue.message)
            }
            try original.replacingOccurrences(of: #""duplicate-row": "warning","#, with: "\"duplicate-row\": \"warning\", \"\(code)\": \"error\",")
                .write(to: url, atomically: true, encoding: .utf8)
            XCTAssertNoThrow(try ManifestLoader.load(folder.path), code)
        }
        let pipeline = try ManifestLoader.load(folder.path)
        let checker = ManifestChecker(manifest: pipeline.manifest, issue: { KilnError.manifest(.init(file: "kiln.json5", line: nil, keyPath: $0, message: $1)) })
        XCTAssertNil(checker.schemaConstraint(enforcing: "duplicate-row"), "identical rows merge into one")
        XCTAssertNil(checker.schemaConstraint(enforcing: "pattern"), "a pattern is not in the schema")
        var unshipped = pipeline.manifest
        for index in unshipped.tables.indices { unshipped.tables[index].ship = false }
        XCTAssertNil(ManifestChecker(manifest: unshipped, issue: checker.issue).schemaConstraint(enforcing: "duplicate-key"))
    }
}
