import Foundation
import KilnC
import KilnCore

/// The parts of the WARC 1.1 format (ISO 28500:2017) both the archive Kiln writes and the import of other tools'
/// files need: record headers, the digests as the format labels them, and the record types.
enum WARCFormat {
    /// The version line Kiln writes.
    static let version = "WARC/1.1"
    /// The profile of a revisit record for a 304 (WARC 1.1, 6.7.2).
    static let serverNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    /// The profile of a revisit record whose payload equals an earlier one's (WARC 1.1, 6.7.1), in both versions'
    /// spellings.
    static let identicalPayloadDigest = ["http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
                                         "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"]
    /// The 1.0 spelling of the server-not-modified profile (wget and Heritrix write WARC 1.0).
    static let serverNotModified10 = "http://netpreserve.org/warc/1.0/revisit/server-not-modified"

    /// A record's header: named fields in the order written, then the block's length.
    struct Header {
        var fields: [(name: String, value: String)] = []

        /// The value of the first field named `name` (case-insensitive, as WARC field names are).
        func value(_ name: String) -> String? {
            fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        mutating func add(_ name: String, _ value: String?) {
            if let value { fields.append((name, value)) }
        }

        /// The header as written: the version line, each field, and the blank line (CRLF line ends).
        func bytes() -> Data {
            var text = WARCFormat.version + "\r\n"
            for field in fields { text += "\(field.name): \(field.value)\r\n" }
            return Data((text + "\r\n").utf8)
        }
    }

    /// A digest as WARC labels it: `sha1:` and the base-32 digits of RFC 4648 (what wget, Heritrix and warcio write).
    static func label(_ digest: ChecksumDigest) -> String { "sha1:" + base32(digest.bytes()) }

    /// `bytes` in RFC 4648's base-32 alphabet, padded.
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var text = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                text.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { text.append(alphabet[(buffer << (5 - bits)) & 31]) }
        while text.count % 8 != 0 { text.append("=") }
        return text
    }

    /// A record identifier made from what the record is (its place in the file, type, URI and date), not from a random
    /// source: the same exchange written twice gets the same identifier. Shaped as a UUID URN (RFC 9562's version 8,
    /// for identifiers made by a custom algorithm).
    static func recordID(_ parts: [String]) -> String {
        var bytes = Array(SHA256Digest.hex(of: Data(parts.joined(separator: "\n").utf8)).utf8.prefix(32))
        bytes[12] = UInt8(ascii: "8")
        let variant = "89ab"
        bytes[16] = Array(variant.utf8)[Int(bytes[16] % 4)]
        let hex = String(decoding: bytes, as: UTF8.self)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return "<urn:uuid:\(parts.joined(separator: "-"))>"
    }

    /// The non-empty lines of an HTTP message's header, without their line ends (CR LF, or LF alone).
    static func lines(of block: Data) -> [String] {
        // Split on the bytes: a Swift string holds CR LF as one character, which a split on LF would not see.
        block.split(separator: 0x0A).map { line in String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self) }
            .filter { !$0.isEmpty }
    }

    /// An HTTP message's header lines (status or request line first), as a `HTTPResponse` holds them.
    static func headerFields(of block: Data) -> (firstLine: String, fields: [HTTPHeader]) {
        let lines = self.lines(of: block)
        guard let first = lines.first else { return ("", []) }
        var fields: [HTTPHeader] = []
        for line in lines.dropFirst() {
            if let field = HTTPHeader(line: line) { fields.append(field) }
        }
        return (first, fields)
    }
}
