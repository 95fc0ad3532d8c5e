import CYAJL
import Foundation

/// One event of a JSON document, in document order. Numbers keep their text, so that integers beyond 2^53 and
/// decimals stay exact.
public enum JSONEvent: Sendable, Equatable {
    case startObject, endObject, startArray, endArray
    case key(String)
    case string(String)
    case number(String)
    case bool(Bool)
    case null
}

/// Why a JSON document could not be read to its end, and where.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public var description: String { "line \(line): \(message)" }
}

/// Streams a JSON file through yajl in fixed-size chunks: memory stays bounded whatever the file's size. The only
/// file that calls yajl.
public enum JSONStream {
    /// Calls `handle` with each event of the file at `url` (decompressed when compressed) and the 1-based line it
    /// ends on; `handle` returns false to stop. Returns the error that stopped the parse, or `nil` when the document
    /// was read to its end (or `handle` stopped it).
    /// - Throws: `KilnError.io` when the file cannot be read.
    public static func parse(_ url: URL, chunkSize: Int = 65536, _ handle: (JSONEvent, Int) -> Bool) throws -> JSONParseError? {
        try parse(InputBytes(url: url, name: url.path, log: nil), chunkSize: chunkSize, handle)
    }

    /// As `parse(_:chunkSize:_:)`, for the bytes `source` gives.
    static func parse(_ source: ByteStream, chunkSize: Int = 65536, _ handle: (JSONEvent, Int) -> Bool) throws -> JSONParseError? {
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
                throw KilnError.io("yajl could not start")
            }
            defer { yajl_free(parser) }
            sink.parser = parser
            var atStart = true
            while true {
                var bytes: [UInt8] = []
                let count = try source.read(into: &bytes, upTo: chunkSize)
                if atStart, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
                atStart = false
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
                if count == 0 { return nil }
            }
        }
    }

    /// Receives yajl's callbacks and counts lines up to the byte yajl has consumed.
    private final class Sink {
        let handle: (JSONEvent, Int) -> Bool
        var parser: yajl_handle?
        private var chunk: [UInt8] = []
        private var scanned = 0
        private(set) var line = 1

        init(_ handle: @escaping (JSONEvent, Int) -> Bool) { self.handle = handle }

        static func from(_ context: UnsafeMutableRawPointer?) -> Sink { Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue() }

        static func string(_ text: UnsafePointer<UInt8>?, _ length: Int) -> String {
            guard let text else { return "" }
            return String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)
        }

        func begin(chunk bytes: [UInt8]) {
            advance(to: chunk.count)
            chunk = bytes
            scanned = 0
        }

        func advance(to offset: Int) {
            let end = min(offset, chunk.count)
            while scanned < end {
                if chunk[scanned] == 0x0A { line += 1 }
                scanned += 1
            }
        }

        func deliver(_ event: JSONEvent) -> Int32 {
            if let parser { advance(to: yajl_get_bytes_consumed(parser)) }
            return handle(event, line) ? 1 : 0
        }
    }
}
