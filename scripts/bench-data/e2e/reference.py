#!/usr/bin/env python3
"""The program a user would write instead of Kiln for the end-to-end benchmark: stops from XML (lxml iterparse),
timetable rows cut out of HTML pages with re (lxml.html for the text), loaded into SQLite with the same schema as
kiln.json5 beside it, duplicates dropped, folded search names, an FTS5 index. No provenance, no diagnostics.

usage: reference.py INPUT_DIR OUTPUT.sqlite
"""
import glob
import os
import re
import sqlite3
import sys
import unicodedata

from lxml import etree, html

HEADING_LINE = re.compile(r"^Γραμμή\s+(?P<line>[0-9]+\.[0-9]+):")
HEADING_DAYS = re.compile(r"^(?P<days>(?:Καθημερινές|Σάββατο|Κυριακή|Αργίες)(?:\s*-\s*(?:Σάββατο|Κυριακή|Αργίες))*)$")
ROW = re.compile(r"^(?P<from>[0-9]{1,2}:[0-9]{2})\t(?P<until>[0-9]{1,2}:[0-9]{2})\t(?P<every>[0-9]{1,3})$")
BLOCKS = {"p", "div", "tr", "table", "h1", "h2", "h3", "li", "br"}


def fold(text):
    decomposed = unicodedata.normalize("NFD", text.lower())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(unicodedata.normalize("NFC", stripped).replace("ς", "σ").split())


def minutes(text):
    hours, mins = text.split(":")
    return int(hours) * 60 + int(mins)


def page_lines(root):
    """The text of an element as lines: blocks end lines, cells are joined by tabs."""
    lines, current = [], []

    def flush():
        text = "\t".join(cell for cell in (" ".join(c.replace("\xa0", " ").split()) for c in current) if cell)
        if text:
            lines.append(text)
        current.clear()

    def walk(element):
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in ("script", "style"):
            return
        if tag in BLOCKS:
            flush()
        if tag in ("td", "th"):
            current.append(element.text_content())
        else:
            if element.text and tag not in ("td", "th"):
                current.append(element.text)
            for child in element:
                walk(child)
                if child.tail:
                    current.append(child.tail)
        if tag in BLOCKS:
            flush()

    if root.text:
        current.append(root.text)
    for child in root:
        walk(child)
        if child.tail:
            current.append(child.tail)
    flush()
    return lines


def main():
    folder, output = sys.argv[1], sys.argv[2]
    if os.path.exists(output):
        os.remove(output)
    db = sqlite3.connect(output)
    db.executescript("""
        CREATE TABLE stop (code TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL, search_name TEXT NOT NULL,
                           latitude REAL NOT NULL, longitude REAL NOT NULL);
        CREATE TABLE timetable_row (line TEXT NOT NULL, days TEXT NOT NULL, from_min INTEGER NOT NULL,
                                    until_min INTEGER NOT NULL,
                                    frequency INTEGER NOT NULL CHECK (frequency >= 1 AND frequency <= 180),
                                    PRIMARY KEY (line, days, from_min));
    """)
    stops = []
    for _, element in etree.iterparse(os.path.join(folder, "stops.xml"), tag="stop"):
        name = " ".join(unicodedata.normalize("NFC", element.findtext("name")).split())
        location = element.find("location")
        stops.append((element.get("code"), name, fold(name), float(location.get("lat")), float(location.get("lon"))))
        element.clear()
        while element.getprevious() is not None:
            del element.getparent()[0]
        if len(stops) >= 10000:
            db.executemany("INSERT OR IGNORE INTO stop VALUES (?, ?, ?, ?, ?)", stops)
            stops.clear()
    db.executemany("INSERT OR IGNORE INTO stop VALUES (?, ?, ?, ?, ?)", stops)
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "pages", "*.html"))):
        document = html.parse(path).getroot()
        content = document.find_class("content")
        line, days = None, None
        for text in page_lines(content[0] if content else document):
            match = ROW.match(text)
            if match:
                rows.append((line, days, minutes(match["from"]), minutes(match["until"]), int(match["every"])))
                continue
            heading = HEADING_LINE.match(text)
            if heading:
                line, days = heading["line"], None
                continue
            heading = HEADING_DAYS.match(text)
            if heading:
                days = heading["days"]
    db.executemany("INSERT OR IGNORE INTO timetable_row VALUES (?, ?, ?, ?, ?)", rows)
    db.executescript("""
        CREATE VIRTUAL TABLE stop_search USING fts5(name, search_name, code UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
        INSERT INTO stop_search (name, search_name, code) SELECT name, search_name, code FROM stop ORDER BY code;
    """)
    db.commit()
    db.execute("VACUUM")
    db.close()
    print('{"stops": %d, "rows": %d}' % (db_count(output, "stop"), db_count(output, "timetable_row")))


def db_count(path, table):
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT count(*) FROM " + table).fetchone()[0]
    finally:
        connection.close()


if __name__ == "__main__":
    main()
