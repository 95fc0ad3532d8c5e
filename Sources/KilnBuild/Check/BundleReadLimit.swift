import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// How long a command may read a bundle it did not build in this run (`kiln check`, `diff`, `patch`, `apply`,
/// `export`, `report --bundle`): a doctored bundle can hold a table replaced by a view that never ends, a trigger that
/// fires one on every change, or a generated column that makes each row cost a second. Every connection
/// `BundleFile.open` makes (and `BundleFile.openCopy`, for the copies `patch` and `apply` change) is stopped once it
/// has run `seconds` for each `bytesPerStep` of the files it reads, and at least `seconds`: a budget in proportion to
/// the bundle, so that a large sound bundle is read whole (a 1.6 GB pair takes about 1 s of it per 100 MB, see
/// docs/SECURITY.md) while a small doctored one stops after `seconds`. The manifest's own SQL (export queries, a
/// check's rules) keeps its own limit, `limits.sqlSeconds` per statement, and does not count against this one.
public struct BundleReadLimit: Sendable {
    /// The seconds per `bytesPerStep` of the files read, and the least any connection gets.
    public var seconds: Double
    /// Where `seconds` comes from, as a message names it ("the default", "limits.sqlSeconds of raw/p/kiln.json5").
    public var origin: String
    /// How to raise the limit, as the end of a sentence ("raise limits.sqlSeconds in the manifest").
    public var remedy: String

    /// The share of a bundle each `seconds` pays for: 100 MB.
    public static let bytesPerStep: Double = 100_000_000

    /// `ManifestLimits.defaultSQLSeconds` per 100 MB.
    public static let standard = BundleReadLimit(seconds: ManifestLimits.defaultSQLSeconds, origin: "the default",
                                                 remedy: "raise limits.sqlSeconds in the manifest")

    /// A limit of `seconds` per 100 MB, described by `origin` and `remedy`.
    public init(seconds: Double, origin: String, remedy: String) {
        self.seconds = seconds
        self.origin = origin
        self.remedy = remedy
    }

    private static let chosen = Mutex(BundleReadLimit.standard)

    /// The limit of every bundle this process opens: the command line sets it once, before it reads one.
    public static var current: BundleReadLimit {
        get { chosen.withLock { $0 } }
        set { chosen.withLock { $0 = newValue } }
    }

    /// The seconds a connection reading `files` gets.
    package func budget(for files: [URL]) -> Double {
        let bytes = files.reduce(0.0) { $0 + Double(OutputPath.size(of: $1) ?? 0) }
        return seconds * max(1, bytes / BundleReadLimit.bytesPerStep)
    }

    /// True when `error` is `stopped`'s: for a caller that passes over other failures of an optional read.
    public static func isStop(_ error: Error) -> Bool {
        if case KilnError.validation(let failure) = error { return failure.code == .sqlTimeLimit }
        return false
    }

    /// The one sentence for a statement this limit stopped while reading `files`; `nil` for any other failure.
    package func stopped(_ failure: Error, reading files: [URL]) -> KilnError? {
        guard let error = failure as? SQLiteError, error.isInterrupted else { return nil }
        let names = files.map(\.relativePath).joined(separator: " and ")
        let reading = error.sql.map { " (SQLite was running: \(excerpt($0.split(whereSeparator: \.isWhitespace).joined(separator: " "), limit: 120)))" } ?? ""
        return .validation(ValidationFailure("reading \(names) was stopped after \(sqlNumber((budget(for: files) * 10).rounded() / 10)) s\(reading): "
            + "a bundle Kiln did not build is read for at most \(sqlNumber(seconds)) s per 100 MB of it (\(origin)), so that a view, trigger or generated column "
            + "that never ends cannot hang the command; nothing was written. If the bundle is sound but large, or the machine slow, \(remedy)",
            code: .sqlTimeLimit))
    }
}
