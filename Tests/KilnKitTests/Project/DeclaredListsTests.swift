import Foundation
import XCTest
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Each list Kiln keeps (reader formats, built-in exports and export writers, rule kinds) is declared once in the
/// code; the docs, the fuzz targets and the manifest's messages are held to that declaration here, so that adding to
/// the list in one place only fails a test.
final class DeclaredListsTests: KilnTestCase {
    private func repositoryText(_ path: String) throws -> String {
        try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    private func fileNames(in folder: String, ending suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: KilnTestCase.repositoryRoot.appendingPathComponent(folder).path)
            .filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }.sorted()
    }

    /// `ReaderRegistry` is the list of formats: the manifest reference's `format` line names them in its order, each
    /// has a reference page (and no page is left over), linked from the manifest reference, and some fuzz target
    /// reads it; a fuzz target reads no other format; an unknown format is refused naming them all.
    func testTheReaderFormatsAreTheRegistrys() throws {
        let formats = ReaderRegistry.formats
        XCTAssertEqual(Set(formats).count, formats.count, "a format is registered twice")
        let manifest = try repositoryText("docs/reference/manifest.md")
        let listed = try XCTUnwrap(manifest.components(separatedBy: "\n").first { $0.contains("format: \"delimited\",") }?
            .components(separatedBy: "//").last?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) })
        XCTAssertEqual(listed, formats, "docs/reference/manifest.md's format line lists ReaderRegistry.readerTypes in order")
        XCTAssertEqual(try fileNames(in: "docs/reference/readers", ending: ".md"), formats.sorted(),
                       "docs/reference/readers/ holds one page per registered format")
        for format in formats {
            let page = "docs/reference/readers/\(format).md"
            XCTAssertTrue(try repositoryText(page).hasPrefix("# The `\(format)` reader\n"), page)
            XCTAssertTrue(manifest.contains("(readers/\(format).md)"), "manifest.md links \(page)")
        }
        var fuzzed = Set<String>()
        for target in try fileNames(in: "Fuzz/targets", ending: ".json5") {
            let text = try repositoryText("Fuzz/targets/\(target).json5")
            for match in text.matches(of: /format: "([a-z0-9-]+)"/) {
                XCTAssertTrue(formats.contains(String(match.1)), "Fuzz/targets/\(target).json5 reads format \(match.1), which no reader has")
                fuzzed.insert(String(match.1))
            }
        }
        XCTAssertEqual(fuzzed.sorted(), formats.sorted(), "every format has a fuzz target that reads it")
        XCTAssertThrowsError(try ReaderRegistry.makeReader(format: "nope", options: .object([:]), codingPath: [])) { error in
            XCTAssertTrue("\(error)".contains("expected one of: \(formats.joined(separator: ", "))"), "\(error)")
        }
    }

    /// `kiln fetch` accepts, for a source that names no `contentTypes`, the media types its reader declares; a
    /// sitemap is markup; an unknown format any.
    func testEachFormatsAcceptedMediaTypesAreItsReaders() {
        for type in ReaderRegistry.readerTypes {
            XCTAssertEqual(ReaderRegistry.acceptedMediaTypes(for: type.format), type.acceptedMediaTypes, type.format)
            XCTAssertFalse(type.acceptedMediaTypes.isEmpty, type.format)
        }
        XCTAssertTrue(FetchSettings.accepts("application/xml", ReaderRegistry.acceptedMediaTypes(for: "xml")))
        XCTAssertTrue(FetchSettings.accepts("text/csv", ReaderRegistry.acceptedMediaTypes(for: "delimited")))
        XCTAssertFalse(FetchSettings.accepts("image/png", ReaderRegistry.acceptedMediaTypes(for: "json")))
        XCTAssertEqual(ReaderRegistry.acceptedMediaTypes(for: "nope"), ["*/*"])
    }

    /// The lines of `text` from the line starting with `start` to the next `## ` heading (of any level up to `###`).
    private func section(_ text: String, from start: String) throws -> [String] {
        let lines = text.components(separatedBy: "\n")
        let first = try XCTUnwrap(lines.firstIndex { $0.hasPrefix(start) }, "no \(start)")
        let rest = lines[(first + 1)...]
        let end = rest.firstIndex { $0.hasPrefix("## ") || $0.hasPrefix("### ") } ?? lines.endIndex
        return Array(lines[first..<end])
    }

    /// `BuiltInExport` is the list of exports that need no declaration: the commands reference's heading, its table
    /// and the completions paragraph name them in its order, and `--package` belongs to those that take it; the
    /// manifest reference documents each of `Exporter.writerTypes`' formats, and no other.
    func testTheBuiltInExportsAndTheExportWritersAreTheDeclaredOnes() throws {
        let exports = BuiltInExport.allCases.map(\.rawValue)
        let named = exports.map { "`\($0)`" }.joined(separator: ", ")
        let commands = try repositoryText("docs/reference/commands.md")
        let builtIn = try section(commands, from: "### Built-in exports: ")
        XCTAssertEqual(builtIn.first, "### Built-in exports: \(named)", "the heading names BuiltInExport.allCases")
        let rows = builtIn.compactMap { line in line.firstMatch(of: /^\| `([a-z]+)` \|/).map { String($0.1) } }
        XCTAssertEqual(rows, exports, "one row per built-in export, in BuiltInExport's order")
        let completions = try section(commands, from: "## `kiln completions").joined(separator: " ")
        XCTAssertTrue(completions.contains("the built-in exports' names (\(named))"), "kiln completions' paragraph names \(named)")
        let withPackage = BuiltInExport.allCases.filter(\.takesPackage).map(\.rawValue)
        XCTAssertEqual(withPackage, ["room"])
        for name in withPackage { XCTAssertTrue(builtIn.contains { $0.hasPrefix("| `\(name)` |") && $0.contains("--package") }, name) }

        let manifest = try repositoryText("docs/reference/manifest.md")
        let writers = try section(manifest, from: "## Exports")
            .drop { !$0.hasPrefix("Each file is a query over the bundle whose rows a writer turns into text") }
            .dropFirst().prefix { !$0.isEmpty }
            .compactMap { line in line.firstMatch(of: /^- `([a-z0-9]+)`:/).map { String($0.1) } }
        XCTAssertEqual(writers, Exporter.writerTypes.map { $0.format }, "docs/reference/manifest.md's export formats are Exporter.writerTypes")
    }

    /// `RuleKind` is the list of rule kinds: the manifest decoder accepts each (with the keys `RuleKind.keys` names and
    /// no other), the manifest reference's "Rules" bullets name each once, and an unknown kind is refused naming them all.
    func testTheRuleKindsAreRuleKinds() throws {
        let manifest = try repositoryText("docs/reference/manifest.md")
        let bullets = try section(manifest, from: "## Rules").filter { $0.hasPrefix("- `") }
            .flatMap { line in
                // The names before the bullet's colon, without what parentheses add (`references: "table.column"`).
                line.replacing(/\([^)]*\)/, with: "").split(separator: ":", maxSplits: 1)[0].matches(of: /`([a-zA-Z]+)`/).map { String($0.1) }
            }
        XCTAssertEqual(bullets.sorted(), RuleKind.allCases.map(\.rawValue).sorted(), "docs/reference/manifest.md's Rules bullets name each RuleKind once")
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let values: [String: String] = [
            "table": #""t""#, "columns": #"["a"]"#, "column": #""a""#, "references": #""u.a""#, "range": "{ min: 1, max: 2 }",
            "enum": #"["x"]"#, "pattern": #""^x$""#, "latitude": #""a""#, "longitude": #""b""#,
            "box": "{ minLatitude: 0, maxLatitude: 1, minLongitude: 0, maxLongitude: 1 }", "sql": #""SELECT 1""#, "message": #""m""#,
        ]
        for kind in RuleKind.allCases {
            // Every key of the kind but one of `column`/`columns`.
            let keys = kind.keys.map(\.stringValue).filter { $0 != "column" }.sorted()
            let members = keys.map { "\($0): \(values[$0] ?? "?")" }.joined(separator: ", ")
            let rule = try decoder.decode(RuleSpec.self, from: Data("{ code: \"c\", kind: \"\(kind.rawValue)\", \(members) }".utf8))
            XCTAssertEqual(rule.kind, kind)
            XCTAssertEqual(RuleSpec(code: kind.defaultCode.rawValue, check: rule.check, severity: .error).kind, kind)
            let stray = RuleKind.allCases.flatMap(\.keys).map(\.stringValue).first { !kind.keys.map(\.stringValue).contains($0) }
            if let stray {
                XCTAssertThrowsError(try decoder.decode(RuleSpec.self, from: Data("{ code: \"c\", kind: \"\(kind.rawValue)\", \(members), \(stray): \(values[stray] ?? "1") }".utf8)), "\(kind) takes \(stray)")
            }
        }
        let url = temporaryDirectory.appendingPathComponent("kiln.json5")
        XCTAssertThrowsError(try ManifestParser.parse(Data(#"{ bundle: "b", schemaVersion: 1, tables: [], rules: [{ code: "c", kind: "nope", sql: "SELECT 1", message: "m" }] }"#.utf8), file: url)) { error in
            XCTAssertTrue("\(error)".contains("expected one of: \(RuleKind.allCases.map(\.rawValue).joined(separator: ", "))"), "\(error)")
        }
    }

    /// The library reads no `KILN_*` variable: the thread settings are `BuildOptions.threads`, which the CLI maps from
    /// the variables `ThreadSettings.environmentVariables` names, each documented in docs/reference/commands.md's
    /// "Environment" table (and no other there).
    func testTheThreadVariablesAreOptionsTheCLIMaps() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        for case let url as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)! where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(sources.path.count + 1))
            if path.hasPrefix("kiln/") || path.hasPrefix("kiln-bench/") { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            XCTAssertFalse(text.contains("environment[\"KILN_") && !path.hasSuffix("KilnCore/ThreadSettings.swift"),
                           "\(path) reads a KILN_ variable: make it an option the CLI maps")
            XCTAssertFalse(text.contains("ProcessInfo.processInfo.environment[\"KILN_"), "\(path) reads the process's KILN_ variables")
        }
        let commands = try repositoryText("docs/reference/commands.md")
        let documented = try section(commands, from: "## Environment")
            .compactMap { line in line.firstMatch(of: /^\| `(KILN_[A-Z_]+)=/).map { String($0.1) } }
        XCTAssertEqual(documented, ThreadSettings.environmentVariables, "docs/reference/commands.md's Environment table")

        XCTAssertEqual(ThreadSettings(environment: [:]), ThreadSettings())
        let serial = ThreadSettings(environment: ["KILN_STAGING_THREADS": "1", "KILN_RULE_THREADS": "1", "KILN_PAGE_THREADS": "3",
                                                  "KILN_DECOMPRESSION_THREAD": "0"])
        XCTAssertTrue(serial.stagingOnOneThread)
        XCTAssertTrue(serial.rulesOnOneThread)
        XCTAssertEqual(serial.pageWorkerCount, 3)
        XCTAssertFalse(serial.decompressionThread)
        XCTAssertFalse(serial.checksRulesInParallel)
        XCTAssertEqual(ThreadSettings(environment: ["KILN_STAGING_THREADS": "1"]).pageWorkerCount, 0)
        XCTAssertEqual(ThreadSettings(environment: ["KILN_PAGE_THREADS": "-2"]).pageWorkerCount, 0)
        XCTAssertEqual(ThreadSettings(environment: ["KILN_PAGE_THREADS": "x"]).pageWorkers, nil)
        XCTAssertTrue(ThreadSettings(environment: ["KILN_DECOMPRESSION_THREAD": "1"]).decompressionThread)
    }
}
