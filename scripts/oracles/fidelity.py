#!/usr/bin/env python3
"""Expected values for the fidelity table, computed with parsers users trust and that share no code with Kiln:
mwparserfromhell for wikitext, ElementTree for transit XML, lxml for KML and HTML, Python's json module for JSON
(json_fidelity.py).

    fidelity.py INPUT FOLDER   ->  JSON on standard output: {"tables": {TABLE: {"key": COLUMN, "rows": [...]}}}

INPUT names a folder of Tests/Fixtures/real; FOLDER is where its files are. Each row holds the bundle's column names,
so that the test compares them field by field. The conventions applied here (white space collapsed, the text after a
listing template, the point that stands for a polygon or a line) are the documented ones of docs/FIDELITY.md; each is
computed here from the parser's own tree, never from Kiln's output.
"""
import csv
import json
import math
import os
import re
import sys
import unicodedata
import xml.etree.ElementTree as ElementTree

import json_fidelity
import lxml.etree
import lxml.html
import mwparserfromhell


def collapse(text):
    """White space (no-break spaces too) collapsed to single spaces, the ends trimmed; None when nothing is left."""
    if text is None:
        return None
    text = " ".join(text.replace("\u00a0", " ").split())
    return text or None


# ---- wikitext -------------------------------------------------------------------------------------------------------

FIELDS = ["name", "alt", "address", "directions", "phone", "email", "url", "hours", "price", "lat", "long",
          "wikidata", "image", "description"]

CATEGORIES = ["see", "do", "buy", "eat", "drink", "sleep"]
OWN_CATEGORY = {name: name for name in CATEGORIES + ["go"]}
DEFAULT_TYPES = {name: name for name in CATEGORIES + ["go", "other"]}
DEFAULT_SECTIONS = {name: name for name in CATEGORIES}

ENGLISH = {"templates": ["see", "do", "buy", "eat", "drink", "sleep", "go", "listing", "marker"],
           "parameters": {"content": "description"}, "trailing": False, "inline": {},
           "parent": ["ispartof"], "geo": {"geo": ("1", "2")}}
GERMAN = {"templates": ["vcard"], "parameters": {"content": "description"}, "trailing": True, "inline": {},
          "parent": ["istin"], "geo": {"geodata": ("lat", "long")},
          "types": {"restaurant": "eat", "landmark": "see", "alpine hut": "sleep"},
          "sections": {"sehenswurdigkeiten": "see", "aktivitaten": "do", "einkaufen": "buy", "kuche": "eat",
                       "nachtleben": "drink", "unterkunft": "sleep"}}
FRENCH = {"templates": ["voir", "faire", "acheter", "manger", "sortir", "se loger", "listing"],
          "parameters": {"nom": "name", "adresse": "address", "latitude": "lat", "longitude": "long",
                         "direction": "directions", "téléphone": "phone", "horaire": "hours", "prix": "price",
                         "content": "description"},
          "trailing": True, "inline": {"prix": "{1} {2}"},
          "parent": ["dans"], "geo": {"info ville": ("latitude", "longitude")},
          "own": {"voir": "see", "faire": "do", "acheter": "buy", "manger": "eat", "sortir": "drink", "se loger": "sleep"},
          "sections": {"voir": "see", "faire": "do", "acheter": "buy", "manger": "eat",
                       "boire un verre / sortir": "drink", "se loger": "sleep"}}

TEMPLATES = {"templates": ["faire", "listing"], "parameters": {"nom": "name", "prix": "price", "content": "description"},
             "trailing": False, "inline": {"prix": "{1} {2}", "российская трасса": "{1}{2}"}, "own": {"faire": "do"}}

WIKI_INPUTS = {
    "wikivoyage-en-roppongi": ("Roppongi.wikicode", ENGLISH),
    "wikivoyage-de-karwendel": ("Karwendel.wikicode", GERMAN),
    "wikivoyage-fr-thouars": ("Thouars.wikicode", FRENCH),
}
# Several one-page files: the page is the file's name, as the wikitext reader titles it.
WIKI_FILE_SETS = {
    "wikivoyage-ru-fr-templates": (["prix-template.wikicode", "russian-road-template.wikicode"], TEMPLATES),
}


def key(name):
    """A template or parameter name as MediaWiki compares it: comments out, `_` a space, spaces collapsed, lower case."""
    text = re.sub(r"<!--.*?-->", "", str(name), flags=re.S).replace("_", " ")
    return " ".join(text.split()).lower()


