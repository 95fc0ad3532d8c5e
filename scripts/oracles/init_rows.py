"""Expected records of the real inputs `kiln init` sketches, from independent parsers (InitCommandTests): lxml for XML
and KML, Python's json module for JSON, icalendar for iCalendar, mwparserfromhell (through fidelity.py's listing
walk) for wikitext. Prints JSON: a list of records, each an object of strings (or null), in document order.

    init_rows.py xml FILE XPATH          the attributes of each element XPATH selects, with "text" for its text
    init_rows.py json FILE MEMBER        the members of each object of the array MEMBER (numbers as written)
    init_rows.py kml FILE                each placemark's name, id and folder path
    init_rows.py ics FILE                each event (a VEVENT without RECURRENCE-ID): uid, summary, start as written
    init_rows.py wikitext FILE           each listing: name, category (English Wikivoyage's conventions)
    init_rows.py mediawiki FILE          each page of the export: title, namespace, redirect ("1" when it is one)
"""
import json
import os
import sys

from lxml import etree


def xml(path, xpath):
    tree = etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True))
    return [dict(element.attrib) for element in tree.xpath(xpath)]


class Number(str):
    """A number as its literal text in the file."""


def json_records(path, member):
    with open(path, encoding="utf-8-sig") as handle:
        document = json.load(handle, parse_int=Number, parse_float=Number)
    records = []
    for record in document[member]:
        row = {}
        for name, value in record.items():
            if isinstance(value, bool):
                row[name] = "1" if value else "0"
            elif value is None or isinstance(value, (dict, list)):
                row[name] = None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            else:
                row[name] = str(value)
        records.append(row)
    return records


def kml(path):
    tree = etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True))
    rows = []
    for placemark in tree.xpath("//*[local-name()='Placemark']"):
        name = placemark.xpath("string(*[local-name()='name'])").strip()
        folders = [folder.xpath("string(*[local-name()='name'])").strip()
                   for folder in placemark.xpath("ancestor::*[local-name()='Folder']")]
        rows.append({"name": name or None, "id": placemark.get("id"), "folder": " / ".join(folders) or None})
    return rows


def ics(path):
    import icalendar
    with open(path, "rb") as handle:
        calendar = icalendar.Calendar.from_ical(handle.read())
    rows = []
    for event in calendar.walk("VEVENT"):
        if "RECURRENCE-ID" in event:
            continue
        summary = event.get("SUMMARY")
        rows.append({"uid": str(event.get("UID")), "summary": None if summary is None else str(summary),
                     "start": event.get("DTSTART").to_ical().decode()})
    return rows


def wikitext(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fidelity
    return [{"name": row["name"], "category": row["category"]} for row in fidelity.wiki_listings(path, fidelity.ENGLISH)]


def mediawiki(path):
    tree = etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True))
    rows = []
    for page in tree.xpath("//*[local-name()='page']"):
        rows.append({"title": page.xpath("string(*[local-name()='title'])"), "namespace": page.xpath("string(*[local-name()='ns'])"),
                     "redirect": "1" if page.xpath("*[local-name()='redirect']") else "0"})
    return rows


def main():
    kind, path = sys.argv[1], sys.argv[2]
    rows = {"xml": lambda: xml(path, sys.argv[3]), "json": lambda: json_records(path, sys.argv[3]),
            "kml": lambda: kml(path), "ics": lambda: ics(path), "wikitext": lambda: wikitext(path),
            "mediawiki": lambda: mediawiki(path)}[kind]()
    json.dump(rows, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
