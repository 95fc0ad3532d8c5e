import Foundation
import XCTest
import KilnTestSupport
@testable import KilnManifest
@testable import KilnFetch
import KilnCore

/// URLs derived from data already fetched: how a template is read and filled, which manifests are refused, and in
/// which rounds a plan fetches its sources.
final class DerivedURLsTests: KilnTestCase {
    func testATemplateEncodesEachValueAsPythonsQuoteDoes() throws {
        let template = try URLTemplate("https://example.org/timetables/line-{id}.html?day={day}")
        XCTAssertEqual(template.fields, ["id", "day"])
        let values = ["6.10", "Γραμμή 2/β", "a&b=c", "~_-.", "%41", "ü?#"]
        // Python's urllib.parse.quote with no safe character keeps exactly RFC 3986's unreserved ones, as RFC 6570's
        // simple expansion does.
        let script = "import sys, urllib.parse\nfor line in sys.stdin.read().split('\\n'): print(urllib.parse.quote(line, safe=''))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(values.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let expected = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        process.waitUntilExit()
        XCTAssertEqual(expected.count, values.count)
        for (value, quoted) in zip(values, expected) {
            XCTAssertEqual(try template.expand { $0 == "id" ? value : "sat" }, "https://example.org/timetables/line-\(quoted).html?day=sat", value)
        }
        XCTAssertThrowsError(try template.expand { $0 == "id" ? "1" : "" }) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "no value for {day}")
        }
    }

    func testTemplatesThatCannotMakeAURLAreRefused() {
        for (text, message) in [
            ("https://example.org/line.html", "has no {field} placeholder"),
            ("https://example.org/{id.html", "opens a { it does not close"),
            ("https://example.org/{}.html", "has an empty or nested placeholder"),
            ("ftp://example.org/{id}", "does not make a URL to fetch: \"ftp://example.org/x\" is a ftp URL"),
        ] {
            XCTAssertThrowsError(try URLTemplate(text), text) { error in
                XCTAssertTrue((error as? ValueProblem)?.message.contains(message) == true, "\(text): \(error)")
            }
        }
    }

    private func decode(_ json: String) throws -> SourceFetch {
        try JSONDecoder().decode(SourceFetch.self, from: Data(json.utf8))
    }

    func testASourceFetchDerivesByTemplateOrByLinksAndNeverBoth() throws {
        XCTAssertEqual(try decode(#"{"template": "https://e.org/{code}.html", "from": "lines"}"#).derived?.from, "lines")
        let links = try decode(#"{"links": {"from": "index", "css": "a.t", "allow": "\\.html$"}}"#)
        XCTAssertEqual(links.derived?.from, "index")
        XCTAssertEqual(links.urls, [])
        let sitemap = try decode(#"{"sitemap": {"url": "https://e.org/sitemap.xml", "allow": "/p/"}}"#)
        XCTAssertNil(sitemap.derived?.from)
        for (json, message) in [
            (#"{"template": "https://e.org/{code}.html"}"#, "a template needs from"),
            (#"{"from": "lines", "urls": ["https://e.org/a"]}"#, "from goes with template"),
            (#"{"url": "https://e.org/a", "template": "https://e.org/{c}", "from": "x"}"#, "give one of url, urls, template (with from), links or sitemap, not url and template"),
            (#"{"links": {"from": "index"}, "sitemap": {"url": "https://e.org/sitemap.xml"}}"#, "not links and sitemap"),
            (#"{"sitemap": {"url": "ftp://e.org/sitemap.xml"}}"#, "is a ftp URL"),
            (#"{"sitemap": {"url": "https://e.org/sitemap.xml", "css": "loc"}}"#, "css"),
            (#"{"links": {"from": "index", "css": "a", "xpath": "//a"}}"#, "give css or xpath, not both"),
            (#"{"links": {"from": "index", "allow": "("}}"#, "missing closing parenthesis"),
            (#"{"links": {"from": "index", "selector": "a"}}"#, "selector"),
            (#"{"template": "https://e.org/{c}", "from": "x", "checksum": {"url": "https://e.org/s", "algorithm": "sha1"}}"#, "a checksum goes with one url"),
        ] {
            XCTAssertThrowsError(try decode(json), json) { error in
                XCTAssertTrue("\(error)".contains(message), "\(json): \(error)")
            }
        }
    }

    private func manifest(_ sources: String) throws -> Manifest {
        let text = """
            { bundle: "d", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "code", type: "text" }] }],
              sources: [\(sources)] }
            """
        let file = temporaryDirectory.appendingPathComponent("kiln.json5")
        return try ManifestParser.parse(Data(text.utf8), file: file).0
    }

    private func source(_ name: String, path: String, fetch: String) -> String {
        "{ name: \"\(name)\", format: \"delimited\", path: \"\(path)\", fetch: \(fetch), options: { fields: [\"code\"] }, into: \"t\", columns: { code: \"code\" } }"
    }

    func testAPlanFetchesEachDerivedSourceARoundAfterTheSourceItReads() throws {
        let manifest = try manifest([
            source("pages", path: "p/*.txt", fetch: "{ links: { from: \"lines\" } }"),
            source("lines", path: "l/*.txt", fetch: "{ template: \"https://e.org/{code}.txt\", from: \"index\" }"),
            source("index", path: "index.txt", fetch: "{ url: \"https://e.org/index.txt\" }"),
            source("local", path: "local/*.txt", fetch: "{ template: \"https://e.org/l/{code}.txt\", from: \"unfetched\" }"),
            "{ name: \"unfetched\", format: \"delimited\", path: \"u.txt\", options: { fields: [\"code\"] }, into: \"t\", columns: { code: \"code\" } }",
        ].joined(separator: ","))
        let plan = try FetchPlan(manifest: manifest)
        XCTAssertEqual(plan.jobs.map(\.url), ["https://e.org/index.txt"])
        XCTAssertEqual(plan.derivedSources.map(\.source), ["lines", "local", "pages"])
        XCTAssertEqual(plan.derivedSources.map(\.round), [1, 1, 2])
        // Fetched alone, a derived source reads the other source's files as they are: the first round after the
        // listed URLs.
        XCTAssertEqual(try FetchPlan(manifest: manifest, only: ["pages"]).derivedSources.map(\.round), [1])
        // A sitemap depends on no source: its source is fetched in the first round of derived ones, its sitemaps
        // captured apart, level by level.
        let mapped = try self.manifest(source("pages", path: "p/*.txt", fetch: "{ sitemap: { url: \"https://e.org/sitemap.xml\" } }"))
        let sitemapPlan = try FetchPlan(manifest: mapped)
        XCTAssertEqual(sitemapPlan.derivedSources.map(\.round), [1])
        XCTAssertEqual(sitemapPlan.allFetchingSources, ["pages", "pages#sitemap1", "pages#sitemap2", "pages#sitemap3"])
    }

    func testAPlaceholderThatIsNoFieldOfTheSourceReadIsRefusedNamingItsFields() throws {
        let manifest = try manifest([
            source("lines", path: "lines.txt", fetch: "{ url: \"https://e.org/lines.txt\" }"),
            source("pages", path: "p/*.txt", fetch: "{ template: \"https://e.org/{number}.txt\", from: \"lines\" }"),
        ].joined(separator: ","))
        XCTAssertThrowsError(try FetchPlan(manifest: manifest)) { error in
            XCTAssertTrue("\(error)".contains("sources[1].fetch.template"), "\(error)")
            XCTAssertTrue("\(error)".contains("the placeholders {number} must be fields of one kind of record of source \"lines\" (delimited); its fields: code"), "\(error)")
        }
    }

    func testRingsUnknownSourcesAndFixedPathsAreRefusedAtLoad() throws {
        for (sources, message) in [
            ([source("a", path: "a/*.txt", fetch: "{ links: { from: \"b\" } }"), source("b", path: "b/*.txt", fetch: "{ links: { from: \"c\" } }"),
              source("c", path: "c/*.txt", fetch: "{ template: \"https://e.org/{code}\", from: \"a\" }")],
             "the URLs of sources \"a\" → \"b\" → \"c\" → \"a\" derive from one another in a ring"),
            ([source("a", path: "a/*.txt", fetch: "{ links: { from: \"a\" } }")], "cannot derive its URLs from its own files"),
            ([source("a", path: "a/*.txt", fetch: "{ links: { from: \"nowhere\" } }")], "no source named \"nowhere\" to derive URLs from"),
            ([source("a", path: "a/one.txt", fetch: "{ links: { from: \"b\" } }"), source("b", path: "b.txt", fetch: "{ url: \"https://e.org/b\" }")],
             "derived URLs are saved in the folder of path"),
        ] {
            XCTAssertThrowsError(try manifest(sources.joined(separator: ",")), message) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }

    func testLinksResolveAgainstTheBaseElementThenThePageAndASitemapGivesItsLocations() throws {
        let manifest = try manifest([
            source("index", path: "index/*.html", fetch: "{ urls: [\"https://e.org/lines/all.html\"] }"),
            source("pages", path: "p/*.txt", fetch: "{ links: { from: \"index\", deny: \"skip\" } }"),
        ].joined(separator: ","))
        let folder = temporaryDirectory.appendingPathComponent("index")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("<html><body><a href='a.txt'>a</a><a href='../b.txt#x'>b</a><a href='skip.txt'>s</a><area href='//other.org/c.txt'></body></html>".utf8)
            .write(to: folder.appendingPathComponent("all.html"))
        try Data("<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc> https://e.org/d.txt </loc></url></urlset>".utf8)
            .write(to: folder.appendingPathComponent("map.html"))
        var record = CaptureRecord()
        record.captures = [CaptureRecord.Capture(source: "index", url: "https://e.org/lines/all.html", file: "index/all.html", status: 200,
                                                 sha256: "", bytes: 0, capturedAt: "", verifiedAt: "")]
        let outcome = try URLDerivation.urls(manifest.sources[1].fetch!.derived!, of: "pages", manifest: manifest, captures: record)
        XCTAssertEqual(outcome.urls, ["https://e.org/lines/a.txt", "https://e.org/b.txt", "https://other.org/c.txt", "https://e.org/d.txt"])
        XCTAssertEqual(outcome.problems, [])
        // With a <base href>, relative links resolve against it; a file no capture lists has no URL for them.
        try Data("<html><head><base href='https://e.org/x/'></head><body><a href='a.txt'>a</a></body></html>".utf8).write(to: folder.appendingPathComponent("all.html"))
        try Data("<html><body><a href='rel.txt'>r</a></body></html>".utf8).write(to: folder.appendingPathComponent("map.html"))
        let based = try URLDerivation.urls(manifest.sources[1].fetch!.derived!, of: "pages", manifest: manifest, captures: record)
        XCTAssertEqual(based.urls, ["https://e.org/x/a.txt"])
        XCTAssertEqual(based.problems.map(\.message), ["the link \"rel.txt\" makes no URL for source \"pages\" (the file was not fetched, so relative links have nothing to resolve against)"])
        // An empty page gives no link, and says so.
        try Data().write(to: folder.appendingPathComponent("map.html"))
        let empty = try URLDerivation.urls(manifest.sources[1].fetch!.derived!, of: "pages", manifest: manifest, captures: record)
        XCTAssertEqual(empty.urls, ["https://e.org/x/a.txt"])
        XCTAssertEqual(empty.problems.map { "\($0.provenance?.file ?? ""): \($0.message)" }, ["index/map.html: the file (empty, or no markup libxml2 can parse) makes no URL for source \"pages\" (the file was not fetched, so relative links have nothing to resolve against)"])
    }

    func testACompressedSitemapIsReadDecompressedWithinItsLimitAndADamagedOneListsNothing() throws {
        let sitemap = "<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>https://e.org/p/a.txt</loc></url>"
            + "<url><loc>https://e.org/p/b.txt</loc></url></urlset>"
        let folder = temporaryDirectory.appendingPathComponent("maps")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        /// `sitemap` compressed by Python's `module` (gzip, bz2, lzma), its byte `damage` from the end flipped when given.
        func compressed(_ module: String, damage: Int? = nil) throws -> Data {
            let plain = folder.appendingPathComponent("plain.xml"), packed = folder.appendingPathComponent("packed")
            try Data(sitemap.utf8).write(to: plain)
            let program = "import \(module), sys\ndata = bytearray(\(module).compress(open(sys.argv[1], 'rb').read()))\n"
                + (damage.map { "data[-\($0)] ^= 0xFF\n" } ?? "") + "open(sys.argv[2], 'wb').write(data)\n"
            _ = try PythonOracle.lines(ofProgram: program, [plain.path, packed.path])
            return try Data(contentsOf: packed)
        }
        let selection = try JSONDecoder().decode(SitemapSelection.self, from: Data(#"{"url": "https://e.org/sitemap.xml.gz"}"#.utf8))
        func entries(_ data: Data, maxBytes: Int = 1_000_000) throws -> (sitemaps: [String], locations: [String], problems: [Diagnostic]) {
            try data.write(to: folder.appendingPathComponent("sitemap.xml.gz"))
            return try URLDerivation.sitemapEntries("maps/sitemap.xml.gz", in: temporaryDirectory, page: "https://e.org/sitemap.xml.gz", sitemap: selection,
                                                    source: "pages", maxBytes: maxBytes)
        }
        for module in ["gzip", "bz2", "lzma"] {
            let read = try entries(try compressed(module))
            XCTAssertEqual(read.locations, ["https://e.org/p/a.txt", "https://e.org/p/b.txt"], module)
            XCTAssertEqual(read.problems, [], module)
        }
        // Past the limit once decompressed: nothing listed, and said.
        let large = try entries(try compressed("gzip"), maxBytes: 100)
        XCTAssertEqual(large.locations, [])
        XCTAssertEqual(large.problems.map(\.code), [DiagnosticCode.fetchDerivation.rawValue])
        XCTAssertTrue(large.problems.first?.message.hasPrefix("the sitemap https://e.org/sitemap.xml.gz of source \"pages\" cannot be read: the gzip-compressed file inflates past 100 bytes") == true,
                      large.problems.first?.message ?? "")
        // A damaged trailer (gzip's CRC-32): nothing of it listed, though all of it decompressed.
        let damaged = try entries(try compressed("gzip", damage: 8))
        XCTAssertEqual(damaged.locations, [])
        XCTAssertEqual(damaged.problems.map(\.provenance?.url), ["https://e.org/sitemap.xml.gz"])
        XCTAssertTrue(damaged.problems.first?.message.hasSuffix("; no location it lists is fetched") == true, damaged.problems.first?.message ?? "")
    }
}
