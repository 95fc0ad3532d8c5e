import Foundation
import KilnC
import KilnCore
import KilnManifest

/// `kiln fetch --from-warc FILE…`: fills a plan's files from WARC files another tool wrote (wget's `--warc-file`,
/// a browser-based crawler, Heritrix, Kiln's own `--warc`), as if they had been fetched — the same files, checks and
/// capture entries, with each record's `WARC-Date` as the capture time.
///
/// Two passes over the files, each in bounded memory: the first indexes the response, resource and revisit records
/// by URL (their HTTP status, `Location`, validators and digests, never their bodies); then each URL of the plan is
/// resolved to its newest record — through redirects recorded in the files, and revisit records to the record they
/// repeat — and the second pass streams the chosen bodies into place, de-chunked and decoded (gzip, zstd).
public enum WARCImport {
    /// What the first pass keeps of a record.
    struct Entry {
        var file: Int
        var number: Int
        var type: String
        var uri: String
        /// `WARC-Date` as the capture record writes times (to the second).
        var date: String
        var status = 200
        var statusLine = "HTTP/1.1 200 OK"
        var headers: [HTTPHeader] = []
        var payloadDigest: String?
        var profile: String?
        var refersToURI: String?
        var refersToDate: String?

        var key: String { "\(file)/\(number)" }
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// A URL of the plan resolved to the record that supplies its bytes.
    struct Choice {
        var job: FetchJob
        var record: Entry
        /// The URL looked up for the job's URL (a mirror's, `--mirror`).
        var requested: String
        /// The URL the bytes were recorded under, after any redirects.
        var finalURL: String
        /// The date of the newest record on the way to the bytes (a redirect, a revisit or `record` itself): when
        /// the URL was last seen to lead to them, as a refresh that asks the redirect's target directly confirms them.
        var newestDate: String
    }

