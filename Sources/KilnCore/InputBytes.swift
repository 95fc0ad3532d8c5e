import Foundation
import KilnC

/// The bytes of one input file as every reader sees them: the file's own bytes, or, when its first bytes are the
/// magic number of gzip, bzip2, xz or zstd (`CompressionFormat.detect`, never the file's name), the decompressed
/// text of all its streams. Decompression streams in bounded memory: a bounded number of 256 KiB chunks wait at
/// once, however much the file inflates to. A compressed file is decoded on a thread of its own (unless `threaded`
/// is false: `ThreadSettings.decompressionThread`), ahead of the reader, through a `BoundedQueue`.
///
/// A truncated or damaged archive ends the bytes where the damage is; with a log, that is reported there
/// (`input.compression`, with the format and the compressed byte offset) and the reader keeps what came before,
/// without one it throws. A reader that stops early (on an error of its own) still gets the damage reported when it
/// lies within `checkedAfterStop` decompressed bytes of that place. The file's digest is computed elsewhere, over the bytes on disk.
/// Not `Sendable`: it owns a file handle (or the decoding thread's queue).
package final class InputBytes: ByteStream {
    /// The compression found at the file's start, or `nil` for a file read as it is.
    package let format: CompressionFormat?
    /// The most decompressed bytes a reader that needs a whole file (`readAll`) takes from a compressed one: 1 GiB.
    package static let wholeFileLimit = 1 << 30
    /// Decompressed bytes per chunk.
    package static let outputChunk = 1 << 18
    /// Compressed bytes read from the file at a time.
    package static let inputChunk = 1 << 16
    /// Decompressed chunks that may wait between the decoding thread and the reader.
    package static let queuedChunks = 8

    private let url: URL
    private let name: String
    private let log: DiagnosticLog?
    private var source: Source
    private var pending: [UInt8] = []
    private var pendingPosition = 0
    private var ended = false
    /// True once the bytes ended at a damaged or truncated archive (reported).
    package private(set) var isDamaged = false

    /// Where the bytes come from.
    private enum Source {
        case plain(FileHandle)
        case inline(DecodingPump)
        case queue(BoundedQueue<DecodedChunk>)
    }

    /// Opens `url`; `name` is how messages call it (the path relative to the pipeline folder).
    /// - Parameter log: where a damaged archive is reported; without one, reading it throws.
    /// - Parameter threaded: false to decode a compressed file on the reader's thread, for comparison.
    /// - Throws: `KilnError.io` when the file cannot be opened or read.
    package init(url: URL, name: String, log: DiagnosticLog?, threaded: Bool = true) throws {
        self.url = url
        self.name = name
        self.log = log
        let handle: FileHandle
        let magic: [UInt8]
        handle = try InputIdentity.shared.open(url, name: name)
        do {
            magic = [UInt8](try handle.read(upToCount: CompressionFormat.magicLength) ?? Data())
            try handle.seek(toOffset: 0)
        } catch {
            throw CannotRead.error(url, named: name, error)
        }
        format = CompressionFormat.detect(magic)
        guard let format else {
            source = .plain(handle)
            return
        }
        let size = (try? handle.seekToEnd()).map(Int.init) ?? 0
        do { try handle.seek(toOffset: 0) } catch { throw CannotRead.error(url, named: name, error) }
        let pump = DecodingPump(handle: handle, format: format, fileSize: size, name: name)
        guard threaded else {
            source = .inline(pump)
            return
        }
        let queue = BoundedQueue<DecodedChunk>(capacity: InputBytes.queuedChunks)
        source = .queue(queue)
        let work = Handoff(pump)
        DetachedThread.start(name: "kiln decompress") {
            var pump = work.value
            while let chunk = pump.next() {
                guard queue.push(chunk) else { break }
            }
            queue.finish()
        }
    }

    /// Decompressed bytes looked through, at most, for damage after the place a reader stopped at: 256 MiB.
    package static let checkedAfterStop = 1 << 28

    /// Lets the file go without looking at the rest: for a reader that stops on purpose (it read a header, or
    /// hands the file to another parse).
    package func close() {
        ended = true
    }

    deinit {
        // A reader that stopped before the end (on an error of its own, often the garbage a damaged archive decodes
        // to before its checksum says so) still learns whether the archive is damaged after that place.
        if !ended, format != nil, log != nil {
            var checked = 0
            while checked < InputBytes.checkedAfterStop, let chunk = try? nextChunk() { checked += chunk.count }
        }
        switch source {
        case .plain(let handle): try? handle.close()
        case .inline(let pump): pump.close()
        case .queue(let queue): queue.cancel()
        }
    }

    package func read(into buffer: inout [UInt8], upTo count: Int) throws -> Int {
        // A plain file read in large requests goes straight from the file into `buffer`; small requests (libxml2
        // asks for 4 000 bytes at a time) are served from a chunk read ahead.
        if case .plain(let handle) = source, pendingPosition >= pending.count, count >= InputBytes.inputChunk {
            return try readPlain(handle, into: &buffer, upTo: count)
        }
        while pendingPosition >= pending.count {
            guard !ended, let chunk = try nextChunk() else {
                ended = true
                return 0
            }
            pending = chunk
            pendingPosition = 0
        }
        let taken = min(count, pending.count - pendingPosition)
        buffer.append(contentsOf: pending[pendingPosition..<pendingPosition + taken])
        pendingPosition += taken
        return taken
    }

    private func readPlain(_ handle: FileHandle, into buffer: inout [UInt8], upTo count: Int) throws -> Int {
        do {
            guard let data = try handle.read(upToCount: count), !data.isEmpty else { return 0 }
            BuildMeter.shared.readBytes(data.count)
            buffer.append(contentsOf: data)
            return data.count
        } catch {
            throw CannotRead.error(url, named: name, error)
        }
    }

    /// The next chunk of a plain file, or the next decompressed chunk; `nil` at the end (after reporting a damaged
    /// archive).
    private func nextChunk() throws -> [UInt8]? {
        let chunk: DecodedChunk?
        switch source {
        case .plain(let handle):
            var bytes: [UInt8] = []
            return try readPlain(handle, into: &bytes, upTo: InputBytes.inputChunk) > 0 ? bytes : nil
        case .inline(var pump):
            chunk = pump.next()
            source = .inline(pump)
        case .queue(let queue):
            chunk = queue.pop()
        }
        switch chunk {
        case nil: return nil
        case .bytes(let bytes)?: return bytes
        case .unreadable(let message)?: throw KilnError.io(IOFailure("cannot read \(name): \(message)", path: url.path, operation: .read))
        case .damaged(let problem)?:
            isDamaged = true
            let message = problem.message
            guard let log else { throw KilnError.io(IOFailure("\(name): \(message)", path: url.path, operation: .read)) }
            log.report(.inputCompression, message, at: Provenance(file: name, line: nil))
            return nil
        }
    }

    /// Every byte to the end, for a reader that needs the whole file at once; `nil` (reported, or thrown without a
    /// log) when a compressed file inflates past `limit` bytes. A file read as it is has no such limit: its size on
    /// disk is its size.
    /// - Throws: `KilnError.io` when the file cannot be read.
    package func readAll(limit: Int = InputBytes.wholeFileLimit) throws -> [UInt8]? {
        var bytes: [UInt8] = []
        while try read(into: &bytes, upTo: InputBytes.outputChunk) > 0 {
            if let format, bytes.count > limit {
                let message = "the \(format.rawValue)-compressed file inflates past \(limit) bytes, more than a reader that needs "
                    + "the whole file takes; it is not read (decompress it, or split it)"
                guard let log else { throw KilnError.io(IOFailure("\(name): \(message)", path: url.path, operation: .read)) }
                log.report(.inputCompression, message, at: Provenance(file: name, line: nil))
                return nil
            }
        }
        return bytes
    }

    package func leadingBytes(_ count: Int) -> [UInt8] {
        InputBytes.prefix(of: url, name: name, count: count)?.bytes ?? []
    }

    /// The first `count` bytes of the file as readers see it (decompressed on this thread), and whether they are all
    /// of it (the file, or its last stream, ended cleanly within them); `nil` when the file cannot be read or is
    /// damaged there.
    package static func prefix(of url: URL, name: String, count: Int) -> (bytes: [UInt8], complete: Bool)? {
        guard let bytes = try? InputBytes(url: url, name: name, log: nil, threaded: false) else { return nil }
        var prefix: [UInt8] = []
        do {
            while prefix.count < count, try bytes.read(into: &prefix, upTo: count - prefix.count) > 0 {}
            guard prefix.count < count else { return (prefix, false) }
            return (prefix, true)
        } catch {
            return nil
        }
    }
}

