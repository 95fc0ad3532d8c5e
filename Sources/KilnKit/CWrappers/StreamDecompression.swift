import Foundation

/// Compressed bytes handed to a decoder and not yet consumed, and how many the decoder consumed in all: what the
/// four decompression wrappers (`Zlib.swift`, `BZip2.swift`, `LZMA.swift`, `Zstd.swift`) share. Calls no library.
struct PendingInput {
    private var bytes: [UInt8] = []
    private var position = 0
    /// Compressed bytes consumed since the file's start.
    private(set) var consumed = 0
    /// True when the last step filled its whole output: the library may hold more output without new input.
    private(set) var outputWasFull = false
    /// A failure found in a step that also produced output: thrown by the next step, so that every byte decoded
    /// before the damage is handed out first.
    private var deferredFailure: DecompressionFailure?

    var isEmpty: Bool { position >= bytes.count }

    mutating func replace(with next: [UInt8]) {
        bytes = next
        position = 0
    }

    /// True when a step has nothing to do until more input is fed.
    func waitsForInput(inputEnded: Bool) -> Bool { isEmpty && !outputWasFull && !inputEnded }

    /// One call of a library's decoder: `call` gets the pending input and an output buffer of `capacity` bytes and
    /// returns the library's status with how many bytes it consumed and produced; the consumed bytes are passed over.
    mutating func decode<Status>(capacity: Int, _ call: (_ input: UnsafeBufferPointer<UInt8>, _ output: UnsafeMutableBufferPointer<UInt8>)
        -> (status: Status, consumed: Int, produced: Int)) -> (output: [UInt8], status: Status, consumed: Int) {
        var result: (status: Status, consumed: Int, produced: Int)?
        let start = position
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            bytes.withUnsafeBufferPointer { all in
                let rest = UnsafeBufferPointer(rebasing: all[start...])
                result = call(rest, buffer)
            }
            count = result!.produced
        }
        position += result!.consumed
        consumed += result!.consumed
        outputWasFull = output.count == capacity
        return (output, result!.status, result!.consumed)
    }

    /// The pending bytes all taken (libzstd buffers a block before it checks it: the damage lies somewhere in them).
    mutating func passAll() {
        consumed += bytes.count - position
        position = bytes.count
    }

    /// Notes that the last step made no progress: the library holds no more output.
    mutating func noteIdle() { outputWasFull = false }

    /// Throws the failure a previous step found after its output.
    func throwDeferred() throws {
        if let deferredFailure { throw deferredFailure }
    }

    /// The step for `failure` found after `output` was decoded: the output now and the failure next time, or the
    /// failure at once.
    mutating func fail(_ failure: DecompressionFailure, after output: [UInt8]) throws -> DecompressionStep {
        guard !output.isEmpty else { throw failure }
        deferredFailure = failure
        return .output(output)
    }
}
