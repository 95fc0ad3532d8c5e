import Foundation
import KilnC

/// Days as Kiln reads and writes them: dates without a time, in the Gregorian calendar in UTC.
package enum CalendarDay {
    /// The Gregorian calendar in UTC: dates here are days, not instants.
    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The day `text` (`YYYY-MM-DD`), at midnight UTC; nil for anything else.
    package static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: year, month: month, day: day) else { return nil }
        return date
    }

    /// The day of a `SOURCE_DATE_EPOCH` (seconds since 1970, UTC); nil when it is not a whole number.
    package static func day(epoch text: String) -> Date? {
        guard let seconds = Int64(text.trimmingCharacters(in: .whitespaces)) else { return nil }
        return calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