/// What the decoding thread hands the reader.
private enum DecodedChunk: Sendable {
    case bytes([UInt8])
    /// The archive is damaged or truncated.
    case damaged(CompressionProblem)
    /// Reading the file failed.
    case unreadable(String)
}

/// A `DecompressionFailure` as a value another thread can take.
private struct CompressionProblem: Sendable {
    package let format: CompressionFormat
    package let offset: Int
    package let fileSize: Int
    package let detail: String
    package let truncated: Bool

    package var message: String {
        let what = truncated ? "is truncated: the file ends inside a stream" : "is damaged: \(detail)"
        return "the \(format.rawValue)-compressed file \(what) (found at compressed byte \(offset) of \(fileSize)); "
            + "what came before it was read, the rest is not"
    }
}

/// Reads a compressed file and decodes it one bounded chunk at a time. Used by one thread at a time.
private struct DecodingPump {
    package let handle: FileHandle
    package let decoder: StreamDecompressor?
    package let format: CompressionFormat
    package let fileSize: Int
    package let name: String
    private var inputEnded = false
    private var done = false
    private var startFailure: DecodedChunk?

    package init(handle: FileHandle, format: CompressionFormat, fileSize: Int, name: String) {
        self.handle = handle
        self.format = format
        self.fileSize = fileSize
        self.name = name
        do {
            decoder = try format.makeDecompressor()
        } catch {
            decoder = nil
            startFailure = DecodingPump.chunk(for: error, format: format, fileSize: fileSize)
        }
    }

