import Foundation
import KilnC
import KilnCore
import KilnManifest

/// One text line of an input file: its 1-based number and its text, or the raw bytes when they could not be decoded.
public struct TextLine: Sendable {
    /// 1-based line number.
    public let number: Int
    /// The decoded text without its line ending; `nil` when the bytes are not valid in the file's encoding or hold a
    /// NUL byte.
    public let text: String?
    /// The undecoded bytes, kept for messages about undecodable lines.
    public let bytes: ArraySlice<UInt8>
    /// For a line longer than the reader's limit, its length in bytes; its text and bytes are then left out.
    public var overlongLength: Int? = nil
    /// True when every byte is ASCII and none is NUL (found while the line was split off): such bytes are valid
    /// UTF-8 and need no further check.
    package var isPlainASCII = false
    /// True when the line ended with CR LF (or a final CR), whose CR is not in `bytes`: a reader that joins lines
    /// (a quoted CSV field) puts the ending back as written.
    package var endedWithCR = false
}

/// Streams a file line by line in bounded memory: strips a UTF-8 byte-order mark, accepts LF, CRLF and a
/// missing final newline, and decodes UTF-8 or a legacy code page. A compressed file is read decompressed
/// (`InputBytes`), its lines numbered in the decompressed text. A line longer than `maximumLineLength` is not
/// kept: it is passed over and returned by its length alone.
/// Not `Sendable`: it owns a file handle.
public final class LineReader {
    /// The default longest line: 16 MiB.
    public static let defaultMaximumLineLength = 16 << 20
    /// The longest line read as text, in bytes.
    public let maximumLineLength: Int
    /// The encoding given by the manifest's `encoding` option, in lowercase; `utf-8` by default.
    public let encoding: String
    private let handle: InputBytes
    private let decoder: LegacyTextDecoder?
    private var cursor: LineCursor

    /// Opens `url` for reading; `name` (the path by default) is how messages call it, and `log` is where a damaged
    /// compressed file is reported (without one, reading it throws); `decompressionThread` false decodes a compressed
    /// file on this thread (`ThreadSettings.decompressionThread`).
    /// - Throws: `KilnError.io` when the file cannot be opened, `EncodingError` for an unknown encoding.
    public init(url: URL, name: String? = nil, log: DiagnosticLog? = nil, encoding: String = "utf-8", chunkSize: Int = 1 << 16,
                maximumLineLength: Int = LineReader.defaultMaximumLineLength, decompressionThread: Bool = true) throws {
        handle = try InputBytes(url: url, name: name ?? url.path, log: log, threaded: decompressionThread)
        self.encoding = encoding.lowercased()
        self.maximumLineLength = maximumLineLength
        cursor = LineCursor(chunkSize: chunkSize, maximumLineLength: maximumLineLength)
        decoder = LineReader.isUTF8(self.encoding) ? nil : try LegacyTextDecoder(encodingName: encoding)
    }

    package static func isUTF8(_ name: String) -> Bool { ["utf-8", "utf8"].contains(name.lowercased()) }

    /// The next line, or `nil` at the end of the file.
    /// - Throws: `KilnError.io` when reading fails.
    public func next() throws -> TextLine? {
        guard let line = try nextUndecoded() else { return nil }
        guard line.overlongLength == nil else { return line }
        return TextLine(number: line.number, text: decodeUTF8(line)?.text, bytes: line.bytes)
    }

    /// The next line's bytes (line ending and byte-order mark removed), not yet decoded: `text` is always `nil`.
    /// - Throws: `KilnError.io` when reading fails.
    package func nextUndecoded() throws -> TextLine? {
        try cursor.next(from: handle)
    }

    /// The line's text as valid UTF-8: its own bytes in a UTF-8 file (checked, not copied), its decoded text's in a
    /// legacy code page; `nil` when the bytes are not valid in the file's encoding or hold a NUL byte.
    package func decodeUTF8(_ line: TextLine) -> ValidUTF8? {
        if line.isPlainASCII && decoder == nil { return ValidUTF8(ascii: line.bytes) }
        // A NUL byte: UTF-16 or not text at all; SQLite and C strings would cut the value there.
        guard !line.bytes.contains(0) else { return nil }
        guard let decoder else { return ValidUTF8(line.bytes) }
        return (try? decoder.decode(line.bytes)).map(ValidUTF8.init(text:))
    }
}

