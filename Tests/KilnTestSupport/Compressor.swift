import Foundation

/// The compressors' own command-line tools (gzip, bzip2, xz, zstd), the tests' oracle for compressed inputs.
public enum Compressor {
    /// Each codec's name and its command line, compressing standard input to standard output.
    public static let codecs: [(name: String, command: [String])] = [
        ("gzip", ["gzip", "-c"]), ("bzip2", ["bzip2", "-c"]), ("xz", ["xz", "-c"]), ("zstd", ["zstd", "-q", "-c"]),
    ]

    /// A failed compressor run.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `bytes` compressed by `command` (e.g. `["bzip2", "-c"]`).
    /// - Throws: `Failure` when the tool fails.
    public static func compress(_ bytes: Data, _ command: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread { input.fileHandleForWriting.write(bytes); try? input.fileHandleForWriting.close() }
        writer.start()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "\(command.joined(separator: " ")) failed") }
        return compressed
    }
}
