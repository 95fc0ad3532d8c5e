import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest

/// The WARC 1.1 file `kiln fetch --warc FILE` writes: a `warcinfo` record, then for every HTTP exchange (robots.txt
/// and redirects included) a `request` record as libcurl sent it and a `response` record — or, for a 304, a `revisit`
/// record with the server-not-modified profile pointing at the capture it confirmed. Each record carries
/// `WARC-Block-Digest` and, for a response, `WARC-Payload-Digest` (SHA-1, base 32). A body is archived as Kiln saved
/// it: decoded, so a `Content-Encoding` or `Transfer-Encoding` header is kept renamed `X-Archive-Orig-…` and
/// `Content-Length` states the archived length. The body of a non-2xx response is not kept (`WARC-Truncated:
/// unspecified` when it had one). A name ending in `.gz` gets one gzip member per record.
///
/// Written to a temporary file beside `FILE` and renamed into place when the fetch ends (`finish`): an interrupted
/// fetch leaves an earlier archive of that name as it was. Workers hand exchanges over by calling `archive`; the file
/// and its record count are behind one `Mutex`.
final class WARCArchive: Sendable {
    /// What a response record holds after the HTTP header.
    enum Body {
        /// Nothing: a 304, a redirect, an error status (whose body, if any, was not kept).
        case none
        /// The decoded body, in this file (the fetch's temporary file or the saved one).
        case file(URL)
        /// The decoded body, in memory (robots.txt).
        case data(Data)
    }

    private struct Output {
        var file: HTTPBodyFile?
        var records = 0
        var failure: String?
    }

    let destination: URL
    private let temporary: URL
    private let compressed: Bool
    private let output: Mutex<Output>

