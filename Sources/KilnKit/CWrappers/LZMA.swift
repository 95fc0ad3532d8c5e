import CLZMA
import Foundation

/// Why liblzma could not decode an xz file: damaged data, a file that ends inside a stream, or a stream that needs
/// more memory than Kiln allows a decoder (`XZDecompressor.memoryLimit`).
struct LZMAError: DecompressionFailure, CustomStringConvertible {
    let offset: Int
    let message: String
    let truncated: Bool
    var format: CompressionFormat { .xz }
    var description: String { "xz: \(message) at compressed byte \(offset)" }
}

/// Decodes xz with liblzma's stream decoder in concatenated mode: every stream of a file (and the padding between
/// them) is read, as `xz -d` does.
final class XZDecompressor: StreamDecompressor {
    /// The most memory the decoder may use (its dictionary, chiefly): 512 MiB, eight times what `xz -9` needs.
    static let memoryLimit: UInt64 = 512 << 20
    private var stream = lzma_stream()
    private var input = PendingInput()

    /// - Throws: `LZMAError` when liblzma cannot start.
    init() throws {
        let status = lzma_stream_decoder(&stream, XZDecompressor.memoryLimit, kiln_lzma_concatenated)
        guard status == LZMA_OK else { throw LZMAError(offset: 0, message: "liblzma cannot start (status \(status.rawValue))", truncated: false) }
    }

    deinit { lzma_end(&stream) }

    func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if input.isEmpty && !input.outputWasFull && !inputEnded { return .needsInput }
        var status = LZMA_OK
        var consumed = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            input.bytes.withUnsafeBufferPointer { bytes in
                stream.next_in = bytes.baseAddress.map { $0 + input.position }
                stream.avail_in = input.remaining
                stream.next_out = buffer.baseAddress
                stream.avail_out = capacity
                status = lzma_code(&stream, inputEnded ? LZMA_FINISH : LZMA_RUN)
                consumed = input.remaining - stream.avail_in
                count = capacity - stream.avail_out
            }
            stream.next_in = nil
            stream.next_out = nil
        }
        input.advance(by: consumed)
        input.outputWasFull = output.count == capacity
        switch status {
        case LZMA_STREAM_END:
            return output.isEmpty ? .finished : .output(output)
        case LZMA_OK:
            if !output.isEmpty || consumed > 0 || !input.isEmpty || inputEnded { return .output(output) }
            input.outputWasFull = false
            return .needsInput
        case LZMA_BUF_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "the file ends inside an xz stream (truncated)", truncated: true), after: output)
        case LZMA_FORMAT_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "no xz stream starts here (bad magic)", truncated: false), after: output)
        case LZMA_DATA_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "the compressed data is damaged", truncated: false), after: output)
        case LZMA_OPTIONS_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "the stream uses options liblzma does not support", truncated: false), after: output)
        case LZMA_MEMLIMIT_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "the stream needs more than \(XZDecompressor.memoryLimit >> 20) MiB to decode", truncated: false), after: output)
        case LZMA_MEM_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "out of memory", truncated: false), after: output)
        default:
            return try input.fail(LZMAError(offset: input.consumed, message: "liblzma status \(status.rawValue)", truncated: false), after: output)
        }
    }
}
