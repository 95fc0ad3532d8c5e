#!/usr/bin/env python3
"""The program a user would write instead of Kiln for the travel guide (raw/itravel/kiln.json5): a MediaWiki dump
read page by page with ElementTree.iterparse, each article's wikitext parsed with mwparserfromhell, and the same
tables loaded into SQLite with sqlite3: page (parent from {{IsPartOf}}/{{IstIn}}/{{Dans}} through redirects,
coordinates from {{geo}}/{{GeoData}}/{{Info Ville}}, else the median of its listings), page_alias (redirects),
section (the heading tree), listing (listing templates, {{vCard}} and Wikitravel tags, category from the template,
type= or the enclosing heading, the text after a template as its description), an FTS5 index on the listings' name
and description and R*Trees on pages and listings. No provenance, no diagnostics, no checks of the values.

usage: reference.py DUMP.xml OUTPUT.sqlite
"""
import hashlib
import os
import re
import sqlite3
import statistics
import sys
import unicodedata
import xml.etree.ElementTree as ET

import mwparserfromhell
from mwparserfromhell.nodes import Heading, Tag, Template, Text

CATEGORIES = {"see", "do", "buy", "eat", "drink", "sleep", "go"}
TEMPLATES = {name: name for name in CATEGORIES}
TEMPLATES.update({"listing": None, "vcard": None, "voir": "see", "faire": "do", "acheter": "buy", "manger": "eat",
                  "sortir": "drink", "se loger": "sleep"})
TYPES = {"restaurant": "eat", "landmark": "see", "alpine hut": "sleep", "hostel": "sleep", "hotel": "sleep",
         "bar": "drink", **{name: name for name in CATEGORIES}}
SECTIONS = {**{name: name for name in CATEGORIES}, "sehenswurdigkeiten": "see", "aktivitaten": "do",
            "einkaufen": "buy", "kuche": "eat", "nachtleben": "drink", "unterkunft": "sleep", "voir": "see",
            "faire": "do", "acheter": "buy", "manger": "eat", "boire un verre / sortir": "drink", "se loger": "sleep"}
FIELDS = ["name", "alt", "address", "directions", "phone", "tollfree", "email", "fax", "url", "hours", "price",
          "checkin", "checkout", "image", "wikidata", "lat", "long", "description", "lastedit"]
PARAMETERS = {field: field for field in FIELDS}
PARAMETERS.update({"content": "description", "lon": "long", "lng": "long", "nom": "name", "adresse": "address",
                   "latitude": "lat", "longitude": "long", "direction": "directions", "téléphone": "phone",
                   "numéro gratuit": "tollfree", "horaire": "hours", "prix": "price", "arrivée": "checkin",
                   "départ": "checkout", "mise à jour": "lastedit"})
PARENTS = {"ispartof", "isin", "istin", "dans"}
GEO = {"geo": ("1", "2"), "geodata": ("lat", "long"), "info ville": ("latitude", "longitude")}


def key(name):
    return " ".join(str(name).replace("_", " ").split()).lower()


def fold(text):
    decomposed = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).casefold().split())


def plain(value):
    text = mwparserfromhell.parse(str(value)).strip_code(normalize=True, collapse=True)
    text = " ".join(text.split())
    return text or None


def number(text):
    try:
        return float(text.replace(",", ".")) if text else None
    except ValueError:
        return None


def listing_id(title, path, name, ordinal):
    digest = hashlib.sha256("\x1f".join([title, "\x1e".join(path), name or "", str(ordinal)]).encode()).digest()
    return int.from_bytes(digest[:7], "big")


