#!/usr/bin/env python3
"""Expands an iCalendar feed with `icalendar` + `recurring-ical-events` (independent of Kiln and libical) and prints
one tab-separated line per occurrence whose local start date lies in FROM..UNTIL (both included):
uid, start_utc, end_utc, start_local, end_local, all_day -- the shape of Kiln's `occurrence` records, sorted.
Local times are wall-clock times of the event's zone, as Kiln documents them: the zone of the series' DTSTART (of
the calendar's X-WR-TIMEZONE for a UTC or floating DTSTART), or the override's own for an instance a RECURRENCE-ID
replaces; an RDATE written in another zone (`RDATE:20231123T090000Z` of an America/Los_Angeles series) is shown
in the series' zone.

usage: ics-occurrences.py FILE FROM UNTIL   (dates as YYYY-MM-DD)
"""
import datetime as dt
import sys

import zoneinfo

import icalendar
import recurring_ical_events


def instant(value):
    """A RECURRENCE-ID as a key: its UTC instant, or the date of an all-day one."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc) if value.tzinfo else value
    return value


def zones(calendar):
    """The zone of each series (by UID), and the (UID, RECURRENCE-ID) of every override the feed writes."""
    calendar_zone = calendar.get("X-WR-TIMEZONE")
    calendar_zone = zoneinfo.ZoneInfo(str(calendar_zone)) if calendar_zone else None
    series, overrides = {}, set()
    for component in calendar.walk("VEVENT"):
        uid = str(component.get("UID"))
        if "RECURRENCE-ID" in component:
            overrides.add((uid, instant(component["RECURRENCE-ID"].dt)))
        elif "DTSTART" in component and isinstance(component["DTSTART"].dt, dt.datetime):
            start = component["DTSTART"]
            zone = start.dt.tzinfo
            if calendar_zone and "TZID" not in start.params:
                zone = calendar_zone
            series.setdefault(uid, zone)
    return series, overrides


def main():
    path, first, last = sys.argv[1], dt.date.fromisoformat(sys.argv[2]), dt.date.fromisoformat(sys.argv[3])
    with open(path, "rb") as handle:
        calendar = icalendar.Calendar.from_ical(handle.read())
    rows = set()
    series, overrides = zones(calendar)
    query = recurring_ical_events.of(calendar)
    for event in query.between(first - dt.timedelta(days=2), last + dt.timedelta(days=2)):
        start, end = event["DTSTART"].dt, event["DTEND"].dt if "DTEND" in event else None
        if end is None:
            end = start + (event["DURATION"].dt if "DURATION" in event else (dt.timedelta(days=1) if not isinstance(start, dt.datetime) else dt.timedelta(0)))
        if isinstance(start, dt.datetime):
            if start.tzinfo is None:
                continue  # floating times: Kiln needs the source's timezone option; not compared
            uid = str(event["UID"])
            zone = start.tzinfo
            recurrence = event.get("RECURRENCE-ID")
            if not (recurrence and (uid, instant(recurrence.dt)) in overrides) and series.get(uid):
                zone = series[uid]
            local = start.astimezone(zone)
            local_date = local.date()
            utc = dt.timezone.utc
            row = (uid, fmt(start.astimezone(utc)) + "Z", fmt(end.astimezone(utc)) + "Z",
                   fmt(local), fmt(end.astimezone(zone)), "0")
        else:
            local_date = start
            row = (str(event["UID"]), "", "", start.isoformat(), end.isoformat(), "1")
        if first <= local_date <= last:
            rows.add(row)
    for row in sorted(rows):
        print("\t".join(row))


def fmt(value):
    return value.strftime("%Y-%m-%dT%H:%M:%S")


if __name__ == "__main__":
    main()
