import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// One compiled normalizing step of a column mapping; see `NormalizerSpec` for the names.
package enum Normalizer {
    case trim, collapseSpaces, nfc, fold, lower, upper, decimal, minutes, gtfsSeconds, gtfsMinutes, naturalSortKey, emptyToNull
    case capture(RegexPattern)
    case terms(TermSet, mask: Bool)
    case minutesAfter(fieldIndex: Int, overnightBefore: Int)
    case month, monthFrom, monthTo
    case collationKey(Collator)

    /// The step names a manifest may use.
    package static let names = Step.Plain.allCases.map(\.rawValue)

    /// Compiles a manifest step for records with `fieldNames`.
    /// - Throws: `ValueProblem` for an unknown name, field or vocabulary, `RegexCompileError` for a bad pattern.
    package init(_ spec: NormalizerSpec, fieldNames: [String], vocabularies: [String: VocabularySpec]) throws {
        try self.init(Step(spec, fieldNames: fieldNames, vocabularies: vocabularies))
    }

    /// Compiles a checked step: its own pattern, term set or collator, for one thread.
    /// - Throws: `RegexCompileError` for a bad pattern, `ValueProblem` for a locale ICU has no collation for; never
    ///   for a step a normalizer was once compiled from.
    package init(_ step: Step) throws {
        switch step {
        case .capture(let pattern):
            self = .capture(try RegexPattern(pattern))
        case .terms(let vocabulary, let mask):
            self = .terms(try TermSet(terms: vocabulary.terms, separator: vocabulary.separator), mask: mask)
        case .minutesAfter(let fieldIndex, let overnightBefore):
            self = .minutesAfter(fieldIndex: fieldIndex, overnightBefore: overnightBefore)
        case .collationKey(let locale):
            do {
                self = .collationKey(try Collator(locale: locale))
            } catch let error as ICUError {
                throw ValueProblem(message: error.message)
            }
        case .plain(let plain):
            switch plain {
            case .trim: self = .trim
            case .collapseSpaces: self = .collapseSpaces
            case .nfc: self = .nfc
            case .fold: self = .fold
            case .lower: self = .lower
            case .upper: self = .upper
            case .decimal: self = .decimal
            case .minutes: self = .minutes
            case .gtfsSeconds: self = .gtfsSeconds
            case .gtfsMinutes: self = .gtfsMinutes
            case .naturalSortKey: self = .naturalSortKey
            case .emptyToNull: self = .emptyToNull
            case .month: self = .month
            case .monthFrom: self = .monthFrom
            case .monthTo: self = .monthTo
            }
        }
    }

    /// A manifest's normalizing step with its names resolved (the vocabulary, the field's position, the time): what
    /// every thread shaping a source's records shares, each compiling its own `Normalizer` from it.
    package enum Step: Sendable {
        /// A step without settings, by its manifest name.
        package enum Plain: String, CaseIterable, Sendable {
            case trim, collapseSpaces, nfc, fold, lower, upper, decimal, minutes, gtfsSeconds, gtfsMinutes, naturalSortKey, emptyToNull
            case month, monthFrom, monthTo
        }

        case plain(Plain)
        /// A pattern whose first group (or whole match) is kept.
        case capture(String)
        /// The vocabulary a text names terms of; codes, or their bit mask.
        case terms(VocabularySpec, mask: Bool)
        /// The position of the field holding the period's start, and the time (in minutes) an end before which
        /// runs past midnight.
        case minutesAfter(fieldIndex: Int, overnightBefore: Int)
        /// An ICU locale id.
        case collationKey(String)

        /// Resolves a manifest step for records with `fieldNames`.
        /// - Throws: `ValueProblem` for an unknown name, field, vocabulary or time.
        package init(_ spec: NormalizerSpec, fieldNames: [String], vocabularies: [String: VocabularySpec]) throws {
            switch spec {
            case .capture(let pattern):
                self = .capture(pattern)
            case .terms(let name, let output):
                guard let vocabulary = vocabularies[name] else {
                    throw ValueProblem(message: "no vocabulary named \"\(name)\"; vocabularies: \(vocabularies.keys.sorted().joined(separator: ", "))")
                }
                self = .terms(vocabulary, mask: output == "mask")
            case .minutesAfter(let field, let overnightBefore):
                guard let index = fieldNames.firstIndex(of: field) else {
                    throw ValueProblem(message: "the reader has no field \"\(field)\"; fields: \(fieldNames.joined(separator: ", "))")
                }
                guard case .success(let limit) = ClockTime.minutes(overnightBefore) else {
                    throw ValueProblem(message: "overnightBefore must be a time like 04:00, not \"\(overnightBefore)\"")
                }
                self = .minutesAfter(fieldIndex: index, overnightBefore: limit)
            case .collationKey(let locale):
                self = .collationKey(locale)
            case .named(let name):
                guard let plain = Plain(rawValue: name) else {
                    throw ValueProblem(message: "unknown normalizer \"\(name)\"; expected one of: \(Normalizer.names.joined(separator: ", ")) or {capture: PATTERN} or {collationKey: LOCALE}")
                }
                self = .plain(plain)
            }
        }
    }

    /// Applies the step to a value of `record`; `nil` stays `nil`.
    /// - Throws: `ValueProblem` when the text cannot take this step (e.g. `minutes` on `25:99`).
    package func apply(_ value: String?, record: Record) throws -> String? {
        guard let value else { return nil }
        switch self {
        case .trim: return TextFolding.trim(value)
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
        case .gtfsSeconds: return String(try ClockTime.serviceSeconds(value).get())
        case .gtfsMinutes: return String(try ClockTime.serviceMinutes(value).get())
        case .naturalSortKey: return TextFolding.naturalSortKey(value)
        case .emptyToNull: return value.isEmpty ? nil : value
        case .capture(let pattern):
            guard let match = try pattern.firstMatch(in: value) else { return nil }
            return match.groups.count > 1 ? match.groups[1] : match.groups[0]
        case .terms(let set, let mask):
            guard let selection = try set.parse(value) else {
                throw ValueProblem(message: "\"\(excerpt(value))\" names no known term; expected names from: \(set.names.joined(separator: ", "))",
                                   code: .valueUnknownTerm)
            }
            return mask ? String(selection.mask) : selection.codes
        case .month: return String(try MonthText.month(value))
        case .monthFrom: return String(try MonthText.season(value).from)
        case .monthTo: return String(try MonthText.season(value).to)
        case .collationKey(let collator): return collator.hexSortKey(value)
        case .minutesAfter(let fieldIndex, let overnightBefore):
            let start = fieldIndex < record.values.count ? record.values[fieldIndex] ?? "" : ""
            switch ClockTime.span(from: start, until: value, overnightBefore: overnightBefore) {
            case .success(let span): return String(span.until)
            case .failure(let problem):
                throw problem
            }
        }
    }
}