def render_inline(wikicode, formats):
    """Declared inline templates (`{1} {2}`) replaced by their arguments' text, innermost first."""
    for template in reversed(wikicode.filter_templates(recursive=True)):
        fmt = formats.get(key(template.name))
        if fmt is None:
            continue
        def argument(match):
            number = match.group(1)
            return str(template.get(number).value).strip() if template.has(number) else ""
        try:
            wikicode.replace(template, re.sub(r"\{(\w+)\}", argument, fmt))
        except ValueError:
            pass


def plain(value, formats, url=False):
    wikicode = mwparserfromhell.parse(str(value))
    render_inline(wikicode, formats)
    if url:
        links = wikicode.filter_external_links(recursive=False)
        if links:
            return collapse(str(links[0].url))
    return collapse(wikicode.strip_code(normalize=True, collapse=True))


def flat_nodes(wikicode):
    """The page's top-level nodes, looking into bold and italic: mwparserfromhell runs an unclosed bold on to the
    next one, across lines and headings, where MediaWiki closes it at the end of its line; what it swallows is still
    the page's top level."""
    for node in wikicode.nodes:
        if isinstance(node, mwparserfromhell.nodes.Tag) and node.wiki_markup in ("'''", "''", "'''''"):
            yield mwparserfromhell.nodes.Text("")
            yield from flat_nodes(node.contents)
        else:
            yield node


def fold(text):
    """Case and accents ignored, as type= values and headings are compared."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).casefold().split())


def category(template_key, listing_type, open_headings, conventions):
    """The template's own category, else type='s, else the nearest enclosing heading's, else "other"."""
    own = dict(OWN_CATEGORY, **conventions.get("own", {}))
    if template_key in own:
        return own[template_key]
    types = dict(DEFAULT_TYPES, **conventions.get("types", {}))
    if listing_type and fold(listing_type) in types:
        return types[fold(listing_type)]
    sections = dict(DEFAULT_SECTIONS, **conventions.get("sections", {}))
    for _, _, title in reversed(open_headings):
        if fold(title) in sections:
            return sections[fold(title)]
    return "other"


def wiki_listings(path, conventions):
    text = open(path, encoding="utf-8").read()
    code = mwparserfromhell.parse(text)
    nodes = list(flat_nodes(code))
    # The section of each node: headings seen before it, and the chain of headings that enclose it.
    sections, chains, open_headings, number = [], [], [], 0
    for node in nodes:
        if isinstance(node, mwparserfromhell.nodes.Heading):
            number += 1
            while open_headings and open_headings[-1][1] >= node.level:
                open_headings.pop()
            open_headings.append((number, node.level, plain(node.title, {}) or ""))
        sections.append(number)
        chains.append(list(open_headings))
    parameters = {field: field for field in FIELDS}
    parameters.update({"lon": "long", "lng": "long"})
    parameters.update(conventions["parameters"])
    rows = []
    listing_positions = [i for i, node in enumerate(nodes)
                         if isinstance(node, mwparserfromhell.nodes.Template) and key(node.name) in conventions["templates"]]
    for number, index in enumerate(listing_positions):
        template = nodes[index]
        row = {"position": number + 1, "section": sections[index]}
        for field in FIELDS:
            row[field] = None
        listing_type = None
        for parameter in template.params:
            if not parameter.showkey:
                continue
            if key(parameter.name) == "type":
                listing_type = plain(parameter.value, conventions["inline"])
            field = parameters.get(key(parameter.name))
            if field is None:
                continue
            row[field] = plain(parameter.value, conventions["inline"], url=(field == "url"))
            if field in ("lat", "long") and row[field] is not None:
                try:
                    row[field] = float(row[field].replace(",", "."))
                except ValueError:
                    pass
        if row["description"] is None and conventions["trailing"]:
            # The text after the template on its line; none when another listing follows on the same line (then the
            # text between them joins two listings of one sentence).
            following = []
            stop = listing_positions[number + 1] if number + 1 < len(listing_positions) else len(nodes)
            ended = False
            for node in nodes[index + 1:stop]:
                piece = str(node)
                if isinstance(node, mwparserfromhell.nodes.Text) and "\n" in piece:
                    following.append(piece.split("\n", 1)[0])
                    ended = True
                    break
                following.append(piece)
            if not ended and stop < len(nodes):
                following = []
            trailing = plain("".join(following), conventions["inline"]) or ""
            trailing = trailing.lstrip(" :,.;–—-")
            row["description"] = trailing if re.search(r"\w", trailing) else None
        row["category"] = category(key(template.name), listing_type, chains[index], conventions)
        rows.append(row)
    return rows