    /// Imports `files` into `plan`'s folder and capture record.
    /// - Throws: `KilnError.validation` for a file that is not WARC, `KilnError.io` when a file cannot be read or the
    ///   capture record written.
    public static func run(_ plan: FetchPlan, files: [URL], options: FetchOptions) throws -> FetchReport {
        let recordURL = CaptureRecord.url(besides: plan.manifestFile)
        let previous = try CaptureRecord.read(recordURL)
        let captures = Dictionary(previous.captures.map { ("\($0.source)\n\($0.url)", $0) }, uniquingKeysWith: { first, _ in first })
        var counts = WARCImportCounts(files: files.count)
        var byURI: [String: [Entry]] = [:]
        var byPayload: [String: [Entry]] = [:]
        for (index, file) in files.enumerated() {
            let reader = try WARCReader(url: file, name: file.path)
            while let record = try reader.next() {
                counts.records += 1
                guard let entry = try entry(of: record, file: index, reader: reader) else { continue }
                byURI[entry.uri, default: []].append(entry)
                if let digest = entry.payloadDigest, entry.type != "revisit" { byPayload[digest, default: []].append(entry) }
            }
        }
        var used = Set<String>()
        var results: [URLResult] = []
        var choices: [Choice] = []
        var confirmations: [String: (entry: Entry, job: FetchJob)] = [:]
        for job in plan.jobs {
            switch resolve(options.requested(job.url), job: job, byURI: byURI, byPayload: byPayload, used: &used, counts: &counts) {
            case .success(let choice):
                choices.append(choice)
            case .failure(let reason):
                if case .notModified(let revisit) = reason, let capture = captures["\(job.source)\n\(job.url)"],
                   URLFetch.savedCopy(for: capture, in: plan.directory, file: job.file).matches {
                    confirmations["\(job.source)\n\(job.url)"] = (revisit, job)
                    continue
                }
                var result = URLResult(source: job.source, url: job.url, file: job.file, outcome: .failed, reason: reason.message)
                result.keptPrevious = FileStatus(path: plan.directory.appendingFile(job.file).path, followingLinks: false) != nil
                results.append(result)
            }
        }
        counts.indexed = Set(byURI.values.joined().map(\.key))
        counts.used = used
        if options.dryRun {
            for choice in choices {
                results.append(URLResult(source: choice.job.source, url: choice.job.url, file: choice.job.file, outcome: .planned,
                                         reason: "\(choice.record.type) record \(choice.record.number) of \(files[choice.record.file].path), \(choice.record.date)"))
            }
            var report = FetchReport(results: results.sorted { ($0.source, $0.url) < ($1.source, $1.url) }, robots: [:], dryRun: true)
            report.imported = counts
            return report
        }
        try Fetcher.prepareFolders(for: plan)
        let state = FetchState(total: plan.jobs.count, captures: captures, progress: options.progress)
        for result in results { state.finish(result) }
        for (key, confirmation) in confirmations.sorted(by: { $0.key < $1.key }) {
            var capture = captures[key]!
            capture.verifiedAt = max(capture.verifiedAt, confirmation.entry.date)
            state.finish(URLResult(source: confirmation.job.source, url: confirmation.job.url, file: confirmation.job.file, outcome: .unchanged, status: 304), capture: capture)
        }
        let byFile = Dictionary(grouping: choices, by: \.record.file)
        for (index, file) in files.enumerated() {
            guard let wanted = byFile[index] else { continue }
            let byRecord = Dictionary(grouping: wanted, by: \.record.number)
            let reader = try WARCReader(url: file, name: file.path)
            while let record = try reader.next() {
                guard let choices = byRecord[record.number] else { continue }
                try store(choices, from: reader, record: record, plan: plan, captures: captures, state: state)
            }
        }
        if state.results.contains(where: { $0.outcome == .fetched }) { try FileSync.syncFileSystem(containing: plan.directory) }
        var record = state.record(keeping: plan)
        record.robotsIgnored = previous.robotsIgnored
        try AtomicFile.write(try record.json(), to: recordURL)
        var report = FetchReport(results: state.results.sorted { ($0.source, $0.url) < ($1.source, $1.url) }, robots: [:], dryRun: false)
        report.imported = counts
        return report
    }

    /// The index entry of a response, resource or revisit record with a target URI; `nil` for any other record.
    private static func entry(of record: WARCReader.Record, file: Int, reader: WARCReader) throws -> Entry? {
        guard ["response", "resource", "revisit"].contains(record.type), let uri = record.targetURI else { return nil }
        var entry = Entry(file: file, number: record.number, type: record.type, uri: uri, date: timestamp(record.date))
        entry.payloadDigest = record.header.value("WARC-Payload-Digest")
        entry.profile = record.header.value("WARC-Profile")
        entry.refersToURI = record.header.value("WARC-Refers-To-Target-URI").map(WARCReader.unbracketed)
        entry.refersToDate = record.header.value("WARC-Refers-To-Date").map(timestamp)
        let contentType = record.header.value("Content-Type") ?? ""
        if record.type == "resource" || !contentType.lowercased().hasPrefix("application/http") {
            if let contentType = record.header.value("Content-Type") { entry.headers = [HTTPHeader(name: "Content-Type", value: contentType)] }
            return record.type == "revisit" ? nil : entry
        }
        guard let header = try reader.readHTTPHeader() else { return nil }
        let (statusLine, fields) = WARCFormat.headerFields(of: header)
        let words = statusLine.split(separator: " ")
        guard words.count >= 2, words[0].hasPrefix("HTTP/"), let status = Int(words[1]) else { return nil }
        entry.status = status
        entry.statusLine = statusLine
        entry.headers = fields
        return entry
    }

    /// Why a URL has no record to import.
    enum Unresolved: Error {
        case missing(String)
        /// A server-not-modified revisit whose earlier record is not in the files: it confirms the saved copy, if
        /// that is still as captured.
        case notModified(Entry)

