import Foundation

/// Another program's standard output, for oracles that are not Kiln.
public enum ExternalProgram {
    /// What `arguments` (run through `/usr/bin/env`, so a program name is looked up on the `PATH`) print.
    public static func output(_ arguments: [String]) throws -> String {
        String(decoding: try run(URL(fileURLWithPath: "/usr/bin/env"), arguments).output, as: UTF8.self)
    }

    /// Runs `executable` with `arguments`; returns what it printed and its exit status.
    public static func run(_ executable: URL, _ arguments: [String]) throws -> (output: Data, status: Int32) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (data, process.terminationStatus)
    }
}

/// A file's SHA-256 as another program computes it (`sha256sum`): an oracle independent of Kiln's own digest, and a
/// reading that leaves this process's POSIX locks on the file alone (a file this process opens and closes loses the
/// locks its SQLite connections hold on it).
public enum ExternalDigest {
    /// The lowercase hexadecimal SHA-256 of the file at `path`, from `sha256sum`.
    public static func sha256sum(_ path: String) throws -> String {
        try ExternalProgram.output(["sha256sum", path]).split(separator: " ").first.map(String.init) ?? ""
    }
}
