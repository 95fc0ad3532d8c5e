import Foundation
import KilnC
import KilnCore
import KilnManifest

/// What decides whether a response's body replaces a source's saved file, and what its capture entry says — shared by
/// a fetch (`URLFetch`) and an import from WARC files (`WARCImport`), so that both keep a good copy over a worse one
/// by the same rules.
protocol SnapshotUpdate {
    var job: FetchJob { get }
    /// The URL requested for `job.url` (a mirror's), against which a final URL is recorded.
    var requested: String { get }
    var directory: URL { get }
    /// The URL's entry in the capture record before this update.
    var capture: CaptureRecord.Capture? { get }
    /// When the response's bytes arrived, as the capture record writes times.
    var arrivedAt: String { get }
}

extension SnapshotUpdate {
    var destination: URL { directory.appendingFile(job.file) }

    /// A 2xx body: kept when it is whole and fits, left aside when it is the saved file's bytes.
    func accept(_ result: URLResult, response: HTTPResponse, body: HTTPBodyFile, temporary: URL, saved: URLFetch.SavedCopy, finalURL: String) -> URLFetch.Ending {
        let contentType = response.header("Content-Type")
        guard FetchSettings.accepts(contentType, job.contentTypes) else {
            return .finished(failing(result, reason: "the response is \(contentType ?? "untyped"), which does not fit the source (contentTypes: \(job.contentTypes.joined(separator: ", ")))"), nil)
        }
        let digest = body.digest
        if saved.exists, digest == saved.sha256 {
            let capture = self.capture.map { updated($0, response: response) } ?? newCapture(response: response, digest: digest, bytes: body.bytes, finalURL: finalURL)
            return .finished(unchanged(result), capture)
        }
        if saved.exists, job.settings.minSizeShare > 0, Double(body.bytes) < Double(saved.bytes) * job.settings.minSizeShare {
            let share = Int((job.settings.minSizeShare * 100).rounded())
            return .finished(failing(result, reason: "the new body has \(body.bytes) bytes, less than \(share)% of the saved copy's \(saved.bytes) (minSizeShare): a page that lost most of itself is not taken"), nil)
        }
        do {
            // Put whole into place; the fetch syncs the file system once at its end (`Fetcher`), and the disk starts
            // on this file now, while the next bodies arrive, so that the sync has less left to wait for.
            try FileSync.place(body, at: destination, through: temporary)
        } catch {
            return .finished(failing(result, reason: "cannot save \(job.file): \(error)"), nil)
        }
        var done = result
        done.outcome = .fetched
        done.reason = nil
        done.keptPrevious = false
        return .finished(done, newCapture(response: response, digest: digest, bytes: body.bytes, finalURL: finalURL))
    }

    func newCapture(response: HTTPResponse, digest: String, bytes: Int64, finalURL: String) -> CaptureRecord.Capture {
        let now = arrivedAt
        var entry = CaptureRecord.Capture(source: job.source, url: job.url, file: job.file, status: response.status, sha256: digest,
                                          bytes: Int(bytes), capturedAt: now, verifiedAt: now)
        entry.etag = response.header("ETag")
        entry.lastModified = response.header("Last-Modified")
        entry.contentType = response.header("Content-Type")
        entry.finalURL = finalURL == requested ? nil : finalURL
        return entry
    }

    /// The capture `capture` confirmed now, with the validators the response sent (a 304 may send new ones).
    func updated(_ capture: CaptureRecord.Capture, response: HTTPResponse) -> CaptureRecord.Capture {
        var entry = capture
        entry.verifiedAt = arrivedAt
        if let etag = response.header("ETag") { entry.etag = etag }
        if let modified = response.header("Last-Modified") { entry.lastModified = modified }
        return entry
    }

    func unchanged(_ result: URLResult) -> URLResult {
        var done = result
        done.outcome = .unchanged
        done.keptPrevious = false
        return done
    }

    func failing(_ result: URLResult, reason: String) -> URLResult {
        var failed = result
        failed.outcome = .failed
        failed.reason = reason
        return failed
    }

}