    package func close() { try? handle.close() }

    /// The next chunk, or `nil` once the file is decoded to its end (or after a failure was handed out).
    package mutating func next() -> DecodedChunk? {
        guard !done else { return nil }
        guard let decoder else {
            done = true
            return startFailure
        }
        do {
            while true {
                switch try decoder.step(capacity: InputBytes.outputChunk, inputEnded: inputEnded) {
                case .output(let bytes):
                    if !bytes.isEmpty { return .bytes(bytes) }
                case .needsInput:
                    let data = try handle.read(upToCount: InputBytes.inputChunk) ?? Data()
                    BuildMeter.shared.readBytes(data.count)
                    if data.isEmpty { inputEnded = true } else { decoder.feed([UInt8](data)) }
                case .finished:
                    done = true
                    close()
                    return nil
                }
            }
        } catch {
            done = true
            close()
            return DecodingPump.chunk(for: error, format: format, fileSize: fileSize)
        }
    }

    private static func chunk(for error: Error, format: CompressionFormat, fileSize: Int) -> DecodedChunk {
        guard let failure = error as? DecompressionFailure else { return .unreadable(error.localizedDescription) }
        return .damaged(CompressionProblem(format: failure.format, offset: failure.offset, fileSize: fileSize,
                                           detail: failure.message, truncated: failure.truncated))
    }
}
