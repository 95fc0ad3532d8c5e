import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// Runs the built `kiln` binary in a temporary working folder and captures its output and exit code.
class CLITestCase: XCTestCase {
    /// Set in the fast tier once an oracle's skip surfaced inside an assertion (`TestTier.swallows`).
    private var skippedByTier = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if TestTier.swallows(description, skipped: &skippedByTier) { return }
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// A fresh working folder for this test, removed afterwards.
    private(set) var workingDirectory: URL!

    /// The repository's top folder.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What one run of `kiln` did.
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    override func setUpWithError() throws {
        workingDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiln-cli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let workingDirectory { try? FileManager.default.removeItem(at: workingDirectory) }
    }

    /// The `kiln` executable built beside the test bundle.
    static var executable: URL {
        let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            + Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for folder in candidates {
            let url = folder.appendingPathComponent("kiln")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return repositoryRoot.appendingPathComponent(".build/debug/kiln")
    }

    /// Runs `kiln arguments…` in the working folder.
    @discardableResult
    func kiln(_ arguments: String...) throws -> Run {
        try kiln(arguments)
    }

    /// Runs `kiln` with an argument list built at run time.
    @discardableResult
    func kiln(_ arguments: [String]) throws -> Run {
        try kiln(in: workingDirectory, arguments)
    }

    /// Runs `kiln arguments…` in `folder`.
    @discardableResult
    func kiln(in folder: URL, _ arguments: [String]) throws -> Run {
        try CLITestCase.run(CLITestCase.executable, arguments, in: folder)
    }

    /// A pipeline `name` of `rows` generated stops with a full-text table (so the bundle outgrows its staging
    /// database); `variant` changes every name, so that two variants give different bundles.
    @discardableResult
    func generatedPipeline(_ name: String, rows: Int, variant: String = "") throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            { bundle: "generated", schemaVersion: 1,
              tables: [{ name: "stop",
                         columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true },
                                   { name: "search_name", type: "text" }, { name: "latitude", type: "real" }],
                         primaryKey: ["code"], indexes: [{ columns: ["search_name"] }],
                         fullText: { name: "stop_search", columns: ["name", "search_name"], unindexed: ["code"] } }],
              sources: [{ name: "stops", format: "delimited", path: "stops.txt", options: { fields: ["name", "code", "latitude"] },
                          into: "stop", columns: { code: "code", name: "name", search_name: { field: "name", normalize: ["fold"] },
                                                   latitude: "latitude" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        var lines = ""
        lines.reserveCapacity(rows * 48)
        for row in 0..<rows { lines += "Στάση Πανεπιστημίου\(variant) \(row); \(100_000 + row); 38.\(row % 1000)\n" }
        try lines.write(to: folder.appendingPathComponent("stops.txt"), atomically: true, encoding: .utf8)
        return folder
    }

    /// Starts `kiln arguments…` in the working folder without waiting, its output thrown away.
    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = CLITestCase.executable
        process.arguments = arguments
        process.currentDirectoryURL = workingDirectory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `kiln arguments…` in the working folder under `/bin/sh`, with `redirection` (e.g. `>/dev/full`,
    /// `>&-`, `ulimit -f 64;` before) applied by the shell: for what a test cannot set up with a `Pipe`.
    @discardableResult
    func kilnInShell(_ redirection: String, prefix: String = "", _ arguments: [String]) throws -> Run {
        try CLITestCase.run(URL(fileURLWithPath: "/bin/sh"),
                            ["-c", "\(prefix) \"$0\" \"$@\" \(redirection)", CLITestCase.executable.path] + arguments,
                            in: workingDirectory)
    }

    /// Runs another program (a shell, groff, `scripts/install`) in the working folder, with `environment` added to
    /// this process's.
    @discardableResult
    func program(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try CLITestCase.run(URL(fileURLWithPath: path), arguments, in: workingDirectory, environment: environment)
    }

    /// A folder `name` holding the travel guide's manifest and a dump of `megabytes` generated by
    /// `scripts/gen-mediawiki-dump` (fixed seed: the same pages every time), ready for `kiln build`.
    func generatedTravelDump(_ name: String, megabytes: Int) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("raw/itravel/kiln.json5"),
                                         to: folder.appendingPathComponent("kiln.json5"))
        let generator = CLITestCase.repositoryRoot.appendingPathComponent("scripts/gen-mediawiki-dump").path
        let generated = try program("/usr/bin/env", ["python3", generator, "--megabytes", String(megabytes),
                                                     "--out", folder.appendingPathComponent("itravel-export.xml").path])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        return folder
    }

    /// Runs `executable` in `folder` and waits for it, reading its stdout while its stderr goes to a file (so
    /// neither pipe can fill while the other is read).
    static func run(_ executable: URL, _ arguments: [String], in folder: URL, environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = folder
        let out = Pipe(), err = try errorSink()
        process.standardOutput = out
        process.standardError = err.handle
        try process.run()
        try err.handle.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = try Data(contentsOf: err.url)
        try? FileManager.default.removeItem(at: err.url)
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A new empty file outside the working folder for a process's stderr, and a handle writing to it.
    private static func errorSink() throws -> (url: URL, handle: FileHandle) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        return (url, try FileHandle(forWritingTo: url))
    }

    /// Copies a repository folder (e.g. `raw/patras`) into the working folder at `name`.
    @discardableResult
    func copy(_ path: String, to name: String) throws -> URL {
        let destination = workingDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent(path), to: destination)
        return destination
    }

