import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Every call particular to Linux and glibc is in one file (`KilnC/Glibc.swift`, with `Sources/CGlibc/shim.h`), so a
/// port has one place to write; the calls it wraps behave as the rest of Kiln expects.
final class PlatformLayerTests: KilnTestCase {
    func testLinuxCallsAreMadeInThePlatformFileOnly() throws {
        let sources = KilnTestCase.repositoryRoot.appendingPathComponent("Sources")
        let platform = "KilnC/Glibc.swift"
        // The functions of CGlibc's shim, read from it.
        let shim = try String(contentsOf: sources.appendingPathComponent("CGlibc/shim.h"), encoding: .utf8)
        let shimFunctions = try NSRegularExpression(pattern: #"static inline [a-z ]+ (kiln_[a-z_]+)\("#)
            .matches(in: shim, range: NSRange(shim.startIndex..., in: shim)).map { String(shim[Range($0.range(at: 1), in: shim)!]) }
        XCTAssertEqual(Set(shimFunctions), ["kiln_malloc_limit_arenas", "kiln_malloc_trim", "kiln_thread_set_nice", "kiln_terminal_columns", "kiln_lock_held_elsewhere",
                                                "kiln_start_writeback", "kiln_sync_file_system", "kiln_address_space_limit", "kiln_thread_set_name",
                                                "kiln_rename_exchange", "kiln_open_unnamed", "kiln_link_descriptor"], shim)
        // Module-qualified glibc names, the glibc-only modules, the shim's functions and the calls the platform file wraps.
        let pattern = try NSRegularExpression(pattern: #"\bGlibc\.|import (CGlibc|Glibc)\b|\bmallopt\b|\bmalloc_trim\b|(?<![.\w])(signal|_exit|isatty|ioctl|setpriority|"#
                                              + shimFunctions.joined(separator: "|") + #")\("#)
        var found: [String] = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let url as URL in files where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(sources.path.count + 1))
            guard relative != platform else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                found.append("\(relative): \(text[Range(match.range, in: text)!])")
            }
        }
        XCTAssertEqual(found, [])
        let file = try String(contentsOf: sources.appendingPathComponent(platform), encoding: .utf8)
        XCTAssertTrue(file.contains("\n#if os(Linux)\n") && file.contains("\n#else\n#error("), "the platform file says where it runs")
    }

    func testTerminalIsNoneForAPipe() throws {
        let pipe = Pipe()
        XCTAssertFalse(Terminal.isTerminal(pipe.fileHandleForWriting.fileDescriptor))
        XCTAssertNil(Terminal.columns(pipe.fileHandleForWriting.fileDescriptor))
    }

    func testDescriptorSyncReportsAFailure() throws {
        let url = temporaryDirectory.appendingPathComponent("synced")
        try Data("x".utf8).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        XCTAssertTrue(DescriptorSync.sync(handle.fileDescriptor))
        try handle.close()
        XCTAssertFalse(DescriptorSync.sync(-1))
        XCTAssertEqual(errno, EBADF)
    }
}
