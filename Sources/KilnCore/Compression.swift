import Foundation
import KilnC

extension CompressionFormat {
    /// A new decoder for this format.
    /// - Throws: the wrapper's `DecompressionFailure` when the library cannot start (memory).
    package func makeDecompressor() throws -> StreamDecompressor {
        switch self {
        case .gzip: return try GzipDecompressor()
        case .bzip2: return try BZip2Decompressor()
        case .xz: return try XZDecompressor()
        case .zstd: return try ZstdDecompressor()
        }
    }
}
