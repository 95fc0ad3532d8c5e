internal import CZstd
import Foundation

/// Why libzstd could not decode a zstd file: damaged data (libzstd's error name) or a file that ends inside a frame.
package struct ZstdError: DecompressionFailure {
    package let offset: Int
    package let message: String
    package var truncated = false
    package var format: CompressionFormat { .zstd }
}

/// Decodes zstd with libzstd's streaming decoder, frame after frame (and past skippable frames), as `zstd -d` does.
/// libzstd refuses frames whose window is over 128 MiB (its default limit), so a frame cannot make it allocate more.
package final class ZstdDecompressor: StreamDecompressor {
    private let context: OpaquePointer
    private var input = PendingInput()
    /// True when the last frame begun has been decoded whole (nothing pending in the decoder).
    private var frameComplete = false

    /// - Throws: `ZstdError` when libzstd cannot start.
    package init() throws {
        guard let context = ZSTD_createDStream() else { throw ZstdError(offset: 0, message: "libzstd cannot start") }
        self.context = context
    }

    deinit { ZSTD_freeDStream(context) }

    package func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    package func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if input.waitsForInput(inputEnded: inputEnded) { return .needsInput }
        if input.isEmpty && !input.outputWasFull {
            guard frameComplete else {
                throw ZstdError(offset: input.consumed, message: "the file ends inside a zstd frame", truncated: true)
            }
            return .finished
        }
        let (output, result, consumed) = input.decode(capacity: capacity) { bytes, buffer in
            var inBuffer = ZSTD_inBuffer(src: bytes.baseAddress.map(UnsafeRawPointer.init), size: bytes.count, pos: 0)
            var outBuffer = ZSTD_outBuffer(dst: UnsafeMutableRawPointer(buffer.baseAddress), size: buffer.count, pos: 0)
            let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
            return (result, inBuffer.pos, outBuffer.pos)
        }
        if ZSTD_isError(result) != 0 {
            // libzstd buffers a block before it checks it: the damage lies somewhere in the bytes it was given.
            input.passAll()
            return try input.fail(ZstdError(offset: input.consumed, message: String(cString: ZSTD_getErrorName(result))), after: output)
        }
        if output.isEmpty && consumed == 0 {
            // No progress: the frame is where it was (libzstd asks for a next frame's header even after a last one).
            input.noteIdle()
        } else {
            frameComplete = result == 0
        }
        return .output(output)
    }
}
