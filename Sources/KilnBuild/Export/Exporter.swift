import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Writes files from a bundle with an export the manifest declares: each file is a query whose rows a writer
/// turns into text in one of the formats the readers read, streamed to disk.
public struct Exporter {
    public let manifest: Manifest

    /// The day of the export (`kiln export --date`, else `SOURCE_DATE_EPOCH`): where a service period without a start
    /// date starts, and what `serviceFindings` counts from (the clock when nil: that only decides a warning).
    public var exportDate: Date?

    public init(manifest: Manifest, exportDate: Date? = nil) {
        self.manifest = manifest
        self.exportDate = exportDate
    }

    /// The service period of export `name`, nil when it declares none.
    /// - Throws: `KilnError.usage` for an unknown export, or a period counted from an export date not given.
    public func servicePeriod(of name: String) throws -> ServicePeriod? {
        guard let export = manifest.exports.first(where: { $0.name == name }), let spec = export.servicePeriod else { return nil }
        do {
            return try ServicePeriod(spec, exportDate: exportDate)
        } catch let problem as ValueProblem {
            throw KilnError.usage("export \"\(name)\": " + problem.message)
        }
    }

    /// A warning (`export.service-ending`) when the service period of export `name` ends within its `warnDays` of the
    /// export date (today when none was given), or has ended; none otherwise.
    public func serviceFindings(_ name: String) throws -> [Diagnostic] {
        guard let period = try servicePeriod(of: name), let export = manifest.exports.first(where: { $0.name == name }),
              let spec = export.servicePeriod else { return [] }
        let asOf = exportDate ?? Date()
        let left = period.daysLeft(from: asOf)
        // The last warnDays days, the warnDays-th one counted in, as gtfs-validator's feed_expiration_date30_days.
        guard left <= spec.warnDays else { return [] }
        let end = ServicePeriod.gtfs(period.end), day = ServicePeriod.gtfs(asOf)
        let when = left >= 0 ? "ends on \(end), \(left) day\(left == 1 ? "" : "s") after \(day)" : "ended on \(end), \(-left) day\(left == -1 ? "" : "s") before \(day)"
        return [Diagnostic(code: .exportServiceEnding,
                           message: "the service period of export \"\(name)\" \(when) (warned \(spec.warnDays) days ahead, servicePeriod.warnDays): apps and validators will treat the feed as expiring; move the period on",
                           provenance: Provenance(file: displayPath(export.declaredIn?.file ?? manifest.file)))]
    }

    /// gtfs-validator's `expired_calendar` (`export.expired-calendar`, a warning per service) for the `calendar.txt`
    /// and `calendar_dates.txt` among `written`: a service whose last day of service is before the export date (today
    /// when none was given, as gtfs-validator's own default; the files never depend on it). None when neither was
    /// written.
    /// - Throws: `KilnError.io` when a written file cannot be read back.
    /// An export `name` without a `servicePeriod` that writes `feed_info.txt` is warned as a declared period is
    /// (`export.service-ending`) from the `feed_end_date` it writes: gtfs-validator's `feed_expiration_date30_days`.
    public func calendarFindings(_ written: [URL], export name: String? = nil) throws -> [Diagnostic] {
        let calendar = written.first { $0.lastPathComponent == "calendar.txt" }
        let dates = written.first { $0.lastPathComponent == "calendar_dates.txt" }
        var findings: [Diagnostic] = []
        if let feedInfo = written.first(where: { $0.lastPathComponent == "feed_info.txt" }),
           manifest.exports.first(where: { $0.name == name })?.servicePeriod == nil,
           let end = try ExpiredCalendar.feedEnd(feedInfo) {
            findings += ExpiredCalendar.feedEndFindings(end, file: feedInfo, asOf: exportDate ?? Date(), warnDays: ServicePeriodSpec.defaultWarnDays)
        }
        guard calendar != nil || dates != nil else { return findings }
        return findings + ExpiredCalendar.findings(try ExpiredCalendar.services(calendar: calendar, calendarDates: dates), asOf: exportDate ?? Date())
    }

    /// The formats files can be written in.
    package static let writerTypes: [any RecordWriter.Type] = [DelimitedWriter.self, RoutesWriter.self, TimetableWriter.self, GeoJSONWriter.self, CSVWriter.self]

    /// The bundle name recorded in a bundle's metadata (see `BundleFile.name(of:)`).
    /// - Throws: `KilnError.validation` when the file is not a Kiln bundle, `KilnError.io` when it cannot be read.
    public static func bundleName(of bundle: URL) throws -> String {
        try BundleFile.name(of: bundle)
    }

