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
        PATCH may be - (standard input, with --update: the listed patch with its SHA-256); BUNDLE may not, since it is
        replaced in place.

        Exit codes: 0 applied, 1 refused (nothing changed), 64 usage error, 74 I/O error.

        """
    /// The command's options, each declared once: `commandOptions` lists them, `init` reads them.
    enum Options {
        static let update = CommandOption("--update", value: "FILE", help: "The update manifest (default: update.json beside PATCH).")
    }

    static let commandOptions: [CommandOption] = [Options.update, BundleReadLimitOption.option]

    let bundle: URL
    let patchArgument: String
    let update: URL?
    let sqlSeconds: Double?

    /// - Throws: `KilnError.usage` for `-` as BUNDLE (it is replaced in place), or as PATCH without `--update`.
    init(_ arguments: inout ParsedArguments) throws {
        let bundleArgument = try arguments.positional("the bundle")
        patchArgument = try arguments.positional("the patch")
        try arguments.requireNoMore()
        update = try arguments.path(Options.update)
        sqlSeconds = try BundleReadLimitOption.parse(arguments)
        if bundleArgument == StandardInputFile.argument {
            throw KilnError.usage("BUNDLE cannot be standard input (-): kiln apply replaces the file itself with its patched copy; name the bundle's file (the patch may be -)")
        }
        if patchArgument == StandardInputFile.argument, update == nil {
            throw KilnError.usage("a patch from standard input (-) needs --update FILE: the update manifest is found beside PATCH, and standard input is beside nothing")
        }
        bundle = URL(fileURLWithPath: bundleArgument)
    }

    func run() throws -> ExitStatus {
        BundleReadLimitOption.apply(sqlSeconds)
        let standardInput = patchArgument == StandardInputFile.argument
        let patch = try StandardInputFile.url(patchArgument)
        let outcome = try PatchApplier.apply(bundle: bundle, patch: patch, manifest: update, standardInput: standardInput,
                                             names: OutputNames(output: "BUNDLE")) {
            printToStandardError(BuildStage.waitingForLock(bundle).line + "\n")
        }
        let shown = standardInput ? "standard input" : patch.relativePath
        try printOut("applied \(shown) (\(outcome.kind)) to \(bundle.relativePath): \(outcome.from.prefix(12)) → \(outcome.to.prefix(12))\n")
        return .success
    }
}
