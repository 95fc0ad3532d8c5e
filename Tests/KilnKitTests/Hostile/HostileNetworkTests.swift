import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Kiln is offline: documents that name URLs in every way XML, HTML and KML allow (external DTDs, external and
/// parameter entities, XInclude, stylesheets, schema locations, links, scripts, images, network links) are read
/// while a listener on 127.0.0.1 counts the connections made to it. There must be none.
final class HostileNetworkTests: HostileTestCase {
    private var listener: LoopbackListener!

    override func setUpWithError() throws {
        try super.setUpWithError()
        listener = try LoopbackListener()
    }

    override func tearDownWithError() throws {
        listener = nil
        try super.tearDownWithError()
    }

    private func assertNoConnection(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(listener.connectionCount(), 0, "Kiln connected to \(listener.url(""))", file: file, line: line)
    }

    func testXMLNamingURLsIsReadOffline() throws {
        let reader = try reader("xml", #"{ record: "rec", fields: { v: "." } }"#)
        let documents = [
            "<?xml version=\"1.0\"?>\n<!DOCTYPE r SYSTEM \"\(listener.url("r.dtd"))\">\n<r><rec>one</rec></r>\n",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE r PUBLIC \"-//Kiln//Test//EN\" \"\(listener.url("p.dtd"))\">\n<r><rec>one</rec></r>\n",
            "<?xml version=\"1.0\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"\(listener.url("s.xsl"))\"?>\n<r><rec>one</rec></r>\n",
            "<r xmlns:xi=\"http://www.w3.org/2001/XInclude\"><rec>one</rec><xi:include href=\"\(listener.url("i.xml"))\"/></r>\n",
            "<r xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"urn:x \(listener.url("x.xsd"))\"><rec>one</rec></r>\n",
        ]
        for document in documents {
            let result = try returnsPromptly { try run(reader, document, name: "net.xml") }
            XCTAssertEqual(result.values, [["one"]], document)
            XCTAssertFalse(result.findings.contains { $0.contains("error") }, "\(result.findings)")
        }
        // Entities naming URLs are refused before anything could load them.
        for declaration in ["<!ENTITY x SYSTEM \"\(listener.url("e"))\">", "<!ENTITY % p SYSTEM \"\(listener.url("pe"))\"> %p;"] {
            let result = try returnsPromptly { try run(reader, "<!DOCTYPE r [\(declaration)]>\n<r><rec>&x;</rec></r>\n", name: "entity.xml") }
            XCTAssertEqual(result.values, [])
            XCTAssertTrue(result.findings.contains { $0.hasSuffix("[xml.entity]") }, "\(result.findings)")
        }
        assertNoConnection()
    }

    func testHTMLNamingURLsIsReadOffline() throws {
        let reader = try reader("html", #"{ records: "//p", fields: { v: "." } }"#)
        let page = """
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "\(listener.url("xhtml.dtd"))">
            <html><head><base href="\(listener.url(""))"><link rel="stylesheet" href="\(listener.url("s.css"))">
            <script src="\(listener.url("s.js"))"></script><meta http-equiv="refresh" content="0; url=\(listener.url("r"))"></head>
            <body><img src="\(listener.url("i.png"))"><iframe src="\(listener.url("f.html"))"></iframe><p>one</p></body></html>

            """
        let result = try returnsPromptly { try run(reader, page, name: "net.html") }
        XCTAssertEqual(result.values, [["one"]])
        XCTAssertEqual(result.findings, [])
        assertNoConnection()
    }

    func testKMLNetworkLinksAreNotFollowed() throws {
        let kml = """
            <?xml version="1.0"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
            <NetworkLink><Link><href>\(listener.url("more.kml"))</href></Link></NetworkLink>
            <Placemark><name>Πανεπιστήμιο</name><description><![CDATA[<img src="\(listener.url("i.png"))"><p>text</p>]]></description>
            <Point><coordinates>21.79,38.29</coordinates></Point></Placemark>
            </Document></kml>

            """
        let result = try returnsPromptly { try run(reader("kml"), kml, name: "net.kml") }
        XCTAssertEqual(result.values.map { $0[0] }, ["Πανεπιστήμιο"])
        XCTAssertEqual(result.findings, [])
        assertNoConnection()
    }

    func testABuildWithAnExternalDTDConnectsNowhere() throws {
        try write("""
            { bundle: "net", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "xml", path: "net.xml", options: { record: "rec", fields: { v: "." } }, into: "t", columns: { v: "v" } }] }
            """, to: "net/kiln.json5")
        try write("<?xml version=\"1.0\"?>\n<!DOCTYPE r SYSTEM \"\(listener.url("r.dtd"))\">\n<r><rec>one</rec></r>\n", to: "net/net.xml")
        let pipeline = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("net").path)
        let outcome = try returnsPromptly {
            try Builder.build(pipeline, options: BuildOptions(output: temporaryDirectory.appendingPathComponent("out/net.sqlite")))
        }
        XCTAssertTrue(outcome.built)
        XCTAssertEqual(outcome.diagnostics.map(\.code), ["xml.external-dtd"])
        assertNoConnection()
    }

    func testTheListenerWouldSeeAConnection() throws {
        // The check itself works: a connection made on purpose is counted.
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = listener.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        XCTAssertEqual(listener.connectionCount(), 1)
    }
}
