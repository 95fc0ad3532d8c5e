import Foundation
import KilnKit

/// `kiln patch`: the patches that update an app's bundle from OLD to NEW without a new app release.
struct PatchCommand: KilnCommand {
    static let name = "patch"
    static let abstract = "Writes verified patches from the bundle an app ships (OLD) to a new one (NEW)."
    static let arguments = "OLD NEW"
    static let details = """
        Writes into DIR a plain SQL patch (patch.sql: one transaction, one statement per line, DELETE/UPDATE/INSERT
        by primary key in key order; any SQLite applies it), an SQLite changeset (patch.changeset, for
        sqlite3changeset_apply) and the update manifest (update.json: bundle, schema version, from/to content
        digests, sizes, rows changed per table, each patch's SHA-256). Full-text and R*Tree tables follow; the tables
        the manifest declares userFilled are never touched. Each patch is applied to a copy of OLD and compared with
        NEW first: any difference is an error and nothing is written. DIR changes as a whole (a full disk or a killed run
        leaves the previous patch whole). OLD or NEW may be - (standard input, read once into a temporary file).

        No patch when it is the wrong answer: another bundle, a new schema version (or schema), or a patch larger
        than --max-size. The app must then download the full bundle.

        Exit codes: 0 written, 1 no patch (the reason and the sizes on stderr) or a file that is not a Kiln bundle,
        64 usage or manifest error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let out = CommandOption("--out", value: "DIR", required: true, help: "The folder to write patch.sql, patch.changeset and update.json into (created if missing).")
        static let maxSize = CommandOption("--max-size", value: "SIZE", help: "The largest patch: bytes (250000) or a share of NEW's size (default: the manifest's patch.maxSize, else 50%).")
        static let manifest = CommandOption("--manifest", value: "M", help: "Read the tables the app fills (userFilled) from this pipeline folder or manifest (default: kiln.json5 in the current folder, else raw/<bundle>/kiln.json5 when it exists; none otherwise).")
    }

    static let commandOptions: [CommandOption] = [
        Options.out, Options.maxSize, Options.manifest, BundleReadLimitOption.option,
    ]

    let oldArgument: String
    let newArgument: String
    let output: URL
    let limit: PatchSizeLimit?
    let manifestPath: String?
    let sqlSeconds: Double?

    /// Takes the two bundles and the options.
    /// - Throws: `KilnError.usage` for a missing bundle, an extra argument, a bad size, or both bundles `-`.
    init(_ arguments: inout ParsedArguments) throws {
        oldArgument = try arguments.positional("the old bundle")
        newArgument = try arguments.positional("the new bundle")
        try arguments.requireNoMore()
        if oldArgument == StandardInputFile.argument && newArgument == StandardInputFile.argument {
            throw KilnError.usage("standard input (-) can be read once; name the other bundle")
        }
        guard let out = try arguments.path(Options.out) else { throw KilnError.usage("missing \(Options.out.synopsis)") }
        output = out
        limit = try arguments.value(Options.maxSize).map { try PatchSizeLimit(parsing: $0, named: Options.maxSize.name) }
        manifestPath = arguments.value(Options.manifest)
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
    }

    func run() throws -> ExitStatus {
        let old = try StandardInputFile.url(oldArgument, suffix: ".sqlite"), new = try StandardInputFile.url(newArgument, suffix: ".sqlite")
        var userFilled: Set<String> = []
        var limit = self.limit
        BundleReadLimitOption.apply(sqlSeconds)
        if let path = try manifestPath ?? BundleReadLimitOption.optionalManifest(of: new) {
            let pipeline = try ManifestLoader.load(path, resolvingInputs: false).manifest
            BundleReadLimitOption.apply(sqlSeconds, manifest: pipeline)
            userFilled = Set(pipeline.tables.filter(\.userFilled).map(\.name))
            limit = limit ?? pipeline.patch.maxSize
        }
        let (manifest, noChangeset, shadowBytes) = try BundlePatch.make(old: old, new: new, out: output, userFilled: userFilled, limit: limit ?? .default,
                                            names: OutputNames(output: Options.out.name))
        var text = "patch \(manifest.bundle) \(manifest.from.digest.prefix(12)) → \(manifest.to.digest.prefix(12)) (schema version \(manifest.schemaVersion))\n"
        for table in manifest.tables + manifest.indexes where table.deleted + table.updated + table.inserted > 0 {
            text += "  \(table.name): \(table.deleted) deleted, \(table.updated) updated, \(table.inserted) inserted\n"
        }
        if !manifest.rebuiltFullText.isEmpty { text += "  full-text rebuilt: \(manifest.rebuiltFullText.joined(separator: ", "))\n" }
        for patch in manifest.patches {
            text += "wrote \(output.appendingPathComponent(patch.file).relativePath) (\(patch.bytes) bytes; the bundle is \(manifest.to.bytes))\n"
        }
        // Why the changeset is larger than the SQL patch: the index pages it carries row by row.
        if let sql = manifest.patches.first(where: { $0.file == UpdateManifest.sqlFileName }),
           let changeset = manifest.patches.first(where: { $0.file == UpdateManifest.changesetFileName }),
           case let shadows = shadowBytes.values.reduce(0, +), shadows > 0, changeset.bytes > sql.bytes {
            let ratio = String(format: "%.1f", Double(changeset.bytes) / Double(max(sql.bytes, 1)))
            let tables = shadowBytes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            text += "the changeset is \(ratio)× the SQL patch: \(shadows) of its \(changeset.bytes) bytes are the rows of the search and "
                + "spatial indexes' shadow tables (\(tables)), which it carries as they are (one changed row rewrites the index "
                + "segments holding its terms), while the SQL patch inserts and deletes rows and lets SQLite update the indexes "
                + "itself; apps that apply patch.sql download \(changeset.bytes - sql.bytes) bytes less\n"
        }
        if let noChangeset { text += "no changeset: \(noChangeset)\n" }
        text += "wrote \(output.appendingPathComponent(UpdateManifest.fileName).relativePath)\n"
        try printOut(text)
        return .success
    }
}
