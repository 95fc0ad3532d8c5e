import Foundation
import XCTest

/// Shared by both test targets. Runs one of the Python oracles in `scripts/oracles` with the virtual environment `scripts/oracles/install` makes
/// (`scripts/test` runs it first, so a fresh machine has it).
public enum PythonOracle {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// The repository's top folder.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Python of the oracles' virtual environment (`.build/oracles`), for a test that runs it itself.
    /// - Throws: `XCTSkip` in the fast tier (`scripts/test --fast`); `Failure` when the oracles are not installed.
    public static func interpreter() throws -> URL {
        try TestTier.requireFull("the Python oracles")
        let python = PythonOracle.repositoryRoot.appendingPathComponent(".build/oracles/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(description: "the Python oracles are not installed: run scripts/oracles/install (scripts/test does)")
        }
        return python
    }

    /// Runs `scripts/oracles/<script>` with `arguments`; returns its standard output.
    /// - Throws: `XCTSkip` in the fast tier; `Failure` when the oracles are not installed or the script fails.
    public static func run(_ script: String, _ arguments: [String], input: String = "") throws -> Data {
        let root = PythonOracle.repositoryRoot
        let python = try interpreter()
        let process = Process()
        process.executableURL = python
        process.arguments = [root.appendingPathComponent("scripts/oracles/" + script).path] + arguments
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = err
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(script) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return output
    }

    /// Runs an oracle and returns what it prints, as text.
    public static func text(_ script: String, _ arguments: [String], input: String = "") throws -> String {
        String(decoding: try run(script, arguments, input: input), as: UTF8.self)
    }

    /// Runs a Python program given as text (`python3 -c`, the standard library only) with `arguments`; returns its
    /// output lines. For expected values computed by Python's own modules (`json`, `csv`) over a test's files.
    public static func lines(ofProgram program: String, _ arguments: [String]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", program] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "python3 -c failed (status \(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Runs an oracle that prints JSON and decodes it.
    public static func json(_ script: String, _ arguments: [String]) throws -> Any {
        try JSONSerialization.jsonObject(with: try run(script, arguments))
    }
}
