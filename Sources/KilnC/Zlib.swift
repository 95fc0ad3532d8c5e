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

/// Encodes one gzip member with zlib's `deflate`, chunk after chunk: what a `.warc.gz` file is made of (one member per
/// record, so a reader can start at any record). Not `Sendable`: it holds the stream's state.
package final class GzipCompressor {
    private var stream = z_stream()
    private var finished = false

    /// - Throws: `ZlibError` when zlib cannot start.
    package init() throws {
        // 16 + 15: a gzip header and trailer around a deflate stream with the largest window; level 6 as gzip's.
        let status = deflateInit2_(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw ZlibError(offset: 0, message: "zlib cannot start (status \(status))") }
    }

    deinit { deflateEnd(&stream) }

    /// The compressed bytes `data` adds (often none until more arrives).
    package func compress(_ data: Data) -> Data { run(data, flush: Z_NO_FLUSH) }

    /// The member's last bytes: whatever zlib still holds, and the gzip trailer.
    package func finish() -> Data {
        guard !finished else { return Data() }
        finished = true
        return run(Data(), flush: Z_FINISH)
    }

    private func run(_ data: Data, flush: Int32) -> Data {
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = UInt32(input.count)
            repeat {
                let produced = buffer.withUnsafeMutableBufferPointer { out -> Int in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    _ = deflate(&stream, flush)
                    return out.count - Int(stream.avail_out)
                }
                output.append(contentsOf: buffer[0..<produced])
            } while stream.avail_out == 0 || (flush == Z_FINISH && stream.avail_in > 0)
            stream.next_in = nil
            stream.next_out = nil
        }
        return output
    }
}
