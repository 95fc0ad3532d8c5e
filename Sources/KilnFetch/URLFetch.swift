import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnBuild

/// One attempt at one URL: a conditional GET from the last capture, redirects followed by hand, the body streamed to
/// a temporary file beside its destination while its SHA-256 is computed, and then the checks that decide whether it
/// replaces the saved file — a good copy is never replaced by a worse one (an error status, a cut body, a content
/// type that does not fit the source, a page that lost most of its size).
struct URLFetch: SnapshotUpdate {
    /// How an attempt ended.
    enum Ending {
        /// The URL is done: its result, and its capture entry when there is one to record.
        case finished(URLResult, CaptureRecord.Capture?)
        /// Worth another attempt after this many seconds (a timeout, a reset, a 5xx, a 429 or 503's `Retry-After`);
        /// the result says what this attempt cost.
        case retry(after: TimeInterval, URLResult)

        /// Whether the URL is done with a new body saved.
        var isFetched: Bool {
            if case .finished(let result, _) = self { return result.outcome == .fetched }
            return false
        }
    }

    let job: FetchJob
    /// The URL requested for `job.url` (a mirror's, `FetchOptions.mirrors`).
    let requested: String
    /// Any URL as it is requested (the mirrors applied).
    let mirrored: @Sendable (String) -> String
    let attempt: Int
    let directory: URL
    let capture: CaptureRecord.Capture?
    /// The robots.txt rules read in this fetch, which a redirect's target is checked against.
    let robots: RobotsMemo
    let client: HTTPClient
    /// Where each exchange is archived (`kiln fetch --warc`), if anywhere.
    var archive: WARCArchive? = nil
    /// What decides that an address is non-public (`FetchOptions.isNonPublic`).
    var isNonPublic: AddressClassifier = HTTPClient.standardClassifier

    /// When the response being handled arrived (set by `run` for each response; now, before one has).
    var arrival: Date? = nil
    var arrivedAt: String { CaptureRecord.timestamp(arrival ?? Date()) }

    /// Runs the attempt.
    func run() -> Ending {
        var result = URLResult(source: job.source, url: job.url, file: job.file, outcome: .failed)
        let saved = URLFetch.savedCopy(for: capture, in: directory, file: job.file)
        result.keptPrevious = saved.exists
        if let checksum = job.checksum { return download(checking: checksum, saved: saved, result: result) }
        // The folders were made before the workers started (`Fetcher`).
        let temporary = KilnFileNames.temporary(for: destination)
        TemporaryFiles.shared.register(temporary)
        var named = false
        let ending = exchange(result, saved: saved, through: temporary, named: &named)
        // Only a body written under the temporary name and not renamed into place leaves a file to remove.
        if named, !ending.isFetched { FileCalls.unlink(temporary.path) }
        TemporaryFiles.shared.unregister(temporary)
        return ending
    }

    /// The requests of the attempt, redirects followed, each body written to a file without a name in the folder of
    /// `temporary`, or to `temporary` itself (then `named` is set).
    private func exchange(_ result: URLResult, saved: SavedCopy, through temporary: URL, named: inout Bool) -> Ending {
        var result = result
        let settings = job.settings
        var url = requested
        var redirects = 0
        var firstAddressPublic: Bool?
        while true {
            var request = HTTPRequest(url: url, userAgent: settings.userAgent, timeout: settings.timeout, maxBytes: Int64(settings.maxBytes.bytes))
            // Validators for the URL the manifest lists, or the one it last redirected to, and only while the file they
            // describe is there as saved.
            let validated = saved.matches && (redirects == 0 || url == capture?.finalURL)
            if validated { request.headers = URLFetch.validators(for: capture, in: directory) }
            request.refuseNonPublicAddresses = firstAddressPublic == true
            request.isNonPublic = isNonPublic
            request.keepsRequestHeader = archive != nil
            let body: HTTPBodyFile
            do {
                // Unnamed unless an archive reads the body back by its name: kept, it takes one call on the folder.
                body = archive == nil ? try HTTPBodyFile(unnamedIn: temporary.deletingLastPathComponent(), orAt: temporary) : try HTTPBodyFile(temporary)
            } catch {
                return .finished(failing(result, reason: "cannot write \(temporary.path): \(error)"), nil)
            }
            if !body.isUnnamed { named = true }
            let response: HTTPResponse
            do {
                // Left open: an unnamed body is linked into place by its descriptor (`FileSync.place`).
                response = try client.get(request, into: body)
            } catch let error as HTTPTransferError {
                body.close()
                result.requests += 1
                switch error.kind {
                case .timedOut, .connection:
                    return retryOrFail(result, reason: error.message, after: URLFetch.backoff(attempt))
                case .tooLarge:
                    return .finished(failing(result, reason: "\(error.message) (limit maxBytes: \(settings.maxBytes.phrase))"), nil)
                case .nonPublicAddress:
                    return .finished(failing(result, reason: "a redirect from a public host led to a non-public address: \(error.message)"), nil)
                case .refusedByReceiver:
                    return .finished(failing(result, reason: body.failure ?? error.message), nil)
                case .other:
                    return .finished(failing(result, reason: error.message), nil)
                }
            } catch {
                body.close()
                return .finished(failing(result, reason: "\(error)"), nil)
            }
            result.requests += 1
            result.transferredBytes += response.transferredBytes
            result.status = response.status
            // One instant for the response: its capture entry's time and its archived record's date.
            var this = self
            this.arrival = Date()
            if let archive {
                let bodyKept = (200...299).contains(response.status) && response.status != 206
                let confirmed = response.status == 304 && validated ? capture.map { (url: $0.finalURL ?? requested, date: $0.capturedAt) } : nil
                archive.archive(target: url, date: this.arrivedAt, response: response, body: bodyKept ? .file(temporary) : .none, revisiting: confirmed)
            }
            if firstAddressPublic == nil { firstAddressPublic = !isNonPublic(response.address, response.port) }
            switch response.status {
            case 301, 302, 303, 307, 308:
                guard let next = response.redirectURL else {
                    return .finished(failing(result, reason: "HTTP \(response.status) without a Location"), nil)
                }
                redirects += 1
                guard redirects <= settings.maxRedirects else {
                    return .finished(failing(result, reason: "more than \(settings.maxRedirects) redirects (maxRedirects); the last led to \(next)"), nil)
                }
                if let problem = FetchURL.problem(next) {
                    return .finished(failing(result, reason: "a redirect led to a URL kiln fetch does not follow: \(problem)"), nil)
                }
                if settings.robots == .obey {
                    let allowed: Bool
                    do {
                        allowed = try redirectRules(for: next, refusing: firstAddressPublic == true).allows(next)
                    } catch {
                        return .finished(failing(result, reason: "a redirect from a public host led to a non-public address: \(error.message)"), nil)
                    }
                    if !allowed {
                        return .finished(failing(result, reason: "a redirect led to \(next), which its robots.txt disallows"), nil)
                    }
                }
                url = next
                continue
            case 304 where validated:
                // `saved.matches` holds only when there is a capture to confirm.
                guard let capture else { return .finished(failing(result, reason: "HTTP 304 without a capture"), nil) }
                return .finished(unchanged(result), this.updated(capture, response: response))
            case 429, 503:
                let wait = URLFetch.retryAfter(response.header("Retry-After")) ?? URLFetch.backoff(attempt)
                guard wait <= settings.maxRetryAfter else {
                    return .finished(failing(result, reason: "HTTP \(response.status), and the server asks to wait \(Int(wait)) s, longer than maxRetryAfter (\(Int(settings.maxRetryAfter)) s)"), nil)
                }
                return retryOrFail(result, reason: "HTTP \(response.status)", after: wait)
            case 500...599:
                return retryOrFail(result, reason: "HTTP \(response.status)", after: URLFetch.backoff(attempt))
            case 200...299 where response.status != 206:
                return this.accept(result, response: response, body: body, temporary: temporary, saved: saved, finalURL: url)
            default:
                return .finished(failing(result, reason: "HTTP \(response.status)"), nil)
            }
        }
    }

