import Foundation
import KilnC

/// Writes a set of files that belong together (a patch folder: `patch.sql`, `patch.changeset`, `update.json`) so that
/// the folder changes as a whole or not at all: every new file is written and synced before any old one is replaced.
///
/// When the folder does not exist yet, or holds nothing but files of the set, the new files go into a sibling folder
/// (`.<folder>.<pid>.tmp`, `KilnFileNames.temporary`) that is then swapped with the folder in one step (`rename`, or
/// `renameat2` with `RENAME_EXCHANGE`), and the old one removed: a full disk, an error or a killed process leaves the
/// old folder whole, and what a killed process left beside it is a hidden folder the next write removes
/// (`BuildFiles.removeStale`). A folder holding other files too, or one the system cannot swap (a mount point, a file
/// system without the exchange), gets each new file through a temporary beside its old one (`AtomicFile.Prepared`),
/// all written before the first rename: a full disk or an error leaves it as it was; only a process killed between
/// the renames (microseconds) leaves new files beside old ones.
package enum AtomicFolder {
    /// Writes `files` (name and bytes) into `folder`, created if missing, and removes the files named in `dropping`
    /// (members of the set this write does not have).
    /// - Throws: `KilnError.io` naming the file and the system's reason; the folder is then as it was.
    package static func write(_ files: [(name: String, data: Data)], dropping: [String] = [], into folder: URL) throws {
        let members = Set(files.map(\.name) + dropping)
        // A symbolic link to a folder keeps pointing at the same path: the folder it names is the one swapped.
        let target = folder.resolvingSymlinksInPath()
        switch OutputPath.entryKind(target) {
        case nil:
            if try swapIn(files, replacing: members, for: target) { return }
        case .folder:
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? [""]
            let onlyMembers = entries.allSatisfy { members.contains($0) && OutputPath.entryKind(target.appendingPathComponent($0)) == .regular }
            if onlyMembers, try swapIn(files, replacing: members, for: target) { return }
        default:
            break
        }
        try inPlace(files, dropping: dropping, into: folder)
    }

    /// Fills a sibling folder of `target` with `files` and puts it in `target`'s place (`FileSync.moveFolder`); false,
    /// with nothing changed, when the system cannot (no sibling folder may be made, or the file system cannot swap).
    private static func swapIn(_ files: [(name: String, data: Data)], replacing members: Set<String>, for target: URL) throws -> Bool {
        let sibling = KilnFileNames.temporary(for: target)
        try? FileManager.default.removeItem(at: sibling)
        do {
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: sibling, withIntermediateDirectories: false)
        } catch {
            return false
        }
        TemporaryFiles.shared.register(sibling)
        defer {
            try? FileManager.default.removeItem(at: sibling)
            TemporaryFiles.shared.unregister(sibling)
        }
        for (name, data) in files {
            do { try AtomicFile.write(data, to: sibling.appendingPathComponent(name)) } catch KilnError.io(var failure) {
                // The error names the file it replaces, not its sibling's copy.
                failure.message = failure.message.replacingOccurrences(of: sibling.path, with: target.path)
                failure.path = failure.path?.replacingOccurrences(of: sibling.path, with: target.path)
                throw KilnError.io(failure)
            }
        }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: target.path))?[.posixPermissions] {
            try? FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: sibling.path)
        }
        // Once swapped, the sibling holds the old files, which the deferred removal takes away.
        return try FileSync.moveFolder(sibling, to: target, replacing: members.sorted())
    }

    /// Writes every file to its temporary beside the old one, then renames them into place and removes `dropping`.
    private static func inPlace(_ files: [(name: String, data: Data)], dropping: [String], into folder: URL) throws {
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw KilnError.io(.foundation("cannot create \(folder.path)", path: folder.path, operation: .create, error))
        }
        let prepared = try files.map { try AtomicFile.Prepared($0.data, for: folder.appendingPathComponent($0.name)) }
        for file in prepared { try file.install() }
        for name in dropping where OutputPath.entryKind(folder.appendingPathComponent(name)) == .regular {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}