        var message: String {
            switch self {
            case .missing(let message): return message
            case .notModified(let entry): return "the newest record of \(entry.uri) is a revisit (304, \(entry.date)) of a record not in these WARC files, and there is no saved copy it confirms"
            }
        }
    }

    /// The record that supplies `uri`'s bytes: its newest record, through redirects and revisits.
    private static func resolve(_ uri: String, job: FetchJob, byURI: [String: [Entry]], byPayload: [String: [Entry]],
                                used: inout Set<String>, counts: inout WARCImportCounts) -> Result<Choice, Unresolved> {
        var current = uri
        var newest: String?
        for _ in 0...job.settings.maxRedirects {
            guard let candidates = byURI[current], let latest = candidates.max(by: { ($0.date, $0.file, $0.number) < ($1.date, $1.file, $1.number) }) else {
                return .failure(.missing(current == uri ? "no record of \(uri) in the WARC files" : "\(uri) redirects to \(current), which has no record in the WARC files"))
            }
            used.insert(latest.key)
            newest = max(newest ?? latest.date, latest.date)
            var entry = latest
            if latest.type == "revisit" {
                let original = revisited(latest, byURI: byURI, byPayload: byPayload)
                guard let original else {
                    let notModified = [WARCFormat.serverNotModified, WARCFormat.serverNotModified10].contains(latest.profile ?? "")
                    return .failure(notModified ? .notModified(latest) : .missing("the newest record of \(current) is a revisit (\(latest.date)) of a record not in the WARC files"))
                }
                used.insert(original.key)
                counts.revisitsResolved += 1
                entry = original
                // A 304's validators are the newest the server sent.
                for field in latest.headers where ["etag", "last-modified"].contains(field.name.lowercased()) {
                    entry.headers.removeAll { $0.name.caseInsensitiveCompare(field.name) == .orderedSame }
                    entry.headers.append(field)
                }
            }
            switch entry.status {
            case 301, 302, 303, 307, 308:
                guard let location = entry.header("Location"), let next = URL(string: location, relativeTo: URL(string: current))?.absoluteString else {
                    return .failure(.missing("the record of \(current) is HTTP \(entry.status) without a Location"))
                }
                if let problem = FetchURL.problem(next) { return .failure(.missing("the record of \(current) redirects to a URL kiln fetch does not follow: \(problem)")) }
                current = next
            case 200...299 where entry.status != 206:
                return .success(Choice(job: job, record: entry, requested: uri, finalURL: current, newestDate: newest ?? entry.date))
            default:
                return .failure(.missing("the newest record of \(current) (\(entry.date)) is HTTP \(entry.status)"))
            }
        }
        return .failure(.missing("more than \(job.settings.maxRedirects) redirects recorded from \(uri) (maxRedirects)"))
    }

    /// The response a revisit repeats: the newest response of the URL it refers to (at the date it names, when it
    /// names one) for a server-not-modified revisit, or a response with the same payload digest.
    private static func revisited(_ revisit: Entry, byURI: [String: [Entry]], byPayload: [String: [Entry]]) -> Entry? {
        let responses = (byURI[revisit.refersToURI ?? revisit.uri] ?? []).filter { $0.type != "revisit" && $0.date <= revisit.date }
        if let date = revisit.refersToDate, let exact = responses.last(where: { $0.date == date }) { return exact }
        if let digest = revisit.payloadDigest, let same = byPayload[digest]?.last(where: { $0.type != "revisit" }) {
            return responses.last { $0.payloadDigest == digest } ?? same
        }
        return responses.max { ($0.date, $0.file, $0.number) < ($1.date, $1.file, $1.number) }
    }

