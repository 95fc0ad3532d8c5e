import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What `stat` says of a file that changes whenever its bytes are rewritten: device, inode, size, and the
/// modification and status-change times in nanoseconds. A file whose stamp is the one recorded with its digest is
/// not read again to know its digest (as `git` and `make` trust theirs); the status-change time cannot be set back
/// by a program, so a rewrite that restores the size and modification time still changes the stamp.
package struct FileStamp: Codable, Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    package var modified: Int64
    package var changed: Int64

    package init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }

    /// The stamp `status` gives.
    package init(_ status: FileStatus) {
        self.init(device: status.device, inode: status.inode, size: status.size, modified: status.modified, changed: status.changed)
    }

    /// True when `other` is this file with no write since: the same device, inode, size and modification time. The
    /// status-change time may differ (a rename moves it).
    package func isUnwritten(since other: FileStamp) -> Bool {
        device == other.device && inode == other.inode && size == other.size && modified == other.modified
    }

    /// The stamp of the file `url` names now (links followed), or `nil` when there is none.
    package init?(_ url: URL) {
        guard let status = FileStatus(path: url.path) else { return nil }
        self.init(status)
    }
}

/// The record of the last build of one bundle file, in `<bundle folder>/.kiln-cache/<bundle file>/build.json`: the
/// key of everything that decided the bundle, the SHA-256 of the bundle and report it wrote, and what the build said
/// (tables, inputs, findings), so that a build with the same key can leave both files as they are and say the same.
package struct BuildCacheRecord: ChecksummedRecord {
    /// One input: its path relative to the pipeline folder, its SHA-256, and its stamp when the file did not change
    /// while the build read it.
    package struct Input: Codable {
        package var path: String
        package var sha256: String
        package var stamp: FileStamp?
    }

    /// A finding counted but not stored.
    package struct NotStored: Codable {
        package var code: String
        package var severity: Severity
        package var count: Int
    }

    /// A target's own bundle: its platform, its file name beside the main bundle, its SHA-256.
    package struct TargetBundle: Codable {
        package var platform: String
        package var file: String
        package var sha256: String
    }

    /// The record's layout; a record of another layout is rebuilt.
    package var format = BuildCacheRecord.currentFormat
    /// Kiln and the libraries that decide a bundle's bytes (`BuildCache.environment`).
    package var environment: String
    /// The SHA-256 of everything that decided the bundle (`BuildCache.key`).
    package var key: String
    package var bundleSHA256: String
    package var reportSHA256: String
    /// The stamps of the bundle and the report once in place: a file whose stamp is still that one is not hashed
    /// again to be known unchanged (any write moves its status-change time).
    package var bundleStamp: FileStamp?
    package var reportStamp: FileStamp?
    /// Where the bundle's bytes go, as the build measured them (a bundle whose digest is the recorded one has them).
    package var bundleBytes: BundleBytes?
    /// The bundles written for manifest targets beside the main one (`<bundle>.<platform>.sqlite`).
    package var targetBundles: [TargetBundle] = []
    /// Every input, in path order: kept in `inputs.txt` beside the record (`BuildInputList`), not in it.
    package var inputs: [Input] = []
    /// The SHA-256 of that list, as written.
    package var inputListSHA256 = ""
    package var tables: [TableCount]
    package var diagnostics: [Diagnostic]
    package var notStored: [NotStored]
    /// SHA-256 of the record written with an empty checksum: a record edited by hand, or cut short, is not trusted.
    package var checksum = ""

    package static let currentFormat = 4

    private enum CodingKeys: String, CodingKey {
        case format, environment, key, bundleSHA256, reportSHA256, bundleStamp, reportStamp, bundleBytes, targetBundles, inputListSHA256,
             tables, diagnostics, notStored, checksum
    }
}

/// A record of the build cache that carries its own checksum: the SHA-256 of the record written with an empty
/// checksum, so that one edited by hand, or cut short, is not trusted.
package protocol ChecksummedRecord: Codable {
    var checksum: String { get set }
}

extension ChecksummedRecord {
    /// The SHA-256 the record's `checksum` must hold.
    package func computedChecksum() throws -> String {
        var copy = self
        copy.checksum = ""
        return SHA256Digest.hex(of: try KilnJSON.encode(copy))
    }

    /// The record `data` holds, when it decodes and its checksum is right.
    package static func verified(_ data: Data) -> Self? {
        guard let record = try? JSONDecoder().decode(Self.self, from: data), let checksum = try? record.computedChecksum(),
              checksum == record.checksum else { return nil }
        return record
    }
}

