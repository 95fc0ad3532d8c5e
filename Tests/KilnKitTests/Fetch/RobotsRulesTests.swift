import Foundation
import XCTest
import KilnTestSupport
@testable import KilnFetch

/// robots.txt as RFC 9309 reads it, compared with Protego (the parser Scrapy uses) on generated files and URLs, and
/// on the RFC's own cases where Protego and the RFC part ways.
final class RobotsRulesTests: KilnTestCase {
    /// Generated robots.txt files (groups for the crawler, for `*` and for others; allow and disallow lines with `*`,
    /// `$`, percent escapes and non-ASCII paths; comments; crawl-delay) against generated URLs, both readers agreeing.
    func testAgreesWithProtegoOnGeneratedFilesAndURLs() throws {
        var random = SeededGenerator(seed: 9309)
        let segments = ["a", "b", "shop", "private", "p%C3%A4ge", "päge", "x.html", "y.php", "index.html", "img", "A", "q"]
        let agents = ["*", "PatrasBus-data", "patrasbus-data", "OtherBot", "Googlebot"]
        func path() -> String {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in segments.randomElement(using: &random)! }.joined(separator: "/")
        }
        func pattern() -> String {
            var text = "/" + (Bool.random(using: &random) ? path() : "")
            if Int.random(in: 0..<4, using: &random) == 0 { text += "*" }
            if Int.random(in: 0..<4, using: &random) == 0 { text += [".php", ".html", "/"].randomElement(using: &random)! }
            if Int.random(in: 0..<5, using: &random) == 0 { text += "$" }
            return text
        }
        var cases: [[String: Any]] = []
        var robotsFiles: [String] = []
        var urlLists: [[String]] = []
        for _ in 0..<200 {
            var text = ""
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                text += "User-agent: \(agents.randomElement(using: &random)!)\n"
                if Bool.random(using: &random) { text += "# a comment\n" }
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    text += "\(Bool.random(using: &random) ? "Allow" : "Disallow"): \(pattern())\n"
                }
                text += "\n"
            }
            let urls = (0..<10).map { _ in "https://example.org/" + path() + (Int.random(in: 0..<5, using: &random) == 0 ? "?q=1" : "") }
            robotsFiles.append(text)
            urlLists.append(urls)
            cases.append(["robots": text, "agent": "PatrasBus-data/2 (+mailto:data@example.org)", "urls": urls])
        }
        let input = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let answers = try XCTUnwrap(try JSONSerialization.jsonObject(with: try PythonOracle.run("robots.py", [], input: input)) as? [[String: Any]])
        XCTAssertEqual(answers.count, cases.count)
        var compared = 0, disallowed = 0
        for (index, answer) in answers.enumerated() {
            let rules = RobotsRules(parsing: robotsFiles[index], agent: "PatrasBus-data")
            let expected = try XCTUnwrap(answer["allowed"] as? [Bool])
            for (url, allowed) in zip(urlLists[index], expected) {
                XCTAssertEqual(rules.allows(url), allowed, "\(url) under\n\(robotsFiles[index])")
                compared += 1
                if !allowed { disallowed += 1 }
            }
        }
        XCTAssertEqual(compared, 2000)
        // The draw covers both answers well.
        XCTAssertGreaterThan(disallowed, 200)
        XCTAssertLessThan(disallowed, 1800)
    }

    /// Crawl-delay is read from the group that applies, as Protego reads it.
    func testCrawlDelayOfTheMatchingGroup() throws {
        let text = "User-agent: *\nCrawl-delay: 2\nDisallow: /x\n\nUser-agent: PatrasBus-data\nCrawl-delay: 5\nDisallow: /y\n"
        let input = String(decoding: try JSONSerialization.data(withJSONObject: [["robots": text, "agent": "PatrasBus-data/2", "urls": ["https://e.org/x", "https://e.org/y"]]]), as: UTF8.self)
        let answer = try XCTUnwrap((try JSONSerialization.jsonObject(with: try PythonOracle.run("robots.py", [], input: input)) as? [[String: Any]])?.first)
        let rules = RobotsRules(parsing: text, agent: "PatrasBus-data")
        XCTAssertEqual(rules.crawlDelay, answer["crawlDelay"] as? Double)
        XCTAssertEqual([rules.allows("https://e.org/x"), rules.allows("https://e.org/y")], answer["allowed"] as? [Bool])
    }

    /// RFC 9309's own rules: the longest match decides, allow wins a tie, /robots.txt is always allowed, groups for
    /// one agent are merged, and an empty Disallow allows everything (section 2.2.2 and 5.2's examples).
    func testTheRFCsExamples() {
        let rules = RobotsRules(parsing: """
            User-agent: ExampleBot
            Allow: /example/page/
            Disallow: /example/page/disallowed.gif
            Allow: /publications/
            Disallow: /publications/*.pdf$

            User-agent: *
            Disallow: /
            """, agent: "ExampleBot")
        XCTAssertTrue(rules.allows(path: "/example/page/"))
        XCTAssertFalse(rules.allows(path: "/example/page/disallowed.gif"))
        XCTAssertTrue(rules.allows(path: "/publications/a.pdf.html"))
        XCTAssertFalse(rules.allows(path: "/publications/a.pdf"))
        XCTAssertTrue(rules.allows(path: "/robots.txt"))
        XCTAssertTrue(RobotsRules(parsing: "User-agent: *\nAllow: /p\nDisallow: /p\n", agent: "x").allows(path: "/p"))
        XCTAssertTrue(RobotsRules(parsing: "User-agent: *\nDisallow:\n", agent: "x").allows(path: "/anything"))
        let merged = RobotsRules(parsing: "User-agent: a\nDisallow: /one\n\nUser-agent: b\nDisallow: /x\n\nUser-agent: a\nDisallow: /two\n", agent: "a")
        XCTAssertFalse(merged.allows(path: "/one"))
        XCTAssertFalse(merged.allows(path: "/two"))
        XCTAssertTrue(merged.allows(path: "/x"))
        // A percent-encoded and a raw non-ASCII path are the same path.
        XCTAssertFalse(RobotsRules(parsing: "User-agent: *\nDisallow: /päge\n", agent: "x").allows(path: "/p%C3%A4ge"))
        XCTAssertEqual(RobotsRules.productToken(of: "PatrasBus-data/2 (+mailto:data@example.org)"), "PatrasBus-data")
    }
}
