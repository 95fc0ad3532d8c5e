import Foundation
import KilnC
import KilnCore

/// Reads the records of a WARC file (1.0 or 1.1; plain, or gzip whether one member per record or one for the file)
/// one after another in bounded memory: a record's header is parsed, and its block is streamed or skipped.
/// Not `Sendable`: it owns the file's bytes.
final class WARCReader {
    /// A record's header and where it is.
    struct Record {
        /// Its place in the file: 1 for the first record.
        var number: Int
        /// The decompressed byte offset of its version line.
        var offset: Int64
        var header: WARCFormat.Header
        var length: Int64

        var type: String { header.value("WARC-Type")?.lowercased() ?? "" }
        var targetURI: String? { header.value("WARC-Target-URI").map(WARCReader.unbracketed) }
        var date: String { header.value("WARC-Date") ?? "" }
    }

    /// The file as messages name it.
    let name: String
    private let bytes: InputBytes
    private var buffer: [UInt8] = []
    private var position = 0
    private var consumed: Int64 = 0
    private var remaining: Int64 = 0
    private var count = 0
    /// The longest header line or HTTP header accepted.
    static let maximumHeaderBytes = 1 << 20

    /// Opens `url` (`name`: how messages call it).
    /// - Throws: `KilnError.io` when it cannot be opened.
    init(url: URL, name: String) throws {
        self.name = name
        bytes = try InputBytes(url: url, name: name, log: nil)
    }

    /// The next record's header; `nil` at the end of the file. The block of the record before is skipped if it was
    /// not read.
    /// - Throws: `KilnError.input` naming the file and the record's offset when it is not a WARC record.
    func next() throws -> Record? {
        try skipBlock()
        // Records end with two CRLFs; tools differ on how many blank lines they leave, so blank lines are skipped.
        var line: [UInt8]
        repeat {
            guard let read = try readLine() else { return nil }
            line = read
        } while line.isEmpty
        let offset = consumed - Int64(line.count) - 2
        let version = String(decoding: line, as: UTF8.self)
        guard version.hasPrefix("WARC/") else {
            throw failure("expected a WARC record's version line (WARC/1.0 or WARC/1.1) at byte \(offset), found \"\(version.prefix(40))\"")
        }
        var header = WARCFormat.Header()
        while true {
            guard let field = try readLine() else { throw failure("the file ends inside the header of the record at byte \(offset)") }
            if field.isEmpty { break }
            let text = String(decoding: field, as: UTF8.self)
            if let first = field.first, first == 0x20 || first == 0x09, !header.fields.isEmpty {
                header.fields[header.fields.count - 1].value += " " + text.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let field = HTTPHeader(line: text) else { throw failure("a header line of the record at byte \(offset) has no colon: \"\(text.prefix(60))\"") }
            header.fields.append((field.name, field.value))
        }
        guard let lengthText = header.value("Content-Length"), let length = Int64(lengthText), length >= 0 else {
            throw failure("the record at byte \(offset) has no valid Content-Length")
        }
        count += 1
        remaining = length
        return Record(number: count, offset: offset, header: header, length: length)
    }

    /// Up to `limit` bytes of the current block, up to and including the first blank line (CRLF CRLF, or LF LF): an
    /// HTTP message's header. `nil` when the block has no blank line within the limit.
    func readHTTPHeader(limit: Int = WARCReader.maximumHeaderBytes) throws -> Data? {
        var header = Data()
        while remaining > 0, header.count < limit {
            guard let byte = try readByte() else { break }
            remaining -= 1
            header.append(byte)
            if header.count >= 2, byte == 0x0A {
                let count = header.count
                if header[count - 2] == 0x0A || (count >= 4 && header[count - 2] == 0x0D && header[count - 3] == 0x0A) { return header }
            }
        }
        return nil
    }

    /// Hands the rest of the current block to `use` chunk by chunk; `use` returns false to stop.
    /// - Throws: `KilnError.input` when the file ends inside the block.
    func readBlock(_ use: (Data) throws -> Bool) throws {
        while remaining > 0 {
            if position == buffer.count { guard try fill() else { throw failure("the file ends inside the block of record \(count)") } }
            let take = min(Int(remaining), buffer.count - position)
            let chunk = Data(buffer[position..<(position + take)])
            position += take
            consumed += Int64(take)
            remaining -= Int64(take)
            guard try use(chunk) else { return }
        }
    }

    /// Skips what is left of the current block.
    func skipBlock() throws {
        while remaining > 0 {
            if position == buffer.count { guard try fill() else { throw failure("the file ends inside the block of record \(count)") } }
            let take = min(Int(remaining), buffer.count - position)
            position += take
            consumed += Int64(take)
            remaining -= Int64(take)
        }
    }

    /// A URI as WARC 1.0 writers bracket it (`<http://…>`), without the brackets.
    static func unbracketed(_ uri: String) -> String {
        uri.hasPrefix("<") && uri.hasSuffix(">") ? String(uri.dropFirst().dropLast()) : uri
    }

    private func readLine() throws -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            guard let byte = try readByte() else { return line.isEmpty ? nil : line }
            if byte == 0x0A {
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            line.append(byte)
            if line.count > WARCReader.maximumHeaderBytes { throw failure("a header line longer than \(WARCReader.maximumHeaderBytes) bytes") }
        }
    }

    private func readByte() throws -> UInt8? {
        if position == buffer.count { guard try fill() else { return nil } }
        let byte = buffer[position]
        position += 1
        consumed += 1
        return byte
    }

    private func fill() throws -> Bool {
        buffer.removeAll(keepingCapacity: true)
        position = 0
        return try bytes.read(into: &buffer, upTo: 256 * 1024) > 0
    }

    private func failure(_ message: String) -> KilnError {
        .validation("\(name): not a readable WARC file: " + message)
    }
}
