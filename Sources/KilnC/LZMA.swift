internal import CLZMA
import Foundation

/// Why liblzma could not decode an xz file: damaged data, a file that ends inside a stream, or a stream that needs
/// more memory than Kiln allows a decoder (`XZDecompressor.memoryLimit`).
package struct LZMAError: DecompressionFailure {
    package let offset: Int
    package let message: String
    package var truncated = false
    package var format: CompressionFormat { .xz }
}

/// Decodes xz with liblzma's stream decoder in concatenated mode: every stream of a file (and the padding between
/// them) is read, as `xz -d` does.
package final class XZDecompressor: StreamDecompressor {
    /// The most memory the decoder may use (its dictionary, chiefly): 512 MiB, eight times what `xz -9` needs.
    package static let memoryLimit: UInt64 = 512 << 20
    private var stream = lzma_stream()
    private var input = PendingInput()

    /// - Throws: `LZMAError` when liblzma cannot start.
    package init() throws {
        let status = lzma_stream_decoder(&stream, XZDecompressor.memoryLimit, kiln_lzma_concatenated)
        guard status == LZMA_OK else { throw LZMAError(offset: 0, message: "liblzma cannot start (status \(status.rawValue))") }
    }

    deinit { lzma_end(&stream) }

    package func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    package func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if input.waitsForInput(inputEnded: inputEnded) { return .needsInput }
        let (output, status, consumed) = input.decode(capacity: capacity) { bytes, buffer in
            stream.next_in = bytes.baseAddress
            stream.avail_in = bytes.count
            stream.next_out = buffer.baseAddress
            stream.avail_out = buffer.count
            let status = lzma_code(&stream, inputEnded ? LZMA_FINISH : LZMA_RUN)
            defer { stream.next_in = nil; stream.next_out = nil }
            return (status, bytes.count - stream.avail_in, buffer.count - stream.avail_out)
        }
        let message: String
        switch status {
        case LZMA_STREAM_END:
            return output.isEmpty ? .finished : .output(output)
        case LZMA_OK:
            if !output.isEmpty || consumed > 0 || !input.isEmpty || inputEnded { return .output(output) }
            input.noteIdle()
            return .needsInput
        case LZMA_BUF_ERROR:
            return try input.fail(LZMAError(offset: input.consumed, message: "the file ends inside an xz stream", truncated: true), after: output)
        case LZMA_FORMAT_ERROR: message = "no xz stream starts here (bad magic)"
        case LZMA_DATA_ERROR: message = "the compressed data is damaged"
        case LZMA_OPTIONS_ERROR: message = "the stream uses options liblzma does not support"
        case LZMA_MEMLIMIT_ERROR: message = "the stream needs more than \(XZDecompressor.memoryLimit >> 20) MiB to decode"
        case LZMA_MEM_ERROR: message = "out of memory"
        default: message = "liblzma status \(status.rawValue)"
        }
        return try input.fail(LZMAError(offset: input.consumed, message: message), after: output)
    }
}
