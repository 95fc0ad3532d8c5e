import Foundation
import KilnCore
import KilnManifest
import KilnReaders

/// gtfs-validator's `expired_calendar` for an export that writes a GTFS calendar: each service's days are those of
/// its `calendar.txt` row (its weekdays from `start_date` to `end_date`) less the dates `calendar_dates.txt` removes
/// (`exception_type` 2) and with those it adds (1); a service whose last day is before the export date has expired.
/// As in gtfs-validator, a service of `calendar_dates.txt` alone is reported only when `calendar.txt` has no rows and
/// every service has expired. The feed's own dates decide, against the export date: never the bundle's content alone.
package enum ExpiredCalendar {
    /// One service's last day (days since 1970-01-01) and the file and line that declare it.
    package struct Service: Equatable {
        package var id: String
        package var lastDay: Int?
        package var file: URL
        package var line: Int
        /// True when `calendar.txt` declares it.
        package var inCalendar: Bool
    }

    /// The day number of a GTFS date (`YYYYMMDD`), nil for anything else.
    package static func day(_ text: String) -> Int? {
        guard text.count == 8, text.allSatisfy(\.isASCII),
              let date = CalendarDay.day("\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.suffix(2))") else { return nil }
        return Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// `day` as GTFS writes it.
    package static func gtfs(_ day: Int) -> String {
        ServicePeriod.gtfs(Date(timeIntervalSince1970: TimeInterval(day) * 86_400))
    }

    /// The rows of a written CSV file with a header, as the delimited reader reads them: each field's value by name.
    private static func rows(_ url: URL, fields: [String]) throws -> [(line: Int, values: [String: String])] {
        let options: JSONValue = .object(["separator": .string(","), "quote": .string("\""), "header": .string("names"),
                                          "fields": .array(fields.map(JSONValue.string))])
        let reader = try ReaderRegistry.makeReader(format: "delimited", options: options, codingPath: [])
        var rows: [(Int, [String: String])] = []
        try reader.read(InputFile(url: url, relativePath: displayPath(url)), log: DiagnosticLog()) { record in
            rows.append((record.line, Dictionary(uniqueKeysWithValues: fields.map { ($0, (record[$0] ?? "").trimmingCharacters(in: .whitespaces)) })))
        }
        return rows
    }

    /// The services of `calendar` and `calendarDates` (either may be nil), in the order first declared.
    /// - Throws: `KilnError.io` when a file cannot be read.
    package static func services(calendar: URL?, calendarDates: URL?) throws -> [Service] {
        let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        var services: [Service] = []
        var index: [String: Int] = [:]
        var ranges: [String: (first: Int, last: Int, days: [Bool])] = [:]
        if let calendar {
            for row in try rows(calendar, fields: ["service_id", "start_date", "end_date"] + weekdays) {
                let id = row.values["service_id"] ?? ""
                guard index[id] == nil else { continue }
                index[id] = services.count
                services.append(Service(id: id, lastDay: nil, file: calendar, line: row.line, inCalendar: true))
                if let first = day(row.values["start_date"] ?? ""), let last = day(row.values["end_date"] ?? "") {
                    ranges[id] = (first, last, weekdays.map { row.values[$0] == "1" })
                }
            }
        }
        var added: [String: Set<Int>] = [:], removed: [String: Set<Int>] = [:]
        if let calendarDates {
            for row in try rows(calendarDates, fields: ["service_id", "date", "exception_type"]) {
                let id = row.values["service_id"] ?? ""
                if index[id] == nil {
                    index[id] = services.count
                    services.append(Service(id: id, lastDay: nil, file: calendarDates, line: row.line, inCalendar: false))
                }
                guard let date = day(row.values["date"] ?? "") else { continue }
                switch row.values["exception_type"] {
                case "1": added[id, default: []].insert(date)
                case "2": removed[id, default: []].insert(date)
                default: break
                }
            }
        }
        for position in services.indices {
            let id = services[position].id
            var last = added[id]?.max()
            if let range = ranges[id] {
                var current = range.last
                // 1970-01-01 was a Thursday: (day + 3) mod 7 counts from Monday.
                while current >= range.first, last.map({ current > $0 }) ?? true {
                    if range.days[((current % 7) + 7 + 3) % 7], !(removed[id]?.contains(current) ?? false) {
                        last = max(last ?? current, current)
                        break
                    }
                    current -= 1
                }
            }
            services[position].lastDay = last
        }
        return services
    }

    /// An `export.expired-calendar` warning per service whose last day is before `asOf` (gtfs-validator's rule).
    package static func findings(_ services: [Service], asOf: Date) -> [Diagnostic] {
        let today = Int((CalendarDay.calendar.startOfDay(for: asOf).timeIntervalSince1970 / 86_400).rounded(.down))
        let expired = services.filter { $0.lastDay.map { $0 < today } ?? false }
        let calendarEmpty = !services.contains(where: \.inCalendar)
        let allExpired = expired.count == services.filter { $0.lastDay != nil }.count
        let reported = expired.filter { $0.inCalendar || (calendarEmpty && allExpired) }
        return reported.map { service in
            Diagnostic(code: .exportExpiredCalendar,
                       message: "service \"\(service.id)\" runs last on \(gtfs(service.lastDay!)), before the export date \(gtfs(today)) (calendar.txt with calendar_dates.txt): gtfs-validator reports it as expired_calendar; drop it from the feed, or move its dates on (a servicePeriod binds them as :kiln_service_start and :kiln_service_end)",
                       provenance: Provenance(file: displayPath(service.file), line: service.line))
        }
    }

    /// The `feed_end_date` of a written `feed_info.txt` (its first row) and its line; nil when it has none.
    package static func feedEnd(_ feedInfo: URL) throws -> (day: Int, line: Int)? {
        guard let row = try rows(feedInfo, fields: ["feed_end_date"]).first, let end = day(row.values["feed_end_date"] ?? "") else { return nil }
        return (end, row.line)
    }

    /// An `export.service-ending` warning when the feed's own end date is at most `warnDays` after `asOf`, or before
    /// it: gtfs-validator's `feed_expiration_date30_days` (and `…7_days`), which counts the 30th day in.
    package static func feedEndFindings(_ end: (day: Int, line: Int), file: URL, asOf: Date, warnDays: Int) -> [Diagnostic] {
        let today = Int((CalendarDay.calendar.startOfDay(for: asOf).timeIntervalSince1970 / 86_400).rounded(.down))
        let left = end.day - today
        guard left <= warnDays else { return [] }
        let when = left >= 0 ? "ends on \(gtfs(end.day)), \(left) day\(left == 1 ? "" : "s") after \(gtfs(today))"
            : "ended on \(gtfs(end.day)), \(-left) day\(left == -1 ? "" : "s") before \(gtfs(today))"
        return [Diagnostic(code: .exportServiceEnding,
                           message: "the feed's own feed_end_date \(when) (the export declares no servicePeriod; warned \(warnDays) days ahead, as gtfs-validator's feed_expiration_date30_days): apps and validators will treat the feed as expiring; move its dates on",
                           provenance: Provenance(file: displayPath(file), line: end.line))]
    }
}
