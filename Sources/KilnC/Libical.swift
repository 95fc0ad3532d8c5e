internal import CLibical
import Foundation

/// A wall-clock date or date-time as iCalendar writes it, without a zone: the zone travels beside it.
package struct ICalTime: Sendable, Hashable, Comparable {
    package var year: Int, month: Int, day: Int
    package var hour = 0, minute = 0, second = 0
    /// A DATE value (an all-day event), not a DATE-TIME.
    package var isDate = false

    package init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, isDate: Bool = false) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second, self.isDate) = (year, month, day, hour, minute, second, isDate)
    }

    /// Parses `YYYY-MM-DD` (a date).
    package init?(isoDate text: String) {
        let parts = text.split(separator: "-").map { Int($0) }
        guard parts.count == 3, let y = parts[0], let m = parts[1], let d = parts[2], (1...12).contains(m), (1...31).contains(d) else { return nil }
        self.init(year: y, month: m, day: d, isDate: true)
    }

    /// Seconds since 1970-01-01T00:00:00 reading the wall clock as if it were UTC (for nominal arithmetic).
    package var nominalSeconds: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return days * 86400 + hour * 3600 + minute * 60 + second
    }

    /// The wall-clock time `nominalSeconds` stands for.
    package init(nominalSeconds: Int, isDate: Bool = false) {
        let days = Int((Double(nominalSeconds) / 86400).rounded(.down))
        let rest = nominalSeconds - days * 86400
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d,
                  hour: rest / 3600, minute: rest % 3600 / 60, second: rest % 60, isDate: isDate)
    }

    /// This time moved by `seconds` of wall clock.
    package func adding(seconds: Int) -> ICalTime { ICalTime(nominalSeconds: nominalSeconds + seconds, isDate: isDate) }

    /// `2026-07-10` for a date, `2026-07-10T19:00:00` for a date-time.
    package var iso: String {
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        return isDate ? date : date + String(format: "T%02d:%02d:%02d", hour, minute, second)
    }

    /// The date part.
    package var date: ICalTime { ICalTime(year: year, month: month, day: day, isDate: true) }

    package static func < (lhs: ICalTime, rhs: ICalTime) -> Bool { lhs.nominalSeconds < rhs.nominalSeconds }
}

/// A time zone libical knows: one a feed defines in a `VTIMEZONE`, or one of the system zone database.
///
/// Unchecked Sendable: libical's zone is only read, by one reader at a time; never shared between threads.
package final class ICalZone: @unchecked Sendable {
    /// The TZID as the feed or the manifest names it.
    package let tzid: String
    fileprivate let zone: OpaquePointer
    /// Keeps the calendar that owns a feed's `VTIMEZONE` alive.
    private let owner: AnyObject?
    /// For a feed's `VTIMEZONE` whose transitions cover only part of time: that part, and the system zone database's
    /// zone its TZID (or `X-LIC-LOCATION`) names, which times outside it follow. `nil` when it covers all time.
    package let span: ICalZoneSpan?

    fileprivate init(tzid: String, zone: OpaquePointer, owner: AnyObject?, span: ICalZoneSpan? = nil) {
        self.tzid = tzid
        self.zone = zone
        self.owner = owner
        self.span = span
    }

    /// The zone that gives the offset of the wall-clock time `local`: the feed's, or outside its span the zone
    /// database's of the same name.
    private func zone(forLocal local: ICalTime) -> OpaquePointer {
        guard let span, let fallback = span.fallback, !span.covers(local: local) else { return zone }
        return fallback
    }

    /// The zone of the system zone database named `name` (`Europe/Athens`), or `nil` when there is none.
    package static func named(_ name: String) -> ICalZone? {
        Libical.setUp()
        return icaltimezone_get_builtin_timezone(name).map { ICalZone(tzid: name, zone: $0, owner: nil) }
    }

    /// The UTC time of the wall-clock time `local` in this zone.
    package func utc(fromLocal local: ICalTime) -> ICalTime {
        var time = Libical.icalTime(local)
        time.zone = zone(forLocal: local)
        return Libical.swiftTime(icaltime_convert_to_zone(time, icaltimezone_get_utc_timezone()))
    }

    /// The wall-clock time in this zone of the UTC time `utc`.
    package func local(fromUTC utc: ICalTime) -> ICalTime {
        var time = Libical.icalTime(utc)
        time.zone = icaltimezone_get_utc_timezone()
        var target = zone
        if let span, let fallback = span.fallback, !span.covers(utc: utc) { target = fallback }
        return Libical.swiftTime(icaltime_convert_to_zone(time, target))
    }
}