    /// Streams the chosen record's body into each of `choices`' files (usually one), through the checks a fetched
    /// body gets.
    private static func store(_ choices: [Choice], from reader: WARCReader, record: WARCReader.Record, plan: FetchPlan,
                              captures: [String: CaptureRecord.Capture], state: FetchState) throws {
        for (position, choice) in choices.enumerated() {
            let job = choice.job
            let capture = captures["\(job.source)\n\(job.url)"]
            let update = ImportedCopy(job: job, requested: choice.requested, directory: plan.directory, capture: capture, arrivedAt: choice.record.date)
            var result = URLResult(source: job.source, url: job.url, file: job.file, outcome: .failed, status: choice.record.status)
            let saved = URLFetch.savedCopy(for: capture, in: plan.directory, file: job.file)
            result.keptPrevious = saved.exists
            if saved.matches, let capture, capture.capturedAt > choice.newestDate {
                result.outcome = .unchanged
                result.reason = "the saved copy, captured \(capture.capturedAt), is newer than the WARC's record of \(choice.newestDate)"
                result.keptPrevious = false
                state.finish(result, capture: capture)
                continue
            }
            let temporary = KilnFileNames.temporary(for: update.destination)
            TemporaryFiles.shared.register(temporary)
            defer {
                FileCalls.unlink(temporary.path)
                TemporaryFiles.shared.unregister(temporary)
            }
            let body: HTTPBodyFile
            do { body = try HTTPBodyFile(temporary) } catch {
                state.finish(update.failing(result, reason: "cannot write \(temporary.path): \(error)"))
                continue
            }
            let problem: String?
            if position == 0 {
                problem = try extract(choice.record, from: reader, into: body)
            } else {
                // Another URL chose the same record: its bytes are in the first one's file.
                problem = copy(update.directory.appendingPathComponent(choices[0].job.file), into: body)
            }
            if let problem {
                state.finish(update.failing(result, reason: problem))
                continue
            }
            let response = HTTPResponse(status: choice.record.status, statusLine: choice.record.statusLine, headers: choice.record.headers,
                                        transferredBytes: body.bytes, decodedBytes: body.bytes)
            switch update.accept(result, response: response, body: body, temporary: temporary, saved: saved, finalURL: choice.finalURL) {
            case .finished(let done, var entry):
                if var confirmed = entry, confirmed.verifiedAt < choice.newestDate {
                    confirmed.verifiedAt = choice.newestDate
                    entry = confirmed
                }
                state.finish(done, capture: entry)
            case .retry(_, let failed):
                state.finish(failed)
            }
        }
    }

    /// Writes the body of `record` (an HTTP response or a resource) to `body`, de-chunked and decoded; the reason when
    /// it cannot be.
    private static func extract(_ record: Entry, from reader: WARCReader, into body: HTTPBodyFile) throws -> String? {
        if record.type == "response", try reader.readHTTPHeader() == nil { return "the record's HTTP header has no end" }
        let chunked = record.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
        let encoding = record.header("Content-Encoding")?.lowercased().trimmingCharacters(in: .whitespaces) ?? "identity"
        let decoder: PayloadDecoder
        switch encoding {
        case "identity", "": decoder = PayloadDecoder(body: body, decompressor: nil)
        case "gzip", "x-gzip": decoder = PayloadDecoder(body: body, decompressor: try? CompressionFormat.gzip.makeDecompressor())
        case "zstd": decoder = PayloadDecoder(body: body, decompressor: try? CompressionFormat.zstd.makeDecompressor())
        default: return "the recorded body has Content-Encoding \(encoding), which kiln cannot decode (gzip and zstd it can)"
        }
        var dechunker = chunked ? ChunkedDecoding() : nil
        var failure: String?
        try reader.readBlock { chunk in
            let payload: Data
            if dechunker != nil {
                guard let decoded = dechunker!.feed(chunk) else {
                    failure = "the recorded body's chunked encoding is broken"
                    return false
                }
                payload = decoded
            } else {
                payload = chunk
            }
            if let problem = decoder.feed(payload) {
                failure = problem
                return false
            }
            return true
        }
        if let failure { return failure }
        if let dechunker, !dechunker.ended { return "the recorded body ends inside its chunked encoding (a truncated record)" }
        return decoder.finish()
    }

