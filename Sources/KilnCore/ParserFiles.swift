import Foundation
import KilnC

extension XMLStreamReader {
    /// Opens `path` (decompressed when compressed); `encoding` overrides the document's declaration when given.
    /// - Throws: `KilnError.io` when the file cannot be opened; `LibraryFailure` when libxml2 cannot start.
    package convenience init(path: String, encoding: String? = nil, namespaces: [String: String] = [:]) throws {
        try self.init(source: InputBytes(url: URL(fileURLWithPath: path), name: path, log: nil), path: path, encoding: encoding,
                      namespaces: namespaces)
    }
}

extension HTMLDocument {
    /// Parses the file at `path`; the page's `<meta>` charset is honored unless `encoding` overrides it.
    /// The bytes are read here and handed to libxml2, which never opens a path or URL itself.
    /// - Throws: `KilnError.io` when the file cannot be read; `HTMLParseError` when libxml2 makes nothing of it.
    package convenience init(path: String, encoding: String? = nil) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw CannotRead.error(URL(fileURLWithPath: path)) }
        try self.init(bytes: [UInt8](data), encoding: encoding, name: path)
    }
}

extension JSONStream {
    /// Calls `handle` with each event of the file at `url` (decompressed when compressed) and the 1-based line it
    /// ends on; `handle` returns false to stop. Returns the error that stopped the parse, or `nil` when the document
    /// was read to its end (or `handle` stopped it).
    /// - Throws: `KilnError.io` when the file cannot be read.
    package static func parse(_ url: URL, chunkSize: Int = 65536, _ handle: (JSONEvent, Int) -> Bool) throws -> JSONParseError? {
        try parse(InputBytes(url: url, name: url.path, log: nil), chunkSize: chunkSize, handle)
    }
}
