import KilnC

/// Integer ids that stay the same from one build to the next because they come from a row's content, not from its
/// position: the first 52 bits of the SHA-256 of the parts joined by U+001F. An integer (an R*Tree needs one) that
/// JavaScript and JSON readers hold exactly. Listings (`StableListingID`) and `kiln_stable_id()` in SQL use it.
package enum StableID {
    /// The id of `parts`, in order.
    package static func make(_ parts: [String]) -> Int64 {
        let digest = SHA256Digest()
        digest.update(Array(parts.joined(separator: "\u{1F}").utf8)[...])
        return Int64(digest.hexDigest().prefix(13), radix: 16) ?? 0
    }
}
