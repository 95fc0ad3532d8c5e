import Foundation
import XCTest

/// Runs the independent oracles of `scripts/oracles/` (Python tools from PyPI, installed into `.build/oracles` by
/// `scripts/oracles/install`, which `scripts/test` runs) and returns what they print.
enum Oracle {
    /// The repository's top folder.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `scripts/oracles/<script>` with `arguments`, feeding it `input`; fails the test when it cannot run.
    static func run(_ script: String, _ arguments: [String], input: String = "", file: StaticString = #filePath,
                    line: UInt = #line) throws -> String {
        let python = repositoryRoot.appendingPathComponent(".build/oracles/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("the oracles are not installed: run scripts/oracles/install (scripts/test does)", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [repositoryRoot.appendingPathComponent("scripts/oracles/\(script)").path] + arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(script) failed: \(String(decoding: errors, as: UTF8.self))", file: file, line: line)
        return String(decoding: output, as: UTF8.self)
    }
}
