import Foundation

/// The dates an export's service runs (a GTFS feed's calendar), as the manifest declares them: `start` and `end`
/// dates, or `months` counted from `start` (or, without one, from the export date: `kiln export --date`, else
/// `SOURCE_DATE_EPOCH`, never the clock, so that the same inputs give the same files). `warnDays`: how close to the
/// end of the period (counted from the export date) an export is warned about (`export.service-ending`).
public struct ServicePeriodSpec: Sendable, Equatable {
    public var start: String?
    public var end: String?
    public var months: Int?
    public var warnDays = 30
}

extension ServicePeriodSpec: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case start, end, months, warnDays }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        start = try c.decodeIfPresent(String.self, forKey: .start)
        end = try c.decodeIfPresent(String.self, forKey: .end)
        months = try c.decodeIfPresent(Int.self, forKey: .months)
        warnDays = try c.decodeIfPresent(Int.self, forKey: .warnDays) ?? 30
        for (key, date) in [(CodingKeys.start, start), (.end, end)] {
            if let date, ServicePeriod.day(date) == nil {
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
        if let start, let end, let first = ServicePeriod.day(start), let last = ServicePeriod.day(end), last < first {
            throw DecodingError.dataCorruptedError(forKey: .end, in: c, debugDescription: "the service period ends (\(end)) before it starts (\(start))")
        }
        if warnDays < 0 { throw DecodingError.dataCorruptedError(forKey: .warnDays, in: c, debugDescription: "warnDays is 0 or more, not \(warnDays)") }
    }
}

/// A service period resolved to its first and last day.
public struct ServicePeriod: Sendable, Equatable {
    public var start: Date
    public var end: Date

    /// The Gregorian calendar in UTC: dates here are days, not instants.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The day `text` (`YYYY-MM-DD`), at midnight UTC; nil for anything else.
    public static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: year, month: month, day: day) else { return nil }
        return date
    }

    /// The day of a `SOURCE_DATE_EPOCH` (seconds since 1970, UTC); nil when it is not a whole number.
    public static func day(epoch text: String) -> Date? {
        guard let seconds = Int64(text.trimmingCharacters(in: .whitespaces)) else { return nil }
        return calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// `date` as GTFS writes dates: `YYYYMMDD`.
    public static func gtfs(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// The period `spec` declares, the months counted from `exportDate` when it names no start.
    /// - Throws: `ValueProblem` when the period needs an export date and none was given.
    public init(_ spec: ServicePeriodSpec, exportDate: Date?) throws {
        guard let first = spec.start.flatMap { ServicePeriod.day($0) } ?? exportDate else {
            throw ValueProblem(message: "the service period counts \(spec.months ?? 0) months from the export date: give it with kiln export --date YYYY-MM-DD or SOURCE_DATE_EPOCH (the clock is not used, so that exports stay reproducible)")
        }
        start = first
        if let end = spec.end.flatMap { ServicePeriod.day($0) } {
            self.end = end
        } else {
            let after = ServicePeriod.calendar.date(byAdding: .month, value: spec.months ?? 12, to: first) ?? first
            end = ServicePeriod.calendar.date(byAdding: .day, value: -1, to: after) ?? first
        }
    }

    /// Whole days from `date` to the last day of the period (negative once it is over).
    public func daysLeft(from date: Date) -> Int {
        ServicePeriod.calendar.dateComponents([.day], from: ServicePeriod.calendar.startOfDay(for: date), to: end).day ?? 0
    }
}