    /// A pipeline folder `name` holding the broken Patras fixture and the real Patras manifest.
    func brokenPipeline(_ name: String = "broken") throws -> URL {
        let folder = try copy("Tests/Fixtures/patras-broken", to: name)
        try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"),
                                         to: folder.appendingPathComponent("kiln.json5"))
        return folder
    }

    /// A pipeline folder `name` in the working folder holding `manifest` as its `kiln.json5`; returns the folder.
    @discardableResult
    func writePipeline(_ name: String, manifest: String) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try manifest.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        return folder
    }

    /// The file at `path` under the working folder.
    func file(_ path: String) -> URL { workingDirectory.appendingPathComponent(path) }

    /// `url` (under the working folder) as kiln run there prints it: its path from the working folder.
    func shown(_ url: URL) -> String { String(url.path.dropFirst(workingDirectory.path.count + 1)) }

    /// A tmpfs of `kilobytes` mounted at the new folder `name` of the working folder, unmounted when the test ends:
    /// a disk that fills, for the tests that run as root (the test is skipped otherwise).
    func smallDisk(_ name: String, kilobytes: Int) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mounted = try program("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", folder.path])
        try XCTSkipUnless(mounted.status == 0, "mounting a tmpfs needs root")
        addTeardownBlock { _ = try? self.program("/bin/umount", [folder.path]) }
        return folder
    }

    /// Fills the tmpfs at `disk` with the file `fill` so that exactly `pages` pages of 4 KiB stay free.
    func fill(_ disk: URL, leaving pages: Int) throws {
        let gap = disk.appendingPathComponent("gap")
        try Data(count: pages * 4096).write(to: gap)
        let filler = disk.appendingPathComponent("fill")
        try? FileManager.default.removeItem(at: filler)
        XCTAssertTrue(FileManager.default.createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        let page = Data(count: 4096)
        do { while true { try handle.write(contentsOf: page) } } catch {}  // until the disk is full
        try handle.close()
        try FileManager.default.removeItem(at: gap)
    }

    /// The SHA-256 of a file, as hexadecimal.
    func sha256(_ path: String) throws -> String {
        let digest = SHA256Digest()
        digest.update([UInt8](try Data(contentsOf: file(path)))[...])
        return digest.hexDigest()
    }
}
