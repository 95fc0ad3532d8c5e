import Foundation
import XCTest
import KilnC
import KilnKit

/// `kiln patch` on an unlucky machine: the disk of `--out` fills while the patch folder is written, `TMPDIR` fills
/// while the patch is verified on a copy of OLD, a patch is killed during its verification. The patch folder changes
/// as a whole or not at all; an I/O error is exit 74, never the "no patch" verdict that sends apps the full bundle;
/// no copy of the bundle stays in `TMPDIR`.
final class PatchFolderCommandTests: CLITestCase {
    /// Builds, from one pipeline, `old/env.sqlite` (rows a, b), `mid/env.sqlite` (a, b, c) and `build/env.sqlite`
    /// (a, b and 600 rows more: a patch of several pages).
    private func prepare() throws {
        try writePipeline("p", manifest: """
            { bundle: "env", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }], primaryKey: ["v"] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
            }
            """)
        for (rows, out) in [(["a", "b"], "old/env.sqlite"), (["a", "b", "c"], "mid/env.sqlite"),
                            (["a", "b"] + (0..<600).map { "row \($0) of the new version of the data" }, "build/env.sqlite")] {
            try (rows.joined(separator: "\n") + "\n").write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
            let run = try kiln("build", "p", "--quiet", "--out", out)
            XCTAssertEqual(run.status, 0, run.stderr)
        }
    }

    /// Each file in `folder` (hidden ones too) with its SHA-256.
    private func contents(_ folder: String) throws -> [String: String] {
        var found: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: file(folder).path) { found[name] = try sha256(folder + "/" + name) }
        return found
    }

    /// The number of 4 KiB pages a file takes on a tmpfs.
    private func pages(_ path: String) throws -> Int {
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file(path).path)[.size] as? Int)
        return (size + 4095) / 4096
    }

    func testAFullDiskLeavesThePreviousPatchFolderWhole() throws {
        try prepare()
        let disk = try smallDisk("disk", kilobytes: 2048)
        XCTAssertEqual(try kiln("patch", "old/env.sqlite", "mid/env.sqlite", "--out", "disk/update").status, 0)
        var previous = try contents("disk/update")
        XCTAssertEqual(previous.keys.sorted(), ["patch.changeset", "patch.sql", "update.json"])
        // The new patch, written where there is room: its patch.sql would fit on the full disk, the rest would not
        // (a patch.sql written alone used to replace the old one beside the old update.json and changeset).
        let reference = try kiln("patch", "old/env.sqlite", "build/env.sqlite", "--out", "reference", "--max-size", "100%")
        XCTAssertEqual(reference.status, 0, reference.stderr)
        let expected = try contents("reference")
        XCTAssertGreaterThan(try pages("reference/patch.changeset"), try pages("disk/update/patch.sql"))

        // The folder holds only the patch (swapped whole), then a file of the user's too (each file replaced in place).
        for round in 0..<2 {
            if round == 1 {
                try Data("notes\n".utf8).write(to: file("disk/update/README"))
                previous = try contents("disk/update")
            }
            try fill(disk, leaving: try pages("reference/patch.sql"))
            let run = try kiln("patch", "old/env.sqlite", "build/env.sqlite", "--out", "disk/update", "--max-size", "100%")
            XCTAssertEqual(run.status, 74, run.stderr)
            XCTAssertTrue(run.stderr.hasPrefix("Error: cannot write \(file("disk/update").path)/patch."), run.stderr)
            XCTAssertTrue(run.stderr.contains("enough space") || run.stderr.contains("No space left on device"), run.stderr)
            XCTAssertEqual(run.stderr.components(separatedBy: "\n").count, 2, run.stderr)
            XCTAssertEqual(try contents("disk/update"), previous, "round \(round): the previous patch folder is whole")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted(), ["fill", "update"], "no temporary left")

            // With room again, the folder is the new patch as a whole.
            try FileManager.default.removeItem(at: disk.appendingPathComponent("fill"))
            let again = try kiln("patch", "old/env.sqlite", "build/env.sqlite", "--out", "disk/update", "--max-size", "100%")
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertEqual(try contents("disk/update"), expected.merging(round == 1 ? ["README": previous["README"] ?? ""] : [:]) { $1 })
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.path), ["update"])
            XCTAssertEqual(try kiln("patch", "old/env.sqlite", "mid/env.sqlite", "--out", "disk/update").status, 0)
            previous = try contents("disk/update")
        }
    }

    func testAFullTemporaryFolderWhileVerifyingIsAnIOErrorAndLeavesNoJournal() throws {
        try prepare()
        let temporary = try smallDisk("tmp", kilobytes: 2048)
        // Room for the copy of OLD and a page more: applying the patch to the copy runs out of room.
        try fill(temporary, leaving: try pages("old/env.sqlite") + 1)
        let run = try CLITestCase.run(CLITestCase.executable, ["patch", "old/env.sqlite", "build/env.sqlite", "--out", "update", "--max-size", "100%"],
                                      in: workingDirectory, environment: ["TMPDIR": temporary.path])
        XCTAssertEqual(run.status, 74, run.stderr)
        XCTAssertEqual(run.stderr, "Error: cannot write a copy of old/env.sqlite in \(temporary.path) to check the SQL patch: database or disk is full; nothing was written\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("update").path), "no patch folder")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), ["fill"], "no copy, no journal")
    }

    func testTheCopyAKilledPatchLeftInTheTemporaryFolderIsReclaimed() throws {
        try prepare()
        let temporary = file("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        // Bundles whose every insert runs a statement that never ends: the verification on the copy of OLD stays.
        let endless = "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c)"
        for (source, doctored) in [("old/env.sqlite", "evil-old.sqlite"), ("build/env.sqlite", "evil-new.sqlite")] {
            try FileManager.default.copyItem(at: file(source), to: file(doctored))
            let database = try Database(path: file(doctored).path, mode: .readWrite)
            try database.execute("CREATE TRIGGER endless AFTER INSERT ON t BEGIN SELECT \(endless); END;")
            try database.close()
        }
        let process = Process()
        process.executableURL = CLITestCase.executable
        process.arguments = ["patch", "evil-old.sqlite", "evil-new.sqlite", "--out", "evil", "--max-size", "100%", "--sql-seconds", "600"]
        process.currentDirectoryURL = workingDirectory
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Killed once its copy's journal exists: the patch is being applied to the copy.
        func left() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: temporary.path).sorted() }
        while process.isRunning, !(try left()).contains(where: { $0.hasSuffix("-journal") }) { usleep(10_000) }
        XCTAssertTrue(process.isRunning, "the patch ended before its verification began")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(try left().count, 2, "the killed patch left its copy of OLD and its journal")

        let run = try CLITestCase.run(CLITestCase.executable, ["patch", "old/env.sqlite", "build/env.sqlite", "--out", "update", "--max-size", "100%"],
                                      in: workingDirectory, environment: ["TMPDIR": temporary.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try left(), [], "the next patch removed them")
    }
}