def wiki_page(path, title, conventions):
    """The page's parent (the first parent template's first argument) and coordinates (the first geo template)."""
    code = mwparserfromhell.parse(open(path, encoding="utf-8").read())
    row = {"title": title, "parent": None, "lat": None, "long": None}
    for template in (node for node in flat_nodes(code) if isinstance(node, mwparserfromhell.nodes.Template)):
        name = key(template.name)
        if name in conventions["parent"] and row["parent"] is None and template.has("1"):
            parent = plain(template.get("1").value, {})
            row["parent"] = parent[:1].upper() + parent[1:] if parent else None
        elif name in conventions["geo"] and row["lat"] is None:
            latitude, longitude = conventions["geo"][name]
            for field, parameter in (("lat", latitude), ("long", longitude)):
                if template.has(parameter):
                    text = plain(template.get(parameter).value, {})
                    row[field] = float(text.replace(",", ".")) if text else None
    return [row]


def wiki_sections(path):
    """Headings in order: number from 1, level (the number of =), title as plain text, and the number of the nearest
    heading before it with a lower level (none for a top-level heading: the lead encloses nothing)."""
    code = mwparserfromhell.parse(open(path, encoding="utf-8").read())
    rows, open_levels = [{"number": 0, "level": 0, "title": None, "parent": None}], []
    headings = [node for node in flat_nodes(code) if isinstance(node, mwparserfromhell.nodes.Heading)]
    for number, heading in enumerate(headings, start=1):
        while open_levels and open_levels[-1][1] >= heading.level:
            open_levels.pop()
        parent = open_levels[-1][0] if open_levels else None
        rows.append({"number": number, "level": heading.level, "title": plain(heading.title, {}), "parent": parent})
        open_levels.append((number, heading.level))
    return rows


TAG_NAMES = {"see": "see", "do": "do", "buy": "buy", "eat": "eat", "drink": "drink", "sleep": "sleep", "listing": None}
TAG_FIELDS = ["name", "alt", "address", "directions", "phone", "email", "fax", "url", "hours", "price", "lat", "long",
              "description"]


def wiki_tags(path):
    """Wikitravel listing tags (`<see name="…">description</see>`) as mwparserfromhell reads them: attributes and the
    tag's contents as plain text; the category is the tag's own."""
    code = mwparserfromhell.parse(open(path, encoding="utf-8").read())
    rows = []
    for node in flat_nodes(code):
        if not isinstance(node, mwparserfromhell.nodes.Tag) or str(node.tag).lower() not in TAG_NAMES:
            continue
        row = {"position": len(rows) + 1, "category": TAG_NAMES[str(node.tag).lower()] or "other"}
        for field in TAG_FIELDS:
            row[field] = None
        for attribute in node.attributes:
            name = key(attribute.name)
            field = {"lon": "long", "lng": "long"}.get(name, name)
            if field in TAG_FIELDS and attribute.value is not None:
                row[field] = plain(attribute.value, {}, url=False)
        if node.contents is not None:
            text = plain(node.contents, {})
            row["description"] = text if text and re.search(r"\w", text) else None
        for field in ("lat", "long"):
            if row[field] is not None:
                row[field] = float(row[field])
        rows.append(row)
    return rows


# ---- transit XML ----------------------------------------------------------------------------------------------------

def nextbus(path):
    root = ElementTree.parse(path).getroot()
    stops, directions, points = [], [], []
    for route in root.iter("route"):
        for path in route.findall("path"):
            for point in path.findall("point"):
                points.append({"position": len(points) + 1, "lat": float(point.get("lat")), "lon": float(point.get("lon"))})
        for position, stop in enumerate(route.findall("stop"), start=1):
            stops.append({"position": position, "tag": stop.get("tag"), "title": stop.get("title"),
                          "lat": float(stop.get("lat")), "lon": float(stop.get("lon")), "stop_id": stop.get("stopId"),
                          "route": route.get("tag")})
        for direction in route.findall("direction"):
            for position, stop in enumerate(direction.findall("stop"), start=1):
                directions.append({"direction": direction.get("tag"), "direction_title": direction.get("title"),
                                   "stop": stop.get("tag"), "position": position})
    return {"stop": {"key": None, "rows": stops}, "direction_stop": {"key": None, "rows": directions},
            "path_point": {"key": "position", "rows": points}}


