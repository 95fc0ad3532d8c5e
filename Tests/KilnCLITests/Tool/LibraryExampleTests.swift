import Foundation
import XCTest
import KilnTestSupport

/// The library a program uses: the example program (Examples/build-bundle, docs/guide/library.md) builds through
/// `import KilnKit` alone what `kiln build` builds, and KilnKit does not show a program the C wrappers (KilnC).
final class LibraryExampleTests: CLITestCase {
    /// The example program built beside `kiln`.
    private static var example: URL { executable.deletingLastPathComponent().appendingPathComponent("kiln-example") }

    /// The example prints the tables and row counts `kiln build` reports and SQLite counts in its bundle, the same
    /// findings, and the verdict `kiln check` gives; its bundle is byte for byte the one `kiln build` writes.
    func testExampleBuildsAndChecksWhatKilnBuilds() throws {
        try copy("raw/patras", to: "patras")
        let example = try program(Self.example.path, ["patras", "out/example.sqlite"])
        XCTAssertEqual(example.status, 0, example.stderr)
        let lines = example.stdout.components(separatedBy: "\n")
        XCTAssertEqual(lines.first, "bundle patras: built out/example.sqlite")

        let cli = try kiln("build", "patras", "--out", "out/cli.sqlite", "--format", "json")
        XCTAssertEqual(cli.status, 0, cli.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        XCTAssertFalse(tables.isEmpty)
        var expected: [String] = []
        for table in tables {
            let name = try XCTUnwrap(table["name"] as? String), rows = try XCTUnwrap(table["rows"] as? Int)
            let counted = try program("/usr/bin/sqlite3", [file("out/example.sqlite").path, "SELECT count(*) FROM \(name)"])
            XCTAssertEqual(counted.stdout, "\(rows)\n", "sqlite3 counts \(name) in the example's bundle")
            expected.append("table \(name): \(rows) rows")
        }
        XCTAssertEqual(lines.filter { $0.hasPrefix("table ") }, expected)

        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        XCTAssertFalse(diagnostics.isEmpty, "the Patras pipeline has a warning to show")
        let findings = lines.filter { $0.hasPrefix("finding ") }
        XCTAssertEqual(findings.count, diagnostics.count, example.stdout)
        for (line, diagnostic) in zip(findings, diagnostics) {
            let place = "\(diagnostic["file"] ?? ""):\(diagnostic["line"] ?? "")"
            XCTAssertTrue(line.hasPrefix("finding \(place): \(diagnostic["severity"] ?? ""): "), line)
            XCTAssertTrue(line.hasSuffix("[\(diagnostic["code"] ?? "")]"), line)
        }

        let check = try kiln("check", "out/example.sqlite", "--manifest", "patras")
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        let verdict = try XCTUnwrap((check.stdout + check.stderr).components(separatedBy: "\n").last { $0.hasPrefix("passed: ") })
        XCTAssertEqual(lines.last { !$0.isEmpty }, "check: " + verdict)

        XCTAssertEqual(try sha256("out/example.sqlite"), try sha256("out/cli.sqlite"))
    }

    /// A pipeline whose inputs break its rules: the example writes nothing, prints the errors `kiln build` reports
    /// and exits 1.
    func testExampleReportsTheErrorsOfAFailedBuild() throws {
        try brokenPipeline("broken")
        let example = try program(Self.example.path, ["broken", "out/broken.sqlite"])
        XCTAssertEqual(example.status, 1, example.stdout + example.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/broken.sqlite").path))
        let cli = try kiln("build", "broken", "--out", "out/cli.sqlite", "--format", "json")
        XCTAssertEqual(cli.status, 1, cli.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
        let errors = try XCTUnwrap(report["diagnostics"] as? [[String: Any]]).filter { $0["severity"] as? String == "error" }
        XCTAssertFalse(errors.isEmpty)
        let printed = example.stdout.components(separatedBy: "\n").filter { $0.contains(": error: ") }
        XCTAssertEqual(printed.count, errors.count, example.stdout)
        XCTAssertEqual(Set(errors.compactMap { $0["code"] as? String }),
                       Set(printed.compactMap { $0.split(separator: "[").last.map { String($0.dropLast()) } }))
    }

    /// The example's source imports KilnKit and Foundation, nothing else, and its target depends on KilnKit alone:
    /// that it compiles shows a program needs nothing more.
    func testExampleImportsOnlyKilnKit() throws {
        let folder = CLITestCase.repositoryRoot.appendingPathComponent("Examples/build-bundle")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        XCTAssertFalse(files.isEmpty)
        for name in files {
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let imports = source.components(separatedBy: "\n").filter { $0.range(of: #"^\s*(@\w+\s+)*import\s"#, options: .regularExpression) != nil }
            XCTAssertEqual(Set(imports), ["import Foundation", "import KilnKit"], name)
        }
        let package = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try XCTUnwrap(package.components(separatedBy: "\n").first { $0.contains("name: \"kiln-example\"") })
        XCTAssertTrue(target.contains("dependencies: [\"KilnKit\"]"), target)
    }

    /// A program importing KilnKit cannot name the C wrappers (`Database`, `HTTPClient`, `SQLValue`, the KilnC
    /// module), while it can name the pipeline, the builder and the checker: swiftc type-checks such programs
    /// against the modules this build wrote.
    func testKilnCIsNotReachableThroughKilnKit() throws {
        let hidden = try typecheck("""
            import KilnKit
            let database: Database? = nil
            let client: HTTPClient? = nil
            let value: SQLValue = .null
            let module = KilnC.SQLValue.null
            """)
        XCTAssertNotEqual(hidden.status, 0, "a program importing KilnKit sees KilnC's wrappers")
        for name in ["Database", "HTTPClient", "SQLValue", "KilnC"] {
            XCTAssertTrue(hidden.stderr.contains("cannot find type '\(name)' in scope") || hidden.stderr.contains("cannot find '\(name)' in scope"),
                          "\(name): \(hidden.stderr)")
        }
        // Even a program that imports KilnC itself cannot name its declarations: they are `package`, for Kiln's own
        // targets only.
        let direct = try typecheck("""
            import KilnC
            let database: Database? = nil
            """)
        XCTAssertNotEqual(direct.status, 0, "KilnC's declarations are public")
        XCTAssertTrue(direct.stderr.contains("cannot find type 'Database' in scope"), direct.stderr)
        // Every call docs/guide/library.md names, as it names it.
        let seen = try typecheck("""
            import Foundation
            import KilnKit
            func build(_ path: String, _ bundle: URL, _ old: URL, _ folder: URL) throws {
                let pipeline: CompiledPipeline = try ManifestLoader.load(path)
                var options = BuildOptions(output: bundle)
                options.progress = { (stage: BuildStage) in print(stage) }
                let outcome: BuildOutcome = try Builder.build(pipeline, options: options)
                let _: [TableCount] = outcome.tables
                let _: [Diagnostic] = outcome.diagnostics
                let _: CheckReport = try BundleChecker(pipeline: pipeline).check(outcome.output)
                let _: CheckReport = try BundleChecker.check(outcome.output, manifestPath: path)
                let _: BundleDiff = try BundleDiff.compare(old: old, new: bundle)
                let _ = try BundlePatch.make(old: old, new: bundle, out: folder, userFilled: [])
                let _ = try PatchApplier.apply(bundle: old, patch: folder)
                let _: [URL] = try Exporter(manifest: pipeline.manifest).export("csv", from: bundle, to: folder)
                let _: [URL] = try BuiltInExport.swift.write(bundle: bundle, manifest: pipeline.manifest, to: folder)
                let _: Extraction = try Extraction.run(pipeline.sources[0], files: [])
                let _: FetchReport = try Fetcher.run(FetchPlan(manifest: pipeline.manifest), options: FetchOptions())
                try HTMLReport(report: try ReportDocument.read(outcome.reportURL), pipelineFolder: nil, bundle: bundle).write(to: folder)
                let _: Data = try BuildReport(outcome).json()
                let _: String = BuildSummary().text(outcome)
            }
            """)
        XCTAssertEqual(seen.status, 0, seen.stderr)
    }

    /// Runs `swiftc -typecheck` on `source` against the modules of this build, as a program that depends on the
    /// KilnKit product sees them.
    private func typecheck(_ source: String) throws -> Run {
        let main = file("snippet/main.swift")
        try FileManager.default.createDirectory(at: main.deletingLastPathComponent(), withIntermediateDirectories: true)
        try source.write(to: main, atomically: true, encoding: .utf8)
        let modules = CLITestCase.executable.deletingLastPathComponent().appendingPathComponent("Modules")
        let sources = CLITestCase.repositoryRoot.appendingPathComponent("Sources")
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
            .map { sources.appendingPathComponent($0).appendingPathComponent("module.modulemap") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        var arguments = ["swiftc", "-typecheck", "-I", modules.path]
        for map in moduleMaps {
            arguments += ["-Xcc", "-fmodule-map-file=\(map.path)", "-I", map.deletingLastPathComponent().path]
        }
        // The C libraries' header folders, as SwiftPM finds them (pkg-config names from scripts/c-libraries).
        let libraries = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("scripts/c-libraries"), encoding: .utf8)
        for line in libraries.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, fields[2] != "-" else { continue }
            let flags = try program("/usr/bin/pkg-config", ["--cflags", String(fields[2])]).stdout
            for flag in flags.split(separator: " ") where flag.hasPrefix("-I") { arguments += ["-Xcc", String(flag).trimmingCharacters(in: .whitespacesAndNewlines)] }
        }
        return try program("/usr/bin/env", arguments + [main.path])
    }
}
