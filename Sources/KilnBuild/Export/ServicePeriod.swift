import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A service period resolved to its first and last day.
public struct ServicePeriod: Sendable, Equatable {
    public var start: Date
    public var end: Date

    /// `date` as GTFS writes dates: `YYYYMMDD`.
    public static func gtfs(_ date: Date) -> String {
        let c = CalendarDay.calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// The period `spec` declares, the months counted from `exportDate` when it names no start.
    /// - Throws: `ValueProblem` when the period needs an export date and none was given.
    public init(_ spec: ServicePeriodSpec, exportDate: Date?) throws {
        guard let first = spec.start.flatMap { CalendarDay.day($0) } ?? exportDate else {
            throw ValueProblem(message: "the service period counts \(spec.months ?? 0) months from the export date: give it with kiln export --date YYYY-MM-DD or SOURCE_DATE_EPOCH (the clock is not used, so that exports stay reproducible)")
        }
        start = first
        if let end = spec.end.flatMap { CalendarDay.day($0) } {
            self.end = end
        } else {
            let after = CalendarDay.calendar.date(byAdding: .month, value: spec.months ?? 12, to: first) ?? first
            end = CalendarDay.calendar.date(byAdding: .day, value: -1, to: after) ?? first
        }
    }

    /// Whole days from `date` to the last day of the period (negative once it is over).
    public func daysLeft(from date: Date) -> Int {
        CalendarDay.calendar.dateComponents([.day], from: CalendarDay.calendar.startOfDay(for: date), to: end).day ?? 0
    }
}
