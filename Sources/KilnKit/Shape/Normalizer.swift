import Foundation

/// One compiled normalizing step of a column mapping; see `NormalizerSpec` for the names.
enum Normalizer {
    case trim, collapseSpaces, nfc, fold, lower, upper, decimal, minutes, naturalSortKey, emptyToNull
    case capture(RegexPattern)

    /// The step names a manifest may use.
    static let names = ["trim", "collapseSpaces", "nfc", "fold", "lower", "upper", "decimal", "minutes",
                        "naturalSortKey", "emptyToNull"]

    /// Compiles a manifest step.
    /// - Throws: `ValueProblem` for an unknown name, `RegexCompileError` for a bad pattern.
    init(_ spec: NormalizerSpec) throws {
        switch spec {
        case .capture(let pattern):
            self = .capture(try RegexPattern(pattern))
        case .named(let name):
            switch name {
            case "trim": self = .trim
            case "collapseSpaces": self = .collapseSpaces
            case "nfc": self = .nfc
            case "fold": self = .fold
            case "lower": self = .lower
            case "upper": self = .upper
            case "decimal": self = .decimal
            case "minutes": self = .minutes
            case "naturalSortKey": self = .naturalSortKey
            case "emptyToNull": self = .emptyToNull
            default:
                throw ValueProblem(message: "unknown normalizer \"\(name)\"; expected one of: \(Normalizer.names.joined(separator: ", ")) or {capture: PATTERN}")
            }
        }
    }

    /// Applies the step; `nil` stays `nil`.
    /// - Throws: `ValueProblem` when the text cannot take this step (e.g. `minutes` on `25:99`).
    func apply(_ value: String?) throws -> String? {
        guard let value else { return nil }
        switch self {
        case .trim: return value.trimmingCharacters(in: .whitespacesAndNewlines)
        case .collapseSpaces: return TextFolding.collapseSpaces(value)
        case .nfc: return TextFolding.nfc(value)
        case .fold: return TextFolding.fold(value)
        case .lower: return value.lowercased()
        case .upper: return value.uppercased()
        case .decimal:
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            return trimmed.contains(".") ? trimmed : trimmed.replacingOccurrences(of: ",", with: ".")
        case .minutes:
            switch ClockTime.minutes(value) {
            case .success(let minutes): return String(minutes)
            case .failure(let problem): throw problem
            }
        case .naturalSortKey: return TextFolding.naturalSortKey(value)
        case .emptyToNull: return value.isEmpty ? nil : value
        case .capture(let pattern):
            guard let match = try pattern.firstMatch(in: value) else { return nil }
            return match.groups.count > 1 ? match.groups[1] : match.groups[0]
        }
    }
}