# ---- GTFS (quoted CSV) ----------------------------------------------------------------------------------------------

def gtfs(folder, files):
    tables = {}
    for table, file in files.items():
        with open(os.path.join(folder, file), newline="", encoding="utf-8") as handle:
            rows = [dict(row, file=file) for row in csv.DictReader(handle)]
        tables[table] = {"key": None, "rows": rows}
    return tables


# ---- KML ------------------------------------------------------------------------------------------------------------

KML = "{http://www.opengis.net/kml/2.2}"


def text_of(element):
    """An element's text without the comments inside it (`<coordinates>1,2 <!-- --> 3,4</coordinates>`)."""
    return "".join(element.itertext())


def coordinates(element):
    points = []
    for item in text_of(element).split():
        parts = item.split(",")
        points.append((float(parts[0]), float(parts[1])))
    return points


def positions(element):
    """Every position of a coordinates element, as GeoJSON writes them: [longitude, latitude(, altitude)]."""
    return [[float(part) for part in item.split(",")] for item in text_of(element).split()]


def shapes(element, ns):
    """The shapes of a geometry element as (GeoJSON, representative point, altitude) in document order, a
    MultiGeometry's (or MultiPolygon's…) members at any depth flattened; geometry elements Kiln does not map (Model, a
    LinearRing outside a Polygon) give none (Kiln reports each)."""
    tag = lxml.etree.QName(element).localname
    if tag == "Point":
        position = positions(element.find(f"{ns}coordinates"))[0]
        return [({"type": "Point", "coordinates": position}, tuple(position[:2]), position[2] if len(position) > 2 else None)]
    if tag == "LineString":
        line = element.find(f"{ns}coordinates")
        return [({"type": "LineString", "coordinates": positions(line)}, line_midpoint(coordinates(line)), None)]
    if tag == "Polygon":
        outer = element.find(f"{ns}outerBoundaryIs/{ns}LinearRing/{ns}coordinates")
        rings = [positions(outer)] + [positions(ring) for ring in element.findall(f"{ns}innerBoundaryIs/{ns}LinearRing/{ns}coordinates")]
        points = coordinates(outer)
        if len(points) > 1 and points[0] == points[-1]:
            points = points[:-1]
        return [({"type": "Polygon", "coordinates": rings}, polygon_centroid(points), None)]
    if tag in COLLECTIONS:
        return [shape for child in element if isinstance(child.tag, str) for shape in shapes(child, ns)]
    if tag == "Track":
        track = track_shape(element)
        return [track] if track else []
    if tag == "MultiTrack":
        tracks = [track for track in map(track_shape, local_children(element, "Track")) if track]
        if not tracks:
            return []
        lines = [[t[0]["coordinates"]] if t[0]["type"] == "Point" else t[0]["coordinates"] for t in tracks]
        return [({"type": "MultiLineString", "coordinates": lines}, tracks[0][1], tracks[0][2])]
    return []


def local_children(element, name):
    return [child for child in element if isinstance(child.tag, str) and lxml.etree.QName(child).localname == name]


def track_shape(element):
    """A gx:Track as (GeoJSON, point, altitude): a LineString through its gx:coord positions ("lon lat alt"), a
    Point when it has one; None when it has none."""
    points = [[float(part) for part in coord.text.split()] for coord in local_children(element, "coord")]
    if not points:
        return None
    if len(points) == 1:
        return ({"type": "Point", "coordinates": points[0]}, tuple(points[0][:2]), points[0][2] if len(points[0]) > 2 else None)
    return ({"type": "LineString", "coordinates": points}, line_midpoint([tuple(p[:2]) for p in points]), None)


def track_times(element):
    """A gx:Track's when texts, trimmed, when there are as many as positions; None otherwise."""
    times = [(when.text or "").strip() for when in local_children(element, "when")]
    return times if len(times) == len(local_children(element, "coord")) else None


