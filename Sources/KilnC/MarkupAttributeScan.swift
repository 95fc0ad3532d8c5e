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
    private var line = 1
    private var tagStart = 0
    private var tagLine = 1
    private var attributes = 0
    private var inWord = false
    private var afterEquals = false
    /// The first letters of the tag's name (lowercased), for `script` and `style`; the closing tag looked for in raw
    /// text, and how much of it matched; the last bytes of a comment or CDATA section.
    private var name: [UInt8] = []
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

    /// As `scan(_:)` for a slice. Text between tags, most of a document, is passed over in a tight loop.
    @discardableResult
    package mutating func scan(_ bytes: ArraySlice<UInt8>) -> Overfull? {
        guard overfull == nil else { return overfull }
        let base = scanned - bytes.startIndex
        defer { scanned = base + bytes.endIndex }
        var index = bytes.startIndex
        let end = bytes.endIndex
        while index < end {
            if case .text = state {
                while index < end, bytes[index] != 0x3C {
                    if bytes[index] == 0x0A { line += 1 }
                    index += 1
                }
                guard index < end else { break }
            }
            let byte = bytes[index]
            let offset = base + index
            index += 1
            if byte == 0x0A { line += 1 }
            switch state {
            case .text:
                state = .tagOpen
                tagStart = offset
                tagLine = line
            case .tagOpen:
                if MarkupAttributeScan.isLetter(byte) {
                    state = .tag
                    attributes = 0
                    inWord = true
                    afterEquals = false
                    name = [byte | 0x20]
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
            case .tag:
                switch byte {
                case 0x3E:
                    state = .text
                    if html, name == Array("script".utf8) || name == Array("style".utf8) {
                        closing = Array("</".utf8) + name
                        matched = 0
                        state = .rawText
                    }
                case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x2F:
                    inWord = false
                case 0x3D:
                    inWord = false
                    afterEquals = true
                case 0x27 where afterEquals:
                    state = .quoted(byte)
                case 0x22 where afterEquals:
                    state = .quoted(byte)
                default:
                    if inWord, attributes == 0, name.count < 8 { name.append(byte | 0x20) }
                    if !inWord, !afterEquals { attributes += 1 }
                    inWord = true
                    afterEquals = false
                    if attributes > limit {
                        overfull = Overfull(offset: tagStart, line: tagLine)
                        return overfull
                    }
                }
            case .quoted(let quote):
                if byte == quote {
                    state = .tag
                    inWord = false
                    afterEquals = false
                }
            case .declaration:
                if matched == 1, byte == 0x2D, recent.1 == 0 {
                    recent = (0, 0x2D)
                } else if matched == 1, byte == 0x2D, recent.1 == 0x2D {
                    state = .comment
                    recent = (0, 0)
                } else if matched >= 1, matched < 8, byte == Array("![CDATA[".utf8)[matched] {
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
        return nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
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
