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
        leaves the previous patch whole).

        No patch when it is the wrong answer: another bundle, a new schema version (or schema), or a patch larger
        than --max-size. The app must then download the full bundle.

        Exit codes: 0 written, 1 no patch (the reason and the sizes on stderr) or a file that is not a Kiln bundle,
        64 usage or manifest error, 74 I/O error.

        """
    static let commandOptions: [CommandOption] = [
        CommandOption("--out", value: "DIR", required: true, help: "The folder to write patch.sql, patch.changeset and update.json into (created if missing)."),
        CommandOption("--max-size", value: "SIZE", help: "The largest patch: bytes (250000) or a share of NEW's size (default: the manifest's patch.maxSize, else 50%)."),
        CommandOption("--manifest", value: "M", help: "Read the tables the app fills (userFilled) from this pipeline folder or manifest (default: kiln.json5 in the current folder, else raw/<bundle>/kiln.json5 when it exists; none otherwise)."),
        BundleReadLimitOption.option,
    ]

    let old: URL
    let new: URL
    let output: URL
    let limit: PatchSizeLimit?
    let manifestPath: String?
    let sqlSeconds: Double?

    /// Takes the two bundles and the options.
    /// - Throws: `KilnError.usage` for a missing bundle, an extra argument or a bad size.
    init(_ arguments: inout ParsedArguments) throws {
        old = URL(fileURLWithPath: try arguments.positional("the old bundle"))
        new = URL(fileURLWithPath: try arguments.positional("the new bundle"))
        try arguments.requireNoMore()
        guard let out = try arguments.path("--out") else { throw KilnError.usage("missing --out DIR") }
        output = out
        limit = try arguments.value("--max-size").map { try PatchSizeLimit(parsing: $0, named: "--max-size") }
        manifestPath = arguments.value("--manifest")
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
    }

    func run() throws -> ExitStatus {
        var userFilled: Set<String> = []
        var limit = self.limit
        BundleReadLimitOption.apply(sqlSeconds)
        if let path = try manifestPath ?? BundleReadLimitOption.optionalManifest(of: new) {
            let pipeline = try ManifestLoader.load(path, resolvingInputs: false).manifest
            BundleReadLimitOption.apply(sqlSeconds, manifest: pipeline)
            userFilled = Set(pipeline.tables.filter(\.userFilled).map(\.name))
            limit = limit ?? pipeline.patch.maxSize
        }
        let (manifest, noChangeset) = try BundlePatch.make(old: old, new: new, out: output, userFilled: userFilled, limit: limit ?? .default,
                                            names: OutputNames(output: "--out"))
        var text = "patch \(manifest.bundle) \(manifest.from.digest.prefix(12)) → \(manifest.to.digest.prefix(12)) (schema version \(manifest.schemaVersion))\n"
        for table in manifest.tables + manifest.indexes where table.deleted + table.updated + table.inserted > 0 {
            text += "  \(table.name): \(table.deleted) deleted, \(table.updated) updated, \(table.inserted) inserted\n"
        }
        if !manifest.rebuiltFullText.isEmpty { text += "  full-text rebuilt: \(manifest.rebuiltFullText.joined(separator: ", "))\n" }
        for patch in manifest.patches {
            text += "wrote \(output.appendingPathComponent(patch.file).relativePath) (\(patch.bytes) bytes; the bundle is \(manifest.to.bytes))\n"
        }
        if let noChangeset { text += "no changeset: \(noChangeset)\n" }
        text += "wrote \(output.appendingPathComponent(UpdateManifest.fileName).relativePath)\n"
        try printOut(text)
        return .success
    }
}
