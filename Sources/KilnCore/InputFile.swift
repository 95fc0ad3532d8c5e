import Foundation
import KilnC

/// An input file as a reader sees it: where it is, and how diagnostics name it.
public struct InputFile: Sendable {
    /// The file on disk.
    public let url: URL
    /// The path relative to the pipeline folder, used in diagnostics and metadata.
    public let relativePath: String

    /// The file's first bytes as its reader sees them (decompressed, for a compressed file), when whoever opened it
    /// before (the digest pass) kept them: the checks that look at a file's start (blank file, declared encoding) then
    /// need not open it again.
    public var head: [UInt8]?
    /// The device and inode the file had when its source's path was resolved (`nil` when the resolver did not take
    /// them): the registries of inputs (`ProtectedFiles`, `InputIdentity`) record it without a `stat` of their own.
    /// Never a stamp of the contents: the file may be written after.
    package var resolvedKey: FileKey?
    /// The URL `kiln fetch` saved the file from and when its bytes arrived (the capture record's `url` and
    /// `capturedAt`), for a fetched file: the fields `_url` and `_captured` of its records.
    public var fetchedFrom: String?
    public var capturedAt: String?
    /// The threads its reader may use (a compressed file's decoding thread, a dump's page workers): the build's
    /// (`BuildOptions.threads`).
    public var threads = ThreadSettings()

    /// How many leading bytes `head` holds at most.
    public static let headLength = 1 << 16

    public init(url: URL, relativePath: String, head: [UInt8]? = nil) {
        self.url = url
        self.relativePath = relativePath
        self.head = head
    }

    /// The file's size on disk in bytes now (compressed, for a compressed file; of the file a link leads to, for a
    /// link, as Python's `os.path.getsize` says); `nil` when it cannot be read.
    public var sizeOnDisk: Int? {
        FileStatus(path: url.path).map { Int($0.size) }
    }

    /// The whole file, when `head` holds all of it (a file shorter than `headLength`).
    public var wholeFile: [UInt8]? {
        guard let head, head.count < InputFile.headLength else { return nil }
        return head
    }

    /// The file's first `count` bytes as its reader sees them (decompressed when the file is compressed; fewer when
    /// it is shorter), from `head` when it holds them, else read.
    public func leadingBytes(_ count: Int) -> ArraySlice<UInt8>? {
        if let whole = wholeFile { return whole.prefix(count) }
        if let head, head.count >= count { return head.prefix(count) }
        return InputBytes.prefix(of: url, name: relativePath, count: count)?.bytes[...]
    }

    /// The file's name without its extension, as readers that name a record after its file use it: for a compressed
    /// file (by content) named `….gz`, `….bz2`, `….xz` or `….zst`, without that extension too (`Roppongi.wikicode.gz`
    /// is `Roppongi`).
    public var nameStem: String {
        var url = self.url
        if ["gz", "bz2", "xz", "zst"].contains(url.pathExtension.lowercased()),
           let handle = FileHandle(forReadingAtPath: url.path) {
            let magic = (try? handle.read(upToCount: CompressionFormat.magicLength)) ?? Data()
            try? handle.close()
            if CompressionFormat.detect(magic) != nil { url = url.deletingPathExtension() }
        }
        return url.deletingPathExtension().lastPathComponent
    }

    /// `head` for the file whose first bytes on disk are `raw`: those bytes, or, for a compressed file, its first
    /// decompressed bytes (`nil` when the archive is damaged there, so that the reader opens it and reports that).
    package static func head(from raw: [UInt8], url: URL, relativePath: String) -> [UInt8]? {
        guard CompressionFormat.detect(raw) != nil else { return raw }
        return InputBytes.prefix(of: url, name: relativePath, count: headLength)?.bytes
    }

    /// The place of `line` in this file.
    public func at(_ line: Int?, column: Int? = nil) -> Provenance {
        Provenance(file: relativePath, line: line, column: column)
    }
}