/// The wall-clock times a feed's `VTIMEZONE` gives offsets for: from its first observance's `DTSTART` to its last
/// transition, when no observance repeats without end. Outside, libical would stretch the first or last offset over
/// every other season (an event at 17:45 Europe/Berlin in January, before a span starting in October, read an hour off).
/// Unchecked Sendable: it holds two libical time values (plain C structs), immutable once made.
package struct ICalZoneSpan: @unchecked Sendable {
    /// The first wall-clock time the `VTIMEZONE` covers, and the last (`nil`: no end).
    package let start: ICalTime
    package let end: ICalTime?
    fileprivate let startUTC: ICalTime
    fileprivate let endUTC: ICalTime?
    /// The system zone database's zone the TZID or `X-LIC-LOCATION` names, and its name; `nil` when there is none.
    fileprivate let fallback: OpaquePointer?
    package let fallbackName: String?

    /// True when the `VTIMEZONE` gives the offset of the wall-clock time `local`.
    package func covers(local: ICalTime) -> Bool { local >= start && (end.map { local <= $0 } ?? true) }

    /// True when the `VTIMEZONE` gives the offset at the UTC time `utc`.
    fileprivate func covers(utc: ICalTime) -> Bool { utc >= startUTC && (endUTC.map { utc <= $0 } ?? true) }
}

/// A date or date-time value of a feed: the time, its zone, and the line of its property.
package struct ICalValue: Sendable {
    package var time: ICalTime
    /// True for a UTC time (`…Z`).
    package var isUTC: Bool
    /// The zone a TZID parameter named, when libical resolved it; `nil` with `tzid` set means the TZID is unknown.
    package var zone: ICalZone?
    /// The TZID parameter as written.
    package var tzid: String?
    package var line: Int
}

/// One `RDATE` value: a date or date-time, or a period (RFC 5545 3.3.9) that gives the instance its own end, written
/// as `start/end` or `start/duration`.
package struct ICalRecurrenceDate: Sendable {
    package var start: ICalValue
    /// The end of a `start/end` period, in the property's zone (or UTC).
    package var end: ICalValue?
    /// The length of a `start/duration` period, in seconds (days count 86400 of wall clock).
    package var duration: Int?
}

/// A recurrence rule as libical parsed it.
///
/// Unchecked Sendable: libical's rule is a value read by one reader at a time; never shared between threads.
package struct ICalRule: @unchecked Sendable {
    /// The rule as libical writes it back.
    package let text: String
    package let line: Int
    /// The rule without its `RSCALE` text, which belongs to the parsed document (freed with it): `rscale` keeps it.
    fileprivate let rule: icalrecurrencetype
    fileprivate let rscale: String?

    fileprivate init(text: String, line: Int, rule: icalrecurrencetype) {
        self.text = text
        self.line = line
        rscale = rule.rscale.map { String(cString: $0) }
        var detached = rule
        detached.rscale = nil
        self.rule = detached
    }

    /// True when the rule ends by itself (COUNT or UNTIL).
    package var isBounded: Bool { rule.count != 0 || icaltime_is_null_time(rule.until) == 0 }

    /// The wall-clock starts the rule gives from `start` (in `zone`; `nil` for UTC or floating), in order: those from
    /// `after` (when given; a rule without COUNT jumps there) up to `through` (when given), at most `limit` of them,
    /// and at most a million steps of libical's iterator. `nil` when libical cannot expand the rule.
    package func expand(from start: ICalTime, zone: ICalZone?, utc: Bool, after: ICalTime?, through: ICalTime?,
                       limit: Int) -> (starts: [ICalTime], truncated: Bool)? {
        guard let rscale else { return expand(rule, from: start, zone: zone, utc: utc, after: after, through: through, limit: limit) }
        // The iterator reads RSCALE while it runs: the text lives until it is freed.
        return rscale.withCString { text in
            var rule = rule
            rule.rscale = UnsafeMutablePointer(mutating: text)
            return expand(rule, from: start, zone: zone, utc: utc, after: after, through: through, limit: limit)
        }
    }

    private func expand(_ rule: icalrecurrencetype, from start: ICalTime, zone: ICalZone?, utc: Bool, after: ICalTime?,
                        through: ICalTime?, limit: Int) -> (starts: [ICalTime], truncated: Bool)? {
        var dtstart = Libical.icalTime(start)
        if let zone { dtstart.zone = zone.zone } else if utc { dtstart.zone = icaltimezone_get_utc_timezone() }
        guard let iterator = icalrecur_iterator_new(rule, dtstart) else { return nil }
        defer { icalrecur_iterator_free(iterator) }
        if let after, after > start, rule.count == 0 {
            var jump = Libical.icalTime(after)
            jump.is_date = dtstart.is_date
            jump.zone = dtstart.zone
            _ = icalrecur_iterator_set_start(iterator, jump)
        }
        var starts: [ICalTime] = []
        for _ in 0..<1_000_000 {
            let next = icalrecur_iterator_next(iterator)
            if icaltime_is_null_time(next) != 0 { return (starts, false) }
            let time = Libical.swiftTime(next)
            if let through, time > through { return (starts, false) }
            if let after, time < after { continue }
            if starts.count == limit { return (starts, true) }
            starts.append(time)
        }
        return (starts, true)
    }
}

