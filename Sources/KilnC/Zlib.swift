internal import CZlib
import Foundation

/// Why zlib could not decode a gzip file: damaged data (zlib's message) or a file that ends inside a member.
package struct ZlibError: DecompressionFailure {
    package let offset: Int
    package let message: String
    package var truncated = false
    package var format: CompressionFormat { .gzip }
}

/// Decodes gzip with zlib's `inflate`, member after member (a file of concatenated gzip members is one text, as
/// `gzip -d` reads it). zlib keeps a 32 KiB window; nothing else grows with the data.
package final class GzipDecompressor: StreamDecompressor {
    private var stream = z_stream()
    private var input = PendingInput()
    private var memberEnded = false

    /// - Throws: `ZlibError` when zlib cannot start.
    package init() throws {
        // 16 + 15: a gzip header and trailer around a deflate stream with the largest window.
        let status = inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw ZlibError(offset: 0, message: "zlib cannot start (status \(status))") }
    }

    deinit { inflateEnd(&stream) }

    package func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    package func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if memberEnded {
            guard !input.isEmpty else { return inputEnded ? .finished : .needsInput }
            inflateReset(&stream)
            memberEnded = false
        }
        if input.waitsForInput(inputEnded: inputEnded) { return .needsInput }
        let (output, status, consumed) = input.decode(capacity: capacity) { bytes, buffer in
            stream.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress)
            stream.avail_in = UInt32(bytes.count)
            stream.next_out = buffer.baseAddress
            stream.avail_out = UInt32(buffer.count)
            let status = inflate(&stream, Z_NO_FLUSH)
            defer { stream.next_in = nil; stream.next_out = nil }
            return (status, bytes.count - Int(stream.avail_in), buffer.count - Int(stream.avail_out))
        }
        switch status {
        case Z_STREAM_END:
            memberEnded = true
            return .output(output)
        case Z_OK where !output.isEmpty || consumed > 0:
            return .output(output)
        case Z_OK, Z_BUF_ERROR:
            guard input.isEmpty else { return .output(output) }
            if inputEnded {
                return try input.fail(ZlibError(offset: input.consumed, message: "the file ends inside a gzip member", truncated: true), after: output)
            }
            input.noteIdle()
            return .needsInput
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
            return try input.fail(ZlibError(offset: input.consumed, message: message), after: output)
        }
    }
}
