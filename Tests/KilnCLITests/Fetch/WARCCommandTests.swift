import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// `kiln fetch --warc` and `kiln fetch --from-warc` against a site on 127.0.0.1 (`TestSite`): the archive Kiln writes
/// is read by warcio (every digest checked), and Kiln imports the WARC files of its own fetches, of Debian's wget and
/// of warcio's writer into the same files and capture entries a fetch makes.
final class WARCCommandTests: SiteTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        for number in 1...4 { try site.serve("pages/p\(number).txt", "Κορίνθου \(number);020\(number);21.7\(number);38.2\(number)\n") }
        try site.serve("stops.txt", "Αγίου Ανδρέα;0104;21.73;38.24\nΚορίνθου;0105;21.74;38.25\n")
        try site.serve("robots.txt", "User-agent: *\nDisallow: /private\n")
        // p2 travels gzip-encoded; /old/p4.txt is a redirect to p4.
        try site.route(["/pages/p2.txt": ["gzip": true], "/old/p4.txt": ["redirect": site.url("/pages/p4.txt")]])
    }

    private static let pages = ["/pages/p1.txt", "/pages/p2.txt", "/pages/p3.txt", "/old/p4.txt"]

    /// A pipeline `name` fetching `stops.txt` by `url` and four pages by `urls` from `https://stops.example`, which the
    /// tests map to the site with `--mirror`.
    @discardableResult
    private func pipeline(_ name: String) throws -> URL {
        let pages = WARCCommandTests.pages.map { "\"https://stops.example\($0)\"" }.joined(separator: ", ")
        return try writePipeline(name, manifest: """
            {
              bundle: "ft", schemaVersion: 1,
              fetch: { userAgent: "KilnTest/1 (+mailto:t@example.org)", delay: 0, concurrency: 2 },
              tables: [{ name: "stop", columns: [ { name: "code", type: "text" }, { name: "name", type: "text" } ], primaryKey: ["code"] }],
              sources: [
                { name: "stops", format: "delimited", path: "site/stops.txt", fetch: { url: "https://stops.example/stops.txt" },
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
                { name: "pages", format: "delimited", path: "site/pages/*.txt", fetch: { urls: [\(pages)] },
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
              ],
            }
            """)
    }

    private var mirror: String { "https://stops.example/=\(site.origin)/" }

    /// The files a fetch or an import saved, by path, with what the site serves for each URL.
    private func assertSnapshot(_ folder: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        for (saved, served) in [("site/stops.txt", "stops.txt"), ("site/pages/p1.txt", "pages/p1.txt"), ("site/pages/p2.txt", "pages/p2.txt"),
                                ("site/pages/p3.txt", "pages/p3.txt"), ("site/pages/p4.txt", "pages/p4.txt")] {
            XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent(saved)), try Data(contentsOf: site.root.appendingPathComponent(served)), saved, file: file, line: line)
        }
    }

    private func records(_ paths: String...) throws -> [[String: Any]] {
        let data = try PythonOracle.run("warc_records.py", ["read"] + paths.map { file($0).path })
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    }

    private func captures(_ folder: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["captures"] as? [[String: Any]])
    }

    func testTheWARCOfAFetchPassesWarciosDigestChecksAndA304BecomesARevisit() throws {
        let folder = try pipeline("pipe")
        let first = try kiln("fetch", "pipe", "--mirror", mirror, "--warc", "first.warc.gz")
        XCTAssertEqual(first.status, 0, first.stderr + first.stdout)
        XCTAssertTrue(first.stdout.contains("wrote first.warc.gz ("), first.stdout)
        try assertSnapshot(folder)
        // warcio raises on any record whose block or payload digest does not match.
        let archived = try records("first.warc.gz")
        XCTAssertEqual(archived.first?["type"] as? String, "warcinfo")
        let responses = archived.filter { $0["type"] as? String == "response" }
        let requests = archived.filter { $0["type"] as? String == "request" }
        // robots.txt, five URLs and the redirect's first hop: a response and a request record each.
        let expected = ["/robots.txt", "/stops.txt", "/pages/p1.txt", "/pages/p2.txt", "/pages/p3.txt", "/old/p4.txt", "/pages/p4.txt"].map(site.url)
        XCTAssertEqual(Set(responses.compactMap { $0["uri"] as? String }), Set(expected))
        XCTAssertEqual(responses.count, expected.count)
        XCTAssertEqual(Set(requests.compactMap { $0["concurrentTo"] as? String }), Set(responses.compactMap { $0["id"] as? String }))
        XCTAssertEqual(responses.first { $0["uri"] as? String == site.url("/old/p4.txt") }?["status"] as? Int, 302)
        // Each 200's payload is the saved file's bytes (p2 decoded from gzip, its encoding kept as a renamed header).
        for (path, saved) in [("/stops.txt", "pipe/site/stops.txt"), ("/pages/p2.txt", "pipe/site/pages/p2.txt"), ("/pages/p4.txt", "pipe/site/pages/p4.txt")] {
            let record = try XCTUnwrap(responses.first { $0["uri"] as? String == site.url(path) })
            XCTAssertEqual(record["status"] as? Int, 200)
            XCTAssertEqual(record["payloadSHA256"] as? String, try ExternalDigest.sha256sum(file(saved).path), path)
        }
        let gzipped = try XCTUnwrap(responses.first { $0["uri"] as? String == site.url("/pages/p2.txt") }?["headers"] as? [String: String])
        XCTAssertEqual(gzipped["X-Archive-Orig-Content-Encoding"], "gzip")
        XCTAssertNil(gzipped["Content-Encoding"])

        // Nothing changed: every URL answers 304, archived as a server-not-modified revisit of the first capture.
        let second = try kiln("fetch", "pipe", "--mirror", mirror, "--warc", "second.warc")
        XCTAssertEqual(second.status, 0, second.stderr + second.stdout)
        // The bodies an archive reads back are named; a 304's empty one is removed, not left beside the files.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("site/pages").path).sorted(),
                       ["p1.txt", "p2.txt", "p3.txt", "p4.txt"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("site").path).sorted(), ["pages", "stops.txt"])
        let revisits = try records("second.warc").filter { $0["type"] as? String == "revisit" }
        // By the URL requested last: the redirected page's validators go to the page it was redirected to.
        let captured = Dictionary(uniqueKeysWithValues: try captures(folder).map { capture in
            ((capture["finalURL"] as? String) ?? (capture["url"] as! String).replacingOccurrences(of: "https://stops.example", with: site.origin), capture["capturedAt"] as! String)
        })
        XCTAssertEqual(Set(revisits.compactMap { $0["uri"] as? String }), Set(captured.keys))
        XCTAssertEqual(revisits.count, 5)
        for revisit in revisits {
            XCTAssertEqual(revisit["status"] as? Int, 304)
            XCTAssertEqual(revisit["profile"] as? String, "http://netpreserve.org/warc/1.1/revisit/server-not-modified")
            let uri = try XCTUnwrap(revisit["uri"] as? String)
            XCTAssertEqual(revisit["refersToURI"] as? String, uri)
            XCTAssertEqual(revisit["refersToDate"] as? String, captured[uri], uri)
        }
    }

    func testAnImportOfKilnsOwnWARCFilesMakesTheSameFilesAndCaptureRecordAsTheFetch() throws {
        let fetched = try pipeline("fetched")
        XCTAssertEqual(try kiln("fetch", "fetched", "--mirror", mirror, "--warc", "first.warc.gz").status, 0)
        XCTAssertEqual(try kiln("fetch", "fetched", "--mirror", mirror, "--warc", "second.warc").status, 0)
        let requestsBefore = try site.requests().count
        let imported = try pipeline("imported")
        let run = try kiln("fetch", "imported", "--mirror", mirror, "--from-warc", "first.warc.gz", "--from-warc", "second.warc")
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        XCTAssertTrue(run.stdout.hasPrefix("imported 5, unchanged 0, failed 0 (5 URLs from "), run.stdout)
        XCTAssertEqual(try site.requests().count, requestsBefore, "an import makes no request")
        try assertSnapshot(imported)
        // The capture times are the records' dates: the same record byte for byte, verification times included.
        XCTAssertEqual(try String(contentsOf: imported.appendingPathComponent("kiln.fetch.json"), encoding: .utf8),
                       try String(contentsOf: fetched.appendingPathComponent("kiln.fetch.json"), encoding: .utf8))
        let buildFetched = try kiln("build", "fetched", "--out", "a/ft.sqlite")
        XCTAssertEqual(buildFetched.status, 0, buildFetched.stderr + buildFetched.stdout)
        let buildImported = try kiln("build", "imported", "--out", "b/ft.sqlite")
        XCTAssertEqual(buildImported.status, 0, buildImported.stderr + buildImported.stdout)
        XCTAssertEqual(try Data(contentsOf: file("a/ft.sqlite")), try Data(contentsOf: file("b/ft.sqlite")))
        // The same import again finds the files as they are.
        let again = try kiln("fetch", "imported", "--mirror", mirror, "--from-warc", "first.warc.gz", "--from-warc", "second.warc")
        XCTAssertTrue(again.stdout.hasPrefix("imported 0, unchanged 5, failed 0"), again.stdout)
    }

    func testAnImportOfWgetsWARCFollowsItsRecordedRedirectAndCountsTheRecordsNoSourceWants() throws {
        let folder = try pipeline("pipe")
        let list = file("urls.txt")
        try ((WARCCommandTests.pages + ["/stops.txt", "/unrelated.txt"]).map(site.url).joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        try site.serve("unrelated.txt", "no source wants this\n")
        try FileManager.default.createDirectory(at: file("wget"), withIntermediateDirectories: true)
        let wget = try program("/usr/bin/wget", ["-q", "-i", list.path, "--warc-file=" + file("crawl").path, "--no-warc-keep-log", "--compression=gzip",
                                                 "-P", file("wget").path, "-e", "robots=off"])
        XCTAssertEqual(wget.status, 0, wget.stderr)
        let run = try kiln("fetch", "pipe", "--mirror", mirror, "--from-warc", "crawl.warc.gz", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        try assertSnapshot(folder)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let counts = try XCTUnwrap(report["imported"] as? [String: Int])
        // Counted from warcio's reading of wget's file: its records, and those with a URL no source wants (the
        // unrelated page, and wget's own resource records of its arguments and log).
        let crawl = try records("crawl.warc.gz")
        let wanted = Set((WARCCommandTests.pages + ["/stops.txt", "/pages/p4.txt"]).map(site.url))
        let unwanted = crawl.filter { ["response", "resource", "revisit"].contains($0["type"] as? String) && !wanted.contains($0["uri"] as? String ?? "") }
        XCTAssertEqual(counts["records"], crawl.count)
        XCTAssertEqual(counts["unwanted"], unwanted.count)
        XCTAssertTrue(unwanted.contains { $0["uri"] as? String == site.url("/unrelated.txt") })
        let redirected = try XCTUnwrap(try captures(folder).first { $0["url"] as? String == "https://stops.example/old/p4.txt" })
        XCTAssertEqual(redirected["finalURL"] as? String, site.url("/pages/p4.txt"))
        XCTAssertEqual(redirected["file"] as? String, "site/pages/p4.txt")
    }

    func testAnImportOfWarciosRecordsDecodesChunkedGzipBodiesResolvesRevisitsAndKeepsACopyOverAnError() throws {
        let folder = try pipeline("pipe")
        XCTAssertEqual(try kiln("fetch", "pipe", "--mirror", mirror).status, 0)
        let before = try Data(contentsOf: folder.appendingPathComponent("site/pages/p3.txt"))
        let origin = "https://stops.example"
        let stops = "Αγίου Ανδρέα;0104;21.73;38.24\nΝέα;0106;21.75;38.26\n"
        let p1 = "Νέα σελίδα 1;0111;21.71;38.21\n"
        let specs: [[String: Any]] = [
            ["type": "response", "uri": origin + "/stops.txt", "date": "2030-01-02T03:04:05Z", "body": stops, "gzip": true, "chunked": true,
             "headers": [["Content-Type", "text/plain; charset=utf-8"], ["ETag", "\"w1\""]]],
            ["type": "response", "uri": origin + "/pages/p1.txt", "date": "2030-01-02T03:04:06Z", "body": p1, "headers": [["Content-Type", "text/plain"]]],
            // p2: an identical-payload revisit of p1's record, under another URL.
            ["type": "revisit", "uri": origin + "/pages/p2.txt", "date": "2030-01-02T03:04:07Z", "refersToURI": origin + "/pages/p1.txt",
             "refersToDate": "2030-01-02T03:04:06Z", "refersToBody": p1, "headers": [["Content-Type", "text/plain"]]],
            // p3: its newest record is a 500; the saved copy stays.
            ["type": "response", "uri": origin + "/pages/p3.txt", "date": "2030-01-02T03:04:08Z", "status": 500, "body": "oops", "headers": [["Content-Type", "text/plain"]]],
            ["type": "resource", "uri": origin + "/old/p4.txt", "date": "2030-01-02T03:04:09Z", "body": "Resource;0144;21.7;38.2\n", "contentType": "text/plain"],
        ]
        let input = String(decoding: try JSONSerialization.data(withJSONObject: specs), as: UTF8.self)
        _ = try PythonOracle.run("warc_records.py", ["write", file("warcio.warc.gz").path], input: input)
        let run = try kiln("fetch", "pipe", "--from-warc", "warcio.warc.gz")
        XCTAssertEqual(run.status, 1, "a URL whose newest record is an error fails the import: " + run.stdout)
        XCTAssertTrue(run.stdout.hasPrefix("imported 4, unchanged 0, failed 1 (5 URLs from 5 WARC records in 1 files; 0 records of URLs no source wants)"), run.stdout)
        XCTAssertTrue(run.stdout.contains("fetch.kept"), run.stdout)
        XCTAssertTrue(run.stdout.contains("the newest record of https://stops.example/pages/p3.txt (2030-01-02T03:04:08Z) is HTTP 500"), run.stdout)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/stops.txt"), encoding: .utf8), stops)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p1.txt"), encoding: .utf8), p1)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p2.txt"), encoding: .utf8), p1)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/pages/p3.txt")), before)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p4.txt"), encoding: .utf8), "Resource;0144;21.7;38.2\n")
        let byURL = Dictionary(uniqueKeysWithValues: try captures(folder).map { ($0["url"] as! String, $0) })
        XCTAssertEqual(byURL[origin + "/stops.txt"]?["capturedAt"] as? String, "2030-01-02T03:04:05Z")
        XCTAssertEqual(byURL[origin + "/stops.txt"]?["etag"] as? String, "\"w1\"")
        XCTAssertEqual(byURL[origin + "/pages/p2.txt"]?["verifiedAt"] as? String, "2030-01-02T03:04:07Z")
        XCTAssertEqual(byURL[origin + "/pages/p3.txt"]?["sha256"] as? String, try ExternalDigest.sha256sum(folder.appendingPathComponent("site/pages/p3.txt").path))
    }

    func testARedirectedURLsPageConfirmedByALaterRevisitIsVerifiedAtTheRevisitsDate() throws {
        // As a refresh records it: the URL redirected once, and the next fetch asked the page it led to, which
        // answered 304. The revisit is the newest word on the URL's bytes, whatever the date of the redirect.
        let folder = try pipeline("pipe")
        let origin = "https://stops.example"
        let p4 = "Σελίδα 4;0144;21.7;38.2\n"
        let specs: [[String: Any]] = [
            ["type": "response", "uri": origin + "/old/p4.txt", "date": "2030-01-02T03:04:05Z", "status": 302,
             "headers": [["Location", origin + "/pages/p4.txt"]]],
            ["type": "response", "uri": origin + "/pages/p4.txt", "date": "2030-01-02T03:04:06Z", "body": p4,
             "headers": [["Content-Type", "text/plain"], ["ETag", "\"v1\""]]],
            ["type": "revisit", "uri": origin + "/pages/p4.txt", "date": "2030-01-03T00:00:00Z", "status": 304,
             "refersToURI": origin + "/pages/p4.txt", "refersToDate": "2030-01-02T03:04:06Z", "refersToBody": p4,
             "profile": "http://netpreserve.org/warc/1.1/revisit/server-not-modified", "headers": [["ETag", "\"v1\""]]],
        ]
        let input = String(decoding: try JSONSerialization.data(withJSONObject: specs), as: UTF8.self)
        _ = try PythonOracle.run("warc_records.py", ["write", file("refresh.warc").path], input: input)
        let run = try kiln("fetch", "pipe", "--from-warc", "refresh.warc", "--only", "pages")
        XCTAssertTrue(run.stdout.contains("no record of \(origin)/pages/p1.txt"), run.stdout)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p4.txt"), encoding: .utf8), p4)
        let capture = try XCTUnwrap(try captures(folder).first { $0["url"] as? String == origin + "/old/p4.txt" })
        XCTAssertEqual(capture["finalURL"] as? String, origin + "/pages/p4.txt")
        XCTAssertEqual(capture["capturedAt"] as? String, "2030-01-02T03:04:06Z")
        XCTAssertEqual(capture["verifiedAt"] as? String, "2030-01-03T00:00:00Z")
    }

    /// URLs derived from a fetched file are fetched in a second round: its exchanges go to the same archive, and an
    /// import derives the same URLs from the imported file, round by round.
    func testAFetchInRoundsWritesOneArchiveAndItsImportDerivesTheSameURLs() throws {
        try site.serve("codes.txt", "Κορίνθου;p1\nΑγίου Ανδρέα;p3\n")
        let manifest = """
            {
              bundle: "rounds", schemaVersion: 1,
              fetch: { userAgent: "KilnTest/1", delay: 0 },
              tables: [{ name: "stop", columns: [ { name: "code", type: "text" }, { name: "name", type: "text" } ], primaryKey: ["code"] },
                       { name: "page", columns: [ { name: "name", type: "text" }, { name: "page", type: "text" } ], primaryKey: ["page"] }],
              sources: [
                { name: "codes", format: "delimited", path: "site/codes.txt", fetch: { url: "https://stops.example/codes.txt" },
                  options: { fields: ["name", "page"] }, into: "page", columns: { name: "name", page: "page" } },
                { name: "pages", format: "delimited", path: "site/pages/*.txt",
                  fetch: { template: "https://stops.example/pages/{page}.txt", from: "codes" },
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
              ],
            }
            """
        let fetched = try writePipeline("fetched", manifest: manifest)
        let run = try kiln("fetch", "fetched", "--mirror", mirror, "--warc", "rounds.warc.gz")
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        XCTAssertTrue(run.stdout.contains("wrote rounds.warc.gz ("), run.stdout)
        let responses = try records("rounds.warc.gz").filter { $0["type"] as? String == "response" }
        XCTAssertEqual(Set(responses.compactMap { $0["uri"] as? String }), Set(["/robots.txt", "/codes.txt", "/pages/p1.txt", "/pages/p3.txt"].map(site.url)))
        XCTAssertEqual(responses.filter { $0["uri"] as? String != site.url("/robots.txt") }.count, 3)
        let imported = try writePipeline("imported", manifest: manifest)
        let again = try kiln("fetch", "imported", "--mirror", mirror, "--from-warc", "rounds.warc.gz", "--format", "json")
        XCTAssertEqual(again.status, 0, again.stderr + again.stdout)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        // Each round read robots.txt: those records are the ones no source wants.
        let robots = responses.filter { $0["uri"] as? String == site.url("/robots.txt") }.count
        XCTAssertGreaterThan(robots, 0)
        XCTAssertEqual((report["imported"] as? [String: Int])?["unwanted"], robots)
        for path in ["site/codes.txt", "site/pages/p1.txt", "site/pages/p3.txt"] {
            XCTAssertEqual(try Data(contentsOf: imported.appendingPathComponent(path)), try Data(contentsOf: fetched.appendingPathComponent(path)), path)
        }
        XCTAssertEqual(try String(contentsOf: imported.appendingPathComponent("kiln.fetch.json"), encoding: .utf8),
                       try String(contentsOf: fetched.appendingPathComponent("kiln.fetch.json"), encoding: .utf8))
    }

    func testAFileThatIsNotWARCIsRefusedWithItsNameAndNothingChanges() throws {
        let folder = try pipeline("pipe")
        XCTAssertEqual(try kiln("fetch", "pipe", "--mirror", mirror).status, 0)
        let record = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        try "HTTP/1.1 200 OK\r\n\r\nnot an archive".write(to: file("bad.warc"), atomically: true, encoding: .utf8)
        let run = try kiln("fetch", "pipe", "--from-warc", "bad.warc")
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("bad.warc: not a readable WARC file: expected a WARC record's version line"), run.stderr)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json")), record)
        try assertSnapshot(folder)
        let both = try kiln("fetch", "pipe", "--warc", "a.warc", "--from-warc", "bad.warc")
        XCTAssertEqual(both.status, 64, both.stderr)
    }
}
