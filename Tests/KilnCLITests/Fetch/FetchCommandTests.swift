import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// `kiln fetch` against a site on 127.0.0.1 (`TestSite`), every assertion read from the site's log of requests or from
/// the files and the capture record: what is requested and how politely, what is kept, and what the build then makes
/// of the fetched files.
final class FetchCommandTests: SiteTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        for number in 1...3 { try site.serve("pages/p\(number).txt", "Κορίνθου \(number);010\(number);21.7\(number);38.2\(number)\n") }
        try site.serve("stops.txt", "Αγίου Ανδρέα;0104;21.73;38.24\nΚορίνθου;0105;21.74;38.25\n")
        try site.serve("robots.txt", "User-agent: *\nDisallow: /private\n")
    }

    /// A pipeline fetching `stops.txt` by `url` and the three pages by `urls` (plus `extra` URLs), with `fetch` as its
    /// top-level settings.
    @discardableResult
    private func pipeline(fetch: String = "delay: 0, concurrency: 2", extra: [String] = [], pagesFetch: String = "") throws -> URL {
        let pages = (["/pages/p1.txt", "/pages/p2.txt", "/pages/p3.txt"] + extra).map { "\"\(site.url($0))\"" }.joined(separator: ", ")
        return try writePipeline("pipe", manifest: """
            {
              bundle: "ft", schemaVersion: 1,
              fetch: { userAgent: "KilnTest/1 (+mailto:t@example.org)", \(fetch) },
              tables: [{ name: "stop", columns: [ { name: "code", type: "text" }, { name: "name", type: "text" } ], primaryKey: ["code"] }],
              sources: [
                { name: "stops", format: "delimited", path: "site/stops.txt", fetch: { url: "\(site.url("/stops.txt"))" },
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
                { name: "pages", format: "delimited", path: "site/pages/*.txt", fetch: { urls: [\(pages)] \(pagesFetch) },
                  options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } },
              ],
            }
            """)
    }

    private func record(_ folder: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["captures"] as? [[String: Any]])
    }

    func testFirstFetchSavesEveryURLWithItsCaptureAndTheBuildReadsThem() throws {
        let folder = try pipeline()
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        XCTAssertTrue(run.stdout.hasPrefix("fetched 4, unchanged 0, failed 0, refused by robots.txt 0 (4 URLs"), run.stdout)
        for path in ["stops.txt", "pages/p1.txt", "pages/p2.txt", "pages/p3.txt"] {
            XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/" + path)), try Data(contentsOf: site.root.appendingPathComponent(path)), path)
        }
        let captures = try record(folder)
        XCTAssertEqual(captures.map { $0["file"] as? String }, ["site/pages/p1.txt", "site/pages/p2.txt", "site/pages/p3.txt", "site/stops.txt"])
        for capture in captures {
            let file = try XCTUnwrap(capture["file"] as? String)
            XCTAssertEqual(capture["sha256"] as? String, try sha256("pipe/" + file))
            XCTAssertEqual(capture["status"] as? Int, 200)
            XCTAssertNotNil(capture["etag"])
            XCTAssertNotNil(capture["lastModified"])
            XCTAssertEqual(capture["capturedAt"] as? String, capture["verifiedAt"] as? String)
        }
        // robots.txt first, once, then every URL, each with the manifest's User-Agent.
        let requests = try site.requests()
        XCTAssertEqual(requests.first?.path, "/robots.txt")
        XCTAssertEqual(Set(requests.dropFirst().map(\.path)), ["/stops.txt", "/pages/p1.txt", "/pages/p2.txt", "/pages/p3.txt"])
        XCTAssertEqual(Set(requests.compactMap { $0.headers["User-Agent"] }), ["KilnTest/1 (+mailto:t@example.org)"])
        let build = try kiln("build", "pipe", "--out", "out/ft.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr + build.stdout)
        let rows = try program("/usr/bin/sqlite3", [file("out/ft.sqlite").path, "SELECT code FROM stop ORDER BY code"])
        XCTAssertEqual(rows.stdout, "0101\n0102\n0103\n0104\n0105\n")
        let metadata = try program("/usr/bin/sqlite3", [file("out/ft.sqlite").path, "SELECT key, value FROM kiln_metadata WHERE key LIKE 'source.%' ORDER BY key"])
        // Each source records the newest capture of its own files; the two may fall in different seconds.
        func newest(_ prefix: String) throws -> String {
            try XCTUnwrap(captures.filter { ($0["file"] as? String)?.hasPrefix(prefix) == true }.compactMap { $0["capturedAt"] as? String }.max())
        }
        XCTAssertEqual(metadata.stdout, "source.pages.captured|\(try newest("site/pages/"))\nsource.pages.urls|3\nsource.stops.captured|\(try newest("site/stops.txt"))\nsource.stops.urls|1\n")
    }

    func testExtractShowsTheURLAFetchedFileCameFrom() throws {
        let folder = try pipeline()
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let captured = try XCTUnwrap(try record(folder).first { $0["file"] as? String == "site/stops.txt" }?["capturedAt"] as? String)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("site/stops.txt"), to: file("copy.txt"))
        let table = try kiln("extract", "stops", "pipe/site/stops.txt", "copy.txt", "--manifest", "pipe")
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertTrue(table.stdout.hasSuffix("\npipe/site/stops.txt was fetched from \(site.url("/stops.txt")), captured \(captured)\n"), table.stdout)
        XCTAssertFalse(table.stdout.contains("copy.txt was fetched"), table.stdout)
        let json = try kiln("extract", "stops", "pipe/site/stops.txt", "--manifest", "pipe", "--format", "json")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let fetched = try XCTUnwrap(object["fetched"] as? [String: [String: String]])
        XCTAssertEqual(fetched, ["pipe/site/stops.txt": ["url": site.url("/stops.txt"), "capturedAt": captured]])
    }

    func testARefreshIsConditionalLeavesTheFilesAndBuildsTheSameBytes() throws {
        let folder = try pipeline()
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        XCTAssertEqual(try kiln("build", "pipe", "--out", "first/ft.sqlite").status, 0)
        let before = try record(folder)
        let inode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("site/stops.txt").path)[.systemFileNumber] as? Int
        try site.clearLog()
        Thread.sleep(forTimeInterval: 1.1)
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.hasPrefix("fetched 0, unchanged 4, failed 0"), run.stdout)
        // Every URL asked with both validators of its capture, and answered 304.
        let requests = try site.requests().filter { $0.path != "/robots.txt" }
        XCTAssertEqual(requests.count, 4)
        for request in requests {
            let capture = try XCTUnwrap(before.first { ($0["url"] as? String) == site.url(request.path) })
            XCTAssertEqual(request.headers["If-None-Match"], capture["etag"] as? String, request.path)
            XCTAssertEqual(request.headers["If-Modified-Since"], capture["lastModified"] as? String, request.path)
        }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("site/stops.txt").path)[.systemFileNumber] as? Int, inode)
        let after = try record(folder)
        XCTAssertEqual(after.map { $0["capturedAt"] as? String }, before.map { $0["capturedAt"] as? String })
        XCTAssertNotEqual(after.map { $0["verifiedAt"] as? String }, before.map { $0["verifiedAt"] as? String })
        // Nothing new: the same bundle, and the build cache still answers.
        let rebuild = try kiln("build", "pipe", "--out", "first/ft.sqlite")
        XCTAssertEqual(rebuild.status, 0)
        XCTAssertTrue(rebuild.stderr.hasPrefix("up to date: first/ft.sqlite (bundle ft); nothing changed since the last build"), rebuild.stderr)
        XCTAssertEqual(try kiln("build", "pipe", "--out", "second/ft.sqlite", "--no-cache").status, 0)
        XCTAssertEqual(try sha256("first/ft.sqlite"), try sha256("second/ft.sqlite"))
    }

    func testRequestsToOneHostAreSpacedAndRobotsDisallowedURLsAreNeverRequested() throws {
        try site.serve("private/secret.txt", "no;0999;0;0\n")
        let folder = try pipeline(fetch: "delay: 0.4, concurrency: 1", extra: ["/private/secret.txt"])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("refused by robots.txt 1"), run.stdout)
        XCTAssertTrue(run.stdout.contains("[fetch.disallowed]"), run.stdout)
        let requests = try site.requests()
        XCTAssertFalse(requests.contains { $0.path.hasPrefix("/private") })
        XCTAssertEqual(requests.count, 5)
        for (earlier, later) in zip(requests, requests.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later.time - earlier.time, 0.38, "\(earlier.path) → \(later.path)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/secret.txt").path))
    }

    func testManyURLsWaitingOnOneRobotsTxtMakeNoDisallowedRequest() throws {
        try site.serve("robots.txt", "User-agent: *\nDisallow: /pages/p1\nCrawl-delay: 0\n")
        let extra = (4...16).map { "/pages/q\($0).txt" }
        for path in extra { try site.serve(path, "x;09\(path.filter(\.isNumber));0;0\n") }
        try pipeline(fetch: "delay: 0, concurrency: 16", extra: extra)
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1)
        let requests = try site.requests()
        XCTAssertEqual(requests.first?.path, "/robots.txt")
        XCTAssertEqual(requests.filter { $0.path == "/robots.txt" }.count, 1)
        XCTAssertFalse(requests.contains { $0.path == "/pages/p1.txt" })
        XCTAssertEqual(requests.count, 1 + 16)
    }

    func testRobotsTxtAnsweredWith5xxDisallowsTheHostAnd404AllowsIt() throws {
        try site.route(["/robots.txt": ["status": 500, "body": "down"]])
        try pipeline()
        let refused = try kiln("fetch", "pipe")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains("refused by robots.txt 4"), refused.stdout)
        XCTAssertEqual(try site.requests().map(\.path), ["/robots.txt"])
        try site.route(["/robots.txt": ["status": 404, "body": "none"]])
        let allowed = try kiln("fetch", "pipe")
        XCTAssertEqual(allowed.status, 0, allowed.stdout)
    }

    func testRetryAfterInSecondsAndAsADateIsWaitedFor() throws {
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.timeZone = TimeZone(identifier: "GMT")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let retryAt = Date().addingTimeInterval(4)
        try site.route([
            "/stops.txt": ["sequence": [["status": 503, "headers": ["Retry-After": "2"], "body": "busy"], [:]]],
            "/pages/p1.txt": ["sequence": [["status": 429, "headers": ["Retry-After": date.string(from: retryAt)], "body": "slow down"], [:]]],
        ])
        try pipeline()
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout)
        let requests = try site.requests()
        let stops = requests.filter { $0.path == "/stops.txt" }.map(\.time)
        XCTAssertEqual(stops.count, 2)
        XCTAssertGreaterThanOrEqual(stops[1] - stops[0], 1.9, "Retry-After: 2 waited for")
        // A date is a moment, not a wait: the retry comes no earlier than the date (to its second), however long
        // the fetch took to start.
        let page = requests.filter { $0.path == "/pages/p1.txt" }.map(\.time)
        XCTAssertEqual(page.count, 2)
        XCTAssertGreaterThanOrEqual(page[1], retryAt.timeIntervalSince1970.rounded(.down) - 0.1, "Retry-After as a date waited for")
    }

    func testAFailedResponseKeepsTheEarlierCopyAndSaysWhy() throws {
        let folder = try pipeline(fetch: "delay: 0, retries: 1, timeout: 3")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let saved = try Data(contentsOf: folder.appendingPathComponent("site/pages/p1.txt"))
        let record = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        // A new body is needed for the checks to apply: change every page, then make each response bad.
        for number in 1...3 { try site.serve("pages/p\(number).txt", String(repeating: "changed \(number);0;0;0\n", count: 3)) }
        try site.serve("stops.txt", "x\n")
        try site.route([
            "/pages/p1.txt": ["status": 500, "body": "error page"],
            "/pages/p2.txt": ["truncate": true],
            "/pages/p3.txt": ["headers": ["Content-Type": "image/png"]],
        ])
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.hasPrefix("fetched 0, unchanged 0, failed 4"), run.stdout)
        XCTAssertTrue(run.stdout.contains("pages/p1.txt: HTTP 500 (after 2 attempts); the earlier copy of site/pages/p1.txt is kept [fetch.kept]"), run.stdout)
        XCTAssertTrue(run.stdout.contains("image/png, which does not fit the source"), run.stdout)
        XCTAssertTrue(run.stdout.contains("less than 50% of the saved copy"), run.stdout)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/pages/p1.txt")), saved)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json")), record)
        // No temporary file is left beside the saved ones.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("site/pages").path).sorted()
        XCTAssertEqual(left, ["p1.txt", "p2.txt", "p3.txt"])
    }

    func testAURLWithoutAnEarlierCopyThatFailsIsAnError() throws {
        let folder = try pipeline(fetch: "delay: 0, retries: 0", extra: ["/pages/missing.txt"])
        let run = try kiln("fetch", "pipe", "--format", "github")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("::error file=pipe/site/pages/missing.txt,title=fetch.failed::\(site.url("/pages/missing.txt"))%3A HTTP 404".replacingOccurrences(of: "%3A", with: ":")), run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/missing.txt").path))
        XCTAssertFalse(try record(folder).contains { ($0["file"] as? String) == "site/pages/missing.txt" })
        let build = try kiln("build", "pipe", "--out", "out/ft.sqlite")
        XCTAssertEqual(build.status, 0, build.stdout)
    }

    func testRedirectsAreFollowedWithinTheirLimitAndOnlyToHTTP() throws {
        try site.route([
            "/pages/p1.txt": ["redirect": site.url("/moved/p1.txt")],
            "/moved/p1.txt": ["body": "Moved;0201;0;0\n", "headers": ["Content-Type": "text/plain"]],
            "/pages/p2.txt": ["redirect": site.url("/loop/a")],
            "/loop/a": ["redirect": site.url("/loop/b")],
            "/loop/b": ["redirect": site.url("/loop/a")],
            "/pages/p3.txt": ["redirect": "ftp://127.0.0.1/p3.txt"],
        ])
        let folder = try pipeline(fetch: "delay: 0, maxRedirects: 4")
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p1.txt"), encoding: .utf8), "Moved;0201;0;0\n")
        XCTAssertEqual(try record(folder).first { ($0["file"] as? String) == "site/pages/p1.txt" }?["finalURL"] as? String, site.url("/moved/p1.txt"))
        XCTAssertTrue(run.stdout.contains("more than 4 redirects"), run.stdout)
        XCTAssertTrue(run.stdout.contains("kiln fetch speaks http and https only"), run.stdout)
        XCTAssertEqual(try site.requests().filter { $0.path.hasPrefix("/loop") }.count, 4)
    }

    func testARedirectIsCheckedAgainstTheRobotsTxtOfWhereItLeadsReadOncePerOrigin() throws {
        // A second origin (another port), whose robots.txt disallows /secret; the first disallows /private.
        let other = try TestSite(root: file("other"), folder: file("other-state"))
        defer { other.stop() }
        try other.serve("robots.txt", "User-agent: *\nDisallow: /secret\n")
        try other.serve("open/p2.txt", "Elsewhere;0202;0;0\n")
        try other.serve("secret/p3.txt", "no;0999;0;0\n")
        try site.serve("private/p1.txt", "no;0999;0;0\n")
        try site.route([
            "/pages/p1.txt": ["redirect": site.url("/private/p1.txt")],
            "/pages/p2.txt": ["redirect": other.url("/open/p2.txt")],
            "/pages/p3.txt": ["redirect": other.url("/secret/p3.txt")],
        ])
        let folder = try pipeline(fetch: "delay: 0, concurrency: 1")
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stdout.contains("a redirect led to \(site.url("/private/p1.txt")), which its robots.txt disallows"), run.stdout)
        XCTAssertTrue(run.stdout.contains("a redirect led to \(other.url("/secret/p3.txt")), which its robots.txt disallows"), run.stdout)
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("site/pages/p2.txt"), encoding: .utf8), "Elsewhere;0202;0;0\n")
        // Nothing disallowed is requested; each origin's robots.txt is read once, the first's before any URL, the
        // second's when the first redirect reaches it, and its rules serve the second redirect too.
        let first = try site.requests().map(\.path)
        XCTAssertEqual(first.first, "/robots.txt")
        XCTAssertEqual(first.filter { $0 == "/robots.txt" }.count, 1)
        XCTAssertFalse(first.contains { $0.hasPrefix("/private") }, "\(first)")
        let second = try other.requests().map(\.path)
        XCTAssertEqual(second.first, "/robots.txt")
        XCTAssertEqual(second.filter { $0 == "/robots.txt" }.count, 1, "\(second)")
        XCTAssertEqual(Set(second), ["/robots.txt", "/open/p2.txt"])
        for refused in ["site/pages/p1.txt", "site/pages/p3.txt"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent(refused).path), refused)
        }
    }

    func testARedirectFromAPublicHostToANonPublicAddressIsRefusedBeforeAnyRequestReachesIt() throws {
        // Every server here is on loopback: the fetch is told that this site's port is public, so that a redirect
        // from it to a second loopback server goes from a public host to a non-public address.
        let inner = try TestSite(root: file("inner"), folder: file("inner-state"))
        defer { inner.stop() }
        try inner.serve("robots.txt", "User-agent: *\nAllow: /\n")
        try inner.serve("secret.txt", "Secret;0999;0;0\n")
        let port = try XCTUnwrap(URLComponents(string: site.origin)?.port)
        var options = FetchOptions()
        options.isNonPublic = { address, to in to != port && HTTPClient.isNonPublic(address) }
        // Robots obeyed, the target's robots.txt is the first request refused; ignored, the redirect itself is.
        for robots in ["", ", robots: \"ignore\", reason: \"the tests' own site\""] {
            try site.route([:])
            let folder = try pipeline(fetch: "delay: 0" + robots)
            XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
            let saved = try Data(contentsOf: folder.appendingPathComponent("site/pages/p1.txt"))
            try site.serve("pages/p1.txt", "Αλλαγή;0101;21.7;38.2\n")
            try site.route(["/pages/p1.txt": ["redirect": inner.url("/secret.txt")]])
            let plan = try FetchPlan(manifest: try ManifestLoader.load(folder.path, resolvingInputs: false).manifest)
            let report = try Fetcher.runInRounds(plan, options: options)
            let result = try XCTUnwrap(report.results.first { $0.file == "site/pages/p1.txt" })
            XCTAssertEqual(result.outcome, .failed, robots)
            XCTAssertTrue(result.reason?.contains("a redirect from a public host led to a non-public address: the connection would go to the non-public address 127.0.0.1") == true, result.reason ?? "")
            XCTAssertTrue(result.keptPrevious, robots)
            XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/pages/p1.txt")), saved)
            XCTAssertEqual(try inner.requests().map(\.path), [], robots)
            // The other URLs of the fetch went on as usual.
            XCTAssertEqual(report.results.filter { $0.outcome == .unchanged }.count, 3, robots)
            try site.serve("pages/p1.txt", "Κορίνθου 1;0101;21.71;38.21\n")
        }
    }

    func testCompressedBodiesAreDecodedOnceAndABombStops() throws {
        try site.route(["/pages/p1.txt": ["gzip": true], "/pages/p2.txt": ["bomb": 50_000_000]])
        let folder = try pipeline(fetch: "delay: 0, maxBytes: \"1 MB\"")
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/pages/p1.txt")), try Data(contentsOf: site.root.appendingPathComponent("pages/p1.txt")))
        XCTAssertTrue(run.stdout.contains("larger than 1000000 bytes once decoded"), run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("site/pages/p2.txt").path))
    }

    func testAStallAndAResetFailWithinTheTimeLimit() throws {
        try site.route(["/pages/p1.txt": ["stall": 30], "/pages/p2.txt": ["reset": true]])
        try pipeline(fetch: "delay: 0, retries: 1, timeout: 2")
        let started = Date()
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 1)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
        XCTAssertTrue(run.stdout.contains("p1.txt: Operation timed out"), run.stdout)
        XCTAssertGreaterThanOrEqual(try site.requests().filter { $0.path == "/pages/p2.txt" }.count, 2)
    }

    func testTheBuildChecksFetchedFilesAndNamesTheirURLs() throws {
        let folder = try pipeline()
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        try Data("Κορίνθου 2;0102;21.72;38.22\nbroken line\n".utf8).write(to: folder.appendingPathComponent("site/pages/p2.txt"))
        let github = try kiln("build", "pipe", "--out", "out/ft.sqlite", "--format", "github")
        XCTAssertEqual(github.status, 1)
        let url = site.url("/pages/p2.txt")
        XCTAssertTrue(github.stdout.contains("::warning file=pipe/site/pages/p2.txt,title=fetch.edited::site/pages/p2.txt differs from the bytes captured from \(url)"), github.stdout + github.stderr)
        XCTAssertTrue(github.stdout.contains("line=2,title=parse::") && github.stdout.contains("(fetched from \(url))"), github.stdout)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/ft.report.json"))) as? [String: Any])
        let findings = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(Set(findings.compactMap { $0["url"] as? String }), [url])
        // The HTML report links each fetched file's finding and input row to its URL, with status, capture and rows.
        XCTAssertEqual(try kiln("report", "out/ft.report.json").status, 0)
        let html = try String(contentsOf: file("out/ft.report.html"), encoding: .utf8)
        XCTAssertTrue(html.contains("<a class=\"place url\" href=\"\(url)\" rel=\"noreferrer\">"), html)
        XCTAssertTrue(html.contains("<th>fetched from</th><th>status</th><th>captured</th>"), html)
        XCTAssertTrue(html.contains("<td><a class=\"url\" href=\"\(site.url("/stops.txt"))\" rel=\"noreferrer\"><code>\(site.url("/stops.txt"))</code></a></td><td class=\"n\">200</td>"), html)
        let junit = try kiln("build", "pipe", "--out", "out/ft.sqlite", "--format", "junit")
        XCTAssertTrue(junit.stdout.contains("(fetched from \(url))"), junit.stdout)
        // A captured file that is gone is an error; a file no capture lists is said once per source.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("site/pages/p2.txt"))
        try Data("Extra;0999;0;0\n".utf8).write(to: folder.appendingPathComponent("site/pages/extra.txt"))
        let text = try kiln("build", "pipe", "--out", "out/ft.sqlite", "--quiet")
        XCTAssertEqual(text.status, 1)
        let output = text.stdout + text.stderr
        XCTAssertTrue(output.contains("site/pages/p2.txt: error: site/pages/p2.txt, captured from \(url)"), output)
        XCTAssertTrue(output.contains("[fetch.missing]"), output)
        let codes = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/ft.report.json"))) as? [String: Any])?["diagnostics"] as? [[String: Any]])
        XCTAssertTrue(codes.contains { $0["code"] as? String == "fetch.uncaptured" && $0["file"] as? String == "site/pages/extra.txt" && $0["url"] == nil }, "\(codes)")
    }

    func testRowsCanCarryTheURLAndCaptureTimeOfTheirFile() throws {
        let folder = try pipeline()
        let manifest = try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: "{ name: \"name\", type: \"text\" } ]", with: "{ name: \"name\", type: \"text\" }, { name: \"url\", type: \"text\" }, { name: \"captured\", type: \"text\" } ]")
            .replacingOccurrences(of: "columns: { code: \"code\", name: \"name\" }", with: "columns: { code: \"code\", name: \"name\", url: \"_url\", captured: \"_captured\" }")
        try manifest.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let build = try kiln("build", "pipe", "--out", "out/ft.sqlite")
        XCTAssertEqual(build.status, 0, build.stderr)
        let rows = try program("/usr/bin/sqlite3", [file("out/ft.sqlite").path, "SELECT code, url, captured FROM stop ORDER BY code"]).stdout
        var expected = ""
        let captures = try record(folder)
        for (code, path) in [("0101", "/pages/p1.txt"), ("0102", "/pages/p2.txt"), ("0103", "/pages/p3.txt"), ("0104", "/stops.txt"), ("0105", "/stops.txt")] {
            let capture = try XCTUnwrap(captures.first { ($0["url"] as? String) == site.url(path) })
            expected += "\(code)|\(site.url(path))|\(capture["capturedAt"] as? String ?? "")\n"
        }
        XCTAssertEqual(rows, expected)
    }

    func testAPageThatGaveRowsAndGivesNoneFailsTheBuildUntilItGivesRowsAgain() throws {
        try pipeline(pagesFetch: ", minSizeShare: \"0%\"")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        XCTAssertEqual(try kiln("build", "pipe", "--out", "out/ft.sqlite").status, 0)
        let before = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/ft.report.json"))) as? [String: Any])?["fetched"] as? [String: [String: Any]])
        XCTAssertEqual(before["site/pages/p2.txt"]?["rows"] as? Int, 1)
        let firstCapture = try XCTUnwrap(before["site/pages/p2.txt"]?["capturedAt"] as? String)
        // The site's new layout: the page is there, whole and of the right type, but holds nothing the source reads.
        Thread.sleep(forTimeInterval: 1.1)
        try site.serve("pages/p2.txt", "\n")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let url = site.url("/pages/p2.txt")
        for attempt in 1...2 {
            let run = try kiln("build", "pipe", "--out", "out/ft.sqlite", "--format", "github")
            XCTAssertEqual(run.status, 1, "attempt \(attempt): \(run.stdout)")
            XCTAssertTrue(run.stdout.contains("::error file=pipe/site/pages/p2.txt,title=fetch.no-rows::\(url) gave 1 rows in the last build (bytes captured \(firstCapture)) and none now"), run.stdout)
        }
        // The page gives rows again: the build passes.
        try site.serve("pages/p2.txt", "Κορίνθου 2;0102;21.72;38.22\n")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        XCTAssertEqual(try kiln("build", "pipe", "--out", "out/ft.sqlite").status, 0)
    }

    /// A fetch killed with SIGKILL leaves the body it was writing as `.<name>.<pid>.tmp`; the next fetch removes it, and
    /// leaves alone the temporary file of a process still running and a dump's part kept for resuming.
    func testTheNextFetchRemovesWhatAKilledFetchLeftBehind() throws {
        let folder = try pipeline()
        let pages = folder.appendingPathComponent("site/pages")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let dead = pages.appendingPathComponent(".p1.txt.\(ended.processIdentifier).tmp")
        let live = pages.appendingPathComponent(".p2.txt.\(ProcessInfo.processInfo.processIdentifier).tmp")
        let partial = pages.appendingPathComponent(".p3.txt.partial")
        let unrelated = pages.appendingPathComponent(".notes.\(ended.processIdentifier).tmp")
        for leftover in [dead, live, partial, unrelated] { try Data("half a page".utf8).write(to: leftover) }
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead.path), "a dead fetch's temporary file stays")
        for kept in [live, partial, unrelated] { XCTAssertTrue(FileManager.default.fileExists(atPath: kept.path), kept.lastPathComponent) }
    }

    /// CI on a fresh clone has no last report, only the shipped bundle as baseline: the bundle records what each
    /// fetched page gave, and a page that gave rows there and none now fails the build.
    func testAPageThatGaveRowsInTheBaselineBundleAndNoneNowFailsAFreshBuild() throws {
        try pipeline(pagesFetch: ", minSizeShare: \"0%\"")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        XCTAssertEqual(try kiln("build", "pipe", "--out", "shipped/ft.sqlite").status, 0)
        let recorded = try program("/usr/bin/sqlite3", [file("shipped/ft.sqlite").path, "SELECT value FROM kiln_metadata WHERE key = 'fetched.site/pages/p2.txt'"])
        let yield = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(recorded.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(yield["rows"] as? Int, 1)
        XCTAssertEqual(yield["url"] as? String, site.url("/pages/p2.txt"))
        let firstCapture = try XCTUnwrap(yield["capturedAt"] as? String)
        Thread.sleep(forTimeInterval: 1.1)
        try site.serve("pages/p2.txt", "\n")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        // Another output: no report of a last build there.
        let run = try kiln("build", "pipe", "--out", "fresh/ft.sqlite", "--baseline", "shipped/ft.sqlite", "--format", "github")
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("title=fetch.no-rows::\(site.url("/pages/p2.txt")) gave 1 rows in the baseline shipped/ft.sqlite (bytes captured \(firstCapture)) and none now"), run.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("fresh/ft.sqlite").path))
        // Without the baseline nothing says the page gave rows before: the build passes.
        XCTAssertEqual(try kiln("build", "pipe", "--out", "other/ft.sqlite").status, 0)
    }

    /// The digest of the site's file `path` by `tool` (sha1sum, sha256sum).
    private func digest(_ path: String, _ tool: String = "sha1sum") throws -> String {
        try program("/usr/bin/\(tool)", [site.root.appendingPathComponent(path).path]).stdout.split(separator: " ").first.map(String.init) ?? ""
    }

    /// Serves `lines` as the dump `/dumps/stops-dump.txt` with its SHA-1 in `/dumps/sha1sums.txt`.
    private func serveDump(_ lines: String) throws {
        try site.serve("dumps/stops-dump.txt", lines)
        try site.serve("dumps/sha1sums.txt", "\(String(repeating: "0", count: 40))  other-dump.txt\n\(try digest("dumps/stops-dump.txt"))  stops-dump.txt\n")
    }

    /// A pipeline `dump` fetching the dump against its checksum file, saved as `data/stops-dump.txt`.
    private func dumpPipeline() throws -> URL {
        try writePipeline("dump", manifest: """
            { bundle: "dump", schemaVersion: 1, fetch: { delay: 0, retries: 0 },
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text" }], primaryKey: ["code"] }],
              sources: [{ name: "dump", format: "delimited", path: "data/stops-dump.txt",
                          fetch: { url: "\(site.url("/dumps/stops-dump.txt"))",
                                   checksum: { url: "\(site.url("/dumps/sha1sums.txt"))", algorithm: "sha1" } },
                          options: { fields: ["name", "code", "lon", "lat"] }, into: "stop", columns: { code: "code", name: "name" } }] }
            """)
    }

    /// The bytes a broken transfer kept in `partial` to resume from (more than none).
    private func keptBytes(_ partial: URL) throws -> Int {
        let kept = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int)
        XCTAssertGreaterThan(kept, 0)
        return kept
    }

    /// Runs `kiln fetch dump`, which must succeed, and returns the site's request for the dump.
    private func fetchDump() throws -> TestSite.Request {
        try site.clearLog()
        let run = try kiln("fetch", "dump")
        XCTAssertEqual(run.status, 0, run.stdout)
        return try XCTUnwrap(try site.requests().first { $0.path == "/dumps/stops-dump.txt" })
    }

    func testADumpIsResumedAfterABrokenTransferAndKeptOnlyWithItsPublishedChecksum() throws {
        let lines = (0..<20_000).map { "Στάση \($0);\(String(format: "%05d", $0));21.7;38.2\n" }.joined()
        try serveDump(lines)
        let folder = try dumpPipeline()
        let saved = folder.appendingPathComponent("data/stops-dump.txt"), partial = folder.appendingPathComponent("data/.stops-dump.txt.partial")
        // A transfer cut at 40 %: nothing replaces the (absent) file, and what arrived is kept to resume.
        try site.route(["/dumps/stops-dump.txt": ["cut": 0.4]])
        let broken = try kiln("fetch", "dump")
        XCTAssertEqual(broken.status, 1, broken.stdout)
        XCTAssertTrue(broken.stdout.contains("bytes kept to resume"), broken.stdout)
        let kept = try keptBytes(partial)
        XCTAssertFalse(FileManager.default.fileExists(atPath: saved.path))
        // The next fetch asks for the rest only, and keeps the whole once its SHA-1 is the published one.
        try site.route([:])
        XCTAssertEqual(try fetchDump().headers["Range"], "bytes=\(kept)-")
        XCTAssertEqual(try Data(contentsOf: saved), Data(lines.utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path))
        XCTAssertEqual(try record(folder).first?["status"] as? Int, 206)
        // Nothing changed: the checksum file says so, and the dump is not requested.
        try site.clearLog()
        let again = try kiln("fetch", "dump")
        XCTAssertTrue(again.stdout.hasPrefix("fetched 0, unchanged 1"), again.stdout)
        XCTAssertEqual(try site.requests().map(\.path), ["/robots.txt", "/dumps/sha1sums.txt"])
        // A new dump that does not match its published checksum is not kept; the earlier copy stays.
        try site.serve("dumps/stops-dump.txt", lines + "Νέα;99999;0;0\n")
        let published = String(repeating: "1", count: 40)
        try site.serve("dumps/sha1sums.txt", "\(published)  stops-dump.txt\n")
        let wrong = try kiln("fetch", "dump")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stdout.contains("the download's sha1 is \(try digest("dumps/stops-dump.txt")), not the \(published) that \(site.url("/dumps/sha1sums.txt")) publishes: it is not kept; the earlier copy of data/stops-dump.txt is kept [fetch.kept]"), wrong.stdout)
        XCTAssertEqual(try Data(contentsOf: saved), Data(lines.utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path))
        XCTAssertEqual(try kiln("build", "dump", "--out", "out/dump.sqlite").status, 0)
    }

    func testADumpFromAServerWithoutETagsIsResumedOnlyWhileItsLastModifiedHolds() throws {
        let lines = (0..<20_000).map { "Στάση \($0);\(String(format: "%05d", $0));21.7;38.2\n" }.joined()
        try serveDump(lines)
        let folder = try dumpPipeline()
        let saved = folder.appendingPathComponent("data/stops-dump.txt"), partial = folder.appendingPathComponent("data/.stops-dump.txt.partial")
        // No ETag; a Last-Modified long before the response's Date, so a strong validator (RFC 9110, 8.8.2.2).
        let modified = "Sun, 01 Mar 2026 10:00:00 GMT", later = "Mon, 02 Mar 2026 10:00:00 GMT"
        try site.route(["/dumps/stops-dump.txt": ["noValidators": true, "headers": ["Last-Modified": modified], "cut": 0.4]])
        XCTAssertEqual(try kiln("fetch", "dump").status, 1)
        let kept = try keptBytes(partial)
        // The same file: the resume asks for the rest while the file is the one of that date, and gets it.
        try site.route(["/dumps/stops-dump.txt": ["noValidators": true, "headers": ["Last-Modified": modified]]])
        let request = try fetchDump()
        XCTAssertEqual(request.headers["Range"], "bytes=\(kept)-")
        XCTAssertEqual(request.headers["If-Range"], modified)
        XCTAssertEqual(try record(folder).first?["status"] as? Int, 206)
        XCTAssertEqual(try Data(contentsOf: saved), Data(lines.utf8))
        // Broken again on a new dump, which is then replaced by a newer one: its date no longer holds, and the
        // server's whole file is what is kept.
        let second = lines + "Νέα;99998;0;0\n", third = lines + "Νεότερη;99999;0;0\n"
        try serveDump(second)
        try site.route(["/dumps/stops-dump.txt": ["noValidators": true, "headers": ["Last-Modified": modified], "cut": 0.4]])
        XCTAssertEqual(try kiln("fetch", "dump").status, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path))
        try serveDump(third)
        try site.route(["/dumps/stops-dump.txt": ["noValidators": true, "headers": ["Last-Modified": later]]])
        XCTAssertEqual(try fetchDump().headers["If-Range"], modified)
        XCTAssertEqual(try record(folder).first?["status"] as? Int, 200)
        XCTAssertEqual(try Data(contentsOf: saved), Data(third.utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path))
    }

    func testADumpThatChangedOnTheServerSinceABrokenTransferIsTakenWholeAgain() throws {
        let lines = (0..<20_000).map { "Στάση \($0);\(String(format: "%05d", $0));21.7;38.2\n" }.joined()
        try serveDump(lines)
        // The site's ETag: the first 16 hexadecimal digits of the body's SHA-256, quoted.
        let etag = "\"\(try digest("dumps/stops-dump.txt", "sha256sum").prefix(16))\""
        let folder = try dumpPipeline()
        let saved = folder.appendingPathComponent("data/stops-dump.txt"), partial = folder.appendingPathComponent("data/.stops-dump.txt.partial")
        try site.route(["/dumps/stops-dump.txt": ["cut": 0.4]])
        let broken = try kiln("fetch", "dump")
        XCTAssertEqual(broken.status, 1, broken.stdout)
        let kept = try keptBytes(partial)
        // A new dump (of the same size) and its checksum are published before the resume.
        let changed = (0..<20_000).map { "Στάση \($0);\(String(format: "%05d", 20_000 - $0));21.8;38.3\n" }.joined()
        try serveDump(changed)
        try site.route([:])
        let request = try fetchDump()
        XCTAssertEqual(request.headers["Range"], "bytes=\(kept)-")
        XCTAssertEqual(request.headers["If-Range"], etag)
        // The server sent the new file whole: it is what is saved, nothing of the old part mixed in.
        XCTAssertEqual(try Data(contentsOf: saved), Data(changed.utf8))
        XCTAssertEqual(try record(folder).first?["status"] as? Int, 200)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("data").path), ["stops-dump.txt"])
    }

    func testAFetchKilledMidwayLeavesTheFilesAndTheRecordAsTheyWere() throws {
        let folder = try pipeline(fetch: "delay: 0, concurrency: 1")
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        let record = try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json"))
        let pages = try (1...3).map { try Data(contentsOf: folder.appendingPathComponent("site/pages/p\($0).txt")) }
        // New pages on the site, the second of which stalls after its first byte: the fetch is killed there.
        for number in 1...3 { try site.serve("pages/p\(number).txt", "Νέα \(number);010\(number);21.7;38.2\n") }
        try site.route(["/pages/p2.txt": ["stall": 30]])
        try site.clearLog()
        let process = try start(["fetch", "pipe"])
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !(try site.requests().contains { $0.path == "/pages/p2.txt" }) { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertTrue(try site.requests().contains { $0.path == "/pages/p2.txt" }, "the fetch reached the stalling page")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("kiln.fetch.json")), record)
        // Every page is whole: the earlier bytes, or (for one renamed before the kill) the new ones.
        for number in 1...3 {
            let now = try Data(contentsOf: folder.appendingPathComponent("site/pages/p\(number).txt"))
            XCTAssertTrue(now == pages[number - 1] || now == Data("Νέα \(number);010\(number);21.7;38.2\n".utf8), "p\(number)")
        }
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("site/pages/p2.txt")), pages[1])
    }

    func testTheBuildAfterAFetchNeedsNoNetwork() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { throw XCTSkip("unshare -n needs root") }
        try pipeline()
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        site.stop()
        let run = try program("/usr/bin/unshare", ["-n", CLITestCase.executable.path, "build", "pipe", "--out", "out/ft.sqlite"])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        // The same command fetching is refused the network there.
        let fetch = try program("/usr/bin/unshare", ["-n", CLITestCase.executable.path, "fetch", "pipe"])
        XCTAssertEqual(fetch.status, 1, fetch.stdout)
    }

    func testADryRunListsTheRequestsAndMakesNone() throws {
        try pipeline()
        XCTAssertEqual(try kiln("fetch", "pipe").status, 0)
        try site.clearLog()
        let run = try kiln("fetch", "pipe", "--dry-run", "--only", "stops")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("GET \(site.url("/stops.txt")) -> site/stops.txt (If-None-Match: \""), run.stdout)
        XCTAssertFalse(run.stdout.contains("p1.txt"), run.stdout)
        XCTAssertEqual(try site.requests().count, 0)
        // With a mirror, each line says where the request would really go.
        let mirrored = try kiln("fetch", "pipe", "--dry-run", "--only", "stops", "--mirror", "\(site.origin)/=http://127.0.0.1:9/staging/")
        XCTAssertTrue(mirrored.stdout.contains("GET \(site.url("/stops.txt")) -> site/stops.txt (requested as http://127.0.0.1:9/staging/stops.txt, If-None-Match: \""), mirrored.stdout)
        XCTAssertEqual(try site.requests().count, 0)
        let unknown = try kiln("fetch", "pipe", "--only", "nothing")
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("no source named \"nothing\"; fetching sources: stops, pages"), unknown.stderr)
    }

    func testHostileURLsNeverBecomePathsOutsideTheFolder() throws {
        let hostile = ["/pages/..%2F..%2F..%2Fescape.txt", "/pages/%2E%2E", "/pages/CON.txt", "/pages/a%00b.txt", "/pages/" + String(repeating: "long", count: 80) + ".txt",
                       "/pages/same.txt?x=1", "/pages/same.txt?x=2"]
        var routes: [String: [String: Any]] = [:]
        for path in hostile { routes[path] = ["body": "h;0900;0;0\n", "headers": ["Content-Type": "text/plain"]] }
        try site.route(routes)
        let folder = try pipeline(fetch: "delay: 0", extra: hostile)
        let written = try writePipeline("pipe", manifest: try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
            .replacingOccurrences(of: "site/pages/*.txt", with: "site/pages/*"))
        let run = try kiln("fetch", "pipe")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: written.appendingPathComponent("site/pages").path).sorted()
        XCTAssertEqual(names.count, 3 + hostile.count, "\(names)")
        for name in names {
            XCTAssertFalse(name.hasPrefix("."), name)
            XCTAssertFalse(name.contains("/") || name.contains("\0"), name)
            XCTAssertLessThanOrEqual(name.utf8.count, 200, name)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("escape.txt").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: written.appendingPathComponent("escape.txt").path))
        XCTAssertTrue(names.contains("_CON.txt"), "\(names)")
    }

    func testTheManifestRefusesFetchedFilesTheBuildWouldNotRead() throws {
        try writePipeline("bad", manifest: """
            { bundle: "b", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }],
              sources: [{ name: "s", format: "delimited", path: "site/*.txt", fetch: { urls: ["https://example.org/a.html"] },
                          options: { fields: ["a"] }, into: "t", columns: { a: "a" } }] }
            """)
        let run = try kiln("fetch", "bad")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("kiln.json5:2: manifest error at sources[0].fetch.urls[0]: \"https://example.org/a.html\" would be saved as \"site/a.html\", which path \"site/*.txt\" does not match"), run.stderr)
        try writePipeline("scheme", manifest: """
            { bundle: "b", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }],
              sources: [{ name: "s", format: "delimited", path: "a.txt", fetch: { url: "file:///etc/passwd" },
                          options: { fields: ["a"] }, into: "t", columns: { a: "a" } }] }
            """)
        let scheme = try kiln("fetch", "scheme")
        XCTAssertEqual(scheme.status, 64)
        XCTAssertTrue(scheme.stderr.contains("is a file URL; kiln fetch speaks http and https only"), scheme.stderr)
        let build = try kiln("build", "scheme")
        XCTAssertEqual(build.status, 64)
    }
}
