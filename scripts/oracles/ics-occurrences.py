#!/usr/bin/env python3
"""Expands an iCalendar feed with `icalendar` + `recurring-ical-events` (independent of Kiln and libical) and prints
one tab-separated line per occurrence whose local start date lies in FROM..UNTIL (both included):
uid, start_utc, end_utc, start_local, end_local, all_day -- the shape of Kiln's `occurrence` records, sorted.

usage: ics-occurrences.py FILE FROM UNTIL   (dates as YYYY-MM-DD)
"""
import datetime as dt
import sys

import icalendar
import recurring_ical_events


def main():
    path, first, last = sys.argv[1], dt.date.fromisoformat(sys.argv[2]), dt.date.fromisoformat(sys.argv[3])
    with open(path, "rb") as handle:
        calendar = icalendar.Calendar.from_ical(handle.read())
    rows = set()
    query = recurring_ical_events.of(calendar)
    for event in query.between(first - dt.timedelta(days=2), last + dt.timedelta(days=2)):
        start, end = event["DTSTART"].dt, event["DTEND"].dt if "DTEND" in event else None
        if end is None:
            end = start + (event["DURATION"].dt if "DURATION" in event else (dt.timedelta(days=1) if not isinstance(start, dt.datetime) else dt.timedelta(0)))
        if isinstance(start, dt.datetime):
            if start.tzinfo is None:
                continue  # floating times: Kiln needs the source's timezone option; not compared
            local_date = start.date()
            utc = dt.timezone.utc
            row = (str(event["UID"]), fmt(start.astimezone(utc)) + "Z", fmt(end.astimezone(utc)) + "Z",
                   fmt(start), fmt(end.astimezone(start.tzinfo)), "0")
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