/// The build cache of one bundle file: whether a build can reuse the bundle and report in place because nothing that
/// decides them changed since the build that wrote them, and the record that build leaves for the next one.
///
/// The key is the SHA-256 of Kiln's version, its executable and the SQLite and ICU versions (`environment`), the
/// manifest's bytes (sources, options, mappings, normalizers, vocabularies, rules), the output and report paths,
/// and each source's input files with their SHA-256. A build that compares with a baseline is never reused whole (the
/// baseline may change without any of these), though it takes its parts from the cache. The record is written through `AtomicFile` (the guarded rename) after
/// the bundle and report are in place, and removed before a build that does not reuse them replaces anything, so
/// that a build killed at any point leaves no record describing files that are not in place; builds of one bundle
/// take turns under its `BuildLock`, which is held while the record is read and written.
package struct BuildCache {
    /// The cache folder of the bundle `output`: `<folder>/.kiln-cache/<bundle file name>`.
    package let folder: URL

    package init(output: URL) {
        folder = KilnFileNames.cache(for: output)
    }

    /// The record of the last build.
    package var recordURL: URL { folder.appendingPathComponent("build.json") }

    /// The list of the last build's inputs (`BuildInputList`), whose SHA-256 the record holds.
    package var inputListURL: URL { folder.appendingPathComponent("inputs.txt") }

    /// Kiln's version and executable (its size and modification time: another build of Kiln may shape rows
    /// otherwise under the same version), SQLite's and ICU's versions.
    package static let environment: String = {
        let executable = FileStamp(URL(fileURLWithPath: "/proc/self/exe")).map { "\($0.size) \($0.modified)" } ?? "unknown"
        return "kiln \(KilnVersion.current); executable \(executable); sqlite \(SQLiteLibrary.version); icu \(ICULibrary.version)"
    }()

    /// What a build found in the cache.
    package enum Lookup {
        /// Nothing changed: the bundle and report in place are the ones the recorded build wrote; `inputs`, the
        /// inputs' digests and stamps as the lookup took them.
        case reuse(BuildCacheRecord, inputs: Inputs)
        /// Build (each source's cache entry may still be reused, `SourceCache`); `reason`, when there is one, says why
        /// the cache could not be used although it was there (another Kiln, a damaged record, a bundle changed since),
        /// for an info finding; `inputs`, the inputs' digests and stamps when the lookup took them.
        case rebuild(reason: String?, inputs: Inputs?)
    }

    /// The SHA-256 and the stamp of every input now, by path relative to the pipeline folder.
    package struct Inputs {
        package var digests: [String: String] = [:]
        package var stamps: [String: FileStamp] = [:]

        /// The inputs of `pipeline`, each digest taken from `record` when the file's stamp is the one recorded with
        /// it, else computed; `nil` when a file cannot be read (the build will say so).
        package init?(of pipeline: CompiledPipeline, record: BuildCacheRecord?) {
            let recorded = Dictionary((record?.inputs ?? []).map { ($0.path, $0) }) { first, _ in first }
            let count = pipeline.sources.reduce(0) { $0 + $1.files.count }
            digests.reserveCapacity(count)
            stamps.reserveCapacity(count)
            for source in pipeline.sources {
                for file in source.files where digests[file.relativePath] == nil {
                    let stamp = FileStamp(file.url)
                    stamps[file.relativePath] = stamp
                    if let known = recorded[file.relativePath], let recordedStamp = known.stamp, stamp == recordedStamp {
                        digests[file.relativePath] = known.sha256
                    } else {
                        guard let digest = try? FileDigest.sha256(of: file.url) else { return nil }
                        digests[file.relativePath] = digest
                    }
                }
            }
        }

        /// The size in bytes of each input as its stamp gives it, for those of `paths`: what
        /// `BuildOutcome.sizes(of:in:)` would state again.
        package func sizes(of paths: some Collection<String>) -> [String: Int] {
            var sizes: [String: Int] = [:]
            sizes.reserveCapacity(paths.count)
            for path in paths { if let stamp = stamps[path] { sizes[path] = Int(stamp.size) } }
            return sizes
        }
    }

    /// True when the build's whole outcome depends on nothing but the key, so that it may be reused whole: no
    /// baseline to compare with. The caches of sources, full-text indexes, tables and rules apply to every build.
    package static func applies(to pipeline: CompiledPipeline, options: BuildOptions) -> Bool {
        options.baseline == nil && pipeline.manifest.baselineURL == nil
    }

    /// The key of a build of `pipeline` to `output` and `report` whose inputs have the SHA-256 `digests`
    /// (by path relative to the pipeline folder).
    package static func key(_ pipeline: CompiledPipeline, output: URL, report: URL, digests: [String: String]) -> String {
        var lines = ["kiln build cache \(BuildCacheRecord.currentFormat)", environment, "manifest \(pipeline.manifest.sha256)",
                     "output \(output.relativePath) \(output.standardizedFileURL.path)",
                     "report \(report.relativePath) \(report.standardizedFileURL.path)"]
        for source in pipeline.sources {
            lines.append("source \(source.spec.name) \(source.files.count)")
            for file in source.files { lines.append("file \(digests[file.relativePath] ?? "-") \(file.relativePath)") }
        }
        return SHA256Digest.hex(of: Data(lines.joined(separator: "\n").utf8))
    }

    /// True unless the cache folders are something else than folders (a link, a file) or the record or the list of
    /// inputs is something else than a regular file (a FIFO would block the read): such a cache is neither read nor
    /// written.
    package var isUsable: Bool {
        [folder.deletingLastPathComponent(), folder].allSatisfy { [nil, .folder].contains(OutputPath.entryKind($0)) }
            && [recordURL, inputListURL].allSatisfy { [nil, .regular].contains(OutputPath.entryKind($0)) }
    }

    /// Whether the bundle `output` and report `report` in place can stand for a build of `pipeline`.
    package func lookup(_ pipeline: CompiledPipeline, output: URL, report: URL) -> Lookup {
        guard isUsable else {
            return .rebuild(reason: "the build cache \(displayPath(folder)) is not a folder holding a regular file: it is not used, and the bundle was built in full", inputs: nil)
        }
        guard let data = FileManager.default.contents(atPath: recordURL.path) else { return .rebuild(reason: nil, inputs: nil) }
        let shown = displayPath(recordURL)
        guard var record = BuildCacheRecord.verified(data), record.format == BuildCacheRecord.currentFormat else {
            return .rebuild(reason: "the build cache \(shown) is damaged or was edited (its checksum does not match): the bundle was built in full", inputs: nil)
        }
        guard record.environment == BuildCache.environment else {
            return .rebuild(reason: "the build cache \(shown) was written by another Kiln or other libraries (\(record.environment)): the bundle was built in full", inputs: nil)
        }
        guard let list = FileManager.default.contents(atPath: inputListURL.path),
              SHA256Digest.hex(of: list) == record.inputListSHA256, let recordedInputs = BuildInputList.decode(list) else {
            return .rebuild(reason: "the build cache's list of inputs \(displayPath(inputListURL)) is missing, damaged or was edited (it is not the one \(shown) recorded): the bundle was built in full", inputs: nil)
        }
        record.inputs = recordedInputs
        guard let inputs = Inputs(of: pipeline, record: record) else { return .rebuild(reason: nil, inputs: nil) }
        guard BuildCache.key(pipeline, output: output, report: report, digests: inputs.digests) == record.key else { return .rebuild(reason: nil, inputs: inputs) }
        // SQLite would apply a -wal or -journal left beside the bundle to what its readers see: a build settles them.
        guard BundleSideFiles.present(beside: output).isEmpty else { return .rebuild(reason: nil, inputs: inputs) }
        let targets = record.targetBundles.map { (output.deletingLastPathComponent().appendingPathComponent($0.file), $0.sha256, "\($0.platform) bundle") }
        let stamped = [(output, record.bundleSHA256, "bundle", record.bundleStamp), (report, record.reportSHA256, "report", record.reportStamp)]
        for (file, expected, role, stamp) in stamped + targets.map({ ($0.0, $0.1, $0.2, nil) }) {
            guard FileManager.default.fileExists(atPath: file.path) else { return .rebuild(reason: nil, inputs: inputs) }
            if let stamp, FileStamp(file) == stamp { continue }
            guard (try? FileDigest.sha256(of: file)) == expected else {
                return .rebuild(reason: "the \(role) \(displayPath(file)) is not the one the build cache \(shown) recorded (it changed since): the bundle was built in full", inputs: inputs)
            }
        }
        return .reuse(record, inputs: inputs)
    }

    /// Removes the record, before a build replaces the files it describes.
    package func forget() {
        guard isUsable, OutputPath.entryKind(recordURL) == .regular else { return }
        FileCalls.unlink(recordURL.path)
        if OutputPath.entryKind(inputListURL) == .regular { FileCalls.unlink(inputListURL.path) }
    }

    /// The inputs of a build as its record lists them (`BuildInputList`), each with its SHA-256 and, when it is
    /// unchanged since the build took it, its stamp; made once the inputs are read (`listing`), before the bundle is
    /// finished, and written by `store`.
    package struct InputListing {
        package let inputs: [BuildCacheRecord.Input]
        /// `inputs.txt`'s bytes.
        package let list: Data
    }

    /// The listing of `digests` (each input's SHA-256, by path) of `pipeline`; `stamps` are the inputs' stamps taken
    /// before they were read: an input whose stamp changed since is listed without one, so that the next build reads
    /// it again. Called after the inputs were read.
    package static func listing(_ digests: [String: String], of pipeline: CompiledPipeline, stamps: [String: FileStamp]) -> InputListing {
        var inputs: [BuildCacheRecord.Input] = []
        // Looked up by path once, not searched for each input (40 000 pages took 160 s that way).
        let files = Dictionary(pipeline.sources.flatMap(\.files).map { ($0.relativePath, $0) }) { first, _ in first }
        for path in digests.keys.sorted() {
            let file = files[path]
            let stamp = stamps[path].flatMap { before in file.flatMap { FileStamp($0.url) } == before ? before : nil }
            inputs.append(BuildCacheRecord.Input(path: path, sha256: digests[path] ?? "", stamp: stamp))
        }
        return InputListing(inputs: inputs, list: BuildInputList.encode(inputs))
    }

    /// The SHA-256 of a finished bundle, started on a thread of its own as soon as the bundle is complete in its
    /// temporary file (`BundleWriter.finish`), so that it runs while the report is encoded and the bundle committed,
    /// not after.
    package struct EarlyDigest {
        /// The temporary file's stamp before it was read.
        let stamp: FileStamp
        let digest: FileDigest.Pending

        /// Starts digesting the complete bundle at `temporary`; `nil` when it cannot be read (`store` digests the
        /// committed file then).
        package init?(_ temporary: URL) {
            guard let stamp = FileStamp(temporary), let started = try? FileDigest.start(temporary) else { return nil }
            self.stamp = stamp
            digest = started.digest
        }

        /// The digest, when `committed` (the bundle's stamp once in place) names the file that was digested, unwritten
        /// since: the rename moves only its status-change time.
        func sha256(ifStill committed: FileStamp?) -> String? {
            guard let committed, committed.isUnwritten(since: stamp) else { return nil }
            return try? digest.wait()
        }
    }

    /// Records the build `outcome` of `pipeline`, whose report is `report` and whose inputs `listing` lists;
    /// `earlyDigest` is the bundle's digest started before it was committed, if any.
    /// - Throws: `KilnError.io` when the bundle cannot be read or the record written.
    package func store(_ outcome: BuildOutcome, of pipeline: CompiledPipeline, report: Data, listing: InputListing,
                       earlyDigest: EarlyDigest? = nil) throws {
        guard isUsable else { return }
        // Stamps before digests: a file changed after its stamp was taken has another stamp at the next build. The
        // bundle is digested on a thread of its own (`FileDigest.start`) while the key is worked out, unless its
        // early digest holds.
        let bundleStamp = FileStamp(outcome.output), reportStamp = FileStamp(outcome.reportURL)
        let early = earlyDigest?.sha256(ifStill: bundleStamp)
        let bundleDigest = try early.map(FileDigest.Pending.init(finished:)) ?? FileDigest.start(outcome.output).digest
        var record = BuildCacheRecord(
            environment: BuildCache.environment,
            key: BuildCache.key(pipeline, output: outcome.output, report: outcome.reportURL, digests: outcome.inputs),
            bundleSHA256: try bundleDigest.wait(), reportSHA256: SHA256Digest.hex(of: report),
            bundleStamp: bundleStamp, reportStamp: reportStamp, bundleBytes: outcome.bytes,
            targetBundles: try outcome.targets.filter { $0.output != outcome.output }.map {
                BuildCacheRecord.TargetBundle(platform: $0.target.platform, file: $0.output.lastPathComponent, sha256: try FileDigest.sha256(of: $0.output))
            },
            inputs: listing.inputs,
            tables: outcome.tables, diagnostics: outcome.diagnostics,
            notStored: outcome.notStored.sorted { $0.key < $1.key }.map { BuildCacheRecord.NotStored(code: $0.key.code, severity: $0.key.severity, count: $0.value) })
        // The list first: a build killed between the two renames leaves a list no record names, which the next
        // build replaces.
        record.inputListSHA256 = SHA256Digest.hex(of: listing.list)
        record.checksum = try record.computedChecksum()
        BuildFiles(destination: inputListURL).removeStale()
        BuildFiles(destination: recordURL).removeStale()
        try AtomicFile.write(listing.list, to: inputListURL)
        try AtomicFile.write(try KilnJSON.encode(record), to: recordURL)
    }

    /// The stamps of `pipeline`'s inputs now, by path relative to the pipeline folder.
    package static func stamps(of pipeline: CompiledPipeline) -> [String: FileStamp] {
        var stamps: [String: FileStamp] = [:]
        for file in pipeline.sources.flatMap(\.files) { stamps[file.relativePath] = FileStamp(file.url) }
        return stamps
    }
}
