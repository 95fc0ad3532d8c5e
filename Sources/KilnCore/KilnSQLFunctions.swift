import Foundation
import KilnC

/// SQL functions every Kiln connection has, for manifest rules and query tables (and `kiln check`, which runs the
/// same rules on a bundle). All are deterministic:
/// - `kiln_distance_km(lat1, lon1, lat2, lon2)`: the great-circle distance in kilometres between two points in
///   decimal degrees (haversine formula, mean Earth radius 6371.0088 km); NULL when an argument is NULL or not a
///   number.
/// - `kiln_orthodox_easter(year)`: Orthodox Easter Sunday of an integer year as `YYYY-MM-DD` (see `OrthodoxEaster`);
///   NULL for anything else.
/// - `kiln_stable_id(x, …)`: an integer id from content (`StableID` of the arguments as text, NULL as empty text),
///   so that ids of derived rows do not shift when unrelated rows come or go.
/// - `kiln_median(x)`, an aggregate: the median of the numbers among `x` (the mean of the two middle ones for an
///   even count); NULL when there are none. It holds one group's numbers in memory while the group is read.
package enum KilnSQLFunctions {
    /// The mean Earth radius (IUGG), in kilometres.
    package static let earthRadius = 6371.0088

    /// The functions, to open a connection with (`Database(path:mode:functions:)`).
    package static let all: [SQLFunction] = [
        SQLFunction(name: "kiln_distance_km", arity: 4, body: .scalar { arguments in
            guard let latitude1 = arguments.number(0), let longitude1 = arguments.number(1),
                  let latitude2 = arguments.number(2), let longitude2 = arguments.number(3) else { return .null }
            return .real(distance(latitude1, longitude1, latitude2, longitude2))
        }),
        SQLFunction(name: "kiln_orthodox_easter", arity: 1, body: .scalar { arguments in
            guard let year = arguments.integer(0), let date = OrthodoxEaster.isoDate(year: Int(year)) else { return .null }
            return .text(date)
        }),
        SQLFunction(name: "kiln_stable_id", arity: -1, body: .scalar { arguments in
            guard arguments.count > 0 else { return .null }
            return .integer(StableID.make((0..<arguments.count).map { arguments.text($0) ?? "" }))
        }),
        SQLFunction(name: "kiln_median", arity: 1, body: .numbers { numbers in
            guard !numbers.isEmpty else { return .null }
            let sorted = numbers.sorted()
            let middle = sorted.count / 2
            return .real(sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2)
        }),
    ]

    /// The great-circle distance in kilometres between two points given in decimal degrees.
    package static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude1 * radians, phi2 = latitude2 * radians
        let halfDeltaPhi = (latitude2 - latitude1) * radians / 2, halfDeltaLambda = (longitude2 - longitude1) * radians / 2
        let a = sin(halfDeltaPhi) * sin(halfDeltaPhi) + cos(phi1) * cos(phi2) * sin(halfDeltaLambda) * sin(halfDeltaLambda)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}
