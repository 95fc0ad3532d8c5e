import KilnC
import KilnCore
import KilnManifest

/// Checks of single listing fields. A field that fails is emptied and its raw value goes into the finding, so the
/// listing is kept: coordinates that are not numbers (`{{#invoke:…}}`, degrees and minutes) are left out quietly
/// (info); out-of-range coordinates, invalid web and e-mail addresses are warnings.
/// Not `Sendable`: its patterns reuse match data.
package final class ListingFieldCheck {
    private let url: RegexPattern
    private let email: RegexPattern

    /// - Throws: never in practice: the patterns are fixed and tested.
    package init() throws {
        let host = #"(?:(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}{2,}\.?|(?:\d{1,3}\.){3}\d{1,3}|localhost)"#
        url = try RegexPattern(#"^(?:(?:https?|ftp)://|//)?"# + host + #"(?::\d{1,5})?(?:[/?#][^\s]*)?$"#, options: .caseInsensitive)
        email = try RegexPattern(#"^[^@\s<>()\[\],;:"]+@"# + host + "$", options: .caseInsensitive)
    }

    /// How a coordinate reads.
    package enum Coordinate: Equatable {
        /// Decimal degrees within range, with the text to store (a decimal comma made a point).
        case degrees(String)
        /// Not a number of degrees.
        case notANumber
        /// A number outside ±`limit`.
        case outOfRange
    }

    /// Reads decimal degrees (`47.4095`, `-0.2173`, `+11,5`) that must lie within ±`limit` (90 or 180).
    package static func coordinate(_ text: String, limit: Double) -> Coordinate {
        var digits = text.contains(",") ? text.replacingOccurrences(of: ",", with: ".") : text
        if digits.hasPrefix("+") { digits.removeFirst() }
        let body = digits.hasPrefix("-") ? digits.dropFirst() : Substring(digits)
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard !body.isEmpty, parts.count <= 2, !(parts.first?.isEmpty ?? true),
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigitCharacter) }), parts.count == 1 || !parts[1].isEmpty,
              let value = Double(digits) else { return .notANumber }
        return abs(value) <= limit ? .degrees(digits) : .outOfRange
    }

    /// True for a web address a phone can open: `http://…`, `https://…` or a bare host name (`www.example.org/x`).
    package func isURL(_ text: String) -> Bool { (try? url.matches(text)) ?? false }

    /// True for one e-mail address.
    package func isEmail(_ text: String) -> Bool { (try? email.matches(text)) ?? false }
}
