// kiln-example: builds the bundle a Kiln pipeline declares and checks it, through the KilnKit library alone.
//
//     swift run kiln-example PIPELINE [BUNDLE]
//
// PIPELINE is a folder holding kiln.json5 (or a manifest file); BUNDLE is the file to write (default:
// build/<bundle>.sqlite under the current folder, as `kiln build` does). The program prints the bundle's tables with
// their row counts, every finding of the build, and the verdict of checking the written bundle against the manifest.
// Exit status: 0 built and checked, 1 validation errors (nothing written, or the check failed), 2 an error Kiln threw
// (the manifest, an input or an output; the message says which), 64 usage. docs/guide/library.md walks through it.
import Foundation
import KilnKit

let arguments = Array(CommandLine.arguments.dropFirst())
guard (1...2).contains(arguments.count) else {
    FileHandle.standardError.write(Data("usage: kiln-example PIPELINE [BUNDLE]\n".utf8))
    exit(64)
}

do {
    // 1. Load the manifest and resolve its sources' files: the pipeline a build runs.
    let pipeline = try ManifestLoader.load(arguments[0])

    // 2. Build: read every source, run the rules, write the bundle and its report when no error remains.
    //    Like `kiln build`, it reuses what the last build of the same bundle read when nothing changed.
    let options = BuildOptions(output: arguments.count > 1 ? URL(fileURLWithPath: arguments[1]) : nil)
    let outcome = try Builder.build(pipeline, options: options)
    print("bundle \(outcome.bundle): \(outcome.built ? "built" : "not built") \(outcome.output.relativePath)")
    for table in outcome.tables {
        print("table \(table.name): \(table.rows) rows")
    }

    // 3. The findings, one line each, as `kiln check` prints them.
    let summary = BuildSummary()
    for finding in outcome.diagnostics {
        print("finding " + summary.line(finding))
    }
    guard outcome.built else {
        print("not built: the findings above hold errors; the report is \(outcome.reportURL.relativePath)")
        exit(1)
    }

    // 4. Check the bundle written against the same manifest: file, integrity, schema, metadata and rules.
    let check = try BundleChecker(pipeline: pipeline).check(outcome.output)
    print("check: \(check.passed ? "passed" : "failed"): \(check.counts)")
    exit(check.passed ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("kiln-example: \(error)\n".utf8))
    exit(2)
}
