import Foundation
import KilnKit

/// `kiln export`: writes files from a bundle with an export the manifest declares.
struct ExportCommand: KilnCommand {
    static let name = "export"
    static let abstract = "Writes files from a bundle with one of the manifest's exports (e.g. legacy-text)."
    static let usage = "kiln export NAME BUNDLE --out DIR [--manifest M]"
    static let details = """
        Runs the queries of the manifest's export NAME against BUNDLE and writes each file into DIR, in the same
        formats the readers read. For the Patras pipeline, `kiln export legacy-text build/patras.sqlite --out DIR`
        writes the seven text files the older app loads, and `kiln export gtfs build/patras.sqlite --out build/gtfs`
        a GTFS feed (the folder, and build/patras-gtfs.zip beside it: an export that declares an archive writes it
        into DIR's parent).

        OPTIONS:
          --out DIR        The folder to write into (created if missing).
          --manifest M     The pipeline folder or manifest (default: raw/<bundle>/ under the current folder,
                           where <bundle> is the bundle's name in its kiln_metadata table).

        Exit codes: 0 written, 1 the bundle is not a Kiln bundle, 64 usage or manifest error, 74 I/O error.

        """
    static let flags: Set<String> = []
    static let options: Set<String> = ["--out", "--manifest"]

    let exportName: String
    let bundle: URL
    let output: URL
    let manifestPath: String?

    init(_ arguments: inout ParsedArguments) throws {
        exportName = try arguments.positional("the export name")
        bundle = URL(fileURLWithPath: try arguments.positional("the bundle"))
        try arguments.requireNoMore()
        guard let out = arguments.values["--out"] else { throw KilnError.usage("missing --out DIR") }
        output = URL(fileURLWithPath: out)
        manifestPath = arguments.values["--manifest"]
    }

    func run() throws -> Int32 {
        let manifestPath = try self.manifestPath ?? "raw/" + Exporter.bundleName(of: bundle)
        let pipeline = try ManifestLoader.load(manifestPath)
        let written = try Exporter(manifest: pipeline.manifest).export(exportName, from: bundle, to: output)
        for file in written { printToStandardError("wrote \(file.relativePath)\n") }
        return 0
    }
}
