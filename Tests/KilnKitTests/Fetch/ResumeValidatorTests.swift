import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnFetch

/// The `If-Range` a resumed download sends (RFC 9110, 13.1.5 and 8.8.2.2): a strong ETag, or with no ETag a
/// Last-Modified at least 60 seconds before the response's Date; nothing else.
final class ResumeValidatorTests: KilnTestCase {
    private func ifRange(_ fields: [(String, String)]) -> String? {
        URLFetch.ifRange(fields.map { HTTPHeader(name: $0.0, value: $0.1) })
    }

    func testAStrongETagIsSentAndAWeakOneNever() {
        XCTAssertEqual(ifRange([("ETag", "\"5d8c72a5edda8\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]), "\"5d8c72a5edda8\"")
        XCTAssertEqual(ifRange([("etag", "\"\"")]), "\"\"")
        // A weak ETag: the representation has an entity tag, so its date may not stand in (13.1.5).
        XCTAssertNil(ifRange([("ETag", "W/\"5d8c72a5edda8\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Date", "Mon, 07 Dec 2026 12:00:00 GMT")]))
        // Not an entity tag at all.
        XCTAssertNil(ifRange([("ETag", "5d8c72a5edda8")]))
        XCTAssertNil(ifRange([("ETag", "\"a\"b\"")]))
    }

    func testALastModifiedIsSentOnlyWhenStrong() {
        XCTAssertEqual(ifRange([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Date", "Sun, 06 Nov 1994 08:50:37 GMT")]), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertNil(ifRange([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Date", "Sun, 06 Nov 1994 08:50:36 GMT")]))
        XCTAssertNil(ifRange([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        XCTAssertNil(ifRange([("Last-Modified", "yesterday"), ("Date", "Sun, 06 Nov 1994 08:50:37 GMT")]))
        XCTAssertNil(ifRange([]))
    }
}
