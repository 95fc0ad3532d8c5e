import Foundation
import KilnC
import KilnCore

/// The capture record `kiln.fetch.json` beside the manifest: one entry per fetched URL, saying which file holds its
/// bytes, their SHA-256, the validators for the next conditional request, and when the bytes first arrived and were
/// last confirmed. `kiln fetch` writes it (sorted, byte-stable); `kiln build` reads it to check the files and to trace
/// findings and rows back to their URLs. It is input data: its times are the captures', never a build's clock.
public struct CaptureRecord: Codable, Sendable, Equatable {
    /// The record's format version.
    public var version = 1
    /// The captures, sorted by source, then URL.
    public var captures: [Capture] = []
    /// Why robots.txt was not obeyed, when the manifest said so (`fetch.robots: "ignore"`).
    public var robotsIgnored: String?

    /// One URL's capture.
    public struct Capture: Codable, Sendable, Equatable {
        /// The source that fetches it.
        public var source: String
        /// The URL as the manifest lists it.
        public var url: String
        /// Where its bytes are, relative to the pipeline folder.
        public var file: String
        /// The status of the response whose body is the file (200, or 206 for a resumed one).
        public var status: Int
        /// The SHA-256 of the file's bytes (lowercase hexadecimal).
        public var sha256: String
        /// The file's size in bytes.
        public var bytes: Int
        /// The validators the server sent with those bytes, sent back on the next fetch.
        public var etag: String?
        public var lastModified: String?
        /// The response's `Content-Type`.
        public var contentType: String?
        /// The URL the bytes finally came from, when redirects led elsewhere.
        public var finalURL: String?
        /// When these bytes first arrived (ISO 8601, UTC): unchanged by a refresh that finds the same bytes.
        public var capturedAt: String
        /// When the URL was last confirmed to serve them (ISO 8601, UTC).
        public var verifiedAt: String

        public init(source: String, url: String, file: String, status: Int, sha256: String, bytes: Int, capturedAt: String, verifiedAt: String) {
            self.source = source
            self.url = url
            self.file = file
            self.status = status
            self.sha256 = sha256
            self.bytes = bytes
            self.capturedAt = capturedAt
            self.verifiedAt = verifiedAt
        }
    }

    /// The record's file name, beside the manifest.
    public static let fileName = "kiln.fetch.json"

    public init() {}

    /// The record beside `manifest`.
    public static func url(besides manifest: URL) -> URL {
        manifest.deletingLastPathComponent().appendingPathComponent(fileName)
    }

    /// Reads the record at `url`; an empty one when there is no file.
    /// - Throws: `KilnError.io` when it cannot be read or is not a capture record.
    public static func read(_ url: URL) throws -> CaptureRecord {
        guard OutputPath.entryKind(url, followingLinks: true) != nil else { return CaptureRecord() }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw KilnError.io(IOFailure("cannot read the capture record \(url.path)", path: url.path, operation: .read))
        }
        do {
            let record = try JSONDecoder().decode(CaptureRecord.self, from: data)
            guard record.version == 1 else {
                throw KilnError.io(IOFailure("the capture record \(url.path) is of version \(record.version); this kiln reads version 1", path: url.path, operation: .read))
            }
            return record
        } catch let error as DecodingError {
            let place = error.context.map { keyPathString($0.codingPath) } ?? ""
            throw KilnError.io(IOFailure("the capture record \(url.path) is damaged\(place.isEmpty ? "" : " at \(place)"): \(error.context?.debugDescription ?? "not JSON"); fetch again to rewrite it",
                                         path: url.path, operation: .read))
        }
    }

    /// The record as Kiln writes it: captures sorted, keys sorted, pretty-printed.
    public func json() throws -> Data {
        var sorted = self
        sorted.captures.sort { ($0.source, $0.url, $0.file) < ($1.source, $1.url, $1.file) }
        return try KilnJSON.encode(sorted)
    }

    /// The capture of each file, by its path relative to the pipeline folder.
    public var byFile: [String: Capture] {
        Dictionary(captures.map { ($0.file, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What the record says of each source: its URLs and its newest capture.
    public var sources: [String: CapturedSource] {
        var summary: [String: CapturedSource] = [:]
        for capture in captures {
            var entry = summary[capture.source] ?? CapturedSource(urls: 0, newestCapture: capture.capturedAt)
            entry.urls += 1
            entry.newestCapture = max(entry.newestCapture, capture.capturedAt)
            summary[capture.source] = entry
        }
        return summary
    }

    /// `date` as the record writes times: ISO 8601 in UTC, to the second (`2026-12-07T06:50:49Z`).
    public static func timestamp(_ date: Date) -> String {
        // Seconds since 1970 as a civil date and time, by the calendar arithmetic the iCalendar wrapper already has.
        // To the millisecond first, then the second, as ISO8601DateFormatter writes it.
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let time = ICalTime(nominalSeconds: Int((milliseconds / 1000).rounded(.down)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(time.year)-\(two(time.month))-\(two(time.day))T\(two(time.hour)):\(two(time.minute)):\(two(time.second))Z"
    }
}

/// What the capture record says of one source, as the bundle's metadata records it (`source.NAME.urls`,
/// `source.NAME.captured`): never the verification time, so a refresh that finds nothing new builds the same bytes.
public struct CapturedSource: Sendable, Equatable {
    /// The URLs captured.
    public var urls: Int
    /// The newest `capturedAt` among them.
    public var newestCapture: String
}

private extension DecodingError {
    var context: DecodingError.Context? {
        switch self {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context): return context
        @unknown default: return nil
        }
    }
}