/// One `VEVENT` of a feed, with its properties as values and where each came from.
package struct ICalEvent: Sendable {
    /// The line of `BEGIN:VEVENT`.
    package var line: Int
    package var uid: String?
    package var summary: String?
    package var description: String?
    package var location: String?
    package var url: String?
    package var status: String?
    package var categories: [String] = []
    package var sequence = 0
    package var start: ICalValue?
    package var end: ICalValue?
    /// The `DURATION`, in seconds (days count 86400 of wall clock), and its line.
    package var duration: (seconds: Int, line: Int)?
    package var recurrenceID: ICalValue?
    /// True when `RECURRENCE-ID` carries `RANGE=THISANDFUTURE`.
    package var thisAndFuture = false
    package var rules: [ICalRule] = []
    package var dates: [ICalRecurrenceDate] = []
    package var exceptions: [ICalValue] = []
    /// What libical could not read in this event (a broken `RRULE`, a line without a name), with the line and the
    /// name of the property the line writes (upper case; empty when the line has none).
    package var problems: [ICalProblem] = []
    /// Each property's line, by upper-case name (the first such property).
    package var lines: [String: Int] = [:]
    /// The calendar's `X-WR-TIMEZONE` (what Google writes for the zone of the calendar as a whole).
    package var calendarZone: String?
}

/// A line libical could not read: its message, line, where it is and the name of the property the line writes.
package struct ICalProblem: Sendable {
    /// Where the line is: the calendar itself, a VTIMEZONE, or an event.
    package enum Place: Sendable { case calendar, timeZone, event }

    package var message: String
    package var line: Int
    /// The property's name as the line writes it, in upper case (`SUBCALENDAR-ID`, `X-WR-CALDESC`); empty when the
    /// line has no name or libical added the problem (a missing `END`).
    package var property: String
    package var place: Place
}

/// A parsed iCalendar feed: its events and what libical could not read outside them.
package struct ICalFeed: Sendable {
    package var events: [ICalEvent] = []
    package var problems: [ICalProblem] = []
    /// Top-level components that are not calendars, and calendar children that are neither events nor zones.
    package var skipped: [(name: String, line: Int)] = []
}