    private static func copy(_ source: URL, into body: HTTPBodyFile) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: source) else { return "cannot read \(source.path) back" }
        defer { try? handle.close() }
        while let chunk = try? handle.read(upToCount: 256 * 1024), !chunk.isEmpty {
            guard body.append(chunk) else { return body.failure }
        }
        return nil
    }

    /// A `WARC-Date` (`2024-05-01T10:00:00Z`, or with a fraction of a second in WARC 1.1) as the capture record writes
    /// times: to the second.
    static func timestamp(_ date: String) -> String {
        guard date.count > 20, date.hasSuffix("Z"), let dot = date.firstIndex(of: ".") else { return date }
        return String(date[..<dot]) + "Z"
    }
}

/// One URL's file updated from a WARC record: the record's date is when its bytes arrived.
private struct ImportedCopy: SnapshotUpdate {
    let job: FetchJob
    let requested: String
    let directory: URL
    let capture: CaptureRecord.Capture?
    let arrivedAt: String
}

/// A recorded body on its way to its file: decoded when it has a Content-Encoding, in bounded steps.
private final class PayloadDecoder {
    private let body: HTTPBodyFile
    private let decompressor: StreamDecompressor?

    init(body: HTTPBodyFile, decompressor: StreamDecompressor?) {
        self.body = body
        self.decompressor = decompressor
    }

    /// Writes (or decodes and writes) `data`; the reason when it cannot.
    func feed(_ data: Data) -> String? {
        guard let decompressor else { return body.append(data) ? nil : body.failure }
        decompressor.feed([UInt8](data))
        return drain(ended: false)
    }

    /// The reason the body cannot be finished, if any.
    func finish() -> String? {
        decompressor == nil ? nil : drain(ended: true)
    }

    private func drain(ended: Bool) -> String? {
        guard let decompressor else { return nil }
        do {
            while true {
                switch try decompressor.step(capacity: 256 * 1024, inputEnded: ended) {
                case .output(let bytes):
                    if !bytes.isEmpty, !body.append(Data(bytes)) { return body.failure }
                case .needsInput, .finished:
                    return nil
                }
            }
        } catch {
            return "the recorded body cannot be decoded: \(error)"
        }
    }
}

/// HTTP/1.1's chunked transfer coding (RFC 9112, 7.1) removed as the bytes stream: sizes, extensions and trailers
/// dropped, the data kept.
struct ChunkedDecoding {
    private enum Stage { case size, data(Int), dataEnd, trailer, done }
    private var stage = Stage.size
    private var line: [UInt8] = []

    /// True once the last (zero-size) chunk and the trailer have been read.
    var ended: Bool { if case .done = stage { return true } else { return false } }

    /// The data in `bytes`; `nil` when they break the coding.
    mutating func feed(_ bytes: Data) -> Data? {
        var output = Data()
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch stage {
            case .size, .trailer, .dataEnd:
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    if line.count > 4096 { return nil }
                    continue
                }
                let text = String(decoding: line.last == 0x0D ? line.dropLast() : line[...], as: UTF8.self)
                line = []
                switch stage {
                case .size:
                    let digits = text.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                    guard let size = Int(digits, radix: 16), size >= 0 else { return nil }
                    stage = size == 0 ? .trailer : .data(size)
                case .dataEnd:
                    guard text.isEmpty else { return nil }
                    stage = .size
                default:
                    if text.isEmpty { stage = .done }
                }
            case .data(let left):
                let take = min(left, bytes.endIndex - index)
                output.append(bytes[index..<(index + take)])
                index += take
                stage = left - take == 0 ? .dataEnd : .data(left - take)
            case .done:
                // Bytes after the last chunk: a record padded by its writer; nothing of the body.
                index = bytes.endIndex
            }
        }
        return output
    }
}