def timestamps(element):
    """The timestamps Kiln gives a geometry element: a track's times, an array per track of a gx:MultiTrack, an array
    per member of a collection holding tracks (null for the others); None otherwise."""
    tag = lxml.etree.QName(element).localname
    if tag == "Track":
        return track_times(element)
    if tag == "MultiTrack":
        return [track_times(track) for track in local_children(element, "Track") if local_children(track, "coord")]
    if tag in COLLECTIONS:
        members = [child for child in element.iter() if isinstance(child.tag, str)
                   and lxml.etree.QName(child).localname in {"Point", "LineString", "Polygon", "Track", "MultiTrack"}
                   and not any(lxml.etree.QName(a).localname in {"Track", "MultiTrack"} for a in child.iterancestors())]
        times = [timestamps(member) if lxml.etree.QName(member).localname in {"Track", "MultiTrack"} else None for member in members]
        return times if any(t is not None for t in times) else None
    return None


COLLECTIONS = {"MultiGeometry": None, "MultiPolygon": "Polygon", "MultiLineString": "LineString", "MultiPoint": "Point"}
GEOMETRY_TAGS = {"Point", "LineString", "Polygon", "LinearRing", "Model", "Track", "MultiTrack"} | set(COLLECTIONS)


def geometry(placemark, ns):
    """The placemark's geometry (its first geometry element) as (type, GeoJSON, point, altitude); a MultiGeometry is
    one flat GeometryCollection whose point is its first polygon's, else its first line's, else its first point's."""
    for child in placemark:
        if not isinstance(child.tag, str) or lxml.etree.QName(child).localname not in GEOMETRY_TAGS:
            continue
        found = shapes(child, ns)
        if not found:
            return None, None, None, None
        tag = lxml.etree.QName(child).localname
        if tag not in COLLECTIONS:
            shape, point, altitude = found[0]
            return tag if tag in {"Track", "MultiTrack"} else shape["type"], shape, point, altitude
        chosen = next((item for kind in ("Polygon", "LineString", "Point") for item in found if item[0]["type"] == kind), found[0])
        member = COLLECTIONS[tag]
        if member and all(item[0]["type"] == member for item in found):
            return tag, {"type": tag, "coordinates": [item[0]["coordinates"] for item in found]}, chosen[1], chosen[2]
        collection = {"type": "GeometryCollection", "geometries": [item[0] for item in found]}
        return tag, collection, chosen[1], chosen[2]
    return None, None, None, None


def geometry_timestamps(placemark):
    """The timestamps of the placemark's geometry (its first geometry element), as JSON text; None without."""
    for child in placemark:
        if isinstance(child.tag, str) and lxml.etree.QName(child).localname in GEOMETRY_TAGS:
            times = timestamps(child)
            return None if times is None else json.dumps(times, separators=(",", ":"), ensure_ascii=False)
    return None


def polygon_centroid(ring):
    """The area-weighted centroid of a ring (shoelace formula on longitude and latitude), computed relative to the
    first vertex: a building's area in square degrees is about 1e-8, which the raw formula loses to cancellation."""
    ox, oy = ring[0]
    shifted = [(x - ox, y - oy) for x, y in ring]
    area = cx = cy = 0.0
    for (x0, y0), (x1, y1) in zip(shifted, shifted[1:] + shifted[:1]):
        cross = x0 * y1 - x1 * y0
        area += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if area == 0:
        return (sum(p[0] for p in ring) / len(ring), sum(p[1] for p in ring) / len(ring))
    return (ox + cx / (3 * area), oy + cy / (3 * area))


def haversine(a, b):
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(min(1.0, h)))


def line_midpoint(line):
    """The point halfway along a line, measured with haversine between its vertices, interpolated linearly."""
    lengths = [haversine(a, b) for a, b in zip(line, line[1:])]
    half = sum(lengths) / 2
    for (a, b), length in zip(zip(line, line[1:]), lengths):
        if half <= length and length > 0:
            t = half / length
            return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
        half -= length
    return line[-1]


def description_text(raw):
    if raw is None or not raw.strip():
        return None
    fragment = lxml.html.fragment_fromstring(raw, create_parent="div")
    for br in fragment.iter("br"):
        br.tail = "\n" + (br.tail or "")
    return collapse(fragment.text_content())


