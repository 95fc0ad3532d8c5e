import Foundation
import KilnC
import KilnCore

/// The dates an export's service runs (a GTFS feed's calendar), as the manifest declares them: `start` and `end`
/// dates, or `months` counted from `start` (or, without one, from the export date: `kiln export --date`, else
/// `SOURCE_DATE_EPOCH`, never the clock, so that the same inputs give the same files). `warnDays`: how close to the
/// end of the period (counted from the export date) an export is warned about (`export.service-ending`).
public struct ServicePeriodSpec: Sendable, Equatable {
    public var start: String?
    public var end: String?
    public var months: Int?
    public var warnDays = ServicePeriodSpec.defaultWarnDays
    /// How many days before its end a period is warned about unless `warnDays` says otherwise.
    public static let defaultWarnDays = 30
}

extension ServicePeriodSpec: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case start, end, months, warnDays }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        start = try c.decodeIfPresent(String.self, forKey: .start)
        end = try c.decodeIfPresent(String.self, forKey: .end)
        months = try c.decodeIfPresent(Int.self, forKey: .months)
        warnDays = try c.decodeIfPresent(Int.self, forKey: .warnDays) ?? ServicePeriodSpec.defaultWarnDays
        for (key, date) in [(CodingKeys.start, start), (.end, end)] {
            if let date, CalendarDay.day(date) == nil {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "expected a date YYYY-MM-DD, found \"\(date)\"")
            }
        }
        guard (end == nil) != (months == nil) else {
            throw DecodingError.dataCorruptedError(forKey: .end, in: c, debugDescription: "a service period has an end date or a number of months, one of the two")
        }
        if end != nil, start == nil {
            throw DecodingError.dataCorruptedError(forKey: .start, in: c, debugDescription: "a service period with an end date needs its start date")
        }
        if let months, months < 1 { throw DecodingError.dataCorruptedError(forKey: .months, in: c, debugDescription: "months is 1 or more, not \(months)") }
        if let start, let end, let first = CalendarDay.day(start), let last = CalendarDay.day(end), last < first {
            throw DecodingError.dataCorruptedError(forKey: .end, in: c, debugDescription: "the service period ends (\(end)) before it starts (\(start))")
        }
        if warnDays < 0 { throw DecodingError.dataCorruptedError(forKey: .warnDays, in: c, debugDescription: "warnDays is 0 or more, not \(warnDays)") }
    }
}
