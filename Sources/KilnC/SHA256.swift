internal import CCrypto
import Foundation

/// An incremental SHA-256 digest (OpenSSL's EVP interface), fed while a file streams through.
/// Not `Sendable`: it holds digest state.
package final class SHA256Digest {
    private let context: OpaquePointer

    /// Starts an empty digest.
    package init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds `bytes` to the digest.
    package func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// Adds `data` to the digest, without copying it.
    package func update(_ data: Data) {
        data.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// Adds the bytes of `buffer` (a C library's, handed over by a wrapper).
    func update(_ buffer: UnsafeRawBufferPointer) {
        _ = EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
    }

    /// The digest of everything added, as its 32 bytes.
    package func bytes() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    /// The digest of everything added, as lowercase hexadecimal.
    package func hexDigest() -> String {
        Hexadecimal.text(of: bytes())
    }

    /// The SHA-256 of `data`, as lowercase hexadecimal.
    package static func hex(of data: Data) -> String {
        let digest = SHA256Digest()
        digest.update(data)
        return digest.hexDigest()
    }
}

/// MD5 (OpenSSL's EVP interface), only where a format defines itself by it: Room's schema identity hash.
package enum MD5Digest {
    /// The MD5 of `text`'s UTF-8 bytes, as lowercase hexadecimal.
    package static func hex(_ text: String) -> String {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, EVP_md5(), nil)
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Hexadecimal.text(of: Array(digest.prefix(Int(length))))
    }
}

/// The digests a published checksum file may use (`sha1sums.txt`, `md5sums.txt`, `SHA256SUMS`).
package enum ChecksumAlgorithm: String, Sendable, CaseIterable, Codable {
    case md5, sha1, sha256

    /// The length of its hexadecimal digest.
    package var hexLength: Int {
        switch self {
        case .md5: return 32
        case .sha1: return 40
        case .sha256: return 64
        }
    }
}

/// An incremental digest of any `ChecksumAlgorithm` (OpenSSL's EVP interface), for checking a download against its
/// published checksum. Not `Sendable`: it holds digest state.
package final class ChecksumDigest {
    private let context: OpaquePointer

    /// Starts an empty digest of `algorithm`.
    package init(_ algorithm: ChecksumAlgorithm) {
        context = EVP_MD_CTX_new()
        let method: OpaquePointer?
        switch algorithm {
        case .md5: method = EVP_md5()
        case .sha1: method = EVP_sha1()
        case .sha256: method = EVP_sha256()
        }
        EVP_DigestInit_ex(context, method, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds `data` to the digest, without copying it.
    package func update(_ data: Data) {
        data.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    /// The digest of everything added, as lowercase hexadecimal.
    package func hexDigest() -> String { Hexadecimal.text(of: bytes()) }

    /// The digest of everything added, as its bytes (16, 20 or 32 of them).
    package func bytes() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }
}
