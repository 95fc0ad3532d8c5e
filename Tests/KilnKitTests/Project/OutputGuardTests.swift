import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The output guard: every file Kiln writes is put in place by one rename (`FileSync.move`), which refuses a
/// destination that is not a regular file or that the command reads (`ProtectedFiles`), whatever its caller checked.
final class OutputGuardTests: KilnTestCase {
    /// Each call that creates, replaces or renames a file, and the only files allowed to make it (each writes a
    /// temporary or scratch file that `FileSync.move` later puts in place, or is the move itself).
    static let writePrimitives: [(call: String, allowed: Set<String>)] = [
        // rename(2) itself is wrapped in KilnC (`FileCalls.rename`), which only the guarded move calls.
        ("rename(", ["KilnCore/FileSync.swift", "KilnC/Glibc.swift"]),
        ("FileCalls.rename(", ["KilnCore/FileSync.swift"]),
        ("FileCalls.exchange(", ["KilnCore/FileSync.swift"]),
        (".write(to:", ["KilnCore/AtomicFile.swift"]),
        ("atomically:", []),
        ("options: .atomic", []),
        ("zip_open(", ["KilnC/LibZip.swift"]),
        ("createFile(atPath", ["KilnBuild/Export/Exporter.swift", "KilnBuild/Extraction/ExtractionStream.swift"]),
        ("FileHandle(forWriting", ["KilnBuild/Export/Exporter.swift", "KilnBuild/Extraction/ExtractionStream.swift"]),
        ("FileManager.default.moveItem", []),
        // open(2) creating a file: the build lock, and kiln fetch's body and partial download, each put in place by
        // FileSync.move.
        ("O_CREAT", ["KilnCore/BuildLock.swift", "KilnC/Curl.swift", "KilnFetch/URLFetch+Checksum.swift"]),
        // A body written to a file without a name gets one only through FileSync.place, which guards the name first.
        ("linkat(", []),
        ("FileCalls.link(descriptor", ["KilnC/Curl.swift"]),
        (".link(as:", ["KilnCore/FileSync.swift"]),
        // A patch is made and applied on a scratch copy of the bundle, renamed into place by FileSync.replace; the
        // staging file (a scratch file, never put in place) may start as a copy of a build-cache entry; the bundle's
        // temporary file may start as a copy of a kept one (renamed into place by FileSync.move at the commit), and a
        // kept one is copied from it to a scratch file that FileSync.replace puts in the cache; a target's bundle is
        // converted in a scratch copy of the main bundle (never put in place).
        ("FileManager.default.copyItem", ["KilnBuild/Patch/BundlePatch.swift", "KilnBuild/Patch/PatchApplier.swift",
                                          "KilnBuild/Staging/StagingDatabase.swift", "KilnBuild/Bundle/BundleWriter.swift",
                                          "KilnBuild/Cache/BundlePrefixCache.swift", "KilnBuild/Bundle/TargetBundle.swift"]),
        // A target's bundle is written as a temporary (`VACUUM INTO` from its scratch copy, which is converted in
        // place), its header set, then put in place by FileSync.move.
        // A copy `patch` or `apply` changes is opened by `BundleFile.openCopy`; the build cache copies rows into the
        // staging file (a scratch file) inside a write phase of its owner.
        ("mode: .readWrite", ["KilnBuild/Staging/StagingWriter.swift", "KilnBuild/Bundle/BundleSideFiles.swift", "KilnBuild/Bundle/TargetBundle.swift", "KilnBuild/Patch/BundlePatch.swift", "KilnBuild/Patch/PatchApplier.swift",
                              "KilnBuild/Check/BundleFile.swift", "KilnBuild/Cache/SourceCache.swift"]),
    ]

    func testEveryWriterGoesThroughTheGuardedRename() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        var found: [String: Set<String>] = [:]
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        while let path = enumerator?.nextObject() as? String {
            // The library's layers (KilnC … KilnBuild), not the command-line tool.
            guard path.hasSuffix(".swift"), path.hasPrefix("Kiln") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for (call, _) in OutputGuardTests.writePrimitives where code.contains(call) { found[call, default: []].insert(path) }
        }
        for (call, allowed) in OutputGuardTests.writePrimitives {
            let unexpected = (found[call] ?? []).subtracting(allowed)
            XCTAssertEqual(unexpected, [], "\(call) outside the files that write temporaries for the guarded rename")
        }
        XCTAssertEqual(found["FileCalls.rename("], ["KilnCore/FileSync.swift"], "the scan sees the one rename")
    }

    func testTheRenameRefusesWhatIsNotARegularFile() throws {
        let temporary = try write("new\n", to: "new.tmp")
        let fifo = temporaryDirectory.appendingPathComponent("fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o644), 0)
        let target = try write("keep\n", to: "target.txt")
        let link = temporaryDirectory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        for (destination, phrase) in [(fifo, "a FIFO (named pipe)"), (link, "a symbolic link"), (temporaryDirectory!, "a folder"),
                                      (URL(fileURLWithPath: "/dev/null"), "a character device")] {
            XCTAssertThrowsError(try FileSync.move(temporary, to: destination)) { error in
                XCTAssertEqual("\(error)", "\(destination.path) is \(phrase); Kiln replaces only regular files")
            }
        }
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "keep\n")
        XCTAssertEqual(OutputPath.entryKind(fifo), .fifo)
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary.path), "nothing was moved")
    }

    func testTheRenameRefusesAProtectedFileByAnyName() throws {
        let temporary = try write("new\n", to: "new.tmp")
        let input = try write("input\n", to: "in.txt")
        ProtectedFiles.shared.protect(input, as: "the input in.txt")
        let hardLink = temporaryDirectory.appendingPathComponent("other-name.txt")
        try FileManager.default.linkItem(at: input, to: hardLink)
        for destination in [input, hardLink, URL(fileURLWithPath: temporaryDirectory.path + "/./in.txt")] {
            XCTAssertThrowsError(try FileSync.move(temporary, to: destination)) { error in
                XCTAssertEqual("\(error)", "\(destination.path) is the input in.txt; it would be overwritten")
            }
        }
        XCTAssertEqual(try String(contentsOf: input, encoding: .utf8), "input\n")
        let fresh = temporaryDirectory.appendingPathComponent("fresh.txt")
        try FileSync.move(temporary, to: fresh)
        XCTAssertEqual(try String(contentsOf: fresh, encoding: .utf8), "new\n", "a file nobody reads is replaced")
    }
}