/// libical: the only file that calls it.
package enum Libical {
    private static let once: Void = {
        icalerror_set_errors_are_fatal(0)
        icalerror_set_error_state(ICAL_MALFORMEDDATA_ERROR, ICAL_ERROR_NONFATAL)
        icalerror_set_error_state(ICAL_PARSE_ERROR, ICAL_ERROR_NONFATAL)
    }()

    package static func setUp() { _ = once }

    /// Parses the feed in `bytes` (unfolding lines, unescaping text; every content line's number kept).
    package static func parse(_ bytes: [UInt8]) -> ICalFeed {
        setUp()
        let feeder = LineFeeder(bytes)
        let parser = icalparser_new()!
        defer { icalparser_free(parser) }
        icalparser_set_gen_data(parser, Unmanaged.passUnretained(feeder).toOpaque())
        let generator: @convention(c) (UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CChar>? = { buffer, size, data in
            guard let buffer, let data else { return nil }
            return Unmanaged<LineFeeder>.fromOpaque(data).takeUnretainedValue().fill(buffer, size: size)
        }
        var roots: [OpaquePointer] = []
        var outline = LineOutline()
        var start = 1
        while let line = icalparser_get_line(parser, generator) {
            let lineStart = start
            start = feeder.linesStarted
            outline.record(String(cString: line), line: lineStart)
            if let component = icalparser_add_line(parser, line) { roots.append(component) }
            free(line)
        }
        // The parser still owns what it returns here and frees it with itself: keep a copy.
        if let partial = icalparser_clean(parser), let copy = icalcomponent_new_clone(partial) { roots.append(copy) }
        let document = CalendarDocument(roots)
        var feed = ICalFeed()
        for (index, root) in roots.enumerated() {
            let lines = index < outline.roots.count ? outline.roots[index] : LineOutline.Node(name: "", line: outline.lastLine)
            read(root, lines: lines, lastLine: outline.lastLine, document: document, into: &feed)
        }
        return feed
    }

    private static func read(_ component: OpaquePointer, lines: LineOutline.Node, lastLine: Int, document: CalendarDocument, into feed: inout ICalFeed) {
        let kind = icalcomponent_isa(component)
        if kind == ICAL_XROOT_COMPONENT {
            var child = icalcomponent_get_first_component(component, ICAL_ANY_COMPONENT)
            var index = 0
            while let current = child {
                read(current, lines: lines.child(index), lastLine: lastLine, document: document, into: &feed)
                child = icalcomponent_get_next_component(component, ICAL_ANY_COMPONENT)
                index += 1
            }
            return
        }
        if kind == ICAL_VEVENT_COMPONENT {
            // A VEVENT without the VCALENDAR around it, as single-event exporters and Python's icalendar write it.
            feed.events.append(event(component, calendar: component, lines: lines, lastLine: lastLine, document: document))
            return
        }
        if isWrapper(kind), readWrapped(component, calendar: component, calendarZone: nil, lines: lines, lastLine: lastLine,
                                                 document: document, into: &feed) {
            return
        }
        guard kind == ICAL_VCALENDAR_COMPONENT else {
            feed.skipped.append((name(of: component, lines: lines), lines.line))
            return
        }
        var calendarZone: String?
        for (property, line, written, _) in properties(of: component, lines: lines, lastLine: lastLine) {
            if icalproperty_isa(property) == ICAL_XLICERROR_PROPERTY {
                feed.problems.append(problem(property, line: line, written: written, place: .calendar))
            } else if icalproperty_isa(property) == ICAL_X_PROPERTY, string(icalproperty_get_x_name(property))?.uppercased() == "X-WR-TIMEZONE" {
                calendarZone = string(icalproperty_get_x(property))
            }
        }
        _ = readEvents(in: component, calendar: component, calendarZone: calendarZone, lines: lines, lastLine: lastLine, document: document, into: &feed)
    }

    /// True for a component that may wrap events: an `X-` one, or one whose name libical does not know
    /// (`BEGIN:MYCOMP`, which Python's icalendar walks into as it walks into an `X-` one).
    private static func isWrapper(_ kind: icalcomponent_kind) -> Bool {
        kind == ICAL_X_COMPONENT || kind == ICAL_NO_COMPONENT
    }

    /// Reads the events of the `X-` component `wrapper` (`readEvents`); returns false, leaving `feed` as it was but
    /// for problems, when it holds none (it is then skipped as a whole).
    private static func readWrapped(_ wrapper: OpaquePointer, calendar: OpaquePointer, calendarZone: String?, lines: LineOutline.Node,
                                    lastLine: Int, document: CalendarDocument, into feed: inout ICalFeed) -> Bool {
        let skipped = feed.skipped.count
        if readEvents(in: wrapper, calendar: calendar, calendarZone: calendarZone, lines: lines, lastLine: lastLine, document: document, into: &feed) {
            return true
        }
        feed.skipped.removeSubrange(skipped...)
        return false
    }

    /// Reads the children of `container` (a VCALENDAR, or an `X-` component, root or within one) into `feed`: each
    /// VEVENT as an event of `calendar`, the errors of each VTIMEZONE, the events of an `X-` component within (as
    /// Python's icalendar walks into it), and any other component as skipped; an `X-` component without an event in
    /// it is skipped as a whole. Returns whether an event was read.
    private static func readEvents(in container: OpaquePointer, calendar: OpaquePointer, calendarZone: String?, lines: LineOutline.Node,
                                   lastLine: Int, document: CalendarDocument, into feed: inout ICalFeed) -> Bool {
        var found = false
        var child = icalcomponent_get_first_component(container, ICAL_ANY_COMPONENT)
        var index = 0
        while let current = child {
            let childLines = lines.child(index)
            switch icalcomponent_isa(current) {
            case ICAL_VEVENT_COMPONENT:
                var read = event(current, calendar: calendar, lines: childLines, lastLine: lastLine, document: document)
                read.calendarZone = calendarZone
                feed.events.append(read)
                found = true
            case ICAL_VTIMEZONE_COMPONENT:
                for (property, line, written, _) in properties(of: current, lines: childLines, lastLine: lastLine)
                where icalproperty_isa(property) == ICAL_XLICERROR_PROPERTY {
                    feed.problems.append(problem(property, line: line, written: written, place: .timeZone))
                }
            case let kind where isWrapper(kind) && readWrapped(current, calendar: calendar, calendarZone: calendarZone, lines: childLines,
                                                    lastLine: lastLine, document: document, into: &feed):
                found = true
            default:
                feed.skipped.append((name(of: current, lines: childLines), childLines.line))
            }
            child = icalcomponent_get_next_component(container, ICAL_ANY_COMPONENT)
            index += 1
        }
        return found
    }

    /// The name of `component` as its `BEGIN:` line writes it (libical calls every `X-` component `X`), else libical's.
    private static func name(of component: OpaquePointer, lines: LineOutline.Node) -> String {
        let kind = string(icalcomponent_kind_to_string(icalcomponent_isa(component)))
        if !lines.name.isEmpty, kind == nil || kind == "X" || lines.name.uppercased() == kind { return lines.name }
        return kind ?? "a component"
    }

    /// The problem an `X-LIC-ERROR` property reports, for the line that writes the property `written`.
    private static func problem(_ error: OpaquePointer, line: Int, written: String, place: ICalProblem.Place) -> ICalProblem {
        ICalProblem(message: string(icalproperty_get_xlicerror(error)) ?? "unreadable property", line: line, property: written, place: place)
    }

    /// The properties of `component` in order, each with its line and the name that line writes: libical keeps the
    /// order of the content lines, puts an `X-LIC-ERROR` where a line failed, and splits a multi-valued line
    /// (`CATEGORIES:a,b`) into properties of the same name; errors it adds at the end (a missing `END`) take the
    /// component's last line and no name.
    private static func properties(of component: OpaquePointer, lines: LineOutline.Node, lastLine: Int) -> [(OpaquePointer, Int, String, leading: String)] {
        var result: [(OpaquePointer, Int, String, leading: String)] = []
        var next = 0
        var previous: (name: String, line: Int, isProperty: Bool, leading: String)?
        var property = icalcomponent_get_first_property(component, ICAL_ANY_PROPERTY)
        while let current = property {
            let name = icalproperty_get_property_name(current).map { String(cString: $0).uppercased() } ?? ""
            let isError = icalproperty_isa(current) == ICAL_XLICERROR_PROPERTY
            if next < lines.properties.count, isError || lines.properties[next].name == name {
                previous = lines.properties[next]
                let written = lines.properties[next]
                result.append((current, written.line, written.isProperty ? written.name : "", written.leading))
                next += 1
            } else if let previous, previous.name == name {
                result.append((current, previous.line, previous.isProperty ? previous.name : "", ""))
            } else {
                result.append((current, isError ? (lines.end ?? lastLine) : lines.line, isError ? "" : name, ""))
            }
            property = icalcomponent_get_next_property(component, ICAL_ANY_PROPERTY)
        }
        return result
    }

    private static func event(_ component: OpaquePointer, calendar: OpaquePointer, lines: LineOutline.Node, lastLine: Int,
                              document: CalendarDocument) -> ICalEvent {
        var event = ICalEvent(line: lines.line)
        for (property, line, written, leading) in properties(of: component, lines: lines, lastLine: lastLine) {
            let kind = icalproperty_isa(property)
            // A text value as written: libical's parser drops the white space it starts with.
            func text(_ value: UnsafePointer<CChar>?) -> String? {
                string(value).map { $0.hasPrefix(leading) ? $0 : leading + $0 }
            }
            if let name = icalproperty_get_property_name(property), event.lines[String(cString: name).uppercased()] == nil {
                event.lines[String(cString: name).uppercased()] = line
            }
            switch kind {
            case ICAL_UID_PROPERTY: event.uid = string(icalproperty_get_uid(property))
            case ICAL_SUMMARY_PROPERTY: event.summary = text(icalproperty_get_summary(property))
            case ICAL_DESCRIPTION_PROPERTY: event.description = text(icalproperty_get_description(property))
            case ICAL_LOCATION_PROPERTY: event.location = text(icalproperty_get_location(property))
            case ICAL_URL_PROPERTY: event.url = string(icalproperty_get_url(property))
            case ICAL_STATUS_PROPERTY: event.status = string(icalproperty_status_to_string(icalproperty_get_status(property)))
            case ICAL_CATEGORIES_PROPERTY: string(icalproperty_get_categories(property)).map { event.categories.append($0) }
            case ICAL_SEQUENCE_PROPERTY: event.sequence = Int(icalproperty_get_sequence(property))
            case ICAL_DTSTART_PROPERTY:
                event.start = value(icalproperty_get_dtstart(property), property, calendar: calendar, line: line, document: document)
            case ICAL_DTEND_PROPERTY:
                event.end = value(icalproperty_get_dtend(property), property, calendar: calendar, line: line, document: document)
            case ICAL_DURATION_PROPERTY:
                event.duration = (seconds(icalproperty_get_duration(property)), line)
            case ICAL_RECURRENCEID_PROPERTY:
                event.recurrenceID = value(icalproperty_get_recurrenceid(property), property, calendar: calendar, line: line, document: document)
                if let range = icalproperty_get_first_parameter(property, ICAL_RANGE_PARAMETER),
                   icalparameter_get_range(range) == ICAL_RANGE_THISANDFUTURE {
                    event.thisAndFuture = true
                }
            case ICAL_RRULE_PROPERTY:
                var rule = icalproperty_get_rrule(property)
                event.rules.append(ICalRule(text: string(icalrecurrencetype_as_string(&rule)) ?? "", line: line, rule: rule))
            case ICAL_RDATE_PROPERTY:
                let rdate = icalproperty_get_rdate(property)
                if icaltime_is_null_time(rdate.time) == 0 {
                    event.dates.append(ICalRecurrenceDate(start: value(rdate.time, property, calendar: calendar, line: line, document: document)))
                } else {
                    let period = rdate.period
                    var date = ICalRecurrenceDate(start: value(period.start, property, calendar: calendar, line: line, document: document))
                    if icaltime_is_null_time(period.end) == 0 {
                        date.end = value(period.end, property, calendar: calendar, line: line, document: document)
                    } else {
                        date.duration = seconds(period.duration)
                    }
                    event.dates.append(date)
                }
            case ICAL_EXDATE_PROPERTY:
                event.exceptions.append(value(icalproperty_get_exdate(property), property, calendar: calendar, line: line, document: document))
            case ICAL_XLICERROR_PROPERTY:
                event.problems.append(problem(property, line: line, written: written, place: .event))
            default:
                break
            }
        }
        return event
    }

    /// The zone of the system zone database a TZID names: `Europe/Athens`, libical's own prefixed form, or a globally
    /// unique TZID (RFC 5545 3.2.19: it starts with `/`) ending in a zone's name, as Mozilla writes them
    /// (`/mozilla.org/20070129_1/America/New_York`), read as Python's icalendar reads it.
    private static func builtinZone(_ tzid: String) -> OpaquePointer? {
        if let zone = icaltimezone_get_builtin_timezone(tzid) ?? icaltimezone_get_builtin_timezone_from_tzid(tzid) { return zone }
        guard tzid.hasPrefix("/") else { return nil }
        let parts = tzid.split(separator: "/")
        for start in parts.indices.dropFirst() {
            if let zone = icaltimezone_get_builtin_timezone(parts[start...].joined(separator: "/")) { return zone }
        }
        return nil
    }

    private static func value(_ time: icaltimetype, _ property: OpaquePointer, calendar: OpaquePointer, line: Int,
                              document: CalendarDocument) -> ICalValue {
        var result = ICalValue(time: swiftTime(time), isUTC: icaltime_is_utc(time) != 0, zone: nil, tzid: nil, line: line)
        guard let parameter = icalproperty_get_first_parameter(property, ICAL_TZID_PARAMETER),
              let tzid = icalparameter_get_tzid(parameter).map({ String(cString: $0) }) else { return result }
        result.tzid = tzid
        if let zone = icalcomponent_get_timezone(calendar, tzid) {
            if document.spans[tzid] == nil { document.spans[tzid] = .some(span(of: zone, tzid: tzid)) }
            result.zone = ICalZone(tzid: tzid, zone: zone, owner: document, span: document.spans[tzid] ?? nil)
        } else if let zone = builtinZone(tzid) {
            result.zone = ICalZone(tzid: tzid, zone: zone, owner: nil)
        }
        return result
    }

    /// The part of time the `VTIMEZONE` of `zone` covers (`ICalZoneSpan`), or `nil` when it covers all of it: from the
    /// earliest `DTSTART` of its observances to their last transition (`RDATE`, a rule's `UNTIL` or `COUNT`), or no end
    /// when a rule repeats without one.
    private static func span(of zone: OpaquePointer, tzid: String) -> ICalZoneSpan? {
        guard let component = icaltimezone_get_component(zone) else { return nil }
        var start: icaltimetype?
        var end: icaltimetype?
        var endless = false
        func later(_ time: icaltimetype) { if end.map({ icaltime_compare(time, $0) > 0 }) ?? true { end = time } }
        for kind in [ICAL_XSTANDARD_COMPONENT, ICAL_XDAYLIGHT_COMPONENT] {
            var observance = icalcomponent_get_first_component(component, kind)
            while let current = observance {
                defer { observance = icalcomponent_get_next_component(component, kind) }
                guard let property = icalcomponent_get_first_property(current, ICAL_DTSTART_PROPERTY) else { continue }
                var dtstart = icalproperty_get_dtstart(property)
                dtstart.zone = nil
                if start.map({ icaltime_compare(dtstart, $0) < 0 }) ?? true { start = dtstart }
                later(dtstart)
                var rdate = icalcomponent_get_first_property(current, ICAL_RDATE_PROPERTY)
                while let date = rdate {
                    var time = icalproperty_get_rdate(date).time
                    time.zone = nil
                    if icaltime_is_null_time(time) == 0 { later(time) }
                    rdate = icalcomponent_get_next_property(current, ICAL_RDATE_PROPERTY)
                }
                var rrule = icalcomponent_get_first_property(current, ICAL_RRULE_PROPERTY)
                while let ruleProperty = rrule {
                    defer { rrule = icalcomponent_get_next_property(current, ICAL_RRULE_PROPERTY) }
                    let rule = icalproperty_get_rrule(ruleProperty)
                    if rule.count == 0, icaltime_is_null_time(rule.until) != 0 { endless = true; continue }
                    guard let iterator = icalrecur_iterator_new(rule, dtstart) else { endless = true; continue }
                    defer { icalrecur_iterator_free(iterator) }
                    for _ in 0..<100_000 {
                        var next = icalrecur_iterator_next(iterator)
                        if icaltime_is_null_time(next) != 0 { break }
                        next.zone = nil
                        later(next)
                    }
                }
            }
        }
        guard let first = start else { return nil }
        let names = [tzid, string(icaltimezone_get_location(zone))].compactMap { $0 }
        let fallback = names.lazy.compactMap(builtinZone).first
        let fallbackName = names.first { builtinZone($0) != nil }
        let feedZone = ICalZone(tzid: tzid, zone: zone, owner: nil)
        let startTime = swiftTime(first)
        let endTime = endless ? nil : end.map(swiftTime)
        return ICalZoneSpan(start: startTime, end: endTime, startUTC: feedZone.utc(fromLocal: startTime),
                            endUTC: endTime.map(feedZone.utc(fromLocal:)), fallback: fallback, fallbackName: fallbackName)
    }

    /// A duration in seconds, days counting 86400 of wall clock; negative for `-P…`.
    private static func seconds(_ duration: icaldurationtype) -> Int {
        let seconds = Int(duration.weeks) * 604800 + Int(duration.days) * 86400 + Int(duration.hours) * 3600
            + Int(duration.minutes) * 60 + Int(duration.seconds)
        return duration.is_neg != 0 ? -seconds : seconds
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

    fileprivate static func icalTime(_ time: ICalTime) -> icaltimetype {
        var result = icaltime_null_time()
        result.year = Int32(time.year)
        result.month = Int32(time.month)
        result.day = Int32(time.day)
        result.hour = Int32(time.hour)
        result.minute = Int32(time.minute)
        result.second = Int32(time.second)
        result.is_date = time.isDate ? 1 : 0
        return result
    }

    fileprivate static func swiftTime(_ time: icaltimetype) -> ICalTime {
        ICalTime(year: Int(time.year), month: Int(time.month), day: Int(time.day), hour: Int(time.hour), minute: Int(time.minute),
                 second: Int(time.second), isDate: time.is_date != 0)
    }
}

/// Owns the components libical built, so that zones defined by a feed outlive the parse.
private final class CalendarDocument {
    private let roots: [OpaquePointer]
    /// The span of each of the feed's zones, by TZID, once computed (`.some(nil)`: it covers all time).
    package var spans: [String: ICalZoneSpan?] = [:]
    package init(_ roots: [OpaquePointer]) { self.roots = roots }
    deinit { roots.forEach { icalcomponent_free($0) } }
}

/// Hands libical the feed one physical line at a time (as `fgets` would), counting the lines it has begun.
private final class LineFeeder {
    private let bytes: [UInt8]
    private var offset = 0
    private var atLineStart = true
    /// The number of physical lines whose first bytes libical has been given.
    package private(set) var linesStarted = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package func fill(_ buffer: UnsafeMutablePointer<CChar>, size: Int) -> UnsafeMutablePointer<CChar>? {
        guard offset < bytes.count, size > 1 else { return nil }
        if atLineStart { linesStarted += 1 }
        var count = 0
        while count < size - 1, offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            buffer[count] = CChar(bitPattern: byte == 0 ? 0x20 : byte)
            count += 1
            if byte == 0x0A { break }
        }
        buffer[count] = 0
        atLineStart = buffer[count - 1] == 0x0A
        return buffer
    }
}

/// Which component each unfolded content line belongs to, and its line number, in the order libical sees them.
private struct LineOutline {
    package final class Node {
        package let name: String
        package let line: Int
        package var end: Int?
        /// Each content line's property name, line, whether it is one (RFC 5545's name syntax, then `:` or `;`), and
        /// the white space its value starts with (libical's parser drops it; it is part of a text value).
        package var properties: [(name: String, line: Int, isProperty: Bool, leading: String)] = []
        package var children: [Node] = []
        package init(name: String, line: Int) { self.name = name; self.line = line }

        package func child(_ index: Int) -> Node { index < children.count ? children[index] : Node(name: "", line: line) }
    }

    package private(set) var roots: [Node] = []
    private var open: [Node] = []
    package private(set) var lastLine = 0

    package mutating func record(_ text: String, line: Int) {
        lastLine = max(lastLine, line)
        var name = text.prefix { $0 != ":" && $0 != ";" }.uppercased()
        let value = text.drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespacesAndNewlines)
        if name == "BEGIN" {
            let node = Node(name: value, line: line)
            if let parent = open.last { parent.children.append(node) } else { roots.append(node) }
            open.append(node)
        } else if name == "END" {
            if let last = open.popLast() { last.end = line }
        } else if !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            name = name.trimmingCharacters(in: .whitespaces)
            // A name is RFC 5545's iana-token or x-name (letters, digits, `-`) before a `:` or `;`; anything else
            // (a folded line that lost its leading space) is no property, and a problem with it names none.
            let isProperty = !name.isEmpty && text.contains(":") && name.allSatisfy { $0 == "-" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
            open.last?.properties.append((name, line, isProperty, LineOutline.leadingSpace(ofValueIn: text)))
        }
    }

    /// The spaces and tabs the value of the content line `text` starts with: after its first `:` outside a quoted
    /// parameter value.
    static func leadingSpace(ofValueIn text: String) -> String {
        var quoted = false
        guard let colon = text.firstIndex(where: { character in
            if character == "\"" { quoted.toggle() }
            return character == ":" && !quoted
        }) else { return "" }
        return String(text[text.index(after: colon)...].prefix { $0 == " " || $0 == "\t" })
    }
}
