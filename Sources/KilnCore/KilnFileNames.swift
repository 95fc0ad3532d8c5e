import Foundation
import KilnC

/// How Kiln names the files it writes beside an output — one place for every convention, so that writing them,
/// cleaning up after a dead run (`BuildFiles.removeStale`) and the docs agree:
/// - `.<name>.<pid>.tmp`: a file being written (bundle, report, export file) before its rename over `<name>`;
/// - `.<name>.<pid>.old.tmp`: a second name of the large file `<name>` replaced, removed after the rename;
/// - `.<name>.staging.<pid>.sqlite`: a build's staging database; `.<name>.staging.<pid>.fts<n>.sqlite`: the scratch
///   database where the full-text index of the bundle's n-th full-text table is built; for a target's bundle
///   (`<bundle>.android.sqlite`), its staging name holds the copy of the main bundle it is converted from;
/// - `.<name>.<pid>.tmp-journal` (`-wal`, `-shm`): SQLite's journal beside a temporary bundle it changes (`kiln apply`);
/// - `.<folder>.<pid>.tmp/`: a patch folder being filled before it is swapped with `<folder>` (`AtomicFolder`), then
///   holding the old files until they are removed; `.kiln-patch.sqlite.<pid>.tmp` in `TMPDIR`: the copy of OLD
///   `kiln patch` verifies its patches on;
/// - `.<name>.lock`: the lock serializing the commands that replace `<name>` (builds, `kiln apply`);
/// - `.kiln-cache/<name>/`: the build cache of the bundle `<name>` (`BuildCache`), kept between builds;
/// - `<bundle>.report.json` beside `<bundle>.sqlite` (`<file>.report.json` for any other file name), and the HTML page
///   `<…>.report.html` beside the JSON report.
package enum KilnFileNames {
    /// The temporary file this process writes before replacing `destination`.
    package static func temporary(for destination: URL) -> URL {
        hidden(destination, ".\(ProcessInfo.processInfo.processIdentifier).tmp")
    }

    /// The second name this process gives the large file at `destination` before replacing it (`FileSync.move`).
    package static func replaced(for destination: URL) -> URL {
        hidden(destination, ".\(ProcessInfo.processInfo.processIdentifier).old.tmp")
    }

    /// This process's staging database for a build of `destination`.
    package static func staging(for destination: URL) -> URL {
        hidden(destination, ".staging.\(ProcessInfo.processInfo.processIdentifier).sqlite")
    }

    /// This process's scratch database for the full-text index of the `number`-th full-text table of `destination`.
    package static func fullTextScratch(for destination: URL, number: Int) -> URL {
        hidden(destination, ".staging.\(ProcessInfo.processInfo.processIdentifier).fts\(number).sqlite")
    }

    /// The bundle for a target platform beside `bundle`: `x/a.android.sqlite` for `x/a.sqlite`.
    package static func targetBundle(for bundle: URL, platform: String) -> URL {
        let name = bundle.deletingPathExtension().lastPathComponent + ".\(platform)" + (bundle.pathExtension.isEmpty ? "" : ".\(bundle.pathExtension)")
        return bundle.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// The folder beside a bundle that holds the build caches of the bundles in that folder, one folder each.
    package static let cacheFolder = ".kiln-cache"

    /// The build cache folder of the bundle `destination`.
    package static func cache(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(cacheFolder).appendingPathComponent(destination.lastPathComponent)
    }

    /// The endings of the files SQLite writes beside a database while it changes it (`<database>-journal`…).
    package static let sqliteCompanions = ["-journal", "-wal", "-shm"]

    /// The lock file serializing builds of `destination`.
    package static func lock(for destination: URL) -> URL { hidden(destination, ".lock") }

    /// The JSON report beside `bundle`: `x/a.report.json` for `x/a.sqlite`; for any other name `.report.json` is
    /// appended (`x/a.db.report.json`), so that bundles differing only in their extension keep their own reports.
    package static func report(for bundle: URL) -> URL {
        bundle.pathExtension == "sqlite" ? bundle.deletingPathExtension().appendingPathExtension("report.json")
            : bundle.deletingLastPathComponent().appendingPathComponent(bundle.lastPathComponent + ".report.json")
    }

    /// The HTML page beside a JSON report: `x.report.json` → `x.report.html` (`x.html` for any other name).
    package static func htmlReport(for report: URL) -> URL {
        report.pathExtension == "json" ? report.deletingPathExtension().appendingPathExtension("html") : report.appendingPathExtension("html")
    }

    private static func hidden(_ destination: URL, _ suffix: String) -> URL {
        destination.deletingLastPathComponent().appendingFile(".\(destination.lastPathComponent)\(suffix)")
    }
}
