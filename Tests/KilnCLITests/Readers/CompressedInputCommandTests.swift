import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// Compressed inputs through the `kiln` binary: real inputs compressed in the test by the gzip, bzip2, xz and zstd
/// command-line tools (the formats' reference implementations, the oracle) build the same bundle rows and the same
/// findings, at the same lines, as the files themselves; a Wikimedia-style multistream bzip2 export gives every page;
/// a truncated or damaged archive is an `input.compression` error naming the file, the format and the compressed
/// offset, and what came before the damage is kept.
final class CompressedInputCommandTests: CLITestCase {
    /// Replaces the file at `path` (under the working folder) by its compressed bytes, under the same name: Kiln
    /// recognises the format by content.
    private func compressInPlace(_ path: String, _ command: [String]) throws {
        let url = file(path)
        try Compressor.compress(Data(contentsOf: url), command).write(to: url)
    }

    /// Every row of every table of the bundle (but its metadata), as text.
    private func rows(_ bundle: String) throws -> [String] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        var tables: [String] = []
        let names = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'kiln%' AND name NOT LIKE 'sqlite%' ORDER BY name")
        while let row = try names.step() { tables.append(row.values[0].textValue ?? "") }
        var rows: [String] = []
        for table in tables {
            let statement = try database.prepare("SELECT * FROM \"\(table)\"")
            while let row = try statement.step() { rows.append(table + ": " + row.values.map { $0.textValue ?? "NULL" }.joined(separator: "|")) }
        }
        return rows
    }

    /// The findings of a build's report: code, severity, file, line, column and message.
    private func findings(_ report: String) throws -> [String] {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        let diagnostics = try XCTUnwrap(json["diagnostics"] as? [[String: Any]])
        return diagnostics.map { item in
            ["code", "severity", "file", "line", "column", "message"].map { "\(item[$0] ?? "-")" }.joined(separator: " ")
        }
    }

    private func metadata(_ bundle: String, _ key: String) throws -> String? {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        let statement = try database.prepare("SELECT value FROM kiln_metadata WHERE key = ?")
        try statement.bind([.text(key)])
        return try statement.step()?.values[0].textValue
    }

    /// The broken Patras fixture (findings at known lines) with its stops file compressed by each codec: the same
    /// bundle rows and findings as the plain file, and the digest is that of the compressed file on disk.
    func testEachCodecGivesTheRowsAndFindingsOfThePlainFile() throws {
        try brokenPipeline("plain")
        let plain = try kiln("build", "plain", "--out", "plain.sqlite")
        XCTAssertEqual(plain.status, 1, plain.stderr)
        let plainFindings = try findings("plain.report.json")
        XCTAssertTrue(plainFindings.contains { $0.contains("StopsUTF8.txt 13") }, "the fixture no longer has its finding at line 13")
        for codec in Compressor.codecs {
            let folder = "broken-\(codec.name)"
            try brokenPipeline(folder)
            try compressInPlace("\(folder)/StopsUTF8.txt", codec.command)
            let run = try kiln("build", folder, "--out", "\(folder).sqlite")
            XCTAssertEqual(run.status, plain.status, run.stderr)
            XCTAssertEqual(try findings("\(folder).report.json"), plainFindings, codec.name)
            XCTAssertFalse(run.stderr.contains("input.compression"), run.stderr)
        }
        // A bundle is written only without errors: the digests are checked on the real Patras pipeline.
        try copy("raw/patras", to: "patras")
        let built = try kiln("build", "patras", "--out", "patras.sqlite")
        XCTAssertEqual(built.status, 0, built.stderr)
        let plainRows = try rows("patras.sqlite")
        for codec in Compressor.codecs {
            let folder = "patras-\(codec.name)"
            try copy("raw/patras", to: folder)
            try compressInPlace("\(folder)/StopsUTF8.txt", codec.command)
            let run = try kiln("build", folder, "--out", "\(folder).sqlite")
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try rows("\(folder).sqlite"), plainRows, codec.name)
            XCTAssertEqual(try metadata("\(folder).sqlite", "input.StopsUTF8.txt.sha256"), try sha256("\(folder)/StopsUTF8.txt"), codec.name)
        }
    }

    /// Every pipeline of real inputs in the repository (every reader over text: delimited, routes, timetable, xml,
    /// kml, html, webpage, wikitext, mediawiki, ics, json, sqlite scripts), each text input compressed, the codecs
    /// taken in turn: the same exit code, findings and bundle rows as the files as they are. Images stay as they
    /// are: the `files` reader describes files on disk. The fast tier takes the fewest pipelines that still hold
    /// every reader format of the full list.
    func testEveryReaderReadsCompressedInputs() throws {
        let real = try FileManager.default.contentsOfDirectory(atPath: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real").path)
            .filter { FileManager.default.fileExists(atPath: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/\($0)/kiln.json5").path) }
            .sorted().map { "Tests/Fixtures/real/\($0)" }
        let textExtensions: Set<String> = ["txt", "xml", "html", "json", "geojson", "ics", "kml", "csv", "sql", "wikicode", "gpx"]
        var turn = 0
        let samples = ["raw/atlas", "raw/museum", "raw/patras-web"]
        for pipeline in TestTier.isFast ? try Self.oneForEachFormat(samples + real) : real + samples {
            let name = pipeline.replacingOccurrences(of: "/", with: "-")
            try copy(pipeline, to: "\(name)-plain")
            let plain = try kiln("build", "\(name)-plain", "--out", "\(name)-plain.sqlite")
            let folder = try copy(pipeline, to: name)
            var compressed = 0
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
            for url in files.sorted(by: { $0.path < $1.path }) where textExtensions.contains(url.pathExtension) {
                let codec = Compressor.codecs[turn % Compressor.codecs.count]
                turn += 1
                try Compressor.compress(Data(contentsOf: url), codec.command).write(to: url)
                compressed += 1
            }
            XCTAssertGreaterThan(compressed, 0, pipeline)
            let run = try kiln("build", name, "--out", "\(name).sqlite")
            XCTAssertEqual(run.status, plain.status, "\(pipeline): \(run.stderr)")
            XCTAssertEqual(try findings("\(name).report.json"), try findings("\(name)-plain.report.json"), pipeline)
            if plain.status == 0 { XCTAssertEqual(try rows("\(name).sqlite"), try rows("\(name)-plain.sqlite"), pipeline) }
        }
    }

    /// The pipelines of `pipelines`, in order, that use a reader format none before them uses: together, every format.
    private static func oneForEachFormat(_ pipelines: [String]) throws -> [String] {
        var seen: Set<String> = []
        return try pipelines.filter { pipeline in
            let manifest = try String(contentsOf: repositoryRoot.appendingPathComponent("\(pipeline)/kiln.json5"), encoding: .utf8)
            let formats = Set(manifest.matches(of: /format: *"([a-z-]+)"/).map { String($0.1) })
            defer { seen.formUnion(formats) }
            return !formats.isSubset(of: seen)
        }
    }

    /// A wikitext page named after its file keeps its title when the file is compressed and named `….wikicode.xz`:
    /// a compressed file's own extension is not part of the name.
    func testACompressedFileNamedWithItsCodecKeepsItsTitle() throws {
        try copy("Tests/Fixtures/real/wikivoyage-en-roppongi", to: "plain")
        XCTAssertEqual(try kiln("build", "plain", "--out", "plain.sqlite").status, 0)
        try copy("Tests/Fixtures/real/wikivoyage-en-roppongi", to: "xz")
        let page = file("xz/Roppongi.wikicode")
        try Compressor.compress(Data(contentsOf: page), ["xz", "-c"]).write(to: file("xz/Roppongi.wikicode.xz"))
        try FileManager.default.removeItem(at: page)
        let manifest = file("xz/kiln.json5")
        try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "path: \"*.wikicode\"", with: "path: \"*.wikicode.xz\"")
            .write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "xz", "--out", "xz.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("xz.sqlite").filter { !$0.contains("Roppongi.wikicode") }, try rows("plain.sqlite").filter { !$0.contains("Roppongi.wikicode") })
        let pages = try rows("xz.sqlite").filter { $0.hasPrefix("page: ") }
        XCTAssertTrue(pages.contains { $0.hasPrefix("page: Roppongi|") }, "\(pages)")
    }

    /// The real NextBus routeConfig (the `xml` reader, three sources over one file) compressed by each codec.
    func testCompressedXMLBuildsTheSameBundle() throws {
        try copy("Tests/Fixtures/real/nextbus-actransit-22", to: "plain")
        XCTAssertEqual(try kiln("build", "plain", "--out", "plain.sqlite").status, 0)
        let plainRows = try rows("plain.sqlite")
        XCTAssertGreaterThan(plainRows.count, 100)
        for codec in Compressor.codecs {
            try copy("Tests/Fixtures/real/nextbus-actransit-22", to: codec.name)
            try compressInPlace("\(codec.name)/routeConfig.xml", codec.command)
            let run = try kiln("build", codec.name, "--out", "\(codec.name).sqlite")
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try rows("\(codec.name).sqlite"), plainRows, codec.name)
        }
    }

    /// The travel-guide export (real Wikivoyage pages in a MediaWiki XML export) as Wikimedia's multistream dumps are
    /// made: the header, then a few pages per bzip2 stream, then the footer, each stream compressed on its own and
    /// the streams concatenated. Every page is read, with the findings at the lines of the plain export.
    func testMultistreamBzip2ExportGivesEveryPage() throws {
        try copy("raw/itravel", to: "plain")
        let plain = try kiln("build", "plain", "--out", "plain.sqlite")
        XCTAssertEqual(plain.status, 0, plain.stderr)
        try copy("raw/itravel", to: "multi")
        let export = file("multi/itravel-export.xml")
        let text = try Data(contentsOf: export)
        var pieces: [Data] = []
        var start = text.startIndex
        var pages = 0
        var search = start
        while let range = text.range(of: Data("  <page>".utf8), in: search..<text.endIndex) {
            if pages % 3 == 0 && range.lowerBound > start {
                pieces.append(text[start..<range.lowerBound])
                start = range.lowerBound
            }
            pages += 1
            search = range.upperBound
        }
        pieces.append(text[start...])
        XCTAssertGreaterThan(pieces.count, 5)
        var multistream = Data()
        for piece in pieces { multistream += try Compressor.compress(piece, ["bzip2", "-c"]) }
        try multistream.write(to: export)
        let run = try kiln("build", "multi", "--out", "multi.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("multi.sqlite"), try rows("plain.sqlite"))
        XCTAssertEqual(try findings("multi.report.json"), try findings("plain.report.json"))
    }

    /// Each codec, an archive of two streams (members, frames) of the NextBus file's lines, the second cut short or
    /// damaged: an `input.compression` error naming the file, the format and the offset; exit code 1; every record of
    /// the first stream kept (the rows a build of the first half alone gives are there).
    func testTruncatedAndDamagedArchivesAreFindingsAndKeepWhatCameBefore() throws {
        let source = try Data(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/nextbus-actransit-22/routeConfig.xml"))
        let text = String(decoding: source, as: UTF8.self)
        // The first half: the lines up to the route's middle stop, the document closed as the file closes it.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let routeStops = lines.indices.filter { lines[$0].hasPrefix("<stop ") }
        let cut = routeStops[routeStops.count / 2]
        let firstHalf = Data((lines[..<cut].joined(separator: "\n") + "\n").utf8)
        let secondHalf = Data((lines[cut...].joined(separator: "\n")).utf8)
        try copy("Tests/Fixtures/real/nextbus-actransit-22", to: "half")
        try (firstHalf + Data("</route>\n</body>\n".utf8)).write(to: file("half/routeConfig.xml"))
        XCTAssertEqual(try kiln("build", "half", "--out", "half.sqlite").status, 0)
        let halfStops = try rows("half.sqlite").filter { $0.hasPrefix("stop: ") }
        XCTAssertGreaterThan(halfStops.count, 10)
        for codec in Compressor.codecs {
            let first = try Compressor.compress(firstHalf, codec.command)
            let second = try Compressor.compress(secondHalf, codec.command)
            for damage in ["truncated", "damaged"] {
                var archive = first + second
                if damage == "truncated" {
                    archive = archive.prefix(first.count + second.count / 2)
                } else {
                    archive[first.count + second.count / 2] ^= 0x55
                }
                let folder = "\(codec.name)-\(damage)"
                try copy("Tests/Fixtures/real/nextbus-actransit-22", to: folder)
                try archive.write(to: file("\(folder)/routeConfig.xml"))
                let run = try kiln("build", folder, "--out", "\(folder).sqlite")
                XCTAssertEqual(run.status, 1, "\(folder): \(run.stderr)")
                let finding = try XCTUnwrap(try findings("\(folder).report.json").first { $0.hasPrefix("input.compression error routeConfig.xml") },
                                            "\(folder): \(run.stderr)")
                XCTAssertTrue(finding.contains("the \(codec.name)-compressed file is \(damage)"), finding)
                let offset = try XCTUnwrap(finding.range(of: #"compressed byte (\d+) of (\d+)"#, options: .regularExpression).map { finding[$0] })
                let numbers = offset.split(separator: " ").compactMap { Int($0) }
                XCTAssertEqual(numbers.last, archive.count, finding)
                if damage == "truncated" {
                    XCTAssertEqual(numbers.first, archive.count, finding)
                } else {
                    XCTAssertTrue((first.count...archive.count).contains(numbers.first ?? -1), finding)
                }
                XCTAssertTrue(run.stderr.contains("input.compression (error)"), run.stderr)
                // The staging database keeps what was read; the failed build leaves no bundle, so the rows are read
                // from a build that demotes the findings of the damage to warnings.
                let manifest = file("\(folder)/kiln.json5")
                var json = try String(contentsOf: manifest, encoding: .utf8)
                json = json.replacingOccurrences(of: "schemaVersion: 1,", with: "schemaVersion: 1, severity: { \"input.compression\": \"warning\", \"xml.malformed\": \"warning\" },")
                try json.write(to: manifest, atomically: true, encoding: .utf8)
                let kept = try kiln("build", folder, "--out", "\(folder).sqlite")
                XCTAssertEqual(kept.status, 0, "\(folder): \(kept.stderr)")
                let stops = try rows("\(folder).sqlite").filter { $0.hasPrefix("stop: ") }
                XCTAssertTrue(Set(halfStops).isSubset(of: Set(stops)), "\(folder): \(stops.count) stops kept, \(halfStops.count) in the first stream")
            }
        }
    }

    /// A truncated file's finding as the command line prints it.
    func testTruncatedSourceMessage() throws {
        try copy("raw/patras", to: "patras")
        let compressed = try Compressor.compress(Data(contentsOf: file("patras/StopsUTF8.txt")), ["gzip", "-c"])
        try compressed.prefix(compressed.count - 9).write(to: file("patras/StopsUTF8.txt"))
        let run = try kiln("build", "patras")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.contains("  input.compression (error) ×1\n    patras/StopsUTF8.txt: the gzip-compressed file is truncated: the file ends "
                                              + "inside a stream (found at compressed byte \(compressed.count - 9) of \(compressed.count - 9)); "
                                              + "what came before it was read, the rest is not\n"), run.stderr)
    }
}
