internal import CBZip2
import Foundation

/// Why libbz2 could not decode a bzip2 file: damaged data or a file that ends inside a stream.
package struct BZip2Error: DecompressionFailure {
    package let offset: Int
    package let message: String
    package var truncated = false
    package var format: CompressionFormat { .bzip2 }
}

/// Decodes bzip2 with libbz2, stream after stream: Wikimedia's multistream dumps are many bzip2 streams
/// concatenated, and every one is read. libbz2 holds at most one block (900 kB of text, about 3.6 MB of tables).
package final class BZip2Decompressor: StreamDecompressor {
    private var stream = bz_stream()
    private var input = PendingInput()
    private var started = false
    private var streamEnded = false

    /// - Throws: `BZip2Error` when libbz2 cannot start.
    package init() throws {
        try start()
    }

    deinit { if started { BZ2_bzDecompressEnd(&stream) } }

    private func start() throws {
        stream = bz_stream()
        let status = BZ2_bzDecompressInit(&stream, 0, 0)
        guard status == BZ_OK else { throw BZip2Error(offset: input.consumed, message: "libbz2 cannot start (status \(status))") }
        started = true
    }

    package func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    package func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if streamEnded {
            guard !input.isEmpty else { return inputEnded ? .finished : .needsInput }
            BZ2_bzDecompressEnd(&stream)
            started = false
            try start()
            streamEnded = false
        }
        if input.waitsForInput(inputEnded: inputEnded) { return .needsInput }
        let (output, status, consumed) = input.decode(capacity: capacity) { bytes, buffer in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                buffer.withMemoryRebound(to: CChar.self) { out in
                    stream.next_in = UnsafeMutablePointer(mutating: chars.baseAddress)
                    stream.avail_in = UInt32(chars.count)
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let status = BZ2_bzDecompress(&stream)
                    defer { stream.next_in = nil; stream.next_out = nil }
                    return (status, chars.count - Int(stream.avail_in), out.count - Int(stream.avail_out))
                }
            }
        }
        let message: String
        switch status {
        case BZ_STREAM_END:
            streamEnded = true
            return .output(output)
        case BZ_OK:
            if !output.isEmpty || consumed > 0 || !input.isEmpty { return .output(output) }
            guard inputEnded else {
                input.noteIdle()
                return .needsInput
            }
            return try input.fail(BZip2Error(offset: input.consumed, message: "the file ends inside a bzip2 stream", truncated: true), after: output)
        case BZ_DATA_ERROR_MAGIC: message = "no bzip2 stream starts here (bad magic)"
        case BZ_DATA_ERROR: message = "the compressed data is damaged (a block's checksum or structure is wrong)"
        case BZ_MEM_ERROR: message = "out of memory"
        default: message = "libbz2 status \(status)"
        }
        return try input.fail(BZip2Error(offset: input.consumed, message: message), after: output)
    }
}
