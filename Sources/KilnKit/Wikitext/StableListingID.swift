/// Listing ids that stay the same from one build to the next: derived from the page title, the section path and
/// the listing's name, plus an ordinal for true duplicates (the same name twice in one section), never from the
/// name alone. The id is the first 52 bits of the SHA-256 of those parts: an integer (an R*Tree needs one) that
/// JavaScript and JSON readers hold exactly.
enum StableListingID {
    /// The id of the `ordinal`-th listing (from 0) named `name` in the section at `path` of page `page`.
    static func make(page: String, path: [String], name: String?, ordinal: Int) -> Int64 {
        var key = page + "\u{1F}" + path.joined(separator: "\u{1E}") + "\u{1F}" + (name ?? "")
        if ordinal > 0 { key += "\u{1F}\(ordinal)" }
        let digest = SHA256Digest()
        digest.update(Array(key.utf8)[...])
        return Int64(digest.hexDigest().prefix(13), radix: 16) ?? 0
    }
}
