import Foundation

/// A file's SHA-256 as another program computes it (`sha256sum`): an oracle independent of Kiln's own digest, and a
/// reading that leaves this process's POSIX locks on the file alone (a file this process opens and closes loses the
/// locks its SQLite connections hold on it).
public enum ExternalDigest {
    /// The lowercase hexadecimal SHA-256 of the file at `path`, from `sha256sum`.
    public static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}
