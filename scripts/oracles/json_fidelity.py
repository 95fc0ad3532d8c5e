"""Expected rows of the JSON inputs of the fidelity table, from Python's own json module (no code shared with Kiln's
streaming reader): the whole document is loaded, then walked the way each pipeline declares its records.

Conventions (docs/FIDELITY.md): numbers keep their text (parse_int and parse_float return the literal), true/false
are 1/0, null or an absent member is None, an object or array value is its compact JSON (keys in document order).
"""
import glob
import json
import os


class Number(str):
    """A number as its literal text in the file."""


def load(path):
    with open(path, encoding="utf-8-sig") as handle:
        return json.load(handle, parse_int=Number, parse_float=Number)


def compact(value):
    """Compact JSON of a value, numbers written as they were in the file."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(key, ensure_ascii=False) + ":" + compact(item) for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(compact(item) for item in value) + "]"
    if isinstance(value, Number):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def scalar(value):
    """A member's value as Kiln ships it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (dict, list)):
        return compact(value)
    return str(value)


def pannellum(folder):
    tour = load(os.path.join(folder, "example-tour.json"))
    default = tour["default"]
    tours = [{"author": default.get("author"), "first_scene": default.get("firstScene"),
              "fade": scalar(default.get("sceneFadeDuration")), "position": 1}]
    scenes, hotspots = [], []
    for number, (key, scene) in enumerate(tour["scenes"].items(), start=1):
        scenes.append({"id": key, "title": scene.get("title"), "type": scene.get("type"), "panorama": scene.get("panorama"),
                       "preview": scene.get("preview"), "cube_map": scalar(scene.get("cubeMap")), "position": number})
        for spot in scene.get("hotSpots", []):
            hotspots.append({"scene": key, "scene_title": scene.get("title"), "pitch": spot.get("pitch"), "yaw": spot.get("yaw"),
                             "type": spot.get("type"), "text": spot.get("text"), "url": spot.get("URL"),
                             "target": spot.get("sceneId"), "position": len(hotspots) + 1})
    return {"tour": {"key": "position", "rows": tours}, "scene": {"key": "id", "rows": scenes},
            "hotspot": {"key": "position", "rows": hotspots}}


def tate(folder):
    artworks, subjects = [], []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        art = load(path)
        artworks.append({"acno": art["acno"], "id": art.get("id"), "title": art.get("title"), "artists": art.get("all_artists"),
                         "acquired": art.get("acquisitionYear"), "date_text": art.get("dateText"),
                         "date_range": scalar(art.get("dateRange")), "medium": art.get("medium"),
                         "subject_count": art.get("subjectCount"), "width": art.get("width"), "height": art.get("height"),
                         "url": art.get("url")})
        ordinal = 0
        for category in art.get("subjects", {}).get("children", []):
            for parent in category.get("children", []):
                for subject in parent.get("children", []):
                    ordinal += 1
                    subjects.append({"artwork": art["acno"], "artwork_title": art.get("title"), "category": category.get("name"),
                                     "parent_id": parent.get("id"), "parent": parent.get("name"), "id": subject.get("id"),
                                     "name": subject.get("name"), "position": ordinal})
    return {"artwork": {"key": "acno", "rows": artworks}, "subject": {"key": "position", "rows": subjects}}


def wikidata(folder):
    response = load(os.path.join(folder, "wbgetentities-labels.json"))
    rows = []
    for key, entity in response["entities"].items():
        for language, label in entity.get("labels", {}).items():
            rows.append({"entity": key, "id": entity.get("id"), "type": entity.get("type"), "datatype": entity.get("datatype"),
                         "language_key": language, "language": label.get("language"), "value": label.get("value"),
                         "success": response.get("success"), "position": len(rows) + 1})
    return {"label": {"key": "position", "rows": rows}}


INPUTS = {"json-pannellum-tour": pannellum, "json-tate-artworks": tate, "json-wikidata-labels": wikidata}
