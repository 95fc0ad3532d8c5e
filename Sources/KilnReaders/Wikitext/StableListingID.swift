import KilnC
import KilnCore
import KilnManifest

/// Listing ids that stay the same from one build to the next: derived from the page title, the section path and
/// the listing's name, plus an ordinal for true duplicates (the same name twice in one section), never from the
/// name alone (a `StableID` of those parts).
package enum StableListingID {
    /// The id of the `ordinal`-th listing (from 0) named `name` in the section at `path` of page `page`.
    package static func make(page: String, path: [String], name: String?, ordinal: Int) -> Int64 {
        var parts = [page, path.joined(separator: "\u{1E}"), name ?? ""]
        if ordinal > 0 { parts.append(String(ordinal)) }
        return StableID.make(parts)
    }
}
