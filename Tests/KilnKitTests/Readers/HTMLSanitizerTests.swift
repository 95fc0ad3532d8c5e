import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `HTMLSanitizer` on hostile and messy markup: what comes out is parsed back with libxml2 and must hold only the
/// shipped subset, with no script reachable.
final class HTMLSanitizerTests: KilnTestCase {
    private let sanitizer = HTMLSanitizer(siteHosts: ["www.mouseio-epistimon.gr"])

    private func sanitize(_ body: String) throws -> HTMLSanitizer.Result {
        let document = try HTMLDocument(fragment: "<html><body>\(body)</body></html>")
        return sanitizer.sanitize(try XCTUnwrap(document.select(XPathExpression("//body")).first))
    }

    /// Every element and attribute of `html`, parsed back with libxml2.
    private func parsedBack(_ html: String) throws -> [(name: String, attributes: [String: String])] {
        let document = try HTMLDocument(fragment: "<html><body>\(html)</body></html>")
        var result: [(String, [String: String])] = []
        func walk(_ node: MarkupNode) {
            guard case .element(let name, let attributes, _, let children) = node else { return }
            result.append((name, attributes))
            children.forEach(walk)
        }
        for body in document.select(try XPathExpression("//body")) {
            if case .element(_, _, _, let children) = body { children.forEach(walk) }
        }
        return result
    }