    /// Opens the archive's temporary file and writes the `warcinfo` record describing this fetch.
    /// - Throws: `KilnError.io` when the file cannot be created.
    init(destination: URL, settings: FetchSettings) throws {
        self.destination = destination
        temporary = KilnFileNames.temporary(for: destination)
        compressed = destination.pathExtension.lowercased() == "gz"
        TemporaryFiles.shared.register(temporary)
        let file: HTTPBodyFile
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            file = try HTTPBodyFile(temporary)
        } catch {
            TemporaryFiles.shared.unregister(temporary)
            throw KilnError.io(IOFailure("cannot write the WARC file \(destination.path): \(error)", path: destination.path, operation: .write,
                                         errno: IOFailure.systemCode(error)))
        }
        output = Mutex(Output(file: file))
        var fields = "software: kiln\r\nformat: WARC File Format 1.1\r\n"
        fields += "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
        fields += "http-header-user-agent: \(settings.userAgent)\r\n"
        fields += "robots: \(settings.robots == .obey ? "obey" : "ignore")\r\n"
        if settings.robots == .ignore, let reason = settings.reason { fields += "robots-ignored-because: \(reason)\r\n" }
        let block = Data(fields.utf8)
        var header = WARCFormat.Header()
        header.add("WARC-Type", "warcinfo")
        header.add("WARC-Date", CaptureRecord.timestamp(Date()))
        header.add("WARC-Filename", destination.lastPathComponent)
        header.add("Content-Type", "application/warc-fields")
        let digest = ChecksumDigest(.sha1)
        digest.update(block)
        header.add("WARC-Block-Digest", WARCFormat.label(digest))
        write(header, identity: ["warcinfo", destination.lastPathComponent], block: block, body: .none)
    }

    /// Archives one HTTP exchange: the request as sent (when libcurl reported it) and the response, or a revisit of
    /// `revisiting` (the URL and capture time of the copy a 304 confirmed).
    /// `date`: when the response arrived, as the capture record writes it.
    func archive(target: String, date: String = CaptureRecord.timestamp(Date()), response: HTTPResponse, body: Body, revisiting: (url: String, date: String)? = nil) {
        let block = responseBlock(response, body: body)
        var header = WARCFormat.Header()
        header.add("WARC-Type", revisiting == nil ? "response" : "revisit")
        header.add("WARC-Date", date)
        header.add("WARC-Target-URI", target)
        if !response.address.isEmpty { header.add("WARC-IP-Address", response.address) }
        if let revisiting {
            header.add("WARC-Profile", WARCFormat.serverNotModified)
            header.add("WARC-Refers-To-Target-URI", revisiting.url)
            header.add("WARC-Refers-To-Date", revisiting.date)
        }
        header.add("Content-Type", "application/http;msgtype=response")
        guard let digests = digests(block: block, body: body) else {
            fail("cannot read the body of \(target) back for the WARC file")
            return
        }
        header.add("WARC-Block-Digest", digests.block)
        if revisiting == nil { header.add("WARC-Payload-Digest", digests.payload) }
        if case .none = body, response.transferredBytes > 0 { header.add("WARC-Truncated", "unspecified") }
        let responseID = write(header, identity: ["response", target, date], block: block, body: body)
        guard let responseID, !response.requestHeader.isEmpty else { return }
        var request = WARCFormat.Header()
        request.add("WARC-Type", "request")
        request.add("WARC-Date", date)
        request.add("WARC-Target-URI", target)
        request.add("WARC-Concurrent-To", responseID)
        request.add("Content-Type", "application/http;msgtype=request")
        let digest = ChecksumDigest(.sha1)
        digest.update(response.requestHeader)
        request.add("WARC-Block-Digest", WARCFormat.label(digest))
        write(request, identity: ["request", target, date], block: response.requestHeader, body: .none)
    }

    /// Closes the file, syncs it and renames it over `destination`.
    /// - Throws: `KilnError.io` when a record could not be written or the file cannot be put in place (the temporary
    ///   file is removed).
    func finish() throws {
        let (file, failure) = output.withLock { output -> (HTTPBodyFile?, String?) in
            defer { output.file = nil }
            return (output.file, output.failure)
        }
        file?.close()
        defer {
            FileCalls.unlink(temporary.path)
            TemporaryFiles.shared.unregister(temporary)
        }
        if let failure { throw KilnError.io("the WARC file \(destination.path) was not written: \(failure)") }
        do {
            try FileSync.fsync(temporary)
            try FileSync.move(temporary, to: destination)
        } catch {
            throw KilnError.io(IOFailure("cannot put the WARC file in place at \(destination.path): \(error)", path: destination.path, operation: .rename,
                                         errno: IOFailure.systemCode(error)))
        }
    }

    /// Drops the file written so far (a fetch that could not run): an earlier archive of that name stays.
    func discard() {
        let file = output.withLock { output -> HTTPBodyFile? in
            defer { output.file = nil }
            return output.file
        }
        file?.close()
        FileCalls.unlink(temporary.path)
        TemporaryFiles.shared.unregister(temporary)
    }

    /// The number of records written so far.
    var records: Int { output.withLock { $0.records } }

    /// The response's HTTP header as archived (see the type's comment).
    private func responseBlock(_ response: HTTPResponse, body: Body) -> Data {
        if case .none = body { return response.rawHeader }
        let length = WARCArchive.length(of: body)
        let lines = WARCFormat.lines(of: response.rawHeader)
        func named(_ line: String, _ name: String) -> Bool { line.lowercased().hasPrefix(name + ":") }
        let encoded = lines.contains { named($0, "content-encoding") || named($0, "transfer-encoding") }
        let lengthStated = lines.contains { named($0, "content-length") && $0.dropFirst(15).trimmingCharacters(in: .whitespaces) == "\(length)" }
        guard encoded || !lengthStated else { return response.rawHeader }
        var text = ""
        for line in lines {
            let renamed = named(line, "content-encoding") || named(line, "transfer-encoding") || named(line, "content-length")
            text += (renamed ? "X-Archive-Orig-" : "") + line + "\r\n"
        }
        text += "Content-Length: \(length)\r\n\r\n"
        return Data(text.utf8)
    }

    private static func length(of body: Body) -> Int64 {
        switch body {
        case .none: return 0
        case .data(let data): return Int64(data.count)
        case .file(let url): return FileStatus(path: url.path, followingLinks: true)?.size ?? 0
        }
    }

    /// The SHA-1 of the block (the HTTP header and the body) and of the payload (the body), as WARC labels them.
    private func digests(block: Data, body: Body) -> (block: String, payload: String)? {
        let whole = ChecksumDigest(.sha1)
        let payload = ChecksumDigest(.sha1)
        whole.update(block)
        let fed = each(body) { chunk in
            whole.update(chunk)
            payload.update(chunk)
            return true
        }
        guard fed else { return nil }
        return (WARCFormat.label(whole), WARCFormat.label(payload))
    }

    /// Hands the body to `use` chunk by chunk; false when its file could not be read or `use` stopped.
    private func each(_ body: Body, _ use: (Data) -> Bool) -> Bool {
        switch body {
        case .none: return true
        case .data(let data): return use(data)
        case .file(let url):
            guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
            defer { try? handle.close() }
            while true {
                let chunk: Data?
                do { chunk = try handle.read(upToCount: 256 * 1024) } catch { return false }
                // `nil` or empty: the end of the file.
                guard let chunk, !chunk.isEmpty else { return true }
                guard use(chunk) else { return false }
            }
        }
    }

    /// Writes one record (header, block, body, the two CRLFs that end it), compressed as a gzip member when the file
    /// is `.gz`; returns its identifier, or `nil` once the file failed.
    @discardableResult
    private func write(_ header: WARCFormat.Header, identity: [String], block: Data, body: Body) -> String? {
        output.withLock { output -> String? in
            guard let file = output.file, output.failure == nil else { return nil }
            output.records += 1
            let id = WARCFormat.recordID(["\(output.records)"] + identity)
            var complete = header
            complete.fields.insert(("WARC-Record-ID", id), at: 1)
            complete.add("Content-Length", "\(Int64(block.count) + WARCArchive.length(of: body))")
            let compressor = compressed ? try? GzipCompressor() : nil
            if compressed && compressor == nil {
                output.failure = "zlib could not start"
                return nil
            }
            func put(_ data: Data) -> Bool {
                guard let compressor else { return file.append(data) }
                let packed = compressor.compress(data)
                return packed.isEmpty || file.append(packed)
            }
            var written = put(complete.bytes()) && put(block)
            written = written && each(body, put)
            written = written && put(Data("\r\n\r\n".utf8))
            if written, let compressor { written = file.append(compressor.finish()) }
            guard written else {
                output.failure = file.failure ?? "a body could not be read back"
                return nil
            }
            return id
        }
    }

    private func fail(_ reason: String) {
        output.withLock { output in output.failure = output.failure ?? reason }
    }
}