    /// The robots.txt rules of the origin of `url`, a redirect's target: those this fetch read (every origin the
    /// queue knows among them), else read now, once per fetch.
    /// - Throws: the refusal of a non-public address, when `refusing` (the redirect came from a public host).
    private func redirectRules(for url: String, refusing: Bool) throws(HTTPTransferError) -> RobotsRules {
        let origin = FetchURL.origin(url) ?? url
        if let known = robots.rules(for: origin) { return known }
        let rules = try RobotsFetch.read(origin + "/robots.txt", settings: job.settings, client: client, refusing: refusing ? isNonPublic : nil).rules
        robots.learned(rules, for: origin)
        return rules
    }

    func retryOrFail(_ result: URLResult, reason: String, after seconds: TimeInterval) -> Ending {
        guard attempt <= job.settings.retries else {
            let tries = attempt == 1 ? "" : " (after \(attempt) attempts)"
            return .finished(failing(result, reason: reason + tries), nil)
        }
        return .retry(after: seconds, result)
    }

    /// The wait before attempt `attempt + 1`: 1 s, doubling, at most 60 s.
    static func backoff(_ attempt: Int) -> TimeInterval { min(60, pow(2, Double(max(0, attempt - 1)))) }

    /// A `Retry-After` value in seconds: a number of seconds, or an HTTP date (RFC 9110, 10.2.3) from now.
    static func retryAfter(_ value: String?) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return TimeInterval(seconds) }
        return httpDate(value).map { max(0, $0.timeIntervalSinceNow) }
    }

    /// An HTTP date (RFC 9110, 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms).
    static func httpDate(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: value.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }

    /// The conditional headers for the URL of `capture`, while its file is there as captured.
    static func validators(for capture: CaptureRecord.Capture?, in directory: URL) -> [String] {
        guard let capture, savedCopy(for: capture, in: directory, file: capture.file).matches else { return [] }
        var headers: [String] = []
        if let etag = capture.etag { headers.append("If-None-Match: \(etag)") }
        if let modified = capture.lastModified { headers.append("If-Modified-Since: \(modified)") }
        return headers
    }

    /// The file a URL was saved to, as it is now.
    struct SavedCopy {
        var exists = false
        var bytes: Int64 = 0
        var sha256 = ""
        /// True when the file holds the bytes `capture` recorded.
        var matches = false
    }

    static func savedCopy(for capture: CaptureRecord.Capture?, in directory: URL, file: String) -> SavedCopy {
        let url = directory.appendingFile(file)
        guard OutputPath.entryKind(url, followingLinks: false) == .regular, let status = FileStatus(path: url.path, followingLinks: false) else { return SavedCopy() }
        var copy = SavedCopy(exists: true, bytes: status.size)
        copy.sha256 = (try? FileDigest.sha256(of: url)) ?? ""
        copy.matches = capture.map { $0.sha256 == copy.sha256 && $0.file == file } ?? false
        return copy
    }

    /// A URL robots.txt disallows: nothing is requested, and an earlier copy stays.
    static func disallowed(_ job: FetchJob, capture: CaptureRecord.Capture?, in directory: URL) -> URLResult {
        var result = URLResult(source: job.source, url: job.url, file: job.file, outcome: .disallowed)
        result.keptPrevious = FileStatus(path: directory.appendingFile(job.file).path, followingLinks: false) != nil
        return result
    }
}
