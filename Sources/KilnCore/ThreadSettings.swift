import Foundation

/// How many threads a build may use, for comparing a threaded run with a serial one (every setting gives the same
/// bytes). A program sets them in `BuildOptions.threads`; the `kiln` command maps its environment to them
/// (`init(environment:)`, the `KILN_*` variables of docs/reference/commands.md). The library reads no environment.
public struct ThreadSettings: Sendable, Equatable {
    /// Read, shape and insert on one thread, and check the rules on it too (`KILN_STAGING_THREADS=1`); also no page
    /// workers unless `pageWorkers` says otherwise.
    public var stagingOnOneThread = false
    /// Check the rules on the build's thread alone (`KILN_RULE_THREADS=1`).
    public var rulesOnOneThread = false
    /// Page workers per `mediawiki` file (`KILN_PAGE_THREADS`; 0: the pages are processed on the reading thread);
    /// `nil`: none with `stagingOnOneThread`, else one per core.
    public var pageWorkers: Int?
    /// Decode a compressed input on a thread of its own, ahead of its reader (false: `KILN_DECOMPRESSION_THREAD=0`).
    public var decompressionThread = true

    /// The defaults: every thread the machine offers.
    public init() {}

    /// The environment variables the `kiln` command maps to these settings.
    public static let environmentVariables = ["KILN_STAGING_THREADS", "KILN_RULE_THREADS", "KILN_PAGE_THREADS", "KILN_DECOMPRESSION_THREAD"]

    /// The settings `environment` asks for (`environmentVariables`); a variable that is unset, or set to a value it
    /// does not take, leaves its default.
    public init(environment: [String: String]) {
        stagingOnOneThread = environment["KILN_STAGING_THREADS"] == "1"
        rulesOnOneThread = environment["KILN_RULE_THREADS"] == "1"
        pageWorkers = environment["KILN_PAGE_THREADS"].flatMap { Int($0) }.map { max($0, 0) }
        decompressionThread = environment["KILN_DECOMPRESSION_THREAD"] != "0"
    }

    /// How many page workers a `mediawiki` file is read with.
    public var pageWorkerCount: Int {
        pageWorkers ?? (stagingOnOneThread ? 0 : ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Whether the rules may be checked on a second thread (on a machine with more than one core).
    public var checksRulesInParallel: Bool {
        !stagingOnOneThread && !rulesOnOneThread && ProcessInfo.processInfo.activeProcessorCount > 1
    }
}
