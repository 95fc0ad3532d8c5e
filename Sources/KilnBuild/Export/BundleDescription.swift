import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What the built-in exports (`kiln export swift|datasette|docs`) say about a bundle: each shipped table with the
/// columns the bundle's own schema has (names, types, NOT NULL, key) and the manifest's words about them
/// (descriptions, foreign keys, full-text and R*Tree tables, the sources that fill it, the rules that check it),
/// plus the bundle's schema version and content digest.
public struct BundleDescription: Sendable {
    /// One column as the bundle declares it, with the manifest's description.
    public struct Column: Sendable {
        public var name: String
        /// The declared type as SQLite reports it (`TEXT`, `INTEGER`, `REAL`, `BLOB`).
        public var type: String
        public var notNull: Bool
        public var description: String?
        /// The manifest's declaration of the column (constraints), when it has one.
        public var spec: ColumnSpec?
    }

    /// One shipped table.
    public struct Table: Sendable {
        public var name: String
        public var description: String?
        public var rows: Int
        public var columns: [Column]
        public var primaryKey: [String]
        public var foreignKeys: [ForeignKeySpec]
        public var fullText: FullTextSpec?
        public var spatial: SpatialSpec?
        public var userFilled: Bool
        public var indexes: [IndexSpec]
        /// The sources that fill it, in manifest order.
        public var sources: [SourceSpec]
        /// The manifest rules that read it.
        public var rules: [RuleSpec]
        /// The query that fills it instead of a source.
        public var query: String?
    }

    public var bundle: String
    public var description: String?
    public var schemaVersion: Int
    /// `ContentDigest` of the bundle: what `kiln patch` and the app compare.
    public var contentDigest: String
    public var tables: [Table]
    /// Full-text and R*Tree tables and their shadow tables: SQLite's machinery, not data to browse.
    public var machinery: [String]
    /// The manifest the descriptions come from.
    public var manifest: Manifest

    /// Reads `bundle` (a bundle of `manifest`'s pipeline).
    /// - Throws: as `BundleFile.open`; `KilnError.validation` when the bundle is of another pipeline or SQLite cannot
    ///   read its schema.
    /// The content digest of the bundle `database` holds (`kiln patch`'s), without `manifest`'s app-filled tables.
    static func contentDigest(of database: Database, manifest: Manifest) throws -> String {
        let userFilled = Set(manifest.tables.filter(\.userFilled).map(\.name))
        return try ContentDigest.of(try BundleLayout(database, userFilled: userFilled).tables, in: database)
    }

    public init(bundle url: URL, manifest: Manifest) throws {
        let database = try BundleFile.open(url)
        let name = try BundleFile.name(of: url)
        guard name == manifest.bundle else {
            throw BundleFile.foreign(url, name: name, manifest: manifest)
        }
        do {
            let snapshot = try SchemaSnapshot(database, excluding: [BundleWriter.metadataTable])
            contentDigest = try BundleDescription.contentDigest(of: database, manifest: manifest)
            var tables: [Table] = []
            for spec in manifest.tables where spec.ship {
                guard let present = snapshot.tables[spec.name] else { continue }
                let rows = Int(try database.rows("SELECT count(*) FROM \(quoteIdentifier(spec.name))").first?.values.first?.number ?? 0)
                let columns = present.columns.filter { $0.hidden == 0 }.map { column in
                    Column(name: column.name, type: column.type.uppercased(), notNull: column.notNull,
                           description: spec.column(column.name)?.description, spec: spec.column(column.name))
                }
                tables.append(Table(name: spec.name, description: spec.description, rows: rows, columns: columns, primaryKey: present.primaryKey,
                                    foreignKeys: spec.allForeignKeys, fullText: spec.fullText, spatial: spec.spatial,
                                    userFilled: spec.userFilled, indexes: spec.indexes,
                                    sources: manifest.sources.filter { $0.targets.contains { $0.table == spec.name } },
                                    rules: manifest.rules.filter { $0.check.table == spec.name }, query: spec.query))
            }
            self.tables = tables
            let virtual = snapshot.virtualTables.keys.sorted()
            var machinery = virtual
            for row in try database.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") {
                guard let table = row.values[0].textValue else { continue }
                if virtual.contains(where: { table.hasPrefix($0 + "_") }) { machinery.append(table) }
            }
            self.machinery = machinery.sorted()
        } catch let error as SQLiteError {
            if let stopped = BundleReadLimit.current.stopped(error, reading: [url]) { throw stopped }
            throw KilnError.validation("\(url.relativePath) cannot be read: \(error.message)")
        }
        bundle = manifest.bundle
        description = manifest.description
        schemaVersion = Int(try database.rows("PRAGMA user_version").first?.values.first?.number ?? 0)
        self.manifest = manifest
    }

    /// The source files of a source as the manifest writes them: `stops (delimited, StopsUTF8.txt)`.
    package static func sourcePhrase(_ source: SourceSpec) -> String {
        "\(source.name) (\(source.format), \(source.path))"
    }
}

