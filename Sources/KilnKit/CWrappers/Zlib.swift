import CZlib
import Foundation

/// Why zlib could not decode a gzip file: damaged data (zlib's message) or a file that ends inside a member.
struct ZlibError: DecompressionFailure, CustomStringConvertible {
    let offset: Int
    let message: String
    let truncated: Bool
    var format: CompressionFormat { .gzip }
    var description: String { "gzip: \(message) at compressed byte \(offset)" }
}

/// Decodes gzip with zlib's `inflate`, member after member (a file of concatenated gzip members is one text, as
/// `gzip -d` reads it). zlib keeps a 32 KiB window; nothing else grows with the data.
final class GzipDecompressor: StreamDecompressor {
    private var stream = z_stream()
    private var input = PendingInput()
    private var memberEnded = false

    /// - Throws: `ZlibError` when zlib cannot start.
    init() throws {
        // 16 + 15: a gzip header and trailer around a deflate stream with the largest window.
        let status = inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw ZlibError(offset: 0, message: "zlib cannot start (status \(status))", truncated: false) }
    }

    deinit { inflateEnd(&stream) }

    func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if memberEnded {
            guard !input.isEmpty else { return inputEnded ? .finished : .needsInput }
            inflateReset(&stream)
            memberEnded = false
        }
        if input.isEmpty && !input.outputWasFull && !inputEnded { return .needsInput }
        var status: Int32 = Z_OK
        var consumed = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            input.bytes.withUnsafeBufferPointer { bytes in
                stream.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress.map { $0 + input.position })
                stream.avail_in = UInt32(input.remaining)
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(capacity)
                status = inflate(&stream, Z_NO_FLUSH)
                consumed = input.remaining - Int(stream.avail_in)
                count = capacity - Int(stream.avail_out)
            }
            stream.next_in = nil
            stream.next_out = nil
        }
        input.advance(by: consumed)
        input.outputWasFull = output.count == capacity
        switch status {
        case Z_STREAM_END:
            memberEnded = true
            return .output(output)
        case Z_OK where !output.isEmpty || consumed > 0:
            return .output(output)
        case Z_OK, Z_BUF_ERROR:
            guard input.isEmpty else { return .output(output) }
            if inputEnded {
                return try input.fail(ZlibError(offset: input.consumed, message: "the file ends inside a gzip member (truncated)", truncated: true), after: output)
            }
            input.outputWasFull = false
            return .needsInput
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            return try input.fail(ZlibError(offset: input.consumed, message: message, truncated: false), after: output)
        }
    }
}