/// Where a `LineReader` is in its file: the bytes read and not yet handed out, and the line count. A value, so that
/// a loop over a file's lines can keep it in a local variable (no exclusivity check per line on a class property).
private struct LineCursor {
    package let chunkSize: Int
    package let maximumLineLength: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var searched = 0
    private var atEnd = false
    private var lineNumber = 0
    /// Bytes of an overlong line already let go.
    private var skipped = 0
    /// For the bytes of the line being split off searched so far: their bitwise or with each byte minus one. Its
    /// top bit is clear when every byte is ASCII and none is NUL.
    private var searchedBits: UInt8 = 0

    package init(chunkSize: Int, maximumLineLength: Int) {
        self.chunkSize = chunkSize
        self.maximumLineLength = maximumLineLength
    }

    /// A line as `nextLine(from:plainASCII:)` hands it over.
    package enum Line {
        /// A line that is plain ASCII (no NUL): its number and bytes, known to be valid UTF-8.
        case ascii(number: Int, bytes: ArraySlice<UInt8>, endedWithCR: Bool)
        /// Any other line, to decode and check.
        case other(TextLine)
    }

    /// The next line, read from `handle` as needed; `nil` at the end of the file. With `plainASCII`, a line that
    /// is plain ASCII comes as `.ascii`, without a `TextLine`.
    /// - Throws: `KilnError.io` when reading fails.
    package mutating func nextLine(from handle: InputBytes, plainASCII: Bool) throws -> Line? {
        guard skipped == 0, lineNumber > 0, let newline = searchNewline() else {
            return try next(from: handle).map { .other($0) }
        }
        guard plainASCII, searchedBits < 0x80, newline - start <= maximumLineLength else { return .other(takeLine(at: newline)) }
        var end = newline
        if end > start && buffer[end - 1] == 0x0D { end -= 1 }
        let bytes = buffer[start..<end]
        searchedBits = 0
        lineNumber += 1
        start = newline + 1
        searched = start
        return .ascii(number: lineNumber, bytes: bytes, endedWithCR: end < newline)
    }

    /// The next line's bytes, read from `handle` as needed; `nil` at the end of the file.
    /// - Throws: `KilnError.io` when reading fails.
    package mutating func next(from handle: InputBytes) throws -> TextLine? {
        while true {
            if let newline = searchNewline() { return takeLine(at: newline) }
            if atEnd {
                guard start < buffer.count || skipped > 0 else { return nil }
                let line = take(upTo: buffer.count)
                start = buffer.count
                return line
            }
            if buffer.count - start > maximumLineLength {
                // Too long to keep: count its bytes and let them go (the refill drops them).
                skipped += buffer.count - start
                start = buffer.count
            }
            try refill(from: handle)
        }
    }

    /// The line that ends at the line feed at `newline`.
    private mutating func takeLine(at newline: Int) -> TextLine {
        let line = take(upTo: newline)
        start = newline + 1
        searched = start
        return line
    }

    /// The index of the next line feed from `searched`, noting on the way whether the bytes are all ASCII and
    /// without NUL (one pass over each byte for the three questions).
    private mutating func searchNewline() -> Int? {
        let from = max(start, searched)
        let found = LineCursor.search(buffer.span.extracting(from...), bits: searchedBits)
        searchedBits = found.bits
        guard let newline = found.newline else {
            searched = buffer.count
            return nil
        }
        return from + newline
    }

    /// The first line feed in `bytes`, and `bits` or'ed with each byte before it and with that byte minus one: its
    /// top bit ends up set when a byte is 0 or above 0x7F.
    private static func search(_ bytes: Span<UInt8>, bits: UInt8) -> (newline: Int?, bits: UInt8) {
        var bits = bits
        for index in bytes.indices {
            let byte = bytes[index]
            if byte == 0x0A { return (index, bits) }
            bits |= byte | (byte &- 1)
        }
        return (nil, bits)
    }

    private mutating func refill(from handle: InputBytes) throws {
        buffer.removeSubrange(0..<start)
        searched -= start
        start = 0
        if try handle.read(into: &buffer, upTo: chunkSize) == 0 { atEnd = true }
    }

    /// The line from `start` to `end`; for an overlong line, whose first bytes are gone, only its length.
    private mutating func take(upTo end: Int) -> TextLine {
        let length = skipped + end - start
        let plainASCII = searchedBits < 0x80
        skipped = 0
        searchedBits = 0
        lineNumber += 1
        guard length <= maximumLineLength else {
            return TextLine(number: lineNumber, text: nil, bytes: [], overlongLength: length)
        }
        var bytes = buffer[start..<end]
        let endedWithCR = bytes.last == 0x0D
        if endedWithCR { bytes = bytes.dropLast() }
        if lineNumber == 1, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return TextLine(number: lineNumber, text: nil, bytes: bytes, isPlainASCII: plainASCII, endedWithCR: endedWithCR)
    }
}

