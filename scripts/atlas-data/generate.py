#!/usr/bin/env python3
"""Writes the atlas sample (raw/atlas): one species page per species as the mushroom site served it (two in legacy
Czech code pages), the author's hand-typed legacy SQL script, and a small generated JPEG per species.
Run with the oracle environment's Python (it needs Pillow): .build/oracles/bin/python scripts/atlas-data/generate.py
The output is committed; this script documents how it was made and can make it again."""
import html
import os
import sys

from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(__file__))
from species import SPECIES, LEGACY_ENCODINGS  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "raw", "atlas")

PAGE = """<!DOCTYPE html>
<html lang="cs">
<head>
<meta {meta}>
<title>{name} ({latin}) – Atlas hub</title>
</head>
<body>
<div id="menu"><a href="/">Atlas hub</a> | <a href="/jedle/">Jedlé</a> | <a href="/jedovate/">Jedovaté</a></div>
<article class="druh">
<h1 class="cesky">{name}</h1>
<p class="latinsky"><i>{latin}</i></p>
<table class="udaje">
<tr><th>Jedlost:</th><td class="jedlost">{status}</td></tr>
<tr><th>Doba růstu:</th><td class="doba">{season}</td></tr>
</table>
{synonyms}<h2>Popis</h2>
<p class="popis">{info}</p>
<h2>Výskyt</h2>
<p class="vyskyt">{grow}</p>
</article>
<div id="paticka">Fotografie a texty: Atlas hub</div>
</body>
</html>
"""


def page(latin, name, status, season, synonyms, info, grow, encoding):
    meta = ('charset="utf-8"' if encoding is None
            else f'http-equiv="Content-Type" content="text/html; charset={encoding}"')
    synonym_list = ""
    if synonyms:
        items = "".join(f'<li lang="{lang}">{html.escape(text)}</li>' for lang, text in synonyms)
        synonym_list = f'<h2>Další názvy</h2>\n<ul class="synonyma">{items}</ul>\n'
    text = PAGE.format(meta=meta, name=html.escape(name), latin=html.escape(latin), status=html.escape(status),
                       season=html.escape(season), synonyms=synonym_list, info=html.escape(info), grow=html.escape(grow))
    # A legacy code page lacks some characters (ISO-8859-2 has no en dash): the site wrote them as references.
    return text.encode(encoding or "utf-8", errors="xmlcharrefreplace")


# The author's legacy data differs from the pages where the author knew less, or typed it years ago.
LEGACY_STATUS = {"Suillellus luridus": "jedovatá", "Paxillus involutus": "jedlá"}
LEGACY_SEASON = {"Pleurotus ostreatus": (10, 3)}
LEGACY_LATIN = {"Neoboletus erythropus": "Boletus erythropus", "Imleria badia": "Xerocomus badius"}
LEGACY_MISSING = {"Inosperma erubescens", "Gyromitra esculenta", "Trametes versicolor", "Fomes fomentarius"}
LEGACY_EXTRA = [("Lysohlávka kopinatá", "Psilocybe semilanceata", "jedovatá", 8, 11,
                 "Drobná houba se špičatým kloboučkem.", "Pastviny a louky.")]

ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]
STATUS_WORD = {"jedl": "jedlá", "nejedl": "nejedlá", "jedovat": "jedovatá"}


def plain_status(text):
    folded = text.lower()
    if "nejedl" in folded:
        return "nejedlá"
    if "jedovat" in folded:
        return "jedovatá"
    return "jedlá"


def season_months(text):
    # Only for the sample's own texts; Kiln's month normalizer is tested on its own.
    names = {"ledna": 1, "února": 2, "března": 3, "dubna": 4, "května": 5, "června": 6, "července": 7, "srpna": 8,
             "září": 9, "října": 10, "listopadu": 11, "prosince": 12, "červen": 6, "říjen": 10, "červenec": 7,
             "listopad": 11, "květen": 5}
    if text == "celoročně":
        return 1, 12
    parts = [p for p in text.replace("–", " ").replace(" až ", " ").replace(" do ", " ").replace("od ", "").split() if p]
    months = [ROMAN.index(p) + 1 if p in ROMAN else names[p] for p in parts]
    return months[0], months[-1]


def sql_text(text):
    return "'" + text.replace("'", "''") + "'"


def legacy_script():
    lines = ["-- Atlas hub: druhy hub, přepsané ručně z webu (verze 3)",
             "CREATE TABLE Mushrooms (name TEXT, latin TEXT, status TEXT, grow_from INTEGER, grow_to INTEGER,",
             "                        mushroom_info TEXT, grow_info TEXT);",
             "BEGIN TRANSACTION;"]
    rows = []
    for latin, name, status, season, _, info, grow in SPECIES:
        if latin in LEGACY_MISSING:
            continue
        start, end = LEGACY_SEASON.get(latin, season_months(season))
        rows.append((name, LEGACY_LATIN.get(latin, latin), LEGACY_STATUS.get(latin, plain_status(status)), start, end, info, grow))
    rows += LEGACY_EXTRA
    for name, latin, status, start, end, info, grow in rows:
        lines.append(f"INSERT INTO Mushrooms VALUES ({sql_text(name)}, {sql_text(latin)}, {sql_text(status)}, {start}, {end},")
        lines.append(f"    {sql_text(info)}, {sql_text(grow)});")
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n"


COLOURS = {"jedlá": (196, 160, 90), "nejedlá": (150, 150, 150), "jedovatá": (200, 60, 50)}


def photo(index, status):
    width, height = 64 + (index * 7) % 40, 48 + (index * 5) % 24
    image = Image.new("RGB", (width, height), (230, 236, 220))
    draw = ImageDraw.Draw(image)
    draw.rectangle([width // 2 - 3, height // 2, width // 2 + 3, height - 6], fill=(240, 235, 220))
    draw.ellipse([width // 4, height // 5, 3 * width // 4, height // 2 + 4], fill=COLOURS[plain_status(status)])
    return image


def main():
    os.makedirs(os.path.join(ROOT, "pages"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "photos"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "legacy"), exist_ok=True)
    for index, (latin, name, status, season, synonyms, info, grow) in enumerate(SPECIES):
        slug = latin.lower().replace(" ", "-")
        with open(os.path.join(ROOT, "pages", slug + ".html"), "wb") as out:
            out.write(page(latin, name, status, season, synonyms, info, grow, LEGACY_ENCODINGS.get(latin)))
        photo(index, status).save(os.path.join(ROOT, "photos", latin.replace(" ", "_") + ".jpg"), quality=80)
    with open(os.path.join(ROOT, "legacy", "atlas.sql"), "w", encoding="utf-8") as out:
        out.write(legacy_script())


if __name__ == "__main__":
    main()
