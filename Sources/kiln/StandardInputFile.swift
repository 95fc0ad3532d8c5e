import Foundation
import KilnKit
import Synchronization

/// `-` where a command reads one file (`kiln check -`, `kiln report - --out PAGE`, `kiln extract SOURCE -`): standard
/// input, copied whole into a temporary file for the readers that need a file (SQLite opens a path, readers seek),
/// removed when the command ends or is interrupted.
enum StandardInputFile {
    /// The argument that names standard input.
    static let argument = "-"

    private static let made = Mutex<[URL]>([])

    /// The file `argument` names: itself, or for `-` a temporary file `standard-input<suffix>` holding standard input.
    /// - Throws: `KilnError.io` when standard input cannot be read or the temporary file written.
    static func url(_ argument: String, suffix: String = "") throws -> URL {
        guard argument == StandardInputFile.argument else { return URL(fileURLWithPath: argument) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-stdin-\(UUID().uuidString)", isDirectory: true)
        let file = folder.appendingPathComponent("standard-input" + suffix)
        TemporaryFiles.shared.register(file)
        made.withLock { $0.append(file) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let data = try FileHandle.standardInput.readToEnd() ?? Data()
            try data.write(to: file)
        } catch {
            throw KilnError.io("cannot read standard input into \(file.path): \(error)")
        }
        return file
    }

    /// Removes the temporary files and their folders, when the command is done.
    static func removeAll() {
        for file in made.withLock({ $0 }) {
            try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
            TemporaryFiles.shared.unregister(file)
        }
    }
}