/// How a line ended, for a reader that puts the ending back as written (a quoted CSV field spanning lines).
package enum LineEnding {
    case lf, crlf, cr

    /// The ending's bytes.
    package var bytes: [UInt8] {
        switch self {
        case .lf: return [0x0A]
        case .crlf: return [0x0D, 0x0A]
        case .cr: return [0x0D]
        }
    }
}

extension LineReader {
    /// As `forEachLineUTF8Ending(of:encoding:log:_:)`, where a CR not followed by LF ends a line too, as in Python's
    /// `csv` module: old Mac OS exports end every record with CR alone. Lines are numbered counting those endings.
    /// - Throws: `KilnError.io` when reading fails; whatever `body` throws.
    package static func forEachLineUTF8AnyEnding(of input: InputFile, encoding: String, log: DiagnosticLog,
                                         _ body: (_ number: Int, _ line: ValidUTF8, _ ending: LineEnding) throws -> Void) throws {
        // Lines ended by a CR alone so far, which the line reader (splitting at LF) did not count.
        var extra = 0
        try forEachLineUTF8Ending(of: input, encoding: encoding, log: log) { number, line, endedWithCR in
            let ending: LineEnding = endedWithCR ? .crlf : .lf
            guard let first = line.bytes.firstIndex(of: 0x0D) else { return try body(number + extra, line, ending) }
            var start = line.bytes.startIndex, cr = first, parts = 0
            while true {
                try body(number + extra + parts, line.cut(start..<cr), .cr)
                parts += 1
                start = cr + 1
                guard let next = line.bytes[start...].firstIndex(of: 0x0D) else { break }
                cr = next
            }
            try body(number + extra + parts, line.cut(start..<line.bytes.endIndex), ending)
            extra += parts
        }
    }

    /// As `forEachLine(of:encoding:log:_:)`, handing over each line as valid UTF-8 bytes without making a string:
    /// a UTF-8 file's own bytes (checked in place), or a legacy file's decoded text. A reader splits or matches
    /// them and makes strings only for the fields it keeps.
    /// - Throws: `KilnError.io` when reading fails; whatever `body` throws.
    package static func forEachLineUTF8(of input: InputFile, encoding: String, log: DiagnosticLog,
                                _ body: (_ number: Int, _ line: ValidUTF8) throws -> Void) throws {
        try forEachLineUTF8Ending(of: input, encoding: encoding, log: log) { number, line, _ in try body(number, line) }
    }

    /// As `forEachLineUTF8(of:encoding:log:_:)`, also telling whether the line ended with CR LF rather than LF.
    /// - Throws: `KilnError.io` when reading fails; whatever `body` throws.
    package static func forEachLineUTF8Ending(of input: InputFile, encoding: String, log: DiagnosticLog,
                                      _ body: (_ number: Int, _ line: ValidUTF8, _ endedWithCR: Bool) throws -> Void) throws {
        let reader = try LineReader(url: input.url, name: input.relativePath, log: log, encoding: encoding,
                                    decompressionThread: input.threads.decompressionThread)
        var checks = LineChecks(input: input, encoding: reader.encoding)
        var cursor = reader.cursor
        let plainASCII = reader.decoder == nil
        while let next = try cursor.nextLine(from: reader.handle, plainASCII: plainASCII) {
            let line: TextLine
            switch next {
            case .ascii(let number, let bytes, let endedWithCR):
                let utf8 = ValidUTF8(ascii: bytes)
                checks.observe(ascii: utf8)
                try body(number, utf8, endedWithCR)
                continue
            case .other(let other):
                line = other
            }
            let utf8 = line.overlongLength == nil ? reader.decodeUTF8(line) : nil
            checks.observe(line, text: utf8, log: log)
            guard let utf8 else {
                if !checks.reportOverlong(line, limit: reader.maximumLineLength, log: log) {
                    log.report(undecodable(line, encoding: reader.encoding, in: input))
                }
                continue
            }
            try body(line.number, utf8, line.endedWithCR)
        }
        // A damaged archive was reported as such: that no data came out of it is no news.
        if !reader.handle.isDamaged { checks.finish(log: log) }
    }
}
