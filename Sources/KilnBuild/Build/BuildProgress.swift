import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What a build is doing, for a progress display: reported as each stage starts or ends.
public enum BuildStage: Sendable, Equatable {
    /// Another build holds the lock of the same bundle; this one waits (reported once).
    case waitingForLock(URL)
    /// A source starts: its files and their total size.
    case reading(source: String, files: Int, bytes: Int)
    /// A source's key is unchanged: the rows and findings of `files` of its `of` files come from the build cache
    /// (`SourceCache`); the `reading` that follows counts only the files read.
    case cached(source: String, files: Int, of: Int)
    /// A source is staged: the records it added, and how long it took.
    case read(source: String, records: Int, seconds: Double)
    /// The rules start.
    case checking(rules: Int)
    /// The bundle is being written.
    case writing(URL)
    /// Nothing changed since the last build: the bundle in place is kept (`BuildCache`).
    case reused(URL)
}

/// Receives the stages of a build as they happen (on the building thread).
public typealias BuildProgress = @Sendable (BuildStage) -> Void

extension BuildStage {
    /// The stage as one line for a terminal, e.g. `reading stops: 2 files, 3.4 MB`.
    public var line: String {
        switch self {
        case .waitingForLock(let url):
            return "waiting for another build of \(url.relativePath) to finish (lock \(BuildFiles(destination: url).lock.lastPathComponent))"
        case .reading(let source, let files, let bytes):
            return "reading \(source): \(files) file\(files == 1 ? "" : "s"), \(BuildStage.size(bytes))"
        case .cached(let source, let files, let total):
            return "\(source): \(files) of \(total) file\(total == 1 ? "" : "s") unchanged, rows and findings taken from the build cache"
        case .read(let source, let records, let seconds):
            return "  \(source): \(records) record\(records == 1 ? "" : "s") in \(String(format: "%.1f", seconds)) s"
        case .checking(let rules):
            return "checking \(rules) rule\(rules == 1 ? "" : "s")"
        case .writing(let url):
            return "writing \(url.relativePath)"
        case .reused(let url):
            return "nothing changed since the last build of \(url.relativePath): kept it"
        }
    }

    /// A byte count as people read it: `512 bytes`, `3.4 KB`, `12.0 MB`, `1.2 GB` (powers of 1000).
    package static func size(_ bytes: Int) -> String {
        if bytes < 1000 { return "\(bytes) byte\(bytes == 1 ? "" : "s")" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}

