import CZstd
import Foundation

/// Why libzstd could not decode a zstd file: damaged data (libzstd's error name) or a file that ends inside a frame.
struct ZstdError: DecompressionFailure, CustomStringConvertible {
    let offset: Int
    let message: String
    let truncated: Bool
    var format: CompressionFormat { .zstd }
    var description: String { "zstd: \(message) at compressed byte \(offset)" }
}

/// Decodes zstd with libzstd's streaming decoder, frame after frame (and past skippable frames), as `zstd -d` does.
/// libzstd refuses frames whose window is over 128 MiB (its default limit), so a frame cannot make it allocate more.
final class ZstdDecompressor: StreamDecompressor {
    private let context: OpaquePointer
    private var input = PendingInput()
    /// True when the last frame begun has been decoded whole (nothing pending in the decoder).
    private var frameComplete = false

    /// - Throws: `ZstdError` when libzstd cannot start.
    init() throws {
        guard let context = ZSTD_createDStream() else { throw ZstdError(offset: 0, message: "libzstd cannot start", truncated: false) }
        self.context = context
    }

    deinit { ZSTD_freeDStream(context) }

    func feed(_ bytes: [UInt8]) { input.replace(with: bytes) }

    func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep {
        try input.throwDeferred()
        if input.isEmpty && !input.outputWasFull {
            if inputEnded {
                guard frameComplete else {
                    throw ZstdError(offset: input.consumed, message: "the file ends inside a zstd frame (truncated)", truncated: true)
                }
                return .finished
            }
            return .needsInput
        }
        var result = 0
        var consumed = 0
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            input.bytes.withUnsafeBufferPointer { bytes in
                var inBuffer = ZSTD_inBuffer(src: bytes.baseAddress.map { UnsafeRawPointer($0 + input.position) }, size: input.remaining, pos: 0)
                var outBuffer = ZSTD_outBuffer(dst: UnsafeMutableRawPointer(buffer.baseAddress), size: capacity, pos: 0)
                result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                consumed = inBuffer.pos
                count = outBuffer.pos
            }
        }
        if ZSTD_isError(result) != 0 {
            // libzstd buffers a block before it checks it: the damage lies somewhere in the bytes it was given.
            input.advance(by: input.remaining)
            return try input.fail(ZstdError(offset: input.consumed, message: String(cString: ZSTD_getErrorName(result)), truncated: false), after: output)
        }
        input.advance(by: consumed)
        input.outputWasFull = output.count == capacity
        if output.isEmpty && consumed == 0 {
            // No progress: the frame is where it was (libzstd asks for a next frame's header even after a last one).
            input.outputWasFull = false
        } else {
            frameComplete = result == 0
        }
        return .output(output)
    }
}
