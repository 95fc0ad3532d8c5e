import Foundation

/// A source ready to run: its reader, the files its path matched, and how each column gets its value.
public struct CompiledSource {
    public let spec: SourceSpec
    public let reader: RecordReader
    public let files: [InputFile]
    let mappings: [CompiledMapping]
}

/// How one column of a source's table is filled from a record.
struct CompiledMapping {
    let column: ColumnSpec
    let fieldIndex: Int?
    let constant: String?
    let normalizers: [Normalizer]
}

/// A loaded, checked manifest with its sources compiled: everything a build needs.
public struct Pipeline {
    public let manifest: Manifest
    public let sources: [CompiledSource]
    let locator: JSON5Locator

    /// The error for a mistake found later (e.g. SQL that SQLite refuses), pointing at `keyPath` in the manifest.
    func issue(_ keyPath: String, _ message: String) -> KilnError {
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
        var isFolder: ObjCBool = false
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw KilnError.usage("no pipeline at \(path): expected a folder holding \(defaultFileName), or a manifest file")
        }
        let file = isFolder.boolValue ? url.appendingPathComponent(defaultFileName) : url
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw KilnError.usage("no \(defaultFileName) in \(path)")
        }
        return file.standardizedFileURL
    }

    /// Loads and checks the pipeline at `path` (a folder or a manifest file). Source paths must stay inside the
    /// pipeline folder, or lie in one of `allowedPaths` (absolute folders or files the command line allowed).
    /// - Throws: `KilnError.usage` when there is no manifest, `KilnError.manifest` for any mistake in it.
    public static func load(_ path: String, allowedPaths: [URL] = []) throws -> Pipeline {
        let file = try manifestURL(for: path)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw KilnError.io("cannot read \(file.path)")
        }
        if let issue = ManifestEncoding.issue([UInt8](data), file: file.path) { throw issue }
        let text = String(decoding: data, as: UTF8.self)
        let locator = JSON5Locator(text: text)
        let displayName = file.path
        func issue(_ keyPath: String, _ message: String) -> KilnError {
            .manifest(ManifestIssue(file: displayName, line: locator.line(of: keyPath), keyPath: keyPath, message: message))
        }

        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let document: ManifestDocument
        do {
            document = try decoder.decode(ManifestDocument.self, from: data)
        } catch let error as DecodingError {
            throw translate(error, file: displayName, locator: locator)
        }
        let manifest = Manifest(bundle: document.bundle, schemaVersion: document.schemaVersion, tables: document.tables,
                                sources: document.sources, rules: document.rules, severity: document.severity,
                                exports: document.exports, vocabularies: document.vocabularies, fixtures: document.fixtures, thresholds: document.thresholds, baseline: document.baseline, limits: document.limits, file: file)
        try ManifestChecker(manifest: manifest, issue: issue).check()
        var sources: [CompiledSource] = []
        for (index, source) in manifest.sources.enumerated() {
            do {
                sources.append(try compile(source, index: index, manifest: manifest, allowedPaths: allowedPaths, issue: issue))
            } catch let error as DecodingError {
                throw translate(error, file: displayName, locator: locator)
            }
        }
        return Pipeline(manifest: manifest, sources: sources, locator: locator)
    }

    private static func compile(_ source: SourceSpec, index: Int, manifest: Manifest, allowedPaths: [URL],
                                issue: (String, String) -> KilnError) throws -> CompiledSource {
        let path = "sources[\(index)]"
        let optionsPath: [CodingKey] = [AnyKey(stringValue: "sources"), AnyKey(intValue: index), AnyKey(stringValue: "options")]
        let reader: RecordReader
        do {
            reader = try ReaderRegistry.makeReader(format: source.format, options: source.options, codingPath: optionsPath)
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
        guard let table = manifest.table(source.into) else {
            throw issue(path + ".into", "no table named \"\(source.into)\"; tables: \(manifest.tables.map(\.name).joined(separator: ", "))")
        }
        var mappings: [CompiledMapping] = []
        for name in source.columns.keys.sorted() {
            let mapping = source.columns[name]!
            let mappingPath = "\(path).columns.\(name)"
            guard let column = table.column(name) else {
                throw issue(mappingPath, "table \"\(table.name)\" has no column \"\(name)\"; columns: \(table.columns.map(\.name).joined(separator: ", "))")
            }
            var fieldIndex: Int?
            if let field = mapping.field {
                guard let found = reader.fieldNames.firstIndex(of: field) else {
                    throw issue(mappingPath, "the \(source.format) reader has no field \"\(field)\"; fields: \(reader.fieldNames.joined(separator: ", "))")
                }
                fieldIndex = found
            }
            var normalizers: [Normalizer] = []
            for (step, spec) in mapping.normalize.enumerated() {
                do {
                    normalizers.append(try Normalizer(spec, fieldNames: reader.fieldNames, vocabularies: manifest.vocabularies))
                } catch let problem as ValueProblem {
                    throw issue("\(mappingPath).normalize[\(step)]", problem.message)
                } catch let error as RegexCompileError {
                    throw issue("\(mappingPath).normalize[\(step)]", error.description)
                }
            }
            mappings.append(CompiledMapping(column: column, fieldIndex: fieldIndex, constant: mapping.value, normalizers: normalizers))
        }
        let resolver = InputResolver(directory: manifest.directory, allowedPaths: allowedPaths)
        let files = try resolver.resolve(source.path) { issue(path + ".path", $0) }
        return CompiledSource(spec: source, reader: reader, files: files, mappings: mappings)
    }

    private static func translate(_ error: DecodingError, file: String, locator: JSON5Locator) -> KilnError {
        let context: DecodingError.Context
        var message: String
        switch error {
        case .typeMismatch(let type, let c):
            context = c
            message = "wrong type: expected \(describe(type))"
        case .valueNotFound(let type, let c):
            context = c
            message = "missing value: expected \(describe(type))"
        case .keyNotFound(let key, let c):
            context = DecodingError.Context(codingPath: c.codingPath + [key], debugDescription: c.debugDescription)
            message = "missing required key \"\(key.stringValue)\""
        case .dataCorrupted(let c):
            context = c
            message = c.debugDescription
            if let underlying = c.underlyingError {
                message = "not valid JSON5: \((underlying as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(underlying)")"
            }
        @unknown default:
            return .manifest(ManifestIssue(file: file, line: nil, keyPath: "", message: "\(error)"))
        }
        let keyPath = keyPathString(context.codingPath)
        var line = locator.line(of: keyPath)
        if context.codingPath.isEmpty, let syntax = locator.syntaxError {
            line = syntax.line
            message = "not valid JSON5: " + syntax.message
        }
        return .manifest(ManifestIssue(file: file, line: line, keyPath: keyPath, message: message))
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "an array"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return name.hasSuffix("Spec") || name.hasSuffix("Document") || name.hasSuffix("Mapping") ? "an object" : name
        }
    }
}
