import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A source ready to run: its plan, the files its path matched, and the reader and row shaper of the calling thread.
public struct CompiledSource {
    /// What every thread reading this source shares: its reader's options and its mappings, checked once.
    package let plan: SourcePlan
    /// The calling thread's reader, emitting only the kinds mapped.
    public let reader: RecordReader
    /// The calling thread's shaper of the source's records into rows.
    package let shaper: RowShaper
    public let files: [InputFile]

    /// The source as the manifest declares it.
    public var spec: SourceSpec { plan.spec }
    /// One per mapped kind, in kind-name order.
    package var targets: [CompiledTarget] { plan.targets }

    /// The kind `kiln extract` and fixtures show: `name`, or the source's only mapped kind.
    /// - Throws: `KilnError.usage` naming the kinds when `name` is not one of them or is needed and missing.
    public func extractedKind(_ name: String?) throws -> RecordKind {
        let mapped = targets.map(\.kind)
        let choices = mapped.map { "\(spec.name).\($0)" }.joined(separator: ", ")
        guard let name = name ?? (mapped.count == 1 ? mapped[0] : nil) else {
            throw KilnError.usage("the source \"\(spec.name)\" fills several tables; name the kind of record: \(choices)")
        }
        guard mapped.contains(name), let kind = reader.kind(named: name) else {
            throw KilnError.usage("the source \"\(spec.name)\" maps no kind of record \"\(name)\"; kinds: \(choices)")
        }
        return kind
    }
}

/// A source compiled once (`ManifestLoader`): its spec, its reader's checked options restricted to the kinds it maps
/// and bounded by the manifest's limits, and its checked mappings. `Sendable`, so staging's reader threads share it
/// and each makes its own reader and shaper from it (`instantiate()`) without going back to the manifest.
package struct SourcePlan: Sendable {
    /// The source as the manifest declares it.
    package let spec: SourceSpec
    /// Its reader's decoded options, restricted to the kinds mapped and bounded by the manifest's limits.
    package let reader: ReaderPlan
    /// One per mapped kind, in kind-name order.
    package let targets: [CompiledTarget]

    /// A reader and a row shaper for one thread, sharing nothing with any other thread's: readers and normalizers
    /// keep compiled patterns and match buffers.
    /// - Throws: as `ReaderPlan.instantiate` and `RowShaper.init`, never for a plan the loader made.
    package func instantiate() throws -> ReadAhead.Tools {
        ReadAhead.Tools(reader: try reader.instantiate(), shaper: try RowShaper(targets: targets))
    }
}

/// One kind of a source's records, ready to stage: its table and column mappings. A class: every record staged
/// refers to it, and a reference is cheaper to pass around than the table's whole description.
package final class CompiledTarget: Sendable {
    package let kind: String
    package let table: TableSpec
    package let mappings: [CompiledMapping]

    package init(kind: String, table: TableSpec, mappings: [CompiledMapping]) {
        self.kind = kind
        self.table = table
        self.mappings = mappings
    }
}

/// How one column of a source's table is filled from a record (a class for the same reason as `CompiledTarget`).
package final class CompiledMapping: Sendable {
    package let column: ColumnSpec
    package let fieldIndex: Int?
    package let constant: String?
    /// The property of the record's input file the value is, for the fields every record carries (`_file`, `_url`,
    /// `_captured`); `nil` for a field of the record or a constant.
    package let fileProperty: FileProperty?
    /// The normalizing steps, checked; each thread compiles its own normalizers from them (`RowShaper`).
    package let steps: [Normalizer.Step]

    /// The fields every reader's records carry besides their own: where their input file is and where it came from.
    package enum FileProperty: String, CaseIterable, Sendable {
        /// The input file's path relative to the pipeline folder, as provenance names it.
        case file = "_file"
        /// The URL `kiln fetch` saved it from (NULL for a file it did not fetch).
        case url = "_url"
        /// When those bytes were captured, ISO 8601 UTC (NULL for a file `kiln fetch` did not fetch).
        case captured = "_captured"

        /// The property's value for `input`.
        package func value(of input: InputFile) -> String? {
            switch self {
            case .file: return input.relativePath
            case .url: return input.fetchedFrom
            case .captured: return input.capturedAt
            }
        }
    }

    /// The name of the field `_file`.
    package static let fileField = FileProperty.file.rawValue

    package init(column: ColumnSpec, fieldIndex: Int?, constant: String?, fileProperty: FileProperty? = nil, steps: [Normalizer.Step]) {
        self.column = column
        self.fieldIndex = fieldIndex
        self.constant = constant
        self.fileProperty = fileProperty
        self.steps = steps
    }
}

