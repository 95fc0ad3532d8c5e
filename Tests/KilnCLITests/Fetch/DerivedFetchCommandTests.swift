import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// `kiln fetch` with URLs derived from data already fetched (a source's `template` with `from`, or its `links`),
/// against a site on 127.0.0.1 (`TestSite`): the site's log of requests shows what was derived, from what, and in which
/// order; the capture record and the files show what was kept.
final class DerivedFetchCommandTests: SiteTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try site.serve("robots.txt", "User-agent: *\nDisallow: /private\n")
        for code in ["a", "b", "c", "d"] { try site.serve("pages/\(code).txt", "Stop \(code);01\(code);21.7;38.2\n") }
    }

    /// A pipeline whose `pages` source (delimited stop lines saved under `site/pages/`) fetches as `pagesFetch` says,
    /// beside the sources `others` (each JSON5 text) and a `page` and `line` table for them.
    @discardableResult
    private func pipeline(pagesFetch: String, others: [String]) throws -> URL {
        try writePipeline("pipe", manifest: """
            {
              bundle: "dt", schemaVersion: 1,
              fetch: { userAgent: "KilnTest/1 (+mailto:t@example.org)", delay: 0, concurrency: 2 },
              tables: [
                { name: "stop", columns: [ { name: "code", type: "text" }, { name: "name", type: "text" } ], primaryKey: ["code"] },
                { name: "line", ship: false, columns: [ { name: "code", type: "text" }, { name: "name", type: "text" } ] },
                { name: "page", ship: false, columns: [ { name: "slug", type: "text" }, { name: "title", type: "text" } ] },
                { name: "listed", ship: false, columns: [ { name: "loc", type: "text" } ] },
              ],
              sources: [
                { name: "pages", format: "delimited", path: "site/pages/*.txt", fetch: \(pagesFetch),
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
                \(others.joined(separator: ",\n    "))
              ],
            }
            """)
    }

    /// A source `lines` fetched from `/lines.txt` (delimited: code;name).
    private var linesSource: String {
        """
        { name: "lines", format: "delimited", path: "site/lines.txt", fetch: { url: "\(site.url("/lines.txt"))" },
          options: { fields: ["code", "name"] }, into: "line", columns: { code: "code", name: "name" } }
        """
    }

    /// A source `index` fetched from `/index/index.html` (a web page).
    private func indexSource(_ path: String = "/index/index.html") -> String {
        """
        { name: "index", format: "webpage", path: "site/index/*.html", fetch: { urls: ["\(site.url(path))"] },
          into: { page: { table: "page", columns: { slug: "slug", title: "title" } } } }
        """
    }

    private func record(_ folder: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["captures"] as? [[String: Any]])
    }

    /// Two sitemaps, `/maps/one.xml` and `/maps/two.xml`, listing the pages a and b (a twice) and `/about.html`.
    private func serveSitemaps(_ namespace: String) throws {
        try site.serve("maps/one.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="\(namespace)"><url><loc>\(site.url("/pages/a.txt"))</loc></url><url><loc>\(site.url("/about.html"))</loc></url></urlset>
            """)
        try site.serve("maps/two.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="\(namespace)"><url><loc>\(site.url("/pages/b.txt"))</loc><lastmod>2026-01-01</lastmod></url>
            <url><loc>\(site.url("/pages/a.txt"))</loc></url></urlset>
            """)
    }

    private func pageRequests() throws -> [String] {
        try site.requests().map(\.path).filter { $0.hasPrefix("/pages/") || $0.hasPrefix("/other/") }
    }

    func testTemplateURLsComeFromTheFetchedFileReadByItsReaderAfterItIsFetched() throws {
        // Line b is listed twice: one URL.
        try site.serve("lines.txt", "a;Line A\nb;Line B\nb;Line B again\nc;Line C\n")
        let folder = try pipeline(pagesFetch: "{ template: \"\(site.url("/pages/{code}.txt"))\", from: \"lines\" }", others: [linesSource])
        // Before lines.txt is fetched, nothing can say which pages it names.
        let dry = try kiln("fetch", "pipe", "--dry-run")
        XCTAssertEqual(dry.status, 0, dry.stdout + dry.stderr)
        XCTAssertTrue(dry.stdout.contains("pages: URLs derived as one URL per record of source \"lines\" by the template \(site.url("/pages/{code}.txt")); not known before \"lines\" is fetched"), dry.stdout)
        XCTAssertTrue(try site.requests().isEmpty)

        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("fetched 4, unchanged 0, failed 0"), run.stdout)
        let paths = try site.requests().map(\.path)
        let lines = try XCTUnwrap(paths.firstIndex(of: "/lines.txt"))
        XCTAssertEqual(paths.filter { $0.hasPrefix("/pages/") }.sorted(), ["/pages/a.txt", "/pages/b.txt", "/pages/c.txt"])
        XCTAssertTrue(paths.indices.filter { paths[$0].hasPrefix("/pages/") }.allSatisfy { $0 > lines }, "\(paths)")
        XCTAssertFalse(paths.contains("/pages/d.txt"))
        // One capture per derived URL, saved under its URL's last segment.
        let captures = try record(folder)
        XCTAssertEqual(captures.filter { $0["source"] as? String == "pages" }.map { $0["file"] as? String },
                       ["site/pages/a.txt", "site/pages/b.txt", "site/pages/c.txt"])
        XCTAssertEqual(captures.filter { $0["source"] as? String == "pages" }.map { $0["url"] as? String },
                       ["/pages/a.txt", "/pages/b.txt", "/pages/c.txt"].map { site.url($0) })
        let build = try kiln("build", "pipe", "--out", "out/dt.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr + build.stdout)
        XCTAssertFalse(build.stdout.contains("fetch.uncaptured") || build.stderr.contains("fetch.uncaptured"), build.stderr)
        XCTAssertEqual(try program("/usr/bin/sqlite3", [file("out/dt.sqlite").path, "SELECT code FROM stop ORDER BY code"]).stdout, "01a\n01b\n01c\n")

        // Now lines.txt is saved: a dry run lists the derived requests; a refresh asks each one conditionally.
        let again = try kiln("fetch", "pipe", "--dry-run")
        XCTAssertTrue(again.stdout.contains("GET \(site.url("/pages/c.txt")) -> site/pages/c.txt"), again.stdout)
        XCTAssertTrue(again.stdout.contains("pages: 3 URLs derived as one URL per record of source \"lines\""), again.stdout)
        try site.clearLog()
        let refresh = try kiln("fetch", "pipe")
        XCTAssertTrue(refresh.stdout.hasPrefix("fetched 0, unchanged 4, failed 0"), refresh.stdout)
        for request in try site.requests() where request.path.hasPrefix("/pages/") {
            XCTAssertNotNil(request.headers["If-None-Match"], request.path)
        }
    }

    func testEachOriginsRobotsTxtIsReadOnceAcrossTheRoundsOfAFetch() throws {
        // Rounds: lines.txt; the sitemap; its locations on this site and the pages of "more", derived from lines.txt,
        // on a second site.
        let other = try TestSite(root: file("other"), folder: file("other-state"))
        defer { other.stop() }
        try other.serve("robots.txt", "User-agent: *\nDisallow: /private\n")
        for code in ["a", "b"] { try other.serve("more/\(code).txt", "More \(code);02\(code);21.7;38.2\n") }
        try site.serve("lines.txt", "a;Line A\nb;Line B\n")
        try site.serve("sitemap.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>\(site.url("/pages/c.txt"))</loc></url>
            <url><loc>\(site.url("/pages/d.txt"))</loc></url><url><loc>\(site.url("/private/e.txt"))</loc></url></urlset>
            """)
        try pipeline(pagesFetch: "{ sitemap: { url: \"\(site.url("/sitemap.xml"))\" } }", others: [linesSource, """
            { name: "more", format: "delimited", path: "site/more/*.txt", fetch: { template: "\(other.url("/more/{code}.txt"))", from: "lines" },
              options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } }
            """])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("fetched 6, unchanged 0, failed 0, refused by robots.txt 1"), run.stdout)
        XCTAssertEqual(try site.requests().filter { $0.path == "/robots.txt" }.count, 1)
        XCTAssertEqual(try other.requests().filter { $0.path == "/robots.txt" }.count, 1)
        // The rules read in the first round still hold in the last.
        XCTAssertFalse(try site.requests().contains { $0.path.hasPrefix("/private") })
    }

    func testARecordThatMakesNoURLIsReportedWithItsFileAndLine() throws {
        try site.serve("lines.txt", "a;Line A\n;Nameless\n")
        let folder = try pipeline(pagesFetch: "{ template: \"\(site.url("/pages/{code}.txt"))\", from: \"lines\" }", others: [linesSource])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("pipe/site/lines.txt:2: error: the record makes no URL for source \"pages\" by the template \(site.url("/pages/{code}.txt")): no value for {code} [fetch.derivation]"), run.stdout)
        // The URLs the other records make are fetched all the same.
        XCTAssertEqual(try pageRequests(), ["/pages/a.txt"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/a.txt").path))
    }

    func testLinksSelectedByCSSResolveAgainstTheBaseAndThePageAndPassTheAllowPattern() throws {
        try site.serve("index/index.html", """
            <html><head><base href="/pages/"><title>Lines</title></head><body><h1>Lines</h1>
            <a class="t" href="a.txt">A</a>
            <a class="t" href="/other/b.txt#top">B</a>
            <a class="t" href="\(site.url("/pages/c.txt"))">C</a>
            <a class="t" href="mailto:info@example.org">mail</a>
            <a href="d.txt">not a timetable</a>
            </body></html>
            """)
        try site.serve("other/b.txt", "Stop b;01b;21.7;38.2\n")
        let folder = try pipeline(pagesFetch: "{ links: { from: \"index\", css: \"a.t\", allow: \"\\\\.txt$\" } }", others: [indexSource()])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertEqual(try pageRequests().sorted(), ["/other/b.txt", "/pages/a.txt", "/pages/c.txt"])
        XCTAssertEqual(try record(folder).filter { $0["source"] as? String == "pages" }.map { $0["url"] as? String },
                       ["/other/b.txt", "/pages/a.txt", "/pages/c.txt"].map { site.url($0) })
    }

    func testLinksSelectedByXPathWithoutABaseResolveAgainstThePageURL() throws {
        try site.serve("index/index.html", """
            <html><body><ul id="lines"><li><a href="../pages/a.txt">A</a></li><li><a href="../pages/b.txt">B</a></li>
            <li><a href="../pages/b.txt">B again</a></li><li><a href="../pages/index.txt">all</a></li></ul>
            <a href="../pages/c.txt">elsewhere</a></body></html>
            """)
        try pipeline(pagesFetch: "{ links: { from: \"index\", xpath: \"//ul[@id='lines']//a/@href\", deny: \"index\" } }", others: [indexSource()])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertEqual(try pageRequests().sorted(), ["/pages/a.txt", "/pages/b.txt"])
    }

    func testASitemapAndASitemapIndexGiveTheirLocations() throws {
        let namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"
        try site.serve("sitemap-index.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <sitemapindex xmlns="\(namespace)"><sitemap><loc>\(site.url("/maps/one.xml"))</loc></sitemap>
            <sitemap><loc>\(site.url("/maps/two.xml"))</loc></sitemap></sitemapindex>
            """)
        try serveSitemaps(namespace)
        let xml = "options: { record: \"s:sitemap\", namespaces: { s: \"\(namespace)\" }, fields: { loc: \"s:loc\" } }"
        let urls = "options: { record: \"s:url\", namespaces: { s: \"\(namespace)\" }, fields: { loc: \"s:loc\" } }"
        try pipeline(pagesFetch: "{ links: { from: \"sitemaps\", allow: \"/pages/\" } }", others: [
            "{ name: \"index\", format: \"xml\", path: \"site/sitemap-index.xml\", fetch: { url: \"\(site.url("/sitemap-index.xml"))\" }, \(xml), into: \"listed\", columns: { loc: \"loc\" } }",
            "{ name: \"sitemaps\", format: \"xml\", path: \"site/maps/*.xml\", fetch: { links: { from: \"index\" } }, \(urls), into: \"listed\", columns: { loc: \"loc\" } }",
        ])
        try fetchFollowsTheSitemaps(from: "/sitemap-index.xml")
    }

    /// Runs `kiln fetch` and checks the requests: the sitemap index at `index` first, then its two sitemaps, then the
    /// pages a and b they list (a twice), each once.
    private func fetchFollowsTheSitemaps(from index: String) throws {
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        let paths = try site.requests().map(\.path).filter { $0 != "/robots.txt" }
        XCTAssertEqual(paths.first, index)
        XCTAssertEqual(Set(paths.dropFirst().prefix(2)), ["/maps/one.xml", "/maps/two.xml"])
        XCTAssertEqual(Set(paths.dropFirst(3)), ["/pages/a.txt", "/pages/b.txt"])
        XCTAssertEqual(paths.count, 5)
    }

    func testASitemapKeyFetchesTheSitemapFollowsItsIndexAndKeepsTheAllowedLocations() throws {
        let namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"
        try site.serve("sitemap.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <sitemapindex xmlns="\(namespace)"><sitemap><loc>/maps/one.xml</loc></sitemap>
            <sitemap><loc>\(site.url("/maps/two.xml"))</loc></sitemap></sitemapindex>
            """)
        try serveSitemaps(namespace)
        let folder = try pipeline(pagesFetch: "{ sitemap: { url: \"\(site.url("/sitemap.xml"))\", allow: \"/pages/\" } }", others: [])
        let dry = try kiln("fetch", "pipe", "--dry-run")
        XCTAssertTrue(dry.stdout.contains("pages: URLs derived as the locations in the sitemap \(site.url("/sitemap.xml")) matching \"/pages/\"; not known before the sitemap is fetched"), dry.stdout)
        try fetchFollowsTheSitemaps(from: "/sitemap.xml")
        // The sitemaps are captured apart from the pages, which the build checks against its files.
        let captures = try record(folder)
        XCTAssertEqual(captures.map { "\($0["source"] as? String ?? "") \($0["file"] as? String ?? "")" }, [
            "pages site/pages/a.txt", "pages site/pages/b.txt", "pages#sitemap1 site/pages/.sitemaps/sitemap.xml",
            "pages#sitemap2 site/pages/.sitemaps/one.xml", "pages#sitemap2 site/pages/.sitemaps/two.xml",
        ])
        let build = try kiln("build", "pipe", "--out", "out/dt.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr + build.stdout)
        XCTAssertFalse((build.stdout + build.stderr).contains("fetch."), build.stderr)
        XCTAssertEqual(try program("/usr/bin/sqlite3", [file("out/dt.sqlite").path, "SELECT value FROM kiln_metadata WHERE key = 'source.pages.urls'"]).stdout, "2\n")
        // Now the sitemaps are saved, a dry run lists their requests and the locations they give.
        let listed = try kiln("fetch", "pipe", "--dry-run")
        XCTAssertTrue(listed.stdout.contains("GET \(site.url("/sitemap.xml")) -> site/pages/.sitemaps/sitemap.xml"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("GET \(site.url("/pages/b.txt")) -> site/pages/b.txt"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("pages: 2 URLs derived as the locations in the sitemap \(site.url("/sitemap.xml")) matching \"/pages/\", from the sitemaps as saved now"), listed.stdout)
        // A refresh asks every sitemap and page conditionally.
        try site.clearLog()
        let refresh = try kiln("fetch", "pipe")
        XCTAssertTrue(refresh.stdout.hasPrefix("fetched 0, unchanged 5, failed 0"), refresh.stdout)
        for request in try site.requests() where request.path != "/robots.txt" {
            XCTAssertNotNil(request.headers["If-None-Match"], request.path)
        }
    }

    func testACompressedSitemapIsReadDecompressedAndADamagedOneIsAFindingNamingItsURL() throws {
        // sitemap.xml.gz made by Python's gzip module, served as a file (no Content-Encoding).
        try site.serve("plain/sitemap.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>\(site.url("/pages/a.txt"))</loc></url>
            <url><loc>\(site.url("/pages/b.txt"))</loc></url></urlset>
            """)
        let plain = site.root.appendingPathComponent("plain/sitemap.xml").path, compressed = site.root.appendingPathComponent("sitemap.xml.gz").path
        let gzip = { (damaged: Bool) throws in
            // Damaged: the CRC-32 of the trailer changed, the size unchanged.
            let script = "import gzip, sys\ndata = bytearray(gzip.compress(open(sys.argv[1], 'rb').read()))\nif sys.argv[3] == '1': data[-8] ^= 0xFF\nopen(sys.argv[2], 'wb').write(data)\n"
            XCTAssertEqual(try self.program("/usr/bin/env", ["python3", "-c", script, plain, compressed, damaged ? "1" : "0"]).status, 0)
        }
        try gzip(false)
        try site.route(["/sitemap.xml.gz": ["headers": ["Content-Type": "application/x-gzip"]]])
        let folder = try pipeline(pagesFetch: "{ sitemap: { url: \"\(site.url("/sitemap.xml.gz"))\" } }", others: [])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertEqual(try pageRequests().sorted(), ["/pages/a.txt", "/pages/b.txt"])
        let saved = folder.appendingPathComponent("site/pages/.sitemaps/sitemap.xml.gz")
        XCTAssertEqual(try Data(contentsOf: saved), try Data(contentsOf: URL(fileURLWithPath: compressed)))

        // A damaged one: a finding that names its URL, and no location of it fetched; the earlier pages stay.
        try gzip(true)
        try site.clearLog()
        let damaged = try kiln("fetch", "pipe")
        XCTAssertEqual(damaged.status, 1, damaged.stdout)
        XCTAssertTrue(damaged.stdout.contains("error: the sitemap \(site.url("/sitemap.xml.gz")) of source \"pages\" cannot be read: "), damaged.stdout)
        XCTAssertTrue(damaged.stdout.contains("; no location it lists is fetched [fetch.derivation]"), damaged.stdout)
        XCTAssertEqual(try pageRequests(), [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/a.txt").path))
    }

    func testHostileLinksNeverLeaveHTTPOrThePagesFolder() throws {
        try site.serve("index/index.html", """
            <html><body><a href="file:///etc/passwd">p</a><a href="javascript:alert(1)">j</a>
            <a href="/pages/..%2F..%2F..%2Fescape.txt">e</a><a href="/pages/a.txt">a</a><a href="/pages/a.txt">again</a></body></html>
            """)
        let folder = try pipeline(pagesFetch: "{ links: { from: \"index\" } }", others: [indexSource()])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("a link selected for source \"pages\" is no URL to fetch: \"file:///etc/passwd\" is a file URL; kiln fetch speaks http and https only [fetch.derivation]"), run.stdout)
        XCTAssertTrue(run.stdout.contains("\"javascript:alert(1)\" is a javascript URL"), run.stdout)
        // The escaping link is asked for (the site answers 404) and would have been saved inside the folder only.
        XCTAssertEqual(try pageRequests().sorted(), ["/pages/..%2F..%2F..%2Fescape.txt", "/pages/a.txt"])
        XCTAssertTrue(run.stdout.contains("there is no earlier copy of site/pages/_.._.._.._escape.txt"), run.stdout)
        let saved = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix("site/") }.sorted()
        XCTAssertEqual(saved, ["kiln.fetch.json", "kiln.json5", "site"])
    }

    func testASitemapIndexIsFollowedAtMostThreeLevelsAndEachSitemapOnce() throws {
        let namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"
        // s1 lists itself and s2; s2 lists s3; s3 lists s4, one level too deep.
        for level in 1...4 {
            let children = (level == 1 ? ["/maps/s1.xml", "/maps/s2.xml"] : ["/maps/s\(level + 1).xml"])
                .map { "<sitemap><loc>\(site.url($0))</loc></sitemap>" }.joined()
            try site.serve("maps/s\(level).xml", "<?xml version=\"1.0\"?><sitemapindex xmlns=\"\(namespace)\">\(children)</sitemapindex>")
        }
        try pipeline(pagesFetch: "{ sitemap: { url: \"\(site.url("/maps/s1.xml"))\" } }", others: [])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertEqual(try site.requests().map(\.path).filter { $0 != "/robots.txt" }, ["/maps/s1.xml", "/maps/s2.xml", "/maps/s3.xml"])
        XCTAssertTrue(run.stdout.contains("\(site.url("/maps/s4.xml")), listed by a sitemap index 3 levels below \(site.url("/maps/s1.xml")), is not followed (at most 3 levels) [fetch.derivation]"), run.stdout)
        XCTAssertTrue(run.stdout.contains("source \"pages\" derives no URL from the locations in the sitemap \(site.url("/maps/s1.xml")) (read: 3 sitemaps)"), run.stdout)
    }

    func testADerivedURLNeverOverwritesAnotherSourcesFile() throws {
        // The index links its own page, which would be saved in the folder the index source saves to.
        try site.serve("index/index.html", "<html><body><a href=\"/index/index.html\">self</a><a href=\"/pages/a.txt\">a</a></body></html>")
        let folder = try pipeline(pagesFetch: "{ links: { from: \"index\", allow: \"/pages/\" } }", others: [
            "{ name: \"index\", format: \"webpage\", path: \"site/index/*.html\", fetch: { urls: [\"\(site.url("/index/index.html"))\"] }, into: { page: { table: \"page\", columns: { slug: \"slug\" } } } }",
            "{ name: \"more\", format: \"webpage\", path: \"site/index/*.html\", fetch: { links: { from: \"index\", allow: \"index\" } }, into: { page: { table: \"page\", columns: { slug: \"slug\" } } } }",
        ])
        let before = try Data(contentsOf: site.root.appendingPathComponent("index/index.html"))
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("\(site.url("/index/index.html")), derived for source \"more\", would be saved as site/index/index.html, where source \"index\" saves a URL: it is not fetched [fetch.derivation]"), run.stdout)
        XCTAssertEqual(try site.requests().filter { $0.path == "/index/index.html" }.count, 1)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/index/index.html")), before)
        XCTAssertEqual(try record(folder).filter { $0["file"] as? String == "site/index/index.html" }.map { $0["source"] as? String }, ["index"])
    }

    func testSourcesDerivingFromOneAnotherAreRefusedNamingThem() throws {
        try pipeline(pagesFetch: "{ links: { from: \"index\" } }", others: [
            "{ name: \"index\", format: \"webpage\", path: \"site/index/*.html\", fetch: { template: \"\(site.url("/index/{code}.html"))\", from: \"pages\" }, into: { page: { table: \"page\", columns: { slug: \"slug\" } } } }",
        ])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 64, run.stdout + run.stderr)
        XCTAssertTrue(run.stderr.contains("the URLs of sources \"pages\" → \"index\" → \"pages\" derive from one another in a ring"), run.stderr)
        XCTAssertTrue(try site.requests().isEmpty)
    }

    func testAnIndexThatNoLongerLinksAnythingFailsAndKeepsTheEarlierFiles() throws {
        try site.serve("index/index.html", "<html><body><a class=\"t\" href=\"/pages/a.txt\">A</a></body></html>")
        let folder = try pipeline(pagesFetch: "{ links: { from: \"index\", css: \"a.t\" } }", others: [indexSource()])
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let before = try record(folder)
        // The site's new layout: the links lost their class.
        Thread.sleep(forTimeInterval: 1.1)
        try site.serve("index/index.html", "<html><body><p>New site!</p><a href=\"/pages/a.txt\">A</a></body></html>")
        try site.clearLog()
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("error: source \"pages\" derives no URL from the 1 file of source \"index\" (the links selected by css \"a.t\" of source \"index\"'s pages): has the site's layout changed? The earlier files of \"pages\" are kept [fetch.derivation]"), run.stdout)
        XCTAssertEqual(try pageRequests(), [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/a.txt").path))
        XCTAssertEqual(try record(folder).filter { $0["source"] as? String == "pages" }.map { $0["sha256"] as? String },
                       before.filter { $0["source"] as? String == "pages" }.map { $0["sha256"] as? String })
        let junit = try kiln("fetch", "pipe", "--format", "junit")
        XCTAssertTrue(junit.stdout.contains("fetch.derivation"), junit.stdout)
    }
}

extension DerivedFetchCommandTests {
    func testAPlaceholderThatIsNoFieldIsRefusedByBuildAsByFetchAtItsLine() throws {
        try pipeline(pagesFetch: "{ template: \"\(site.url("/pages/{number}.txt"))\", from: \"lines\" }", others: [linesSource])
        let expected = "kiln.json5:11: manifest error at sources[0].fetch.template: the placeholders {number} must be fields of one kind of record of source \"lines\" (delimited); its fields: code, name"
        for command in [["fetch", "pipe"], ["build", "pipe", "--out", "out/dt.sqlite"]] {
            let run = try kiln(command)
            XCTAssertEqual(run.status, 64, "\(command): " + run.stdout + run.stderr)
            XCTAssertTrue(run.stderr.contains(expected), "\(command): " + run.stderr)
        }
        XCTAssertTrue(try site.requests().isEmpty, "nothing is fetched for a manifest refused")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/dt.sqlite").path))
    }
}
