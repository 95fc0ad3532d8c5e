import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC

/// The address rule that keeps a redirect from a public host off loopback, private and other non-public addresses,
/// compared with Python's `ipaddress` (its `is_global`, and multicast, which Kiln refuses too).
final class HTTPClientTests: KilnTestCase {
    func testNonPublicAddressesAreThoseIpaddressDoesNotCallGlobal() throws {
        var random = SeededGenerator(seed: 6890)
        var addresses = ["0.0.0.0", "10.1.2.3", "127.0.0.1", "127.255.0.9", "169.254.1.1", "172.16.0.1", "172.31.255.1", "172.32.0.1",
                         "192.168.1.1", "100.64.0.1", "100.128.0.1", "192.0.2.1", "198.51.100.1", "203.0.113.1", "198.18.0.1",
                         "8.8.8.8", "1.1.1.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.0.9", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "2001:db8::1", "2606:4700::1",
                         "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:8.8.8.8", "ff02::1", "2001::1", "2002::1", "100::1"]
        for _ in 0..<300 {
            let octets = (0..<4).map { _ in String(UInt8.random(in: 0...255, using: &random)) }
            addresses.append(octets.joined(separator: "."))
        }
        let program = """
            import ipaddress, sys
            for text in sys.argv[1:]:
                address = ipaddress.ip_address(text)
                print(text, not address.is_global or address.is_multicast)
            """
        let expected = try PythonOracle.lines(ofProgram: program, addresses)
        XCTAssertEqual(expected.count, addresses.count)
        for line in expected {
            let parts = line.split(separator: " ")
            XCTAssertEqual(HTTPClient.isNonPublic(String(parts[0])), parts[1] == "True", String(parts[0]))
        }
        XCTAssertTrue(HTTPClient.isNonPublic("not an address"))
        // Where Python's table is older than IANA's: 192.0.0.0/24 is not globally reachable but for .9 and .10.
        XCTAssertTrue(HTTPClient.isNonPublic("192.0.0.8"))
    }
}

/// The header-line parser libcurl's lines and WARC's go through, against Python's `http.client.parse_headers`.
final class HTTPHeaderLineTests: KilnTestCase {
    func testHeaderLinesSplitAndTrimAsPythonsParserDoes() throws {
        var raw = Data()
        let lines: [[UInt8]] = [
            Array("ETag: \"v1\"\r\n".utf8),
            Array("Content-Type:\ttext/html; charset=utf-8\r\n".utf8),
            Array("Location:   http://127.0.0.1:8080/a?b=c:d\r\n".utf8),
            Array("X-Empty:\r\n".utf8),
            Array("X-Title: Πάτρα\r\n".utf8),
            Array("X-Latin: caf".utf8) + [0xE9] + Array("\r\n".utf8),
        ]
        for line in lines { raw.append(contentsOf: line) }
        raw.append(contentsOf: Array("\r\n".utf8))
        let file = try write(raw, to: "headers.bin")
        let expected = try XCTUnwrap(try JSONSerialization.jsonObject(with: try PythonOracle.run("http_header_lines.py", [file.path])) as? [[String]])
        let parsed = lines.compactMap { line in line.withUnsafeBytes { HTTPHeader.field(in: $0[...]) } }.map { [$0.name, $0.value] }
        XCTAssertEqual(parsed, expected)
        XCTAssertEqual(lines.compactMap { HTTPHeader(line: String(decoding: $0, as: UTF8.self)) }.count, lines.count)
        XCTAssertNil(HTTPHeader(line: "no colon here"))
    }
}