/// A loaded, checked manifest with its sources compiled: everything a build needs.
public struct CompiledPipeline {
    public let manifest: Manifest
    public let sources: [CompiledSource]
    package let locator: JSON5Locator
    /// The capture record of the fetching sources' files (`kiln.fetch.json`), when the inputs were resolved.
    public var captures = CaptureRecord()

    /// The source and kind of record named `name`: `SOURCE`, or `SOURCE.KIND` for a source that fills several tables.
    /// - Throws: `KilnError.usage` naming the sources when there is no such source.
    public func source(named name: String) throws -> (source: CompiledSource, kind: String?) {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        guard let source = sources.first(where: { $0.spec.name == parts.first }) else {
            throw KilnError.usage("the manifest has no source \"\(parts.first ?? name)\"; sources: \(sources.map(\.spec.name).joined(separator: ", "))")
        }
        return (source, parts.count == 2 ? parts[1] : nil)
    }

    /// Reports each column of a table that no source maps and no query selects (`column.unfilled`), at its line of
    /// the manifest: it would be NULL in every row.
    package func reportUnfilledColumns(to log: DiagnosticLog) {
        let file = manifest.file.lastPathComponent
        for (table, column, keyPath) in SQLRuleCheck(manifest: manifest).unfilledColumns() {
            let filler = manifest.table(table)?.query == nil ? "no source maps it" : "the table's query does not select it"
            log.report(.columnUnfilled, "\(table).\(column) is filled by nothing (\(filler)): it is NULL in every row; map it, "
                           + "select it, or remove it", at: Provenance(file: file, line: locator.line(of: keyPath)))
        }
    }

    /// The error for a mistake found later (e.g. SQL that SQLite refuses), pointing at `keyPath` in the manifest.
    package func issue(_ keyPath: String, _ message: String) -> KilnError {
        .manifest(ManifestIssue(file: manifest.file.path, line: locator.line(of: keyPath), keyPath: keyPath, message: message))
    }
}

/// Loads `kiln.json5` manifests: decodes JSON5 with Foundation, refuses unknown keys and wrong types, and checks
/// every name against the tables it refers to. Every mistake is a `ManifestIssue` with the manifest line and key path.
public enum ManifestLoader {
    /// The manifest file name looked for in a pipeline folder.
    public static let defaultFileName = "kiln.json5"

