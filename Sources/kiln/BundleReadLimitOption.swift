import Foundation
import KilnKit

/// `--sql-seconds S`, on the commands that read bundles they did not build (diff, patch, apply, export, report): the
/// seconds `BundleReadLimit` gives each 100 MB of the bundles read.
enum BundleReadLimitOption {
    static let option = CommandOption("--sql-seconds", value: "S", help: "How long reading the bundles may take: S seconds per 100 MB of them, and at least S (default: the manifest's limits.sqlSeconds, else 60). A doctored bundle whose view, trigger or generated column never ends stops there with an error, exit 1.")

    /// The seconds `--sql-seconds` gives, when it is given.
    /// - Throws: `KilnError.usage` for a value that is not a number of seconds above 0.
    static func parse(_ arguments: ParsedArguments) throws -> Double? {
        guard let text = arguments.value(option) else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
            throw KilnError.usage("\(option.name) takes a number of seconds above 0, not \"\(text)\"")
        }
        return seconds
    }

    /// Sets the limit of every bundle this process opens: `seconds` from the option, else the manifest's
    /// `limits.sqlSeconds`, else the default.
    static func apply(_ seconds: Double?, manifest: Manifest? = nil) {
        if let seconds {
            let text = seconds == seconds.rounded() && seconds < 1e15 ? String(Int64(seconds)) : String(seconds)
            BundleReadLimit.current = BundleReadLimit(seconds: seconds, origin: "\(option.name) \(text)", remedy: "give a larger \(option.name)")
        } else if let manifest {
            let path = displayPath(manifest.file)
            BundleReadLimit.current = BundleReadLimit(seconds: manifest.limits.sqlSeconds, origin: "limits.sqlSeconds of \(path)",
                                                      remedy: "raise limits.sqlSeconds in \(path) or give \(option.name)")
        } else {
            BundleReadLimit.current = BundleReadLimit(seconds: ManifestLimits.defaultSQLSeconds, origin: "the default",
                                                      remedy: "give \(option.name) (or limits.sqlSeconds in the pipeline's manifest)")
        }
    }

    /// The manifest `ManifestLocation` finds for `bundle`, `nil` when it finds none or `bundle` is no Kiln bundle (a
    /// command that needs no manifest goes on, and says what the file is); a bundle stopped at the limit is an error.
    /// - Throws: `BundleReadLimit.stopped`'s error.
    static func optionalManifest(of bundle: URL) throws -> String? {
        do {
            return try ManifestLocation.resolve(explicit: nil, bundle: bundle)
        } catch where BundleReadLimit.isStop(error) {
            throw error
        } catch {
            return nil
        }
    }
}