    /// Runs export `name` against `bundle`, writing its files into `folder`, then the export's archive (if it
    /// declares one) beside the folder. Returns the files written, the archive last.
    /// - Throws: `KilnError.usage` for an unknown export, `KilnError.manifest` for a query or option SQLite or the
    ///   writer refuses, `KilnError.io` when a file cannot be written.
    public func export(_ name: String, from bundle: URL, to folder: URL, names: OutputNames = OutputNames(output: "the export folder")) throws -> [URL] {
        guard let index = manifest.exports.firstIndex(where: { $0.name == name }) else {
            let known = manifest.exports.map(\.name) + BuiltInExport.allCases.map(\.rawValue)
            throw KilnError.usage("\(displayPath(manifest.file)) declares no export \"\(name)\"" + (known.isEmpty ? "" : "; exports: \(known.joined(separator: ", "))")
                                  + "; declare it under exports, or take another manifest's exports with exportsFrom: \"../other/kiln.json5\"")
        }
        let origin = manifest.exports[index].declaredIn
        let exportPath = "exports[\(manifest.exports[index].declaredIndex ?? index)]"
        let period = try servicePeriod(of: name)
        try OutputPath.checkFolder(folder, named: names.output, protected: [OutputPath.Protected(manifest.directory, "the pipeline folder")])
        for file in manifest.exports[index].files {
            try OutputPath.checkFile(folder.appendingPathComponent(file.path), named: "the export file",
                                     protected: [OutputPath.Protected(bundle, "the bundle"), OutputPath.Protected(manifest.file, "the manifest")])
        }
        let archiveURL = manifest.exports[index].archive.map { folder.deletingLastPathComponent().appendingPathComponent($0) }
        if let archiveURL {
            try OutputPath.checkFile(archiveURL, named: "the archive",
                                     protected: [OutputPath.Protected(bundle, "the bundle"), OutputPath.Protected(manifest.file, "the manifest")])
        }
        let database = try BundleFile.open(bundle)
        let bundleName = try BundleFile.name(of: bundle)
        guard bundleName == manifest.bundle else {
            throw BundleFile.foreign(bundle, name: bundleName, manifest: manifest)
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw KilnError.io(.foundation("cannot create \(folder.path)", path: folder.path, operation: .create, error))
        }
        let export = manifest.exports[index]
        var parameters = try export.parameters.mapValues { value -> SQLValue in
            switch value {
            case .number(let number): return number == number.rounded() && abs(number) < 1e15 ? .integer(Int64(number)) : .real(number)
            case .string(let text): return .text(text)
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .null: return .null
            case .array, .object: throw issue(exportPath + ".parameters", "a parameter is a number, a string or a boolean", in: origin)
            }
        }
        // Values Kiln binds itself, when a query asks for them: the service period, and the bundle's content digest.
        func builtIn(_ name: String) throws -> SQLValue? {
            switch name {
            case "kiln_service_start", "kiln_service_end":
                guard let period else { throw ValueProblem(message: "the query uses :\(name), but the export declares no servicePeriod") }
                return .text(ServicePeriod.gtfs(name == "kiln_service_start" ? period.start : period.end))
            case "kiln_content_digest":
                let layout = try BundleLayout(database, userFilled: Set(manifest.tables.filter(\.userFilled).map(\.name)))
                return .text(try ContentDigest.of(layout.tables, in: database))
            default: return nil
            }
        }
        // Every file is written to its temporary first; only when all are complete are they renamed into place, so
        // that a failure leaves the folder as it was rather than mixing old and new files.
        var complete: [TextFileSink] = []
        defer { for sink in complete { sink.abandon() } }
        for (fileIndex, file) in export.files.enumerated() {
            let keyPath = exportPath + ".files[\(fileIndex)]"
            let writer = try makeWriter(file, keyPath: keyPath, origin: origin)
            let url = folder.appendingPathComponent(file.path)
            let sink = try TextFileSink(url: url)
            // The query has its own limit (limits.sqlSeconds); the bundle's reading limit (`BundleFile.open`) holds
            // for what Kiln reads around it.
            var queryRunning = false
            do {
                let statement = try database.prepareQuery(file.query)
                for name in statement.parameterNames where parameters[name] == nil {
                    if let value = try builtIn(name) { parameters[name] = value }
                }
                let undeclared = statement.parameterNames.filter { parameters[$0] == nil }
                if !undeclared.isEmpty {
                    throw ValueProblem(message: "the query uses \(undeclared.map { ":" + $0 }.joined(separator: ", ")), which the export's parameters do not declare")
                }
                try statement.bind(named: parameters)
                try writer.check(columns: statement.columnNames)
                queryRunning = true
                try database.pausingTimeLimit {
                    try database.withTimeLimit(manifest.limits.sqlSeconds) {
                        while let row = try statement.step() { try writer.add(row, to: sink) }
                    }
                }
                queryRunning = false
                try writer.finish(sink)
                try sink.close()
            } catch let error as SQLiteError where error.isInterrupted && !queryRunning {
                sink.abandon()
                throw BundleReadLimit.current.stopped(error, reading: [bundle]) ?? error
            } catch let error as SQLiteError where error.isInterrupted {
                sink.abandon()
                throw issue(keyPath + ".query", "the export query ran longer than \(sqlNumber(manifest.limits.sqlSeconds)) s and was stopped; make it cheaper or raise limits.sqlSeconds", in: origin)
            } catch let error as SQLiteError where error.isNotADatabase {
                sink.abandon()
                throw KilnError.validation("\(bundle.relativePath) is damaged: \(error.message)")
            } catch let error as SQLiteError where error.isLocked {
                sink.abandon()
                throw BundleSideFiles.lockedError(bundle)
            } catch let error as SQLiteError {
                sink.abandon()
                throw issue(keyPath + ".query", "SQLite refuses the export query: \(error.message)", in: origin)
            } catch let problem as ValueProblem {
                sink.abandon()
                throw issue(keyPath + ".query", problem.message, in: origin)
            } catch {
                sink.abandon()
                throw error
            }
            complete.append(sink)
        }
        // The archive is made from the complete temporaries before anything is renamed, so that a failed archive
        // leaves the folder and the old archive as they were; then the files, then the archive, are put in place.
        var archiveTemporary: URL?
        defer { if let archiveTemporary { try? FileManager.default.removeItem(at: archiveTemporary); TemporaryFiles.shared.unregister(archiveTemporary) } }
        if let archiveURL {
            let temporary = AtomicFile.temporary(for: archiveURL)
            BuildFiles(destination: archiveURL).removeStale()
            TemporaryFiles.shared.register(temporary)
            archiveTemporary = temporary
            do {
                try ZipArchiveWriter.write(zip(export.files.map(\.path), complete.map(\.temporary)).map { (name: $0, file: $1) },
                                           to: temporary, named: archiveURL)
            } catch let failure as LibraryFailure {
                throw KilnError.io(failure.description)
            }
        }
        for sink in complete { try sink.install() }
        var written = complete.map(\.url)
        if let archiveURL, let temporary = archiveTemporary {
            try FileSync.replace(archiveURL, with: temporary)
            TemporaryFiles.shared.unregister(temporary)
            archiveTemporary = nil
            written.append(archiveURL)
        }
        return written
    }