    /// Finds the manifest for `path`: the file itself, or `kiln.json5` inside a folder.
    /// - Throws: `KilnError.usage` when there is no manifest there.
    public static func manifestURL(for path: String) throws -> URL {
        let url = URL(fileURLWithPath: path)
        guard let kind = OutputPath.entryKind(url, followingLinks: true) else {
            throw KilnError.usage("no pipeline at \(path): expected a folder holding \(defaultFileName), or a manifest file")
        }
        let file = kind == .folder ? url.appendingPathComponent(defaultFileName) : url
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw KilnError.usage("no \(defaultFileName) in \(path)")
        }
        return file.standardizedFileURL
    }

    /// Loads and checks the pipeline at `path` (a folder or a manifest file). Source paths must stay inside the
    /// pipeline folder, or lie in one of `allowedPaths` (absolute folders or files the command line allowed).
    /// With `resolvingInputs` false (`check`, `diff`, `export`: an app's repository holds the manifest and the bundle,
    /// not the raw inputs) no source path is looked up and every source has no files.
    /// - Throws: `KilnError.usage` when there is no manifest, `KilnError.manifest` for any mistake in it.
    /// A manifest's `exportsFrom` is kept as written; `withSharedExports` reads it when exports are needed.
    public static func load(_ path: String, allowedPaths: [URL] = [], resolvingInputs: Bool = true) throws -> CompiledPipeline {
        let file = try manifestURL(for: path)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw CannotRead.error(file)
        }
        var (manifest, locator) = try ManifestParser.parse(data, file: file)
        let displayName = file.path
        // What kiln fetch recorded of the fetching sources: the build checks their files and names their URLs.
        var captures = CaptureRecord()
        if resolvingInputs, manifest.sources.contains(where: { $0.fetch != nil }) {
            let listed = Set(manifest.sources.flatMap { source in (source.fetch?.urls ?? []).map { "\(source.name)\n\($0)" } })
            // A source's derived URLs are not in the manifest: the record's are those the last fetch derived.
            let derived = Set(manifest.sources.filter { $0.fetch?.derived != nil }.map(\.name))
            captures = try CaptureRecord.read(CaptureRecord.url(besides: file))
            captures.captures.removeAll { !listed.contains("\($0.source)\n\($0.url)") && !derived.contains($0.source) }
            manifest.captured = captures.sources
        }
        func issue(_ keyPath: String, _ message: String) -> KilnError {
            .manifest(ManifestIssue(file: displayName, line: locator.line(of: keyPath), keyPath: keyPath, message: message))
        }
        // A URL template's placeholders must be fields of the source it reads: said by build as by fetch.
        for (index, source) in manifest.sources.enumerated() {
            guard case .template(let template, let from)? = source.fetch?.derived,
                  let reading = manifest.sources.first(where: { $0.name == from }),
                  // Options a reader refuses are said with their key path when that source is compiled, below.
                  let reader = try? ReaderRegistry.makeReader(format: reading.format, options: reading.options, codingPath: []) else { continue }
            if let mismatch = template.mismatch(source: from, format: reading.format, reader: reader) {
                throw issue("sources[\(index)].fetch.template", mismatch)
            }
        }
        var sources: [CompiledSource] = []
        for (index, source) in manifest.sources.enumerated() {
            do {
                sources.append(try compile(source, index: index, manifest: manifest, allowedPaths: allowedPaths,
                                           resolvingInputs: resolvingInputs, captures: captures.byFile, issue: issue))
            } catch let error as DecodingError {
                throw ManifestParser.translate(error, file: displayName, locator: locator)
            }
        }
        ProtectedFiles.shared.protect(file, as: "the manifest")
        // One identity an input for both registries: the resolver's, else one stat.
        for source in sources {
            for input in source.files {
                guard let identity = input.resolvedKey ?? FileKey(input.url) else { continue }
                ProtectedFiles.shared.protect(input.url, identity: identity, as: "the input \(input.relativePath)")
                InputIdentity.shared.record(input.url, identity: identity)
            }
        }
        var pipeline = CompiledPipeline(manifest: manifest, sources: sources, locator: locator)
        pipeline.captures = captures
        return pipeline
    }

    /// `manifest` with the exports of the manifest its `exportsFrom` names (relative to its folder) after its own:
    /// pipelines that build the same tables from other inputs share one declaration. Read only when exports are
    /// needed (`kiln export`), so a pipeline builds without the other folder. That manifest must declare its exports
    /// itself (no chain), and no export name may be declared in both.
    /// - Throws: `KilnError.manifest` at `exportsFrom` when it cannot be loaded, declares none, takes its own from
    ///   elsewhere, or repeats one of the manifest's names.
    public static func withSharedExports(_ manifest: Manifest) throws -> Manifest {
        guard let path = manifest.exportsFrom else { return manifest }
        let text = (try? String(contentsOf: manifest.file, encoding: .utf8)) ?? ""
        func issue(_ message: String) -> KilnError {
            .manifest(ManifestIssue(file: manifest.file.path, line: JSON5Locator(text: text).line(of: "exportsFrom"), keyPath: "exportsFrom", message: message))
        }
        let location = URL(fileURLWithPath: path, relativeTo: manifest.directory).standardizedFileURL
        guard location != manifest.file.standardizedFileURL else { throw issue("a manifest cannot take the exports of itself") }
        let other: Manifest
        do {
            other = try load(location.path, resolvingInputs: false).manifest
        } catch let error as KilnError {
            throw issue("cannot take the exports of \(path): \(error.description)")
        }
        if let chained = other.exportsFrom {
            throw issue("\(path) takes its exports from \(chained) itself; name the manifest that declares them")
        }
        guard !other.exports.isEmpty else { throw issue("\(path) declares no exports") }
        var shared = manifest
        for (index, export) in other.exports.enumerated() {
            guard !manifest.exports.contains(where: { $0.name == export.name }) else {
                throw issue("export \"\(export.name)\" is declared here and in \(path): rename or remove one")
            }
            var taken = export
            taken.declaredIn = other
            taken.declaredIndex = index
            shared.exports.append(taken)
        }
        return shared
    }

    private static func compile(_ source: SourceSpec, index: Int, manifest: Manifest, allowedPaths: [URL], resolvingInputs: Bool,
                                captures: [String: CaptureRecord.Capture], issue: (String, String) -> KilnError) throws -> CompiledSource {
        let path = "sources[\(index)]"
        let optionsPath: [CodingKey] = [AnyKey(stringValue: "sources"), AnyKey(intValue: index), AnyKey(stringValue: "options")]
        let readerPlan: ReaderPlan, reader: RecordReader
        do {
            readerPlan = try ReaderRegistry.plan(format: source.format, options: source.options, codingPath: optionsPath)
            reader = try readerPlan.instantiate()
        } catch let error as RegexCompileError {
            throw issue(path + ".options", error.description)
        } catch let error as KilnError {
            throw issue(path + ".options", error.description)
        } catch let error as EncodingError {
            throw issue(path + ".options.encoding", error.message)
        } catch let error as XPathError {
            throw issue(path + ".options", error.description)
        } catch let problem as ValueProblem {
            throw issue(path + ".options", problem.message)
        }
        let targets = try compileTargets(source, path: path, reader: reader, manifest: manifest, issue: issue)
        let plan = SourcePlan(spec: source, reader: readerPlan.restricted(to: Set(targets.map(\.kind))).limited(by: manifest.limits),
                              targets: targets)
        let shaper = try RowShaper(targets: targets)
        let resolver = InputResolver(directory: manifest.directory, allowedPaths: allowedPaths)
        // A fetching source's files come from kiln fetch: a build before the first fetch says so.
        let hint = source.fetch == nil ? "" : " (this source is fetched: run kiln fetch on the pipeline first)"
        var files = resolvingInputs ? try resolver.resolve(source.path) { issue(path + ".path", $0 + hint) } : []
        if source.fetch != nil {
            for index in files.indices {
                guard let capture = captures[files[index].relativePath], capture.source == source.name else { continue }
                files[index].fetchedFrom = capture.url
                files[index].capturedAt = capture.capturedAt
            }
        }
        return CompiledSource(plan: plan, reader: plan.reader.applied(to: reader), shaper: shaper, files: files)
    }

    /// Compiles where each kind of `source`'s records goes: its table and how each column is filled.
    private static func compileTargets(_ source: SourceSpec, path: String, reader: RecordReader, manifest: Manifest,
                               issue: (String, String) -> KilnError) throws -> [CompiledTarget] {
        var targets: [CompiledTarget] = []
        for target in source.targets {
            let kindNames = reader.kinds.map(\.name).joined(separator: ", ")
            guard let kind = target.kind.map({ reader.kind(named: $0) }) ?? reader.kinds.first else {
                throw issue(target.keyPath, "the \(source.format) reader has no kind of record \"\(target.kind ?? "")\"; kinds: \(kindNames)")
            }
            if target.kind == nil, reader.kinds.count > 1 {
                throw issue(target.keyPath, "the \(source.format) reader emits several kinds of record (\(kindNames)): map each one "
                                + "you want, e.g. into: {\(reader.kinds[0].name): {table: \"\(target.table)\", columns: {…}}}")
            }
            let tableKey = target.kind == nil ? target.keyPath : target.keyPath + ".table"
            guard let table = manifest.table(target.table) else {
                throw issue(tableKey, "no table named \"\(target.table)\"; tables: \(manifest.tables.map(\.name).joined(separator: ", "))")
            }
            let columnsPath = target.kind == nil ? "\(path).columns" : "\(target.keyPath).columns"
            targets.append(CompiledTarget(kind: kind.name, table: table, mappings: try compileMappings(
                target.columns, of: table, kind: kind, format: source.format, path: columnsPath, manifest: manifest, issue: issue)))
        }
        return targets
    }

    /// Compiles how each column of `table` gets its value from records of `kind`.
    private static func compileMappings(_ columns: [String: ColumnMapping], of table: TableSpec, kind: RecordKind, format: String,
                                        path: String, manifest: Manifest, issue: (String, String) -> KilnError) throws -> [CompiledMapping] {
        var mappings: [CompiledMapping] = []
        for name in columns.keys.sorted() {
            let mapping = columns[name]!
            let mappingPath = "\(path).\(name)"
            guard let column = table.column(name) else {
                throw issue(mappingPath, "table \"\(table.name)\" has no column \"\(name)\"; columns: \(table.columns.map(\.name).joined(separator: ", "))")
            }
            var fieldIndex: Int?
            // A record's own field of that name wins over the file's property.
            let fileProperty = mapping.field.flatMap { field in kind.position(of: field) == nil ? CompiledMapping.FileProperty(rawValue: field) : nil }
            if let field = mapping.field, fileProperty == nil {
                guard let found = kind.position(of: field) else {
                    let owner = kind.name == RecordKind.defaultName ? "the \(format) reader" : "a \(kind.name) record of the \(format) reader"
                    let fields = kind.fieldNames + CompiledMapping.FileProperty.allCases.map(\.rawValue)
                    throw issue(mappingPath, "\(owner) has no field \"\(field)\"; fields: \(fields.joined(separator: ", "))")
                }
                fieldIndex = found
            }
            var steps: [Normalizer.Step] = []
            for (step, spec) in mapping.normalize.enumerated() {
                do {
                    steps.append(try Normalizer.Step(spec, fieldNames: kind.fieldNames, vocabularies: manifest.vocabularies))
                    // Compiled once here so that a bad pattern is refused at its line; each thread compiles its own.
                    _ = try Normalizer(steps[step])
                } catch let problem as ValueProblem {
                    throw issue("\(mappingPath).normalize[\(step)]", problem.message)
                } catch let error as RegexCompileError {
                    throw issue("\(mappingPath).normalize[\(step)]", error.description)
                }
            }
            mappings.append(CompiledMapping(column: column, fieldIndex: fieldIndex, constant: mapping.value, fileProperty: fileProperty,
                                            steps: steps))
        }
        return mappings
    }
}
