import Foundation

/// Finds the start tag with more attributes than libxml2 can take in reasonable time, before libxml2 sees it.
/// libxml2 2.9 checks each attribute of an element against all before it (its XML and its HTML parser alike): an
/// element of 320 000 attributes took 71 s, and nothing in Kiln's own code was quadratic. This follows the markup
/// just enough to count the attributes of each start tag (comments, CDATA, declarations, quoted values and, in HTML,
/// the raw text of `script` and `style` are passed over), over any number of chunks.
package struct MarkupAttributeScan {
    /// The most attributes one element may have: far beyond what real documents write (a few dozen), and cheap for
    /// libxml2's check (half a million comparisons).
    package static let maximumAttributes = 1000

    /// Where the first element with too many attributes starts: the offset of its `<` in all bytes scanned, and its
    /// line.
    package struct Overfull: Equatable {
        package var offset: Int
        package var line: Int
    }

    private enum State {
        case text, tagOpen, tag, quoted(UInt8), comment, cdata, declaration, rawText
    }

    package let html: Bool
    package let limit: Int
    private var state = State.text
    private var scanned = 0
    /// The line the current chunk starts on. Lines are counted a chunk at a time, not byte by byte.
    private var chunkLine = 1
    private var tagStart = 0
    /// The line of the tag that starts at `tagStart`; nil until the end of the chunk it starts in.
    private var tagLine: Int? = 1
    private var attributes = 0
    private var inWord = false
    private var afterEquals = false
    /// The first letters of the tag's name (lowercased, up to eight, packed little-endian), for `script` and `style`;
    /// the closing tag looked for in raw text, and how much of it matched; the last bytes of a comment or CDATA section.
    private var name = PackedName()
    private var closing: [UInt8] = []
    private var matched = 0
    private var recent: (UInt8, UInt8) = (0, 0)
    /// Set once an element with too many attributes was found; the scan stops there.
    package private(set) var overfull: Overfull?

    package init(html: Bool, limit: Int = MarkupAttributeScan.maximumAttributes) {
        self.html = html
        self.limit = limit
    }

    /// Scans the next bytes; returns the first element with too many attributes, once it is found.
    @discardableResult
    package mutating func scan(_ bytes: [UInt8]) -> Overfull? { scan(bytes[...]) }

    /// As `scan(_:)` for a slice. Text between tags and quoted values, most of a document, are passed over in tight
    /// loops.
    @discardableResult
    package mutating func scan(_ bytes: ArraySlice<UInt8>) -> Overfull? {
        guard overfull == nil else { return overfull }
        let base = scanned
        defer { scanned = base + bytes.count }
        return bytes.withUnsafeBufferPointer { buffer in
            if scan(buffer, base: base) {
                overfull = Overfull(offset: tagStart, line: tagLine ?? chunkLine + Self.newlines(in: buffer, upTo: tagStart - base))
                return overfull
            }
            if tagLine == nil { tagLine = chunkLine + Self.newlines(in: buffer, upTo: tagStart - base) }
            chunkLine += Self.newlines(in: buffer, upTo: buffer.count)
            return nil
        }
    }

    /// The line feeds among the first `end` bytes, found by `memchr`.
    private static func newlines(in bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> Int {
        guard let start = bytes.baseAddress, end > 0 else { return 0 }
        var count = 0
        var next = UnsafeRawPointer(start)
        let limit = next + end
        while next < limit, let found = memchr(next, 0x0A, limit - next) {
            count += 1
            next = UnsafeRawPointer(found) + 1
        }
        return count
    }

    /// Scans one chunk that starts at offset `base`; true when the tag at `tagStart` has too many attributes.
    private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, base: Int) -> Bool {
        let end = bytes.count
        var index = 0
        while index < end {
            switch state {
            case .text:
                while index < end, bytes[index] != 0x3C { index += 1 }
                guard index < end else { return false }
                state = .tagOpen
                tagStart = base + index
                tagLine = nil
                index += 1
                continue
            case .quoted(let quote):
                while index < end, bytes[index] != quote { index += 1 }
                guard index < end else { return false }
                state = .tag
                inWord = false
                afterEquals = false
                index += 1
                continue
            case .tag:
                if scanTag(bytes, from: &index) { return true }
                continue
            case .declaration where matched == 0:
                // An end tag, a processing instruction or a declaration that is neither comment nor CDATA: up to `>`.
                while index < end, bytes[index] != 0x3E { index += 1 }
                guard index < end else { return false }
                state = .text
                index += 1
                continue
            default:
                break
            }
            let byte = bytes[index]
            index += 1
            switch state {
            case .text, .quoted, .tag:
                break  // read by the loops above
            case .tagOpen:
                if MarkupAttributeScan.isLetter(byte) {
                    state = .tag
                    attributes = 0
                    inWord = true
                    afterEquals = false
                    name = PackedName()
                    name.append(byte | 0x20)
                } else if byte == 0x21 {
                    state = .declaration
                    recent = (0, 0)
                    matched = 1  // "<!" seen: "--" makes a comment, "[CDATA[" a CDATA section
                } else if byte == 0x3F || byte == 0x2F {
                    state = .declaration
                    matched = 0
                } else if byte != 0x3C {
                    state = .text
                }
            case .declaration:
                if matched == 1, byte == 0x2D, recent.1 == 0 {
                    recent = (0, 0x2D)
                } else if matched == 1, byte == 0x2D, recent.1 == 0x2D {
                    state = .comment
                    recent = (0, 0)
                } else if matched >= 1, matched < 8, byte == MarkupAttributeScan.cdataOpening[matched] {
                    matched += 1
                    if matched == 8 { state = .cdata; recent = (0, 0) }
                } else {
                    matched = 0
                    if byte == 0x3E { state = .text }
                }
            case .comment, .cdata:
                let end: UInt8 = { if case .comment = state { return 0x2D } else { return 0x5D } }()
                if byte == 0x3E, recent == (end, end) { state = .text }
                recent = (recent.1, byte)
            case .rawText:
                let expected = closing[matched]
                if byte == expected || (MarkupAttributeScan.isLetter(byte) && byte | 0x20 == expected) {
                    matched += 1
                    if matched == closing.count { state = .declaration; matched = 0 }
                } else {
                    matched = byte == 0x3C ? 1 : 0
                }
            }
        }
        return false
    }

    /// Reads a start tag's bytes up to its end, the opening quote of a value or the end of the chunk. True when the
    /// tag has too many attributes.
    private mutating func scanTag(_ bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> Bool {
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x3E:
                state = .text
                if html, name == PackedName.script || name == PackedName.style {
                    closing = Array("</".utf8) + name.bytes
                    matched = 0
                    state = .rawText
                }
                return false
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x2F:
                inWord = false
            case 0x3D:
                inWord = false
                afterEquals = true
            case 0x27 where afterEquals, 0x22 where afterEquals:
                state = .quoted(byte)
                return false
            default:
                if inWord, attributes == 0 { name.append(byte | 0x20) }
                if !inWord, !afterEquals { attributes += 1 }
                inWord = true
                afterEquals = false
                if attributes > limit { return true }
                // The rest of an attribute's name (or an unquoted value) changes nothing but the tag's name.
                if attributes > 0 {
                    while index < bytes.count, !Self.endsWord(bytes[index]) { index += 1 }
                }
            }
        }
        return false
    }

    private static let cdataOpening = Array("![CDATA[".utf8)

    /// The bytes that end a word inside a tag.
    private static func endsWord(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x3E, 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x2F, 0x3D: return true
        default: return false
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
}