    private func makeWriter(_ file: ExportFileSpec, keyPath: String, origin: Manifest?) throws -> RecordWriter {
        guard let type = Exporter.writerTypes.first(where: { $0.format == file.format }) else {
            throw issue(keyPath + ".format", "no writer for format \"\(file.format)\"; formats: \(Exporter.writerTypes.map { $0.format }.joined(separator: ", "))", in: origin)
        }
        do {
            return try type.init(options: file.options, manifest: origin ?? manifest)
        } catch let problem as ValueProblem {
            throw issue(keyPath + ".options", problem.message, in: origin)
        } catch let error as DecodingError {
            throw issue(keyPath + ".options", "\(error)", in: origin)
        }
    }

    /// The mistake at `keyPath` of the manifest (or of `file`, the manifest an export was taken from).
    private func issue(_ keyPath: String, _ message: String, in origin: Manifest? = nil) -> KilnError {
        let file = origin?.file ?? manifest.file
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        let line = JSON5Locator(text: text).line(of: keyPath)
        return .manifest(ManifestIssue(file: file.path, line: line, keyPath: keyPath, message: message))
    }
}

/// Writes a text file through a temporary file, renamed into place only when complete.
/// Not `Sendable`: it owns a file handle.
package final class TextFileSink {
    /// The file it replaces.
    package let url: URL
    /// The file being written, renamed over `url` by `install`.
    package let temporary: URL
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    /// - Throws: `KilnError.io` when the file cannot be created.
    package init(url: URL) throws {
        self.url = url
        temporary = AtomicFile.temporary(for: url)
        BuildFiles(destination: url).removeStale()
        TemporaryFiles.shared.register(temporary)
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporary.path) else {
            TemporaryFiles.shared.unregister(temporary)
            throw KilnError.io("cannot write \(url.path)")
        }
        self.handle = handle
    }

    /// Appends one line and its `\n`.
    /// - Throws: `KilnError.io` when writing fails.
    package func line(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Flushes and closes the temporary file, complete but not yet in place.
    /// - Throws: `KilnError.io` when writing fails.
    package func close() throws {
        try flush()
        do {
            try handle.close()
        } catch {
            abandon()
            throw KilnError.io(.foundation("cannot write \(url.path)", path: url.path, operation: .write, error))
        }
    }

    /// Syncs the closed file and renames it into place.
    /// - Throws: `KilnError.io` when syncing or renaming fails.
    package func install() throws {
        do {
            try FileSync.replace(url, with: temporary)
            TemporaryFiles.shared.unregister(temporary)
        } catch {
            abandon()
            throw error
        }
    }

    /// Drops the partial file.
    package func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(at: temporary)
        TemporaryFiles.shared.unregister(temporary)
    }

    private func flush() throws {
        do { try DescriptorWrite.write(Data(buffer), to: handle.fileDescriptor) } catch {
            abandon()
            throw KilnError.io("cannot write \(url.path): \(error.message)")
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