def read_page(title, text):
    """The page's parent, coordinates, sections and listings."""
    code = mwparserfromhell.parse(text)
    parent = lat = lon = None
    sections = [(0, 0, None, None)]
    open_headings = []          # (number, level, title)
    listings = []
    seen = {}
    nodes = code.nodes
    for index, node in enumerate(nodes):
        if isinstance(node, Heading):
            number_ = len(sections)
            while open_headings and open_headings[-1][1] >= node.level:
                open_headings.pop()
            heading = plain(node.title)
            sections.append((number_, node.level, heading, open_headings[-1][0] if open_headings else None))
            open_headings.append((number_, node.level, heading or ""))
            continue
        fields, template_key, listing_type = {}, None, None
        if isinstance(node, Template):
            template_key = key(node.name)
            if template_key in PARENTS and parent is None and node.has("1"):
                parent = plain(node.get("1").value)
                continue
            if template_key in GEO and lat is None:
                la, lo = GEO[template_key]
                lat = number(plain(node.get(la).value)) if node.has(la) else None
                lon = number(plain(node.get(lo).value)) if node.has(lo) else None
                continue
            if template_key not in TEMPLATES:
                continue
            for parameter in node.params:
                if not parameter.showkey:
                    continue
                name = key(parameter.name)
                if name == "type":
                    listing_type = plain(parameter.value)
                elif name in PARAMETERS:
                    fields[PARAMETERS[name]] = plain(parameter.value)
            if fields.get("description") is None and index + 1 < len(nodes) and isinstance(nodes[index + 1], Text):
                trailing = str(nodes[index + 1]).split("\n", 1)[0].lstrip(" :,.;–—-")
                fields["description"] = plain(trailing)
        elif isinstance(node, Tag) and key(node.tag) in CATEGORIES | {"listing"}:
            template_key = key(node.tag)
            for attribute in node.attributes:
                name = key(attribute.name)
                if name == "type":
                    listing_type = plain(attribute.value)
                elif name in PARAMETERS:
                    fields[PARAMETERS[name]] = plain(attribute.value)
            if node.contents is not None and fields.get("description") is None:
                fields["description"] = plain(node.contents)
        else:
            continue
        category = TEMPLATES.get(template_key) or TYPES.get(fold(listing_type))
        if category is None:
            category = next((SECTIONS[fold(h)] for _, _, h in reversed(open_headings) if fold(h) in SECTIONS), "other")
        section = open_headings[-1][0] if open_headings else 0
        path = [h for _, _, h in open_headings]
        dedup = "\x1e".join(path) + "\x1f" + (fields.get("name") or "")
        ordinal = seen.get(dedup, 0)
        seen[dedup] = ordinal + 1
        listings.append((listing_id(title, path, fields.get("name"), ordinal), section, category, listing_type,
                         fields, number(fields.get("lat")), number(fields.get("long"))))
    if parent:
        parent = parent[:1].upper() + parent[1:]
    return parent, lat, lon, sections, listings