def kml(path):
    """One row per placemark. The namespace is the document's own: KML 2.2's, Google Earth's older one, or none (Kiln
    matches KML elements by local name)."""
    tree = lxml.etree.parse(path)
    root = tree.getroot()
    ns = "{%s}" % lxml.etree.QName(root).namespace if lxml.etree.QName(root).namespace else ""
    rows = []
    has_tracks = bool(root.xpath("//*[local-name()='Track']"))
    for ordinal, placemark in enumerate(tree.iter(ns + "Placemark"), start=1):
        folders = [collapse(folder.findtext(ns + "name")) for folder in placemark.iterancestors(ns + "Folder")]
        row = {"position": ordinal, "name": collapse(placemark.findtext(ns + "name")),
               "folder": " / ".join(reversed([f for f in folders if f])) or None,
               "style": collapse(placemark.findtext(ns + "styleUrl")),
               "description": description_text(placemark.findtext(ns + "description")),
               "media": collapse(placemark.findtext(f"{ns}ExtendedData/{ns}Data[@name='gx_media_links']/{ns}value"))}
        kind, shape, point, altitude = geometry(placemark, ns)
        row["geometry_type"] = kind
        row["geometry"] = json.dumps(shape) if shape else None
        row["lon"], row["lat"] = point if point else (None, None)
        row["altitude"] = altitude
        if has_tracks:
            row["timestamps"] = geometry_timestamps(placemark)
        rows.append(row)
    return {"place": {"key": "position", "rows": rows}}


# ---- HTML -----------------------------------------------------------------------------------------------------------

def html(folder):
    def page(name):
        with open(os.path.join(folder, name), "rb") as handle:
            return lxml.html.document_fromstring(handle.read())

    def text(nodes):
        return collapse(" ".join(node if isinstance(node, str) else node.text_content() for node in nodes)) if nodes else None

    stations = []
    for ordinal, row in enumerate(page("stations.html").xpath("//tr[td[@class='colLabel']]"), start=1):
        stations.append({"position": ordinal, "minutes": text(row.xpath("td[@class='colMin']")),
                         "station": text(row.xpath("td[@class='colLabel']")),
                         "link": text(row.xpath("td[@class='colLabel']/a/@href")),
                         "pdf": text(row.xpath("td[@class='colPdf']/a/@href"))})
    departures = []
    for ordinal, row in enumerate(page("timetable.html").xpath("//tr[@class='odd' or @class='even'][td[@valign='top']]"), start=1):
        departures.append({"position": ordinal, "hour": text(row.xpath("td[1]")), "minutes": text(row.xpath("td[2]"))})
    return {"line_stop": {"key": "position", "rows": stations}, "departure": {"key": "position", "rows": departures}}


KML_INPUTS = {
    "kml-fdu-campus": "campus.kml",
    "kml-tbilisi-mymaps": "tbilisi.kml",
    "kml-openlayers-krasnaya-polyana": "KrasnayaPolyanaResort.kml",
    "kml-openskimap-lenk": "openskimap-part.kml",
    "kml-openlayers-flight-tracks": "kml-track-part.kml",
}


def main():
    name, folder = sys.argv[1], sys.argv[2]
    if name in WIKI_INPUTS:
        file, conventions = WIKI_INPUTS[name]
        path = os.path.join(folder, file)
        tables = {"listing": {"key": "position", "rows": wiki_listings(path, conventions)},
                  "page": {"key": "title", "rows": wiki_page(path, os.path.splitext(file)[0], conventions)},
                  "section": {"key": "number", "rows": wiki_sections(path)}}
    elif name in WIKI_FILE_SETS:
        files, conventions = WIKI_FILE_SETS[name]
        rows = []
        for file in files:
            for row in wiki_listings(os.path.join(folder, file), conventions):
                title = os.path.splitext(file)[0].replace("_", " ")
                rows.append(dict(page=title[:1].upper() + title[1:], **row))
        tables = {"listing": {"key": "position", "rows": rows}}
    elif name == "wikitravel-listing-tags":
        rows = []
        for file in ["Dalat.wikicode", "Eat-tags.wikicode"]:
            rows += [dict(page=os.path.splitext(file)[0], **row) for row in wiki_tags(os.path.join(folder, file))]
        tables = {"listing": {"key": "position", "rows": rows}}
    elif name == "nextbus-actransit-22":
        tables = nextbus(os.path.join(folder, "routeConfig.xml"))
    elif name in KML_INPUTS:
        tables = kml(os.path.join(folder, KML_INPUTS[name]))
    elif name == "html-biel-bus-latin1":
        tables = html(folder)
    elif name in json_fidelity.INPUTS:
        tables = json_fidelity.INPUTS[name](folder)
    elif name == "actransit-gtfs":
        tables = gtfs(folder, {"route": "routes.txt", "agency": "agency.txt"})
    else:
        sys.exit(f"fidelity.py: no oracle for {name}")
    json.dump({"tables": tables}, sys.stdout, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
