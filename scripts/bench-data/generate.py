#!/usr/bin/env python3
"""Generates the synthetic inputs of scripts/bench (never committed): deterministic, from a fixed seed.

usage: generate.py CASE OUT_DIR SCALE
  xml    OUT_DIR/stops.xml        SCALE stop records (5 000 000 ≈ 1 GB)
  regex  OUT_DIR/timetables.txt   SCALE lines of timetable text, mostly rows
  load   OUT_DIR/stops.txt        SCALE lines `name; code; longitude; latitude`
  e2e    OUT_DIR/stops.xml + OUT_DIR/pages/line-N.html   SCALE pages, 40 stops per page
"""
import os
import random
import sys

NAMES = ["Πλατεία Γεωργίου", "Κορίνθου", "Αγίου Ανδρέου", "Πανεπιστήμιο", "Ερμού", "Γούναρη", "Μαιζώνος",
         "Καστελλόκαμπος", "Ρίο", "Εγλυκάδα", "Τερψιθέα", "Ζαρουχλέικα", "Νοσοκομείο", "Ακτή Δυμαίων"]
DAYS = ["Καθημερινές", "Σάββατο", "Κυριακή - Αργίες", "Σάββατο - Κυριακή"]


def stop_xml(index, rng):
    lat = 38.19 + rng.random() * 0.13
    lon = 21.70 + rng.random() * 0.12
    lines = "".join('<line ref="%d.%d"/>' % (rng.randint(1, 30), rng.randint(1, 9)) for _ in range(rng.randint(1, 4)))
    return ('<stop code="%07d"><name>%s %d</name><location lat="%.6f" lon="%.6f"/><lines>%s</lines>'
            '<note>Στάση με στέγαστρο και πινακίδα</note></stop>\n' % (index, rng.choice(NAMES), index, lat, lon, lines))


def write_xml(path, count, rng):
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<stops>\n')
        for index in range(1, count + 1):
            out.write(stop_xml(index, rng))
        out.write("</stops>\n")


def time_text(minutes):
    return "%02d:%02d" % (minutes // 60, minutes % 60)


def row(rng):
    start = rng.randint(300, 1200)
    return "%s  %s  %d" % (time_text(start), time_text(start + rng.randint(30, 200)), rng.randint(10, 120))


def write_regex(path, count, rng):
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
        for index in range(count):
            if index % 50 == 0:
                out.write("%d.%d Γραμμή %d\n" % (index % 30 + 1, index % 9 + 1, index))
            elif index % 50 == 1:
                out.write(rng.choice(DAYS) + "\n")
            else:
                out.write(row(rng) + "\n")


def write_load(path, count, rng):
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
        for index in range(1, count + 1):
            out.write("%s %d; %07d; %.6f; %.6f\n" % (rng.choice(NAMES), index, index, 21.70 + rng.random() * 0.12,
                                                      38.19 + rng.random() * 0.13))


def write_e2e(folder, pages, rng):
    stops = pages * 40
    write_xml(os.path.join(folder, "stops.xml"), stops, rng)
    os.makedirs(os.path.join(folder, "pages"), exist_ok=True)
    for page in range(1, pages + 1):
        sections = []
        for days in rng.sample(DAYS[:3], 3):
            starts = sorted(rng.sample(range(300, 1200), rng.randint(2, 6)))
            rows = "".join("<tr><td>%s</td><td>%s</td><td>%d&nbsp;</td></tr>\n"
                           % (time_text(start), time_text(start + rng.randint(30, 200)), rng.randint(10, 120))
                           for start in starts)
            sections.append('<tr><th colspan="3">%s</th></tr>\n<tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr>\n%s'
                            % (days, rows))
        html = ('<html><head><meta charset="utf-8"><title>Γραμμή %d</title><script>var t = "06:00 08:00 20";</script>'
                '</head><body><table class="layout"><tr><td class="menu"><a href="/">Αρχική</a><br></td>'
                '<td class="content"><h1>Γραμμή %d.1: %s - %s</h1>\n<table class="schedule">\n%s</table>\n'
                '<p>Τελευταίο δρομολόγιο στις 23:15</p></td></tr></table></body></html>\n'
                % (page, page, rng.choice(NAMES), rng.choice(NAMES), "".join(sections)))
        with open(os.path.join(folder, "pages", "line-%d.html" % page), "w", encoding="utf-8") as out:
            out.write(html)


def main():
    case, folder, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(2026)
    if case == "xml":
        write_xml(os.path.join(folder, "stops.xml"), scale, rng)
    elif case == "regex":
        write_regex(os.path.join(folder, "timetables.txt"), scale, rng)
    elif case == "load":
        write_load(os.path.join(folder, "stops.txt"), scale, rng)
    elif case == "e2e":
        write_e2e(folder, scale, rng)
    else:
        sys.exit("unknown case " + case)


if __name__ == "__main__":
    main()