def main():
    dump, output = sys.argv[1], sys.argv[2]
    if os.path.exists(output):
        os.remove(output)
    db = sqlite3.connect(output)
    db.executescript("""
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE page_entry (pageid INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, parent TEXT, lat REAL, lon REAL,
                                 revised TEXT, listings INTEGER, centerlat REAL, centerlon REAL);
        CREATE TABLE alias_entry (alias TEXT PRIMARY KEY, target TEXT NOT NULL);
        CREATE TABLE section (page_id INTEGER, number INTEGER, level INTEGER NOT NULL, title TEXT, parent INTEGER,
                              PRIMARY KEY (page_id, number));
        CREATE TABLE listing (id INTEGER PRIMARY KEY, page_id INTEGER NOT NULL, section INTEGER NOT NULL,
                              position INTEGER NOT NULL, category TEXT NOT NULL, type TEXT, """
                     + ", ".join(f"{f if f != 'long' else 'lon'} {'REAL' if f in ('lat', 'long') else 'TEXT'}" for f in FIELDS)
                     + ");")
    ns = ""
    pages = aliases = 0
    for _, element in ET.iterparse(dump, events=("end",)):
        tag = element.tag.rsplit("}", 1)[-1]
        if not ns and element.tag.startswith("{"):
            ns = element.tag.split("}")[0] + "}"
        if tag != "page":
            continue
        title = element.findtext(ns + "title")
        if element.findtext(ns + "ns") != "0":
            element.clear()
            continue
        pageid = int(element.findtext(ns + "id"))
        revision = element.find(ns + "revision")
        text = revision.findtext(ns + "text") or ""
        redirect = element.find(ns + "redirect")
        if redirect is not None or text.lstrip().upper().startswith("#REDIRECT"):
            target = redirect.get("title") if redirect is not None else re.search(r"\[\[([^\]|#]+)", text).group(1)
            db.execute("INSERT OR IGNORE INTO alias_entry VALUES (?, ?)", (title, target))
            aliases += 1
            element.clear()
            continue
        parent, lat, lon, sections, listings = read_page(title, text)
        placed = [(la, lo) for *_, la, lo in listings if la is not None and lo is not None]
        center = (statistics.median(p[0] for p in placed), statistics.median(p[1] for p in placed)) if placed else (None, None)
        db.execute("INSERT INTO page_entry VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (pageid, title, parent, lat, lon, revision.findtext(ns + "timestamp"), len(listings), *center))
        db.executemany("INSERT INTO section VALUES (?, ?, ?, ?, ?)", [(pageid, *s) for s in sections])
        db.executemany("INSERT OR IGNORE INTO listing VALUES (" + ", ".join("?" * (6 + len(FIELDS))) + ")",
                       [(lid, pageid, section, position + 1, category, kind,
                         *[(la if f == "lat" else lo if f == "long" else fields.get(f)) for f in FIELDS])
                        for position, (lid, section, category, kind, fields, la, lo) in enumerate(listings)])
        pages += 1
        element.clear()
    db.executescript("""
        CREATE TABLE page (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, parent_id INTEGER, lat REAL, lon REAL,
                           listing_count INTEGER NOT NULL, revised TEXT);
        INSERT INTO page SELECT e.pageid, e.title, p.pageid, COALESCE(e.lat, e.centerlat), COALESCE(e.lon, e.centerlon),
                                e.listings, e.revised
            FROM page_entry AS e LEFT JOIN alias_entry AS a ON a.alias = e.parent
            LEFT JOIN page_entry AS p ON p.title = COALESCE(a.target, e.parent);
        CREATE TABLE page_alias (alias TEXT PRIMARY KEY, page_id INTEGER NOT NULL);
        INSERT INTO page_alias SELECT a.alias, p.pageid FROM alias_entry AS a JOIN page_entry AS p ON p.title = a.target;
        DROP TABLE page_entry; DROP TABLE alias_entry;
        CREATE INDEX page_parent ON page (parent_id);
        CREATE INDEX listing_section ON listing (page_id, section);
        CREATE INDEX listing_category ON listing (category);
        CREATE VIRTUAL TABLE listing_search USING fts5 (name, description, id UNINDEXED, content='listing', content_rowid='id');
        INSERT INTO listing_search (rowid, name, description, id) SELECT id, name, description, id FROM listing;
        CREATE VIRTUAL TABLE page_rtree USING rtree (id, min_lat, max_lat, min_lon, max_lon);
        INSERT INTO page_rtree SELECT id, lat, lat, lon, lon FROM page WHERE lat IS NOT NULL AND lon IS NOT NULL;
        CREATE VIRTUAL TABLE listing_rtree USING rtree (id, min_lat, max_lat, min_lon, max_lon);
        INSERT INTO listing_rtree SELECT id, lat, lat, lon, lon FROM listing
            WHERE lat BETWEEN -90 AND 90 AND lon BETWEEN -180 AND 180;
    """)
    db.commit()
    listings = db.execute("SELECT count(*) FROM listing").fetchone()[0]
    db.execute("VACUUM")
    db.close()
    print(f"{pages} pages, {aliases} aliases, {listings} listings", file=sys.stderr)


if __name__ == "__main__":
    main()
