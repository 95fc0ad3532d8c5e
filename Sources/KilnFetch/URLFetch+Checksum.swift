import Foundation
import KilnC
import KilnCore
import KilnManifest

/// A large download checked against the checksum file its publisher puts beside it (the Wikimedia dumps' sha1sums):
/// the checksum file first — when the saved copy already has that digest, nothing more is requested —, then the
/// download into `.NAME.partial` beside the destination, resumed with `Range` from what an earlier, broken transfer
/// left — with `If-Range`, so that a file changed on the server since comes whole again rather than its tail after the
/// old part —, and renamed into place only once its digest is the published one.
extension URLFetch {
    /// The partial download kept between attempts and runs (not a temporary file: an interruption keeps it).
    var partial: URL { destination.deletingLastPathComponent().appendingPathComponent("." + destination.lastPathComponent + ".partial") }
    /// The `If-Range` value of the response the partial download is part of (`ifRange`), kept beside it as
    /// `.NAME.partial.validator`, written before the first byte of that response.
    var partialValidator: URL { destination.deletingLastPathComponent().appendingPathComponent("." + destination.lastPathComponent + ".partial.validator") }

    /// Drops the partial download and its validator.
    func dropPartial() {
        FileCalls.unlink(partial.path)
        FileCalls.unlink(partialValidator.path)
    }

