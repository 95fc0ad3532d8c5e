import Foundation
import XCTest

/// `scripts/install [PREFIX]`: the binary, its manual page and its completion scripts where the system looks, and
/// the quick start's `kiln build raw/itravel` run by the installed `kiln` found on PATH.
final class InstallScriptTests: CLITestCase {
    private var script: String { CLITestCase.repositoryRoot.appendingPathComponent("scripts/install").path }

    /// The installed files, relative to the prefix.
    private let installed = ["bin/kiln", "share/man/man1/kiln.1", "share/bash-completion/completions/kiln",
                             "share/zsh/site-functions/_kiln", "share/fish/vendor_completions.d/kiln.fish"]

    private func install(_ arguments: [String], destination: String? = nil) throws -> Run {
        var environment = ["KILN": CLITestCase.executable.path]
        if let destination { environment["DESTDIR"] = destination }
        return try program(script, arguments, environment: environment)
    }

    func testInstallsIntoAPrefixAndTheInstalledKilnRunsTheQuickStart() throws {
        let prefix = file("prefix").path
        let run = try install([prefix])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr.split(separator: "\n").filter { $0.hasPrefix("installed ") }, installed.map { "installed \(prefix)/\($0)"[...] })
        XCTAssertTrue(run.stderr.contains("note: \(prefix)/bin is not on PATH"), run.stderr)
        let kiln = prefix + "/bin/kiln"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: kiln))
        // The page and the scripts are the installed binary's own.
        XCTAssertEqual(try String(contentsOfFile: prefix + "/share/man/man1/kiln.1", encoding: .utf8), try self.kiln("help", "--man").stdout)
        for (path, shell) in [("bash-completion/completions/kiln", "bash"), ("zsh/site-functions/_kiln", "zsh"), ("fish/vendor_completions.d/kiln.fish", "fish")] {
            XCTAssertEqual(try String(contentsOfFile: prefix + "/share/" + path, encoding: .utf8), try self.kiln("completions", shell).stdout, shell)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: prefix + "/share/man/man1/kiln.1")
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o644)
        // man finds the page under the prefix.
        let page = try program("/usr/bin/man", ["-M", prefix + "/share/man", "kiln"], environment: ["MANPAGER": "cat", "PAGER": "cat"])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(page.stdout.contains("kiln build DIR|MANIFEST [--out FILE]"), page.stdout)
        // The quick start, with the installed kiln found on PATH and its bash completion loaded from the prefix.
        try copy("raw/itravel", to: "raw/itravel")
        let path = prefix + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let quickStart = try program("/bin/bash", ["-c", """
            set -e
            command -v kiln
            kiln build raw/itravel --quiet
            kiln check build/itravel.sqlite --manifest raw/itravel > /dev/null
            source "$0/share/bash-completion/completions/kiln"
            COMP_WORDS=(kiln completions ''); COMP_CWORD=2; _kiln; echo "${COMPREPLY[@]}"
            """, prefix], environment: ["PATH": path])
        XCTAssertEqual(quickStart.status, 0, quickStart.stderr)
        XCTAssertEqual(quickStart.stdout, "\(kiln)\nbash zsh fish\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("build/itravel.sqlite").path))
    }

    func testDestdirStagesTheFilesUnderIt() throws {
        let stage = file("stage").path
        let run = try install(["/opt/kiln"], destination: stage)
        XCTAssertEqual(run.status, 0, run.stderr)
        for path in installed { XCTAssertTrue(FileManager.default.fileExists(atPath: stage + "/opt/kiln/" + path), path) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/opt/kiln/bin/kiln"))
        let version = try program(stage + "/opt/kiln/bin/kiln", ["--version"])
        XCTAssertEqual(version.stdout, "0.1.0\n")
    }

    func testABadPrefixOrBinaryIsRefusedAndNothingIsInstalled() throws {
        let relative = try install(["prefix"])
        XCTAssertEqual(relative.status, 64)
        XCTAssertEqual(relative.stderr, "scripts/install: PREFIX must be an absolute path, not \"prefix\"\n")
        XCTAssertEqual(try install(["/a", "/b"]).status, 64)
        let missing = try program(script, [file("p").path], environment: ["KILN": file("no-kiln").path])
        XCTAssertEqual(missing.status, 66)
        XCTAssertEqual(missing.stderr, "scripts/install: \(file("no-kiln").path) is not an executable kiln\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("p").path))
    }
}
