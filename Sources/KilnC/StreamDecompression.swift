import Foundation

/// Compressed bytes handed to a decoder and not yet consumed, and how many the decoder consumed in all: what the
/// four decompression wrappers (`Zlib.swift`, `BZip2.swift`, `LZMA.swift`, `Zstd.swift`) share. Calls no library.
package struct PendingInput {
    private var bytes: [UInt8] = []
    private var position = 0
    /// Compressed bytes consumed since the file's start.
    package private(set) var consumed = 0
    /// True when the last step filled its whole output: the library may hold more output without new input.
    package private(set) var outputWasFull = false
    /// A failure found in a step that also produced output: thrown by the next step, so that every byte decoded
    /// before the damage is handed out first.
    private var deferredFailure: DecompressionFailure?

    package var isEmpty: Bool { position >= bytes.count }

    package mutating func replace(with next: [UInt8]) {
        bytes = next
        position = 0
    }

    /// True when a step has nothing to do until more input is fed.
    package func waitsForInput(inputEnded: Bool) -> Bool { isEmpty && !outputWasFull && !inputEnded }

    /// One call of a library's decoder: `call` gets the pending input and an output buffer of `capacity` bytes and
    /// returns the library's status with how many bytes it consumed and produced; the consumed bytes are passed over.
    package mutating func decode<Status>(capacity: Int, _ call: (_ input: UnsafeBufferPointer<UInt8>, _ output: UnsafeMutableBufferPointer<UInt8>)
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
    package mutating func passAll() {
        consumed += bytes.count - position
        position = bytes.count
    }

    /// Notes that the last step made no progress: the library holds no more output.
    package mutating func noteIdle() { outputWasFull = false }

    /// Throws the failure a previous step found after its output.
    package func throwDeferred() throws {
        if let deferredFailure { throw deferredFailure }
    }

    /// The step for `failure` found after `output` was decoded: the output now and the failure next time, or the
    /// failure at once.
    package mutating func fail(_ failure: DecompressionFailure, after output: [UInt8]) throws -> DecompressionStep {
        guard !output.isEmpty else { throw failure }
        deferredFailure = failure
        return .output(output)
    }
}

/// A compressed file format Kiln reads transparently, recognised by its first bytes (never by the file's name).
package enum CompressionFormat: String, Sendable, CaseIterable {
    case gzip, bzip2, xz, zstd

    /// The format whose magic number starts `bytes`, or `nil` for anything else (read as it is). A bzip2 file of
    /// ten bytes or more must also show a block or end-of-stream marker after its `BZh1`…`BZh9` header, so that a
    /// text that happens to start with those letters stays text.
    package static func detect<Bytes: Collection>(_ bytes: Bytes) -> CompressionFormat? where Bytes.Element == UInt8 {
        let head = Array(bytes.prefix(10))
        if head.starts(with: [0x1F, 0x8B, 0x08]) { return .gzip }
        if head.starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .xz }
        if head.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if head.starts(with: [0x42, 0x5A, 0x68]), head.count >= 4, (0x31...0x39).contains(head[3]) {
            guard head.count == 10 else { return .bzip2 }
            let marker = Array(head[4...])
            return marker == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59] || marker == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90] ? .bzip2 : nil
        }
        return nil
    }

    /// How many leading bytes `detect` looks at.
    package static let magicLength = 10

    /// The usual media type of a file in this format.
    package var mediaType: String {
        switch self {
        case .gzip: return "application/gzip"
        case .bzip2: return "application/x-bzip2"
        case .xz: return "application/x-xz"
        case .zstd: return "application/zstd"
        }
    }
}

/// What a streaming decompressor does with the compressed bytes it holds, one bounded step at a time.
package enum DecompressionStep {
    /// Decompressed bytes (possibly none, when only headers were consumed): call `step` again.
    case output([UInt8])
    /// Everything fed has been decoded: feed the next compressed bytes.
    case needsInput
    /// The compressed input ended where a stream (member, frame) ended: the whole file is decoded.
    case finished
}

/// Why decompression stopped: the archive is damaged or truncated. `offset` is the count of compressed bytes the
/// library had consumed when it found the problem (for a truncated file, its length).
package protocol DecompressionFailure: Error, CustomStringConvertible {
    var format: CompressionFormat { get }
    var offset: Int { get }
    /// The library's words for the problem.
    var message: String { get }
    /// True when the file ends inside a stream (as opposed to bytes that are not valid).
    var truncated: Bool { get }
}

extension DecompressionFailure {
    package var description: String { "\(format.rawValue): \(message)\(truncated ? " (truncated)" : "") at compressed byte \(offset)" }
}

/// A streaming decoder of one compressed format that reads every stream of a file made of several concatenated
/// ones (gzip members, bzip2 multistream, xz streams, zstd frames). Memory is bounded: each step produces at most
/// `capacity` bytes, however much the fed bytes inflate to. Not `Sendable`: it owns a library's state.
package protocol StreamDecompressor: AnyObject {
    /// Hands the decoder the next compressed bytes; only after `step` asked for them (`.needsInput`).
    func feed(_ bytes: [UInt8])
    /// Decodes at most `capacity` bytes; `inputEnded` says that the file has no more bytes to feed.
    /// - Throws: the wrapper's `DecompressionFailure` for damaged data, or data that ends inside a stream.
    func step(capacity: Int, inputEnded: Bool) throws -> DecompressionStep
}
