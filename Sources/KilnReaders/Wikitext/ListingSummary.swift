import KilnC
import KilnCore
import KilnManifest

/// What a page's listings add up to: how many there are, how many have both coordinates, and the median of those
/// coordinates (each taken on its own). The reader has a page's listings together, so this costs nothing there,
/// while SQL would have to sort every staged listing by page to get it.
package struct ListingSummary: Equatable {
    package var count: Int
    package var placed: Int
    /// Decimal degrees as text, when at least one listing has both coordinates.
    package var medianLatitude: String?
    package var medianLongitude: String?

    package init(count: Int, placed: Int, medianLatitude: String?, medianLongitude: String?) {
        self.count = count
        self.placed = placed
        self.medianLatitude = medianLatitude
        self.medianLongitude = medianLongitude
    }

    /// The summary of one page's listings.
    package init(_ listings: [WikiListing]) {
        let points = listings.compactMap { listing -> (Double, Double)? in
            guard let latitude = listing.fields["lat"].flatMap(Double.init), let longitude = listing.fields["long"].flatMap(Double.init) else { return nil }
            return (latitude, longitude)
        }
        count = listings.count
        placed = points.count
        medianLatitude = ListingSummary.median(points.map(\.0)).map(sqlNumber)
        medianLongitude = ListingSummary.median(points.map(\.1)).map(sqlNumber)
    }

    /// The middle value, or the mean of the two middle ones; `nil` for no values.
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