    func testHostileMarkupLeavesNothingExecutable() throws {
        let hostile = """
            <p onclick="steal()">Κείμενο <a href=" JaVaScRiPt:alert(1)">α</a> <a href="java&#x09;script:alert(2)">β</a>
            <a href="data:text/html,<script>alert(3)</script>">γ</a> <a href="vbscript:x">δ</a></p>
            <img src="x.png" onerror="alert(4)"><img src="javascript:alert(5)"><img src="data:image/png;base64,AAAA">
            <svg><script>alert(6)</script><a href="javascript:alert(7)">ε</a></svg>
            <math><mi xlink:href="javascript:alert(8)">ζ</mi></math>
            <scr<script>ipt>alert(9)</script>
            <p>&lt;script&gt;alert(10)&lt;/script&gt; "quotes" &amp; ampersands</p>
            <iframe srcdoc="<script>alert(11)</script>"></iframe><object data="x.swf"></object><embed src="y">
            <form action="https://evil.example/"><input name="q"><button formaction="javascript:alert(12)">go</button></form>
            <style>body{background:url(javascript:alert(13))}</style><div style="background:url(javascript:alert(14))">θ</div>
            <a href="history.html" onmouseover="x()" title="t">ι</a>
            """
        let result = try sanitize(hostile)
        for element in try parsedBack(result.html) {
            XCTAssertTrue(["p", "a", "img", "br", "strong", "em", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li"].contains(element.name), element.name)
            for (name, value) in element.attributes {
                XCTAssertTrue(["href", "src", "alt", "width", "height", "id"].contains(name), name)
                XCTAssertFalse(value.lowercased().filter { !$0.isWhitespace }.contains("script:"), value)
                XCTAssertFalse(value.lowercased().hasPrefix("data:"), value)
            }
        }
        XCTAssertFalse(result.html.lowercased().contains("<script"), result.html)
        XCTAssertTrue(result.html.contains("&lt;script&gt;alert(10)&lt;/script&gt;"), result.html)
        XCTAssertTrue(result.html.contains("<a href=\"page:history\">ι</a>"), result.html)
        for text in ["Κείμενο", "α", "β", "γ", "δ", "ε", "ζ", "θ", "ι"] { XCTAssertTrue(result.text.contains(text), text) }
        let kinds = result.removals.map(\.kind.rawValue)
        XCTAssertEqual(kinds.filter { $0 == "javascript: link" }.count, 4, "\(result.removals)")
        XCTAssertEqual(kinds.filter { $0 == "link" }.count, 1, "\(result.removals)")
        XCTAssertEqual(kinds.filter { $0 == "event handler" }.count, 3, "\(result.removals)")
        XCTAssertEqual(kinds.filter { $0 == "image" }.count, 2, "\(result.removals)")
    }

    func testLinksAreRewrittenForOfflineUse() throws {
        let cases: [(String, String?)] = [
            ("history.html", "page:history"), ("./History.html#antikythera", "page:history#antikythera"),
            ("/el/contact.html?lang=el", "page:contact"), ("https://www.mouseio-epistimon.gr/el/goals.html#x", "page:goals#x"),
            ("https://www.ecsite.eu/", "https://www.ecsite.eu/"), ("mailto:info@mouseio-epistimon.gr", "mailto:info@mouseio-epistimon.gr"),
            ("tel:+302610996123", "tel:+302610996123"), ("#map", "#map"), ("#", nil), ("ftp://example.org/x", nil), ("file:///etc/passwd", nil),
        ]
        for (href, expected) in cases {
            let result = try sanitize("<p><a href=\"\(href)\">x</a></p>")
            if let expected {
                XCTAssertEqual(result.html, "<p><a href=\"\(expected)\">x</a></p>", href)
            } else {
                XCTAssertEqual(result.html, "<p>x</p>", href)
                XCTAssertEqual(result.removals.count, 1, href)
            }
        }
    }

    /// MediaWiki links as saved pages write them (hrefs taken from Wikipedia and zetawiki pages kept in public
    /// repositories): the script link names its page in `title`, as the `/wiki/` link to the same page would.
    func testMediaWikiScriptLinksTargetTheirTitle() throws {
        let wiki = HTMLSanitizer(siteHosts: ["en.wikivoyage.org"])
        let cases: [(String, HTMLSanitizer.LinkTarget)] = [
            ("/w/index.php?title=Mobile_country_code&action=edit&section=3", .page(slug: "mobile_country_code", fragment: nil)),
            ("/w/index.php?title=Cooling_rack&action=edit&redlink=1", .page(slug: "cooling_rack", fragment: nil)),
            ("/wiki/Cooling_rack", .page(slug: "cooling_rack", fragment: nil)),
            ("/w/index.php?title=특수:계정만들기&returnto=//zetawiki.com/", .page(slug: "특수:계정만들기", fragment: nil)),
            ("/w/index.php?title=%CE%A0%CE%AC%CF%84%CF%81%CE%B1#Get_in", .page(slug: "πάτρα", fragment: "Get_in")),
            ("/wiki/%CE%A0%CE%AC%CF%84%CF%81%CE%B1#Get_in", .page(slug: "πάτρα", fragment: "Get_in")),
            ("/w/index.php?title=Ancient+Olympia", .page(slug: "ancient_olympia", fragment: nil)),
            ("https://en.wikivoyage.org/w/index.php?title=Patras&oldid=4712345", .page(slug: "patras", fragment: nil)),
            ("/wiki/St._Petersburg", .page(slug: "st._petersburg", fragment: nil)),
            ("/wiki/WIND_(Italy)", .page(slug: "wind_(italy)", fragment: nil)),
            ("/w/index.php", .page(slug: "index", fragment: nil)),
            ("contact.html?lang=el", .page(slug: "contact", fragment: nil)),
        ]
        for (href, expected) in cases {
            XCTAssertEqual(try wiki.classify(href).get(), expected, href)
        }
        for href in ["/w/index.php?action=history", "?page=2", "/index.php?title=", "https://en.wikivoyage.org/w/index.php?search=Patras"] {
            guard case .failure(let kind) = wiki.classify(href) else { return XCTFail("\(href) is resolved") }
            XCTAssertEqual(kind, .unresolvedLink, href)
        }
    }

    func testMessyMarkupBecomesParagraphsAndLists() throws {
        let result = try sanitize("""
            <div><font face="Verdana">Πρώτη <b>γραμμή</b></font></div>
            <table><tr><td>Τρίτη</td><td>09:00</td></tr></table>
            <ul><li>ένα<li>δύο</ul><p>ανοιχτό <p>κλειστό
            """)
        XCTAssertEqual(result.html, """
            <p>Πρώτη <strong>γραμμή</strong></p>
            <p>Τρίτη 09:00</p>
            <ul>
            <li>ένα</li>
            <li>δύο</li>
            </ul>
            <p>ανοιχτό</p>
            <p>κλειστό</p>
            """)
        XCTAssertEqual(result.text, "Πρώτη γραμμή\nΤρίτη\n09:00\nένα\nδύο\nανοιχτό\nκλειστό")
        XCTAssertEqual(result.unwrapped["font"], 1)
    }
}