/// The first eight bytes of a tag's name in one integer, so that reading a start tag allocates nothing.
private struct PackedName: Equatable {
    private var packed: UInt64 = 0
    private var count = 0

    init() {}

    init(_ text: String) {
        for byte in text.utf8 { append(byte) }
    }

    static let script = PackedName("script")
    static let style = PackedName("style")

    /// Adds a byte; bytes past the eighth are dropped.
    mutating func append(_ byte: UInt8) {
        guard count < 8 else { return }
        packed |= UInt64(byte) << (8 * UInt64(count))
        count += 1
    }

    var bytes: [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: packed >> (8 * UInt64($0))) } }
}

/// A byte stream that ends just before the first element with too many attributes (`MarkupAttributeScan`), so that
/// libxml2 never parses it; `overfull` says where, for the reader's finding.
package final class AttributeGuardedStream: ByteStream {
    private let base: ByteStream
    private var scan: MarkupAttributeScan
    private var passed = 0
    private var ended = false

    package init(_ base: ByteStream, html: Bool = false, limit: Int = MarkupAttributeScan.maximumAttributes) {
        self.base = base
        scan = MarkupAttributeScan(html: html, limit: limit)
    }

    /// Where the stream was cut, if it was.
    package var overfull: MarkupAttributeScan.Overfull? { scan.overfull }

    package func read(into buffer: inout [UInt8], upTo count: Int) throws -> Int {
        guard !ended else { return 0 }
        let start = buffer.count
        let read = try base.read(into: &buffer, upTo: count)
        if let cut = scan.scan(buffer[start...]) {
            let keep = max(0, cut.offset - passed)
            buffer.removeSubrange((start + keep)...)
            ended = true
            passed += keep
            return keep
        }
        passed += read
        return read
    }

    package func leadingBytes(_ count: Int) -> [UInt8] { base.leadingBytes(count) }
}
