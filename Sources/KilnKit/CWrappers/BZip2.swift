import CBZip2
import Foundation

/// Why libbz2 could not decode a bzip2 file: damaged data or a file that ends inside a stream.
struct BZip2Error: DecompressionFailure, CustomStringConvertible {
    let offset: Int
    let message: String
    let truncated: Bool
    var format: CompressionFormat { .bzip2 }
    var description: String { "bzip2: \(message) at compressed byte \(offset)" }
}

/// Decodes bzip2 with libbz2, stream after stream: Wikimedia's multistream dumps are many bzip2 streams
/// concatenated, and every one is read. libbz2 holds at most one block (900 kB of text, about 3.6 MB of tables).
final class BZip2Decompressor: StreamDecompressor {
    private var stream = bz_stream()
    private var input = PendingInput()
    private var started = false
    private var streamEnded = false

    /// - Throws: `BZip2Error` when libbz2 cannot start.
    init() throws {
        try start()
    }

    deinit { if started { BZ2_bzDecompressEnd(&stream) } }

    private func start() throws {
        stream = bz_stream()
        let status = BZ2_bzDecompressInit(&stream, 0, 0)
        guard status == BZ_OK else { throw BZip2Error(offset: input.consumed, message: "libbz2 cannot start (status \(status))", truncated: false) }
        started = true
    }

    func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if streamEnded {
            guard !input.isEmpty else { return inputEnded ? .finished : .needsInput }
            BZ2_bzDecompressEnd(&stream)
            started = false
            try start()
            streamEnded = false
        }
        if input.isEmpty && !input.outputWasFull && !inputEnded { return .needsInput }
        var status: Int32 = BZ_OK
        var consumed = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            input.bytes.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    buffer.withMemoryRebound(to: CChar.self) { out in
                        stream.next_in = UnsafeMutablePointer(mutating: chars.baseAddress.map { $0 + input.position })
                        stream.avail_in = UInt32(input.remaining)
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(capacity)
                        status = BZ2_bzDecompress(&stream)
                        consumed = input.remaining - Int(stream.avail_in)
                        count = capacity - Int(stream.avail_out)
                    }
                }
            }
            stream.next_in = nil
            stream.next_out = nil
        }
        input.advance(by: consumed)
        input.outputWasFull = output.count == capacity
        switch status {
        case BZ_STREAM_END:
            streamEnded = true
            return .output(output)
        case BZ_OK:
            if !output.isEmpty || consumed > 0 || !input.isEmpty { return .output(output) }
            if inputEnded {
                return try input.fail(BZip2Error(offset: input.consumed, message: "the file ends inside a bzip2 stream (truncated)", truncated: true), after: output)
            }
            input.outputWasFull = false
            return .needsInput
        case BZ_DATA_ERROR_MAGIC:
            return try input.fail(BZip2Error(offset: input.consumed, message: "no bzip2 stream starts here (bad magic)", truncated: false), after: output)
        case BZ_DATA_ERROR:
            return try input.fail(BZip2Error(offset: input.consumed, message: "the compressed data is damaged (a block's checksum or structure is wrong)", truncated: false), after: output)
        case BZ_MEM_ERROR:
            return try input.fail(BZip2Error(offset: input.consumed, message: "out of memory", truncated: false), after: output)
        default:
            return try input.fail(BZip2Error(offset: input.consumed, message: "libbz2 status \(status)", truncated: false), after: output)
        }
    }
}
