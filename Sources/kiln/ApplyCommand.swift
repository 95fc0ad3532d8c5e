import Foundation
import KilnKit

/// `kiln apply`: applies a patch `kiln patch` wrote to a bundle, for CI and tests.
struct ApplyCommand: KilnCommand {
    static let name = "apply"
    static let abstract = "Applies a patch from kiln patch (SQL or changeset) to a bundle, checked against its update manifest."
    static let arguments = "BUNDLE PATCH"
    static let details = """
        Checks PATCH's SHA-256 against the update manifest and BUNDLE's content digest against its from-digest
        (a patch for another version, or one already applied, is refused), applies PATCH (patch.sql or
        patch.changeset) to a copy of BUNDLE, checks the copy's digest against the to-digest, and renames it over
        BUNDLE: BUNDLE is patched completely or not at all. The rows of the tables the app fills are kept.
        The SQL may change rows of the bundle's tables and nothing else (no other file, no schema change, no
        setting). While a build or another apply of BUNDLE runs, apply waits for it (they share its lock).

        Exit codes: 0 applied, 1 refused (nothing changed), 64 usage error, 74 I/O error.

        """
    static let commandOptions: [CommandOption] = [
        CommandOption("--update", value: "FILE", help: "The update manifest (default: update.json beside PATCH)."),
        BundleReadLimitOption.option,
    ]

    let bundle: URL
    let patch: URL
    let update: URL?
    let sqlSeconds: Double?

    init(_ arguments: inout ParsedArguments) throws {
        bundle = URL(fileURLWithPath: try arguments.positional("the bundle"))
        patch = URL(fileURLWithPath: try arguments.positional("the patch"))
        try arguments.requireNoMore()
        update = try arguments.path("--update")
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
    }

    func run() throws -> ExitStatus {
        BundleReadLimitOption.apply(sqlSeconds)
        let outcome = try PatchApplier.apply(bundle: bundle, patch: patch, manifest: update, names: OutputNames(output: "BUNDLE")) {
            printToStandardError(BuildStage.waitingForLock(bundle).line + "\n")
        }
        try printOut("applied \(patch.relativePath) (\(outcome.kind)) to \(bundle.relativePath): \(outcome.from.prefix(12)) → \(outcome.to.prefix(12))\n")
        return .success
    }
}
