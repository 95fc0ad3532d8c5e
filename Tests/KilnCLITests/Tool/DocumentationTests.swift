import Foundation
import XCTest
import KilnKit

/// Holds the docs to the binary: each command's reference heading is its usage line (the reader formats' pages and
/// fuzz targets are held to `ReaderRegistry` by `DeclaredListsTests`), the finding-code page is the catalogue `kiln codes` prints, every relative link resolves, and
/// the README's first pipeline builds and searches as the README shows.
final class DocumentationTests: CLITestCase {
    private static let commands = ["fetch", "build", "check", "diff", "patch", "apply", "extract", "test", "export", "report", "codes", "completions", "init"]

    private func repositoryText(_ path: String) throws -> String {
        try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    func testEachCommandsReferenceHeadingIsItsUsageLine() throws {
        let reference = try repositoryText("docs/reference/commands.md")
        let headings = reference.components(separatedBy: "\n").filter { $0.hasPrefix("## `kiln ") }
        var usages: [String] = []
        for command in Self.commands {
            let help = try kiln("help", command)
            XCTAssertEqual(help.status, 0, command)
            let usage = try XCTUnwrap(help.stdout.components(separatedBy: "\n").first { $0.hasPrefix("Usage: ") }, command)
            usages.append("## `\(usage.dropFirst("Usage: ".count))`")
        }
        XCTAssertEqual(headings.sorted(), usages.sorted(), "docs/reference/commands.md has one heading per command, its usage line")
        let listed = try kiln("--help").stdout.components(separatedBy: "\n")
            .compactMap { line -> String? in
                let words = line.split(separator: " ")
                return line.hasPrefix("  ") && !line.hasPrefix("   ") && words.count > 1 && !words[0].hasPrefix("-") ? String(words[0]) : nil
            }
            .filter { $0 != "help" }
        XCTAssertEqual(listed.sorted(), Self.commands.sorted(), "the commands kiln --help lists are the ones documented")
    }

    /// `kiln help export` shows each built-in export (`BuiltInExport`) with its command line, and counts them.
    func testTheExportHelpShowsEachBuiltInExport() throws {
        let help = try kiln("help", "export")
        XCTAssertEqual(help.status, 0)
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for export in BuiltInExport.allCases {
            XCTAssertTrue(text.contains("`kiln export \(export.rawValue) BUNDLE --out DIR`"), "kiln help export shows \(export.rawValue)")
        }
        let count = ["One", "Two", "Three", "Four", "Five", "Six"][BuiltInExport.allCases.count - 1]
        XCTAssertTrue(text.contains("\(count) exports need no declaration"), text)
    }

    /// The code catalogue page is rendered from `kiln codes --format json`; `KILN_UPDATE_DOCS=1` rewrites it.
    func testTheCodeCataloguePageIsWhatKilnCodesPrints() throws {
        let run = try kiln("codes", "--format", "json")
        XCTAssertEqual(run.status, 0)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: String]])
        XCTAssertGreaterThan(entries.count, 50)
        var page = "# Finding codes\n\nEvery code Kiln can report, with its default severity (a manifest's `severity` overrides it) and what it\nmeans. `kiln codes` prints the same list; `kiln codes --manifest M` adds a manifest's own rules. This page is\ngenerated from `kiln codes --format json` (`KILN_UPDATE_DOCS=1 swift test --filter DocumentationTests`).\n\n| code | severity | meaning |\n|---|---|---|\n"
        for entry in entries {
            let meaning = (entry["meaning"] ?? "").replacingOccurrences(of: "|", with: "\\|")
            page += "| `\(entry["code"] ?? "")` | \(entry["severity"] ?? "") | \(meaning) |\n"
        }
        let url = CLITestCase.repositoryRoot.appendingPathComponent("docs/reference/codes.md")
        if ProcessInfo.processInfo.environment["KILN_UPDATE_DOCS"] == "1" {
            try page.write(to: url, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), page,
                       "docs/reference/codes.md is stale: KILN_UPDATE_DOCS=1 swift test --filter DocumentationTests")
    }

    func testEveryRelativeLinkInTheDocsResolves() throws {
        let root = CLITestCase.repositoryRoot
        var documents = ["README.md"]
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root.appendingPathComponent("docs").path))
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".md") { documents.append("docs/\(path)") }
        }
        XCTAssertGreaterThan(documents.count, 20)
        let link = try NSRegularExpression(pattern: #"\]\(([^)#\s]+)(#[^)]*)?\)"#)
        for document in documents {
            let text = try repositoryText(document)
            let folder = root.appendingPathComponent(document).deletingLastPathComponent()
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent(target).path),
                              "\(document) links \(target), which does not exist")
            }
        }
    }

    func testTheREADMEsFirstPipelineBuildsAndSearchesAsShown() throws {
        let readme = try repositoryText("README.md")
        let section = try XCTUnwrap(readme.components(separatedBy: "## A first pipeline in five minutes").dropFirst().first)
        let blocks = section.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        XCTAssertEqual(blocks.count, 3)
        XCTAssertEqual("{" + blocks[0].dropFirst("json5\n{".count), try repositoryText("docs/examples/first-pipeline/kiln.json5"),
                       "the README shows the example's manifest")
        try copy("docs/examples/first-pipeline", to: "docs/examples/first-pipeline")

        let shownBuild = blocks[1].components(separatedBy: "\n").dropFirst().filter { !$0.isEmpty }
        XCTAssertEqual(shownBuild.first, "$ kiln build docs/examples/first-pipeline")
        let failed = try kiln("build", "docs/examples/first-pipeline")
        XCTAssertEqual(failed.status, 1)
        let printed = (failed.stdout + failed.stderr).components(separatedBy: "\n").filter { !$0.isEmpty }
        XCTAssertEqual(printed.sorted(), shownBuild.dropFirst().sorted())

        let stops = file("docs/examples/first-pipeline/stops.txt")
        let text = try String(contentsOf: stops, encoding: .utf8)
        XCTAssertTrue(text.contains("38.2384x"))
        try text.replacingOccurrences(of: "38.2384x", with: "38.2384").write(to: stops, atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("build", "docs/examples/first-pipeline").status, 0)

        let shownQuery = blocks[2].components(separatedBy: "\n").dropFirst().filter { !$0.isEmpty }
        let query = try XCTUnwrap(shownQuery.joined(separator: "\n").components(separatedBy: "\"").dropFirst().first)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [file("build/stops.sqlite").path, query]
        let out = Pipe()
        sqlite.standardOutput = out
        try sqlite.run()
        let rows = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        sqlite.waitUntilExit()
        XCTAssertEqual(rows, shownQuery.last.map { $0 + "\n" })
    }
}
