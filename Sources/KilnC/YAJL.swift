internal import CYAJL
import Foundation

/// One event of a JSON document, in document order. Numbers keep their text, so that integers beyond 2^53 and
/// decimals stay exact.
package enum JSONEvent: Sendable, Equatable {
    case startObject, endObject, startArray, endArray
    case key(String)
    case string(String)
    case number(String)
    case bool(Bool)
    case null
}

/// Why a JSON document could not be read to its end, and where.
package struct JSONParseError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package let line: Int
    /// True when the document is not malformed but holds a string or number longer than the stream keeps
    /// (`JSONStream.maximumTokenBytes`).
    package var tooLong = false
    package var description: String { "line \(line): \(message)" }
}

/// Streams a JSON file through yajl in fixed-size chunks: memory stays bounded whatever the file's size. The only
/// file that calls yajl.
///
/// yajl lexes a string or number that a chunk cuts again from its first byte with every further chunk, which made one
/// long token quadratic (a 50 MB number took 97 s). `TokenScan` follows the tokens in Swift: while one is open, the
/// next chunk is as long as what yajl holds of it, so each token is lexed a bounded number of times; a token longer
/// than `maximumTokenBytes` stops the document (`JSONParseError.tooLong`).
package enum JSONStream {
    /// The longest string or number (in bytes, as written) a document may hold: 16 MiB, as a line of a text file.
    package static let maximumTokenBytes = 16 << 20


    /// Calls `handle` with each event of the document `source` gives and the 1-based line it ends on; `handle`
    /// returns false to stop. Returns the error that stopped the parse, or `nil` when the document was read to its
    /// end (or `handle` stopped it).
    package static func parse(_ source: ByteStream, chunkSize: Int = 65536, maximumTokenBytes: Int = JSONStream.maximumTokenBytes,
                      _ handle: (JSONEvent, Int) -> Bool) throws -> JSONParseError? {
        return try withoutActuallyEscaping(handle) { handle in
            let sink = Sink(handle)
            var callbacks = yajl_callbacks()
            callbacks.yajl_null = { context in Sink.from(context).deliver(.null) }
            callbacks.yajl_boolean = { context, value in Sink.from(context).deliver(.bool(value != 0)) }
            callbacks.yajl_number = { context, text, length in
                Sink.from(context).deliver(.number(Sink.string(UnsafeRawPointer(text)?.assumingMemoryBound(to: UInt8.self), length)))
            }
            callbacks.yajl_string = { context, text, length in
                Sink.from(context).deliver(.string(Sink.string(text, length)))
            }
            callbacks.yajl_start_map = { context in Sink.from(context).deliver(.startObject) }
            callbacks.yajl_map_key = { context, text, length in
                Sink.from(context).deliver(.key(Sink.string(text, length)))
            }
            callbacks.yajl_end_map = { context in Sink.from(context).deliver(.endObject) }
            callbacks.yajl_start_array = { context in Sink.from(context).deliver(.startArray) }
            callbacks.yajl_end_array = { context in Sink.from(context).deliver(.endArray) }
            guard let parser = withUnsafePointer(to: &callbacks, { yajl_alloc($0, nil, Unmanaged.passUnretained(sink).toOpaque()) }) else {
                throw LibraryFailure("yajl could not start")
            }
            defer { yajl_free(parser) }
            sink.parser = parser
            var atStart = true
            var scan = TokenScan(limit: maximumTokenBytes)
            while true {
                var bytes: [UInt8] = []
                let count = try source.read(into: &bytes, upTo: max(chunkSize, scan.openLength))
                if atStart, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
                atStart = false
                scan.scan(bytes)
                if scan.openLength > maximumTokenBytes, scan.longToken == nil { scan.noteOpenTokenTooLong() }
                if let long = scan.longToken {
                    let what = long.string ? "a string" : "a number or literal"
                    let bound = maximumTokenBytes >= 1 << 20 ? "\(maximumTokenBytes >> 20) MiB" : "\(maximumTokenBytes) bytes"
                    return JSONParseError(message: "\(what) longer than \(bound) starts here; Kiln keeps values up to \(bound)",
                                          line: long.line, tooLong: true)
                }
                // A form feed or vertical tab stops the document there: what comes before it is read (its records kept, as
                // before any malformed JSON).
                let space = scan.invalidSpace
                if let space { bytes = Array(bytes[..<space.offset]) }
                sink.begin(chunk: bytes)
                let status = count == 0
                    ? yajl_complete_parse(parser)
                    : bytes.withUnsafeBufferPointer { yajl_parse(parser, $0.baseAddress, $0.count) }
                if status == yajl_status_client_canceled { return nil }
                if status == yajl_status_error {
                    sink.advance(to: yajl_get_bytes_consumed(parser))
                    let message = bytes.withUnsafeBufferPointer { buffer -> String in
                        guard let text = yajl_get_error(parser, 0, buffer.baseAddress, buffer.count) else { return "malformed JSON" }
                        defer { yajl_free_error(parser, text) }
                        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                    return JSONParseError(message: message, line: sink.line)
                }
                if let space {
                    let name = space.byte == 0x0C ? "a form feed (U+000C)" : "a vertical tab (U+000B)"
                    return JSONParseError(message: "\(name) outside a string, which JSON does not allow as white space (only space, tab, line feed and carriage return)",
                                          line: space.line)
                }
                if count == 0 { return nil }
            }
        }
    }

    /// Follows strings and bare tokens (numbers, `true`…) over the chunks, to know how long the token open at the end
    /// of the bytes scanned so far is, and on which line it began.
    package struct TokenScan {
        /// The longest token that passes; the first longer one is `longToken` (its line, and whether a string).
        package let limit: Int
        package private(set) var longToken: (line: Int, string: Bool)?
        package private(set) var inString = false
        private var inBare = false
        private var escaped = false
        /// Bytes of the token still open after the last chunk (0 when none is).
        package private(set) var openLength = 0
        package private(set) var openLine = 1
        private var line = 1
        /// The first form feed or vertical tab outside strings in the chunk last scanned: its line, its offset in the
        /// chunk and the byte (yajl would read it as white space).
        package private(set) var invalidSpace: (line: Int, offset: Int, byte: UInt8)?

        package init(limit: Int = .max) { self.limit = limit }

        package mutating func scan(_ bytes: [UInt8]) {
            var start = -1
            var index = 0
            let end = bytes.count
            while index < end {
                if inString, !escaped {
                    // The body of a string, in a tight loop: most of a long one.
                    while index < end, bytes[index] != 0x22, bytes[index] != 0x5C { index += 1 }
                    guard index < end else { break }
                }
                let byte = bytes[index]
                index += 1
                if inString {
                    if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { close(at: index, start: start); start = -1 }
                    continue
                }
                if inBare {
                    if TokenScan.isBare(byte) { continue }
                    close(at: index - 1, start: start)
                    start = -1
                }
                if byte == 0x0A { line += 1 }
                // yajl takes a form feed and a vertical tab for white space; JSON (RFC 8259) does not.
                if (byte == 0x0C || byte == 0x0B), invalidSpace == nil { invalidSpace = (line, index - 1, byte) }
                if byte == 0x22 || TokenScan.isBare(byte) {
                    inString = byte == 0x22
                    inBare = !inString
                    start = index - 1
                    openLength = 0
                    openLine = line
                }
            }
            if inString || inBare { openLength += bytes.count - max(start, 0) }
        }

        /// The token still open is longer than the bound.
        package mutating func noteOpenTokenTooLong() { longToken = (openLine, inString) }

        /// A token ends before `end` in this chunk: notes it when it is longer than the bound.
        private mutating func close(at end: Int, start: Int) {
            let length = start >= 0 ? end - start : openLength + end
            if length > limit, longToken == nil { longToken = (openLine, inString) }
            inString = false
            inBare = false
            openLength = 0
        }

        private static func isBare(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x2D || byte == 0x2B || byte == 0x2E
        }
    }

    /// Receives yajl's callbacks and counts lines up to the byte yajl has consumed.
    private final class Sink {
        package let handle: (JSONEvent, Int) -> Bool
        package var parser: yajl_handle?
        private var chunk: [UInt8] = []
        private var scanned = 0
        package private(set) var line = 1

        package init(_ handle: @escaping (JSONEvent, Int) -> Bool) { self.handle = handle }

        package static func from(_ context: UnsafeMutableRawPointer?) -> Sink { Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue() }

        package static func string(_ text: UnsafePointer<UInt8>?, _ length: Int) -> String {
            guard let text else { return "" }
            return String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)
        }

        package func begin(chunk bytes: [UInt8]) {
            advance(to: chunk.count)
            chunk = bytes
            scanned = 0
        }

        package func advance(to offset: Int) {
            let end = min(offset, chunk.count)
            while scanned < end {
                if chunk[scanned] == 0x0A { line += 1 }
                scanned += 1
            }
        }

        package func deliver(_ event: JSONEvent) -> Int32 {
            if let parser { advance(to: yajl_get_bytes_consumed(parser)) }
            return handle(event, line) ? 1 : 0
        }
    }
}
