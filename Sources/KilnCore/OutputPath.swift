import Foundation
import KilnC

/// The one check every command makes before it writes: a file Kiln replaces must be a regular file or not exist yet,
/// and must not be one of the files the command reads or writes for another purpose. Renaming over a device, a
/// symbolic link, a FIFO or a folder, or over an input, would destroy something that is not Kiln's to replace.
package enum OutputPath {
    /// A path the command must not write over, and what it is (for the message).
    package struct Protected {
        package let url: URL
        /// What the file is, e.g. "the manifest", "the input raw/x/StopsUTF8.txt".
        package let role: String

        package init(_ url: URL, _ role: String) {
            self.url = url
            self.role = role
        }
    }

    /// Checks that `url` (called `option` in messages: "the report", or the option the user gave it, "--report") may be replaced by a new regular file.
    /// - Throws: `KilnError.usage` with one sentence when the path is empty, exists and is not a regular file
    ///   (a symbolic link, a device, a FIFO, a socket or a folder), or names the same file as one of `protected`.
    package static func checkFile(_ url: URL, named option: String, protected: [Protected] = []) throws {
        guard !url.path.isEmpty, !url.lastPathComponent.isEmpty, url.lastPathComponent != "/" else {
            throw KilnError.usage("\(option) names no file")
        }
        if let kind = entryKind(url), kind != .regular {
            throw KilnError.usage("\(option) \(url.relativePath) is \(kind.phrase); Kiln replaces only regular files")
        }
        let file = FileIdentity(url)
        for other in protected where file.isSame(as: other.url) {
            throw KilnError.usage("\(option) \(url.relativePath) is \(other.role); it would be overwritten")
        }
    }

    /// Checks that `url` (named `option` in messages) is a folder files may be written into: an existing folder
    /// (possibly through a symbolic link) or a path that does not exist yet, and none of `protected`.
    /// - Throws: `KilnError.usage` with one sentence when the path is empty, is something other than a folder, or
    ///   is one of `protected` (e.g. the pipeline folder, whose inputs the files would replace).
    package static func checkFolder(_ url: URL, named option: String, protected: [Protected] = []) throws {
        guard !url.path.isEmpty else { throw KilnError.usage("\(option) names no folder") }
        if let kind = entryKind(url, followingLinks: true), kind != .folder {
            throw KilnError.usage("\(option) \(url.relativePath) is \(kind.phrase), not a folder")
        }
        let folder = FileIdentity(url)
        for other in protected where folder.isSame(as: other.url) {
            throw KilnError.usage("\(option) \(url.relativePath) is \(other.role); files written there would replace its files")
        }
    }

    /// What kind of entry is at a path.
    package enum Kind: Equatable {
        case regular, folder, symbolicLink, characterDevice, blockDevice, fifo, socket, other

        package var phrase: String {
            switch self {
            case .regular: return "a regular file"
            case .folder: return "a folder"
            case .symbolicLink: return "a symbolic link"
            case .characterDevice: return "a character device"
            case .blockDevice: return "a block device"
            case .fifo: return "a FIFO (named pipe)"
            case .socket: return "a socket"
            case .other: return "not a regular file"
            }
        }
    }

    /// The kind of the entry at `url` (the link itself unless `followingLinks`), or `nil` when there is none.
    package static func entryKind(_ url: URL, followingLinks: Bool = false) -> Kind? {
        entryKind(atPath: url.path, followingLinks: followingLinks)
    }

    /// The kind of the entry at `path` (the link itself unless `followingLinks`), or `nil` when there is none.
    package static func entryKind(atPath path: String, followingLinks: Bool = false) -> Kind? {
        entry(atPath: path, followingLinks: followingLinks)?.kind
    }

    /// The kind and status of the entry at `path` (the link itself unless `followingLinks`), or `nil` when there is
    /// none: for a caller that needs both, one `stat`.
    package static func entry(atPath path: String, followingLinks: Bool = false) -> (kind: Kind, status: FileStatus)? {
        guard let status = FileStatus(path: path, followingLinks: followingLinks) else { return nil }
        let kind: Kind
        switch status.type {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .folder
        case S_IFLNK: kind = .symbolicLink
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        return (kind, status)
    }

    /// The size in bytes of the file at `url` (following links), or `nil` when it cannot be read.
    package static func size(of url: URL) -> Int? {
        FileStatus(path: url.path).map { Int($0.size) }
    }

    /// A path and, when something exists there, its device and inode: compared with many paths (an output against
    /// every input), the path is looked up once.
    package struct FileIdentity {
        package let url: URL
        package let device: UInt64?
        package let inode: UInt64

        package init(_ url: URL) {
            self.url = url
            let status = FileStatus(path: url.path)
            device = status?.device
            inode = status?.inode ?? 0
        }

        /// True when `other` names the same file: the same device and inode when both exist, else the same path
        /// once the folder holding each is resolved (links and `..` followed).
        package func isSame(as other: URL) -> Bool {
            let second = FileIdentity(other)
            if let device, let otherDevice = second.device { return device == otherDevice && inode == second.inode }
            if (device == nil) != (second.device == nil) { return false }
            return OutputPath.resolved(url) == OutputPath.resolved(other)
        }
    }

    /// The absolute path of `url` with its folder's links resolved (the folder may not exist yet).
    fileprivate static func resolved(_ url: URL) -> String {
        let absolute = url.standardizedFileURL
        return absolute.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(absolute.lastPathComponent).path
    }
}

/// What messages call the outputs of a command: the library's own words by default; the command-line tool passes the
/// names of its options (`--out`, `--report`), so that a refusal names what the user typed.
public struct OutputNames: Sendable, Equatable {
    /// The main output: a build's bundle file, the folder an export or a patch is written into, the bundle `apply` updates.
    public var output: String
    /// A build's JSON report.
    public var report: String

    /// Outputs called `output` and `report`.
    public init(output: String = "the output", report: String = "the report") {
        self.output = output
        self.report = report
    }

    /// What the bundle is called where another output would overwrite it: "the bundle (--out)" when the caller named it.
    package var bundleRole: String { output.hasPrefix("-") ? "the bundle (\(output))" : "the bundle" }
}

extension URL {
    /// The URL of the file `name` (a relative path) in this folder, made without asking the file system whether it
    /// is a folder — which `appendingPathComponent` does, one `stat` per call: a fetch makes several per URL.
    package func appendingFile(_ name: String) -> URL {
        appending(path: name, directoryHint: .notDirectory)
    }
}