/// The exports Kiln writes for any bundle, besides those a manifest declares: `kiln export swift|datasette|docs|room`.
public enum BuiltInExport: String, CaseIterable, Sendable {
    /// One Swift file: a struct per table and read-only queries (`SwiftExport`).
    case swift
    /// `<bundle>.metadata.json` for Datasette (`DatasetteMetadata`).
    case datasette
    /// A data dictionary, Markdown and HTML (`DataDictionary`).
    case docs
    /// Kotlin entities, a `@Database` class and Room's schema file for the Android bundle (`RoomExport`).
    case room

    /// True for the exports that take a Kotlin package (`kiln export --package`): `room`.
    public var takesPackage: Bool { self == .room }

    /// Writes the export of `bundle` into `folder` (created if missing); returns the files written.
    /// - Throws: `KilnError.usage` for an output that may not be written, `KilnError.validation` for a bundle of
    ///   another pipeline, `KilnError.io` when a file cannot be written.
    /// `package`: the Kotlin package of `room` (default from the bundle's name); `note` hears what `room` says
    /// besides the files (which bundle it read, the tables Room cannot declare); `names` is what messages call the folder.
    public func write(bundle: URL, manifest: Manifest, to folder: URL, package: String? = nil,
                      names: OutputNames = OutputNames(output: "the export folder"), note: (String) -> Void = { _ in }) throws -> [URL] {
        try OutputPath.checkFolder(folder, named: names.output, protected: [OutputPath.Protected(manifest.directory, "the pipeline folder")])
        let stem = bundle.deletingPathExtension().lastPathComponent
        var read = bundle
        let files: [(String, String)]
        switch self {
        case .room:
            read = try RoomExport.androidBundle(for: bundle, manifest: manifest, note: note)
            let schema = try RoomSchema(bundle: read)
            guard schema.bundle == manifest.bundle else {
                throw BundleFile.foreign(read, name: schema.bundle, manifest: manifest)
            }
            for table in schema.skipped { note("not an entity: \(table)") }
            let digest = try BundleDescription.contentDigest(of: try BundleFile.open(read), manifest: manifest)
            let descriptions = Dictionary(manifest.tables.map { table in
                (table.name, (table: table.description, columns: Dictionary(table.columns.compactMap { column in column.description.map { (column.name, $0) } }) { first, _ in first }))
            }) { first, _ in first }
            files = try RoomExport(schema, package: package, contentDigest: digest, foldedSearches: SearchAccessor.foldedTables(manifest),
                                   descriptions: descriptions).files().map { ($0.path, $0.text) }
        default:
            let description = try BundleDescription(bundle: bundle, manifest: manifest)
            switch self {
            case .swift: files = [(SwiftExport.fileName(for: description), try SwiftExport(description).source())]
            case .datasette: files = [("\(stem).metadata.json", try DatasetteMetadata(description, databaseName: stem).json())]
            default:
                let dictionary = DataDictionary(description)
                files = [("\(manifest.bundle).md", dictionary.markdown()), ("\(manifest.bundle).html", dictionary.html())]
            }
        }
        let protected = [OutputPath.Protected(read, "the bundle"), OutputPath.Protected(manifest.file, "the manifest")]
        for (name, _) in files { try OutputPath.checkFile(folder.appendingPathComponent(name), named: names.output, protected: protected) }
        for folder in Set(files.map { folder.appendingPathComponent($0.0).deletingLastPathComponent() }).sorted(by: { $0.path < $1.path }) {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw KilnError.io(.foundation("cannot create \(folder.path)", path: folder.path, operation: .create, error))
            }
        }
        return try files.map { name, text in
            let url = folder.appendingPathComponent(name)
            try AtomicFile.write(Data(text.utf8), to: url)
            return url
        }
    }
}
