import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Every manifest snippet of the docs (the ```json5 blocks of docs/ and README.md) is read by the manifest's own
/// decoder, so that no page shows a key Kiln refuses (`kind:` for a source's `format:`): a whole manifest by
/// `ManifestParser` (decoding and the checks of every name); a table, a source, a rule or a top-level member inside
/// a minimal manifest (strict decoding: no unknown key, no wrong type); a source's options, and the `options:`
/// fragments of a reader's page, by that reader.
final class DocumentedManifestTests: KilnTestCase {
    /// The json5 blocks of the docs: (page, block).
    static func snippets() throws -> [(page: String, text: String)] {
        let root = KilnTestCase.repositoryRoot
        var pages = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        for case let url as URL in FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil)! where url.pathExtension == "md" {
            pages.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        var found: [(String, String)] = []
        for page in pages.sorted() {
            let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
            for match in text.matches(of: /```json5\n((?s).*?)```/) { found.append((page, String(match.1))) }
        }
        return found
    }

    private func decode(_ text: String) throws -> ManifestDocument {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return try decoder.decode(ManifestDocument.self, from: Data(text.utf8))
    }

    /// The reader of `format` takes `options`.
    private func checkOptions(_ format: String, _ options: JSONValue, _ page: String) {
        XCTAssertNoThrow(try ReaderRegistry.makeReader(format: format, options: options, codingPath: []), page)
    }

    func testEveryManifestSnippetInTheDocsIsReadByTheDecoder() throws {
        let snippets = try DocumentedManifestTests.snippets()
        XCTAssertGreaterThan(snippets.count, 20)
        let minimal = #"bundle: "doc", schemaVersion: 1, tables: []"#
        let header = #"bundle: "doc", schemaVersion: 1"#
        let table = #"name: "t", columns: [{ name: "lat", type: "real" }, { name: "lon", type: "real" }]"#
        for (page, raw) in snippets {
            // `{ … }`, `[ … ]` and `, …` stand for what the page leaves out.
            // The outline's limits name the tables stop and timetable.
            let text = raw.replacingOccurrences(of: "tables: [ … ]", with: #"tables: [{ name: "stop", columns: [{ name: "code", type: "text" }] }, { name: "timetable", columns: [{ name: "id", type: "integer" }] }]"#)
                .replacingOccurrences(of: "{ … }", with: "{}").replacingOccurrences(of: "[ … ]", with: "[]")
                .replacingOccurrences(of: ", …", with: "").trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
            let context = "\(page): \(text.prefix(80))"
            // docs/SECURITY.md's fuzz target: its sources' options, as each reader takes them.
            if text.contains("seeds:") {
                let options = try XCTUnwrap(text.firstMatch(of: /format: "(\w+)", options: \{\}/), context)
                checkOptions(String(options.1), .object([:]), context)
                continue
            }
            let format = page.hasPrefix("docs/reference/readers/") ? String(page.dropFirst("docs/reference/readers/".count).dropLast(3)) : nil
            if text.hasPrefix("{") {
                if text.contains("bundle:") {
                    // A whole manifest is checked as kiln reads it; the reference's outline, with parts left out, is
                    // decoded only (it names tables it does not declare).
                    let url = temporaryDirectory.appendingPathComponent("kiln.json5")
                    if raw.contains("…") { XCTAssertNoThrow(try decode(text), context) } else { XCTAssertNoThrow(try ManifestParser.parse(Data(text.utf8), file: url), context) }
                    continue
                }
                let wrapped: String
                if text.contains("format:") {
                    wrapped = "{ \(minimal), sources: [\(text)] }"
                } else if text.contains("code:") {
                    wrapped = "{ \(minimal), rules: [\(text)] }"
                } else {
                    wrapped = "{ \(header), tables: [\(text)] }"
                }
                do {
                    let document = try decode(wrapped)
                    for source in document.sources { checkOptions(source.format, source.options, context) }
                } catch {
                    XCTFail("\(context): \(error)")
                }
            } else if text.hasPrefix("options:") || text.hasPrefix("inlineTemplates:") {
                let options = text.hasPrefix("options:") ? "{ \(text) }" : "{ options: { \(text) } }"
                guard let format else { XCTFail("\(context): options outside a reader's page"); continue }
                do {
                    let document = try decode("{ \(minimal), sources: [{ name: \"s\", format: \"\(format)\", path: \"x\", into: \"t\", columns: {}, \(options.dropFirst().dropLast()) }] }")
                    for source in document.sources { checkOptions(source.format, source.options, context) }
                } catch {
                    XCTFail("\(context): \(error)")
                }
            } else if text.hasPrefix("spatial:") {
                XCTAssertNoThrow(try decode("{ \(header), tables: [{ \(table), \(text) }] }"), context)
            } else {
                // A member of the manifest itself (vocabularies, fixtures, exports…).
                XCTAssertNoThrow(try decode("{ \(minimal), \(text) }"), context)
            }
        }
    }

    /// No page names a source's format as `kind:` (the key of a rule's check, not of a source), in a snippet or in
    /// its prose.
    func testNoPageCallsASourcesFormatItsKind() throws {
        let root = KilnTestCase.repositoryRoot
        var pages = ["README.md"]
        for case let url as URL in FileManager.default.enumerator(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)! where url.pathExtension == "md" {
            pages.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        let ruleKinds = Set(RuleKind.allCases.map(\.rawValue))
        for page in pages {
            let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
            for format in ReaderRegistry.formats where !ruleKinds.contains(format) {
                XCTAssertFalse(text.contains("kind: \"\(format)\""), "\(page) writes kind: \"\(format)\" for format: \"\(format)\"")
            }
        }
    }

    /// The test can fail: a source with `kind:` for `format:` is refused.
    func testASourceWithKindForFormatIsRefused() {
        XCTAssertThrowsError(try decode(#"{ bundle: "doc", schemaVersion: 1, sources: [{ name: "s", kind: "delimited", path: "x", into: "t", columns: {} }] }"#))
    }
}
