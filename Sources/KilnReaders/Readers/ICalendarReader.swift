// Over 500 lines on purpose: one reader of RFC 5545 (events, recurrence, time zones, the findings of each), whose
// parts share libical's component walk and the file's findings.
import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads iCalendar feeds (RFC 5545, as Google Calendar exports them) through libical and emits two kinds of record in
/// one pass: `event` (one per `UID`) and `occurrence` (each instance, expanded from `RRULE`, `RDATE`, `EXDATE` and
/// `RECURRENCE-ID` overrides over the manifest's `window`, with UTC and local times). `TZID`s resolve through the
/// feed's `VTIMEZONE`s or the system zone database; all-day events stay dates. Every event or instance that cannot
/// be read or expanded is a finding with its line.
public struct ICalendarReader: ConfigurableReader {
    public static let format = "ics"
    public static let acceptedMediaTypes = MediaTypes.calendar

    /// The dates between which recurring events are expanded: occurrences whose local start date is in
    /// `from…until` (both included).
    public struct Window: Decodable, Sendable {
        package var from: ICalTime
        package var until: ICalTime

        package enum CodingKeys: String, CodingKey, CaseIterable { case from, until }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            func date(_ key: CodingKeys) throws -> ICalTime {
                let text = try c.decode(String.self, forKey: key)
                guard let date = ICalTime(isoDate: text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [key], debugDescription: "expected a date YYYY-MM-DD, found \"\(text)\""))
                }
                return date
            }
            from = try date(.from)
            until = try date(.until)
            guard from <= until else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "the window ends before it starts"))
            }
        }
    }

    /// The options a manifest gives an `ics` source.
    public struct Options: Decodable, Sendable {
        package var window: Window?
        /// The category of events without `CATEGORIES` (e.g. one source per calendar file, each with its category).
        package var category: String?
        /// The zone of floating times (no `TZID`, no `Z`), from the system zone database.
        package var timezone: String?
        /// The most occurrences one event may have in the window.
        package var maximumOccurrences = 5000

        package enum CodingKeys: String, CodingKey, CaseIterable { case window, category, timezone, maximumOccurrences }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            window = try c.decodeIfPresent(Window.self, forKey: .window)
            category = try c.decodeIfPresent(String.self, forKey: .category)
            timezone = try c.decodeIfPresent(String.self, forKey: .timezone)
            maximumOccurrences = try c.decodeIfPresent(Int.self, forKey: .maximumOccurrences) ?? 5000
            if let name = timezone, ICalZone.named(name) == nil {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.timezone],
                                                        debugDescription: "\"\(name)\" is not a zone of the system zone database (e.g. \"Europe/Athens\")"))
            }
            guard maximumOccurrences > 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.maximumOccurrences], debugDescription: "must be positive"))
            }
        }
    }

    public static let eventKind = RecordKind("event", fields: [
        "uid", "summary", "description", "location", "url", "status", "category", "categories", "sequence",
        "start", "end", "all_day", "tzid", "rrule", "occurrences",
    ])
    public static let occurrenceKind = RecordKind("occurrence", fields: [
        "event_uid", "start_utc", "end_utc", "start_local", "end_local", "all_day", "tzid", "recurrence_id", "overridden",
        "summary", "location", "description",
    ])

    public let kinds = [ICalendarReader.eventKind, ICalendarReader.occurrenceKind]
    private let options: Options
    private let floatingZone: ICalZone?
    private var wantsOccurrences = true
    /// The most occurrences one file ships (`limits.occurrencesPerFile`).
    private var occurrencesPerFile = ManifestLimits.defaultOccurrencesPerFile

    public init(options: Options) throws {
        self.options = options
        floatingZone = options.timezone.flatMap(ICalZone.named)
    }

    public func restricted(to kinds: Set<String>) -> RecordReader {
        var copy = self
        copy.wantsOccurrences = kinds.contains(ICalendarReader.occurrenceKind.name)
        return copy
    }

    public func limited(by limits: ManifestLimits) -> RecordReader {
        var copy = self
        copy.occurrencesPerFile = limits.occurrencesPerFile
        return copy
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, as: .iCalendar, log: log) { return }
        guard let bytes = try input.bytes(log: log).readAll() else { return }
        checkText(bytes, input: input, log: log)
        let feed = Libical.parse(bytes)
        var unread = UnreadProperties()
        for problem in feed.problems where !unread.take(problem) {
            log.report(.icsMalformed, "\(problem.message)", at: input.at(problem.line))
        }
        for skipped in feed.skipped {
            log.report(.icsSkipped, "\(skipped.name) is not an event; not read", at: input.at(skipped.line))
        }
        if feed.events.isEmpty, feed.problems.isEmpty {
            log.report(.icsNoEvents, "the feed holds no VEVENT", at: input.at(nil))
        }
        var groups: [String: [ICalEvent]] = [:]
        var order: [String] = []
        var calendarZones: [String: ICalZone?] = [:]
        for read in feed.events {
            var event = read
            if let name = event.calendarZone {
                if calendarZones[name] == nil {
                    calendarZones[name] = .some(ICalZone.named(name))
                    if ICalZone.named(name) == nil {
                        log.report(.icsUnknownCalendarZone, "X-WR-TIMEZONE \"\(name)\" is not a zone of the system zone database; ignored",
                                   at: input.at(nil))
                    }
                }
                if let zone = calendarZones[name]! { event = placed(event, in: zone) }
            }
            for problem in event.problems where !unread.take(problem) {
                if problem.message.hasPrefix("No value for") {
                    log.report(.icsEmpty, "\(label(event)): \(problem.message)", at: input.at(problem.line))
                } else {
                    log.report(.icsMalformed, "\(label(event)): \(problem.message)", at: input.at(problem.line))
                }
            }
            guard let uid = event.uid, !uid.isEmpty else {
                log.report(.icsNoUID, "\(label(event)) has no UID; it is not shipped", at: input.at(event.line))
                continue
            }
            if groups[uid] == nil { order.append(uid) }
            groups[uid, default: []].append(event)
        }
        unread.report(input: input, log: log)
        let context = Context(input: input, log: log, budget: OccurrenceBudget(left: occurrencesPerFile))
        for uid in order {
            try process(uid: uid, components: groups[uid]!, context: context, emit: emit)
        }
        if let first = context.budget.firstCut {
            let others = context.budget.eventsCut - 1
            log.report(.icsFileOccurrences,
                       "the file gives more than \(occurrencesPerFile) occurrences (limits.occurrencesPerFile): \(first.label) ships only its first \(first.shipped) of "
                           + "\(first.total)\(others > 0 ? ", and the \(others) events after it none (their occurrences field is NULL)" : ""); "
                           + "\(context.budget.shipped) occurrences shipped. Narrow the window or raise limits.occurrencesPerFile",
                       at: input.at(first.line))
        }
    }

    /// The properties the reader reads, by where they are: whatever libical cannot read in any other property (an
    /// empty `X-WR-CALDESC:`, a vendor property without the `X-` prefix such as `SUBCALENDAR-ID`, which RFC 5545's
    /// iana-token allows) takes no value from any field, so it is an `ics.unread` info, not an error.
    package static let readProperties: [ICalProblem.Place: Set<String>] = [
        .calendar: ["X-WR-TIMEZONE"],
        .timeZone: ["TZID", "DTSTART", "TZOFFSETFROM", "TZOFFSETTO", "RRULE", "RDATE"],
        .event: ["UID", "SUMMARY", "DESCRIPTION", "LOCATION", "URL", "STATUS", "CATEGORIES", "SEQUENCE", "DTSTART", "DTEND",
                 "DURATION", "RECURRENCE-ID", "RRULE", "RDATE", "EXDATE"],
    ]

    /// The problems of one file in properties the reader does not read, once per place and property name.
    package struct UnreadProperties {
        private var order: [String] = []
        private var first: [String: (problem: ICalProblem, count: Int)] = [:]

        package init() {}

        /// Keeps `problem` and returns true when it is in a property no field reads (one with a name the reader does
        /// not read); false for the others, which the caller reports.
        package mutating func take(_ problem: ICalProblem) -> Bool {
            guard !problem.property.isEmpty, ICalendarReader.readProperties[problem.place]?.contains(problem.property) == false else { return false }
            let key = "\(problem.place) \(problem.property)"
            if let seen = first[key] { first[key] = (seen.problem, seen.count + 1); return true }
            order.append(key)
            first[key] = (problem, 1)
            return true
        }

        /// Reports each property kept, at its first line, with how many lines wrote it.
        package func report(input: InputFile, log: DiagnosticLog) {
            for key in order {
                guard let (problem, count) = first[key] else { continue }
                let place = problem.place == .calendar ? "the calendar's" : problem.place == .timeZone ? "a VTIMEZONE's" : "an event's"
                let others = count > 1 ? " (and \(count - 1) more line\(count == 2 ? "" : "s") of it in the file)" : ""
                log.report(.icsUnread, "\(place) \(problem.property) is not read (no field takes it), and libical could not read it either: "
                               + "\(problem.message.trimmingCharacters(in: .whitespaces))\(others)", at: input.at(problem.line))
            }
        }
    }

    /// What is left of a file's occurrences (`limits.occurrencesPerFile`), and the first event it cut.
    private final class OccurrenceBudget {
        package var left: Int
        package var shipped = 0
        package var eventsCut = 0
        /// True when the event being processed was expanded only up to the budget (its total is not known).
        package var truncatedExpansion = false
        package var firstCut: (label: String, line: Int, shipped: Int, total: String)?
        package init(left: Int) { self.left = left }
    }

    private struct Context {
        package let input: InputFile
        package let log: DiagnosticLog
        package let budget: OccurrenceBudget
        package func report(_ code: DiagnosticCode, _ message: String, line: Int?) {
            log.report(code, message, at: input.at(line))
        }
    }

    /// Reports lines that are not UTF-8 (libical would pass the bytes through, and they would arrive garbled).
    private func checkText(_ bytes: [UInt8], input: InputFile, log: DiagnosticLog) {
        var line = 1
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
            let slice = bytes[start..<index]
            if slice.contains(0) {
                log.report(.encoding, "line holds a NUL byte; is the file UTF-16, or not text at all?", at: input.at(line))
            } else if String(validating: slice, as: UTF8.self) == nil {
                log.report(.encoding, "line is not valid UTF-8 (iCalendar feeds are UTF-8)", at: input.at(line))
            }
            line += 1
            start = index + 1
        }
    }

    /// The event with its UTC and floating times read as wall-clock times of the calendar's zone (`X-WR-TIMEZONE`), as
    /// calendar applications show them.
    private func placed(_ event: ICalEvent, in zone: ICalZone) -> ICalEvent {
        func place(_ value: ICalValue) -> ICalValue {
            guard !value.time.isDate, value.tzid == nil else { return value }
            var result = value
            if value.isUTC { result.time = zone.local(fromUTC: value.time) }
            result.isUTC = false
            result.zone = zone
            result.tzid = zone.tzid
            return result
        }
        var result = event
        result.start = event.start.map(place)
        result.end = event.end.map(place)
        result.recurrenceID = event.recurrenceID.map(place)
        result.dates = event.dates.map { date in
            var placed = date
            placed.start = place(date.start)
            placed.end = date.end.map(place)
            return placed
        }
        result.exceptions = event.exceptions.map(place)
        return result
    }

    private func label(_ event: ICalEvent) -> String {
        if let summary = event.summary { return "event \"\(summary)\"" + (event.uid.map { " (\($0))" } ?? "") }
        return event.uid.map { "event \($0)" } ?? "the event at line \(event.line)"
    }

    /// An instance's start and end as wall-clock times, in the event's zone.
    private struct Instance {
        package var start: ICalTime
        package var end: ICalTime
        package var source: ICalEvent
        package var recurrenceID: String?
        package var overridden = false
    }

    private func process(uid: String, components: [ICalEvent], context: Context, emit: (Record) throws -> Void) throws {
        let masters = newestBySequence(components.filter { $0.recurrenceID == nil }, key: { _ in "" }, context: context)
        var overrides = newestBySequence(components.filter { $0.recurrenceID != nil }, key: { self.instanceKey($0.recurrenceID!) ?? "" }, context: context)
        guard let master = masters.first ?? overrides.first else { return }
        if masters.isEmpty {
            context.report(.icsOrphanOverride, "\(label(master)) only has instances with RECURRENCE-ID (the recurring event itself is missing); each is shipped as it is",
                           line: master.line)
        }
        var instances: [Instance] = []
        var expanded = true
        if !masters.isEmpty {
            if let result = expand(master, context: context) { instances = result } else { expanded = false }
        }
        if wantsOccurrences, expanded {
            var byKey: [String: Int] = [:]
            for (index, instance) in instances.enumerated() { if let key = instance.recurrenceID { byKey[key] = index } }
            for override in overrides {
                if override.thisAndFuture {
                    context.report(.icsUnsupported, "\(label(override)): RECURRENCE-ID with RANGE=THISANDFUTURE is not supported; only this instance is changed",
                                   line: override.recurrenceID!.line)
                }
                guard let key = instanceKey(override.recurrenceID!), let times = span(override, context: context) else { continue }
                var instance = Instance(start: times.start, end: times.end, source: override, recurrenceID: key, overridden: true)
                instance.recurrenceID = override.recurrenceID.map { format($0) }
                if let index = byKey[key] {
                    instances[index] = instance
                } else if !masters.isEmpty {
                    context.report(.icsOverrideUnmatched, "\(label(override)): RECURRENCE-ID \(override.recurrenceID!.time.iso) is not an instance of the rule; shipped as an extra instance",
                                   line: override.recurrenceID!.line)
                    instances.append(instance)
                } else {
                    instances.append(instance)
                }
            }
            let cancelled = instances.filter { $0.source.status?.uppercased() == "CANCELLED" && $0.overridden }
            for instance in cancelled {
                context.report(.icsCancelled, "\(label(instance.source)): the instance of \(instance.start.iso) is cancelled; not shipped",
                               line: instance.source.line)
            }
            instances.removeAll { $0.source.status?.uppercased() == "CANCELLED" && $0.overridden }
            if let window = options.window {
                instances.removeAll { $0.start.date < window.from || $0.start.date > window.until }
            }
            instances.sort { utcSeconds($0.start, of: $0.source) < utcSeconds($1.start, of: $1.source) }
        }
        var cut = false
        if wantsOccurrences, expanded, instances.count > context.budget.left {
            cut = true
            context.budget.eventsCut += 1
            if context.budget.firstCut == nil {
                let total = context.budget.truncatedExpansion ? "at least \(instances.count)" : String(instances.count)
                context.budget.firstCut = (label(master), master.line, context.budget.left, total)
            }
            instances.removeSubrange(context.budget.left...)
        }
        context.budget.truncatedExpansion = false
        context.budget.left -= instances.count
        context.budget.shipped += wantsOccurrences ? instances.count : 0
        reportOutsideZoneSpan(master, instances: instances, context: context)
        try emit(eventRecord(master, occurrences: wantsOccurrences && expanded && !cut ? instances.count : nil))
        guard wantsOccurrences else { return }
        for instance in instances {
            try emit(occurrenceRecord(uid: uid, instance))
        }
    }

    /// An event whose start, or one of whose instances, falls outside the part of time its zone's `VTIMEZONE`
    /// covers, when no zone of the system database has its name to follow there: one `ics.zone-span` warning (libical
    /// stretches the nearest offset over those times, which may be an hour off).
    private func reportOutsideZoneSpan(_ master: ICalEvent, instances: [Instance], context: Context) {
        guard let start = master.start, !start.time.isDate, let span = start.zone?.span, span.fallbackName == nil else { return }
        let outside = ([start.time] + instances.map(\.start)).first { !$0.isDate && !span.covers(local: $0) }
        guard let outside else { return }
        let end = span.end.map { " to \($0.iso)" } ?? " on"
        context.report(.icsZoneSpan, "\(label(master)): \(outside.iso) is outside the part of time the VTIMEZONE \"\(start.tzid ?? "")\" covers "
                           + "(\(span.start.iso)\(end)), and no zone of the system zone database has that name: its offset there is a guess",
                       line: start.line)
    }

    /// Keeps, for each key, the component with the highest `SEQUENCE`; reports the others.
    private func newestBySequence(_ components: [ICalEvent], key: (ICalEvent) -> String, context: Context) -> [ICalEvent] {
        var kept: [String: ICalEvent] = [:]
        var order: [String] = []
        for component in components {
            let k = key(component)
            guard let existing = kept[k] else {
                kept[k] = component
                order.append(k)
                continue
            }
            let (newer, older) = component.sequence > existing.sequence ? (component, existing) : (existing, component)
            if component.sequence == existing.sequence {
                context.report(.icsDuplicate, "\(label(component)) appears again with the same SEQUENCE \(component.sequence) (first at line \(existing.line)); the first is kept",
                               line: component.line)
            } else {
                context.report(.icsSuperseded, "\(label(older)) at line \(older.line) (SEQUENCE \(older.sequence)) is replaced by the one at line \(newer.line) (SEQUENCE \(newer.sequence))",
                               line: older.line)
            }
            kept[k] = newer
        }
        return order.map { kept[$0]! }
    }

    /// What identifies an instance: its UTC start, or its date for all-day events.
    private func instanceKey(_ value: ICalValue) -> String? {
        if value.time.isDate { return value.time.iso }
        if value.isUTC { return value.time.iso + "Z" }
        if let zone = value.zone ?? (value.tzid == nil ? floatingZone : nil) { return zone.utc(fromLocal: value.time).iso + "Z" }
        return nil
    }

    private func instanceKey(start: ICalTime, of event: ICalEvent) -> String? {
        guard var value = event.start else { return nil }
        value.time = start
        return instanceKey(value)
    }

    /// The zone of `value`: its TZID's, the floating zone, or `nil` for UTC. Reports what cannot be placed.
    private func zone(of value: ICalValue, event: ICalEvent, context: Context) -> (zone: ICalZone?, ok: Bool) {
        if value.time.isDate || value.isUTC { return (nil, true) }
        if let tzid = value.tzid {
            if let zone = value.zone { return (zone, true) }
            context.report(.icsUnknownTZID, "\(label(event)): unknown TZID \"\(tzid)\": neither a VTIMEZONE of the feed nor a zone of the system zone database; the event's times cannot be placed",
                           line: value.line)
            return (nil, false)
        }
        if let floatingZone { return (floatingZone, true) }
        context.report(.icsFloatingTime, "\(label(event)): \(value.time.iso) has no TZID and no Z (a floating time); set the source's \"timezone\" option",
                       line: value.line)
        return (nil, false)
    }

    /// The start and end (wall clock, in the start's zone) of a single component; `nil` after reporting why not.
    private func span(_ event: ICalEvent, context: Context) -> (start: ICalTime, end: ICalTime)? {
        guard let start = event.start else {
            context.report(.icsNoStart, "\(label(event)) has no DTSTART; it has no occurrences", line: event.line)
            return nil
        }
        let startZone = zone(of: start, event: event, context: context)
        guard startZone.ok else { return nil }
        var end: ICalTime
        if let dtend = event.end {
            if dtend.time.isDate != start.time.isDate {
                context.report(.icsBadEnd, "\(label(event)): DTSTART and DTEND must both be dates or both date-times", line: dtend.line)
                return nil
            }
            let endZone = zone(of: dtend, event: event, context: context)
            guard endZone.ok else { return nil }
            if dtend.time.isDate || endZone.zone === startZone.zone || dtend.tzid == start.tzid && dtend.isUTC == start.isUTC {
                end = dtend.time
            } else {
                let utcEnd = endZone.zone.map { $0.utc(fromLocal: dtend.time) } ?? dtend.time
                end = startZone.zone.map { $0.local(fromUTC: utcEnd) } ?? utcEnd
            }
            if end < start.time {
                context.report(.icsEndBeforeStart, "\(label(event)): DTEND \(dtend.time.iso) is before DTSTART \(start.time.iso); the event has no occurrences",
                               line: dtend.line)
                return nil
            }
        } else if let duration = event.duration {
            guard duration.seconds >= 0 else {
                context.report(.icsEndBeforeStart, "\(label(event)): the DURATION is negative; the event has no occurrences", line: duration.line)
                return nil
            }
            end = start.time.adding(seconds: duration.seconds)
        } else {
            end = start.time.adding(seconds: start.time.isDate ? 86400 : 0)
        }
        return (start.time, end)
    }

    /// The instances of a recurring (or single) event, before overrides and the window; `nil` after reporting why not.
    private func expand(_ event: ICalEvent, context: Context) -> [Instance]? {
        guard let (start, end) = span(event, context: context), let value = event.start else { return nil }
        let length = end.nominalSeconds - start.nominalSeconds
        let startZone = value.zone ?? (value.tzid == nil && !value.isUTC ? floatingZone : nil)
        var starts: Set<ICalTime> = [start]
        let through = options.window.map { ICalTime(year: $0.until.year, month: $0.until.month, day: $0.until.day, hour: 23, minute: 59, second: 59) }
        for rule in event.rules {
            if !rule.isBounded, through == nil {
                context.report(.icsUnbounded, "\(label(event)) repeats forever (RRULE:\(rule.text)) and the source declares no window; "
                                   + "add options.window {from, until} to expand it. Its occurrences are not shipped",
                               line: rule.line)
                return nil
            }
            let limit = options.maximumOccurrences
            // Expanding past what the file may still ship is work for nothing: one more tells that the budget cuts.
            let fileLimit = context.budget.left + 1
            let after = options.window.map { ICalTime(year: $0.from.year, month: $0.from.month, day: $0.from.day) }
            guard let result = rule.expand(from: start, zone: startZone, utc: value.isUTC, after: after, through: through,
                                           limit: min(limit, fileLimit)) else {
                context.report(.icsBadRRule, "\(label(event)): libical cannot expand RRULE:\(rule.text); only DTSTART is shipped", line: rule.line)
                continue
            }
            if result.truncated, fileLimit <= limit {
                context.budget.truncatedExpansion = true
            } else if result.truncated {
                context.report(.icsTooMany, "\(label(event)): RRULE:\(rule.text) gives more than \(limit) occurrences in the window; only the first are shipped (raise maximumOccurrences or narrow the window)",
                               line: rule.line)
            }
            starts.formUnion(result.starts.map { start.isDate ? $0.date : $0 })
        }
        var periodEnds: [ICalTime: ICalTime] = [:]
        for rdate in event.dates {
            let date = rdate.start
            guard date.time.isDate == start.isDate else {
                let kind = rdate.end != nil || rdate.duration != nil ? "the period starting " : ""
                context.report(.icsBadRDate, "\(label(event)): RDATE \(kind)\(date.time.iso) is not of the same type as DTSTART; ignored", line: date.line)
                continue
            }
            guard zone(of: date, event: event, context: context).ok else { continue }
            let instanceStart = wallClock(date, in: startZone, utc: value.isUTC)
            if let end = rdate.end {
                guard zone(of: end, event: event, context: context).ok else { continue }
                let instanceEnd = wallClock(end, in: startZone, utc: value.isUTC)
                guard instanceEnd >= instanceStart else {
                    context.report(.icsBadRDate, "\(label(event)): RDATE period \(date.time.iso)/\(end.time.iso) ends before it starts; ignored", line: date.line)
                    continue
                }
                periodEnds[instanceStart] = instanceEnd
            } else if let duration = rdate.duration {
                guard duration >= 0 else {
                    context.report(.icsBadRDate, "\(label(event)): RDATE period from \(date.time.iso) has a negative duration; ignored", line: date.line)
                    continue
                }
                // The length runs on the clock the period is written in (UTC's is exact), as for DTSTART and DURATION.
                var end = date
                end.time = date.time.adding(seconds: duration)
                periodEnds[instanceStart] = wallClock(end, in: startZone, utc: value.isUTC)
            }
            starts.insert(instanceStart)
        }
        var excluded: Set<String> = []
        for exception in event.exceptions {
            guard zone(of: exception, event: event, context: context).ok else { continue }
            if exception.time.isDate, !start.isDate {
                excluded.formUnion(starts.filter { $0.date == exception.time }.compactMap { instanceKey(start: $0, of: event) })
            } else if let key = instanceKey(exception) {
                excluded.insert(key)
            }
        }
        return starts.sorted().compactMap { instanceStart in
            let key = instanceKey(start: instanceStart, of: event)
            if let key, excluded.contains(key) { return nil }
            return Instance(start: instanceStart, end: periodEnds[instanceStart] ?? instanceStart.adding(seconds: length), source: event, recurrenceID: key)
        }
    }

    /// `value` as a wall-clock time of the event's start zone (`zone`; `nil` with `utc` for a UTC start).
    private func wallClock(_ value: ICalValue, in zone: ICalZone?, utc: Bool) -> ICalTime {
        if value.time.isDate || value.zone === zone || (value.isUTC && utc) { return value.time }
        let instant = value.isUTC ? value.time : (value.zone ?? (value.tzid == nil ? floatingZone : nil)).map { $0.utc(fromLocal: value.time) } ?? value.time
        return zone.map { $0.local(fromUTC: instant) } ?? instant
    }

    private func utcSeconds(_ local: ICalTime, of event: ICalEvent) -> Int {
        guard !local.isDate, let value = event.start else { return local.nominalSeconds }
        if let zone = value.zone ?? (value.tzid == nil && !value.isUTC ? floatingZone : nil) { return zone.utc(fromLocal: local).nominalSeconds }
        return local.nominalSeconds
    }

    private func format(_ value: ICalValue) -> String {
        value.time.iso + (value.isUTC ? "Z" : "")
    }

    private func eventRecord(_ event: ICalEvent, occurrences: Int?) -> Record {
        var record = Record(ICalendarReader.eventKind, line: event.line)
        record["uid"] = event.uid
        record["summary"] = event.summary
        record["description"] = event.description
        record["location"] = event.location
        record["url"] = event.url
        record["status"] = event.status
        record["category"] = event.categories.first ?? options.category
        record["categories"] = event.categories.isEmpty ? nil : event.categories.joined(separator: ",")
        record["sequence"] = String(event.sequence)
        record["start"] = event.start.map(format)
        record["end"] = event.end.map(format)
        record["all_day"] = event.start.map { $0.time.isDate ? "1" : "0" }
        if let start = event.start, !start.time.isDate {
            record["tzid"] = start.tzid ?? (start.isUTC ? "UTC" : options.timezone)
        }
        record["rrule"] = event.rules.isEmpty ? nil : event.rules.map(\.text).joined(separator: "\n")
        record["occurrences"] = occurrences.map(String.init)
        return record
    }

    private func occurrenceRecord(uid: String, _ instance: Instance) -> Record {
        var record = Record(ICalendarReader.occurrenceKind, line: instance.source.line)
        let value = instance.source.start
        record["event_uid"] = uid
        record["start_local"] = instance.start.iso
        record["end_local"] = instance.end.iso
        record["all_day"] = instance.start.isDate ? "1" : "0"
        if !instance.start.isDate, let value {
            let zone = value.zone ?? (value.tzid == nil && !value.isUTC ? floatingZone : nil)
            record["start_utc"] = (zone.map { $0.utc(fromLocal: instance.start) } ?? instance.start).iso + "Z"
            record["end_utc"] = (zone.map { $0.utc(fromLocal: instance.end) } ?? instance.end).iso + "Z"
            record["tzid"] = value.tzid ?? (value.isUTC ? "UTC" : options.timezone)
        }
        record["recurrence_id"] = instance.overridden ? instance.recurrenceID : nil
        record["overridden"] = instance.overridden ? "1" : "0"
        record["summary"] = instance.source.summary
        record["location"] = instance.source.location
        record["description"] = instance.source.description
        return record
    }
}