    /// The `If-Range` value that resumes a body with these response headers only while the file is unchanged (RFC
    /// 9110, 13.1.5): its ETag when strong; with no ETag, its Last-Modified when that is a strong validator, at least
    /// 60 s before the response's Date (8.8.2.2); otherwise none (a weak ETag never).
    static func ifRange(_ headers: [HTTPHeader]) -> String? {
        func value(_ name: String) -> String? { headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        if let etag = value("ETag") {
            let inner = etag.unicodeScalars.dropFirst().dropLast()
            let strong = etag.count >= 2 && etag.hasPrefix("\"") && etag.hasSuffix("\"")
                && inner.allSatisfy { $0.value > 0x20 && $0.value != 0x22 && $0.value != 0x7F }
            return strong ? etag : nil
        }
        guard let modified = value("Last-Modified"), let date = value("Date"), let since = httpDate(modified), let sent = httpDate(date),
              sent.timeIntervalSince(since) >= 60 else { return nil }
        return modified
    }

    func download(checking checksum: PublishedChecksum, saved: SavedCopy, result: URLResult) -> Ending {
        var result = result
        let settings = job.settings
        let name = URLComponents(string: job.url)?.path.split(separator: "/").last.map(String.init) ?? ""
        // The published digest.
        var listed = Data()
        var request = HTTPRequest(url: mirrored(checksum.url), userAgent: settings.userAgent, timeout: settings.timeout, maxBytes: 1_000_000)
        let listing: HTTPResponse
        do {
            listing = try client.get(request) { _, chunk in listed.append(chunk); return true }
        } catch let error as HTTPTransferError {
            result.requests += 1
            return retryOrFail(result, reason: "the checksum file \(checksum.url): \(error.message)", after: URLFetch.backoff(attempt))
        } catch {
            return .finished(failing(result, reason: "\(error)"), nil)
        }
        result.requests += 1
        result.transferredBytes += listing.transferredBytes
        guard (200..<300).contains(listing.status) else {
            return .finished(failing(result, reason: "the checksum file \(checksum.url) answered HTTP \(listing.status)"), nil)
        }
        guard let expected = checksum.digest(in: String(decoding: listed, as: UTF8.self), for: name) else {
            return .finished(failing(result, reason: "the checksum file \(checksum.url) lists no \(checksum.algorithm.rawValue) digest for \(name)"), nil)
        }
        // The saved copy is the published file already: nothing to download.
        if saved.exists, (try? URLFetch.digest(of: destination, checksum.algorithm)) == expected {
            result.status = listing.status
            let now = CaptureRecord.timestamp(Date())
            var entry = capture ?? CaptureRecord.Capture(source: job.source, url: job.url, file: job.file, status: 200, sha256: saved.sha256,
                                                         bytes: Int(saved.bytes), capturedAt: now, verifiedAt: now)
            entry.verifiedAt = now
            return .finished(unchanged(result), entry)
        }
        // The download, resumed from what a broken transfer left.
        let offset = FileStatus(path: partial.path, followingLinks: false).map(\.size) ?? 0
        request = HTTPRequest(url: requested, userAgent: settings.userAgent, timeout: settings.timeout, maxBytes: Int64(settings.maxBytes.bytes))
        request.decode = false
        request.stallSeconds = max(15, Int(settings.timeout / 2))
        if offset > 0 {
            request.headers = ["Range: bytes=\(offset)-"]
            // Only while the file is the one the kept part is of; else the server sends it whole (a 200).
            if let validator = try? String(contentsOf: partialValidator, encoding: .utf8), !validator.isEmpty { request.headers.append("If-Range: \(validator)") }
        }
        let descriptor = FileCalls.open(partial.path, O_WRONLY | O_CREAT | O_CLOEXEC, mode: 0o644)
        guard descriptor >= 0 else { return .finished(failing(result, reason: "cannot write \(partial.path): \(SystemError.lastMessage)"), nil) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var started = false
        var writeFailure: String?
        var headers: [HTTPHeader] = []
        let response: HTTPResponse
        do {
            response = try client.get(request, head: { _, received in headers = received }) { status, chunk in
                do {
                    if !started {
                        started = true
                        if status == 206 {
                            try handle.seekToEnd()
                        } else {
                            // A 200 is the whole file again: what was kept is dropped, and this response's validator
                            // kept before its first byte, for the next resume.
                            FileCalls.unlink(partialValidator.path)
                            try handle.truncate(atOffset: 0)
                            if let validator = URLFetch.ifRange(headers) { try AtomicFile.write(Data(validator.utf8), to: partialValidator) }
                        }
                    }
                    try handle.write(contentsOf: chunk)
                    return true
                } catch {
                    writeFailure = "cannot write \(partial.path): \(error.localizedDescription)"
                    return false
                }
            }
            try? handle.close()
        } catch let error as HTTPTransferError {
            try? handle.close()
            result.requests += 1
            if let writeFailure { return .finished(failing(result, reason: writeFailure), nil) }
            switch error.kind {
            case .timedOut, .connection:
                // What arrived stays in the partial file: the next attempt resumes after it.
                return retryOrFail(result, reason: "\(error.message) (\(FileStatus(path: partial.path, followingLinks: false)?.size ?? 0) bytes kept to resume)",
                                   after: URLFetch.backoff(attempt))
            default:
                return .finished(failing(result, reason: error.message), nil)
            }
        } catch {
            try? handle.close()
            return .finished(failing(result, reason: "\(error)"), nil)
        }
        result.requests += 1
        result.transferredBytes += response.transferredBytes
        result.status = response.status
        if response.status == 416 {
            // The kept part is no prefix of the file (it changed): start again.
            dropPartial()
            return retryOrFail(result, reason: "HTTP 416: the kept part of the download does not fit the file on the server", after: 0)
        }
        guard response.status == 200 || response.status == 206 else {
            if (500...599).contains(response.status) || response.status == 429 {
                return retryOrFail(result, reason: "HTTP \(response.status)", after: URLFetch.retryAfter(response.header("Retry-After")) ?? URLFetch.backoff(attempt))
            }
            return .finished(failing(result, reason: "HTTP \(response.status)"), nil)
        }
        if response.status == 206, !(response.header("Content-Range") ?? "").hasPrefix("bytes \(offset)-") {
            dropPartial()
            return retryOrFail(result, reason: "the server resumed at another offset than asked (\(response.header("Content-Range") ?? "no Content-Range"))", after: 0)
        }
        let found: String, sha256: String
        do {
            found = try URLFetch.digest(of: partial, checksum.algorithm)
            sha256 = try URLFetch.digest(of: partial, .sha256)
        } catch {
            return .finished(failing(result, reason: "cannot read \(partial.path): \(error)"), nil)
        }
        guard found == expected else {
            dropPartial()
            return .finished(failing(result, reason: "the download's \(checksum.algorithm.rawValue) is \(found), not the \(expected) that \(checksum.url) publishes: it is not kept"), nil)
        }
        do {
            try FileSync.move(partial, to: destination, syncingFolder: false)
        } catch {
            return .finished(failing(result, reason: "cannot save \(job.file): \(error)"), nil)
        }
        FileCalls.unlink(partialValidator.path)
        let bytes = FileStatus(path: destination.path, followingLinks: false)?.size ?? 0
        var done = result
        done.outcome = .fetched
        done.reason = nil
        done.keptPrevious = false
        return .finished(done, newCapture(response: response, digest: sha256, bytes: bytes, finalURL: requested))
    }

    /// The hexadecimal digest of the file at `url`, read in 1 MiB chunks.
    static func digest(of url: URL, _ algorithm: ChecksumAlgorithm) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let digest = ChecksumDigest(algorithm)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { digest.update(chunk) }
        return digest.hexDigest()
    }
}
