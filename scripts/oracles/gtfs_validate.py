"""Validates a GTFS feed (folder or .zip) with gtfs-guru and prints its notices as JSON:
{"errors": [{"code", "count", "message"}], "warnings": [...], "infos": [...]}.

usage: gtfs_validate.py FEED [YYYY-MM-DD]   (the date to validate as of, default today: whether the feed has
expired, or soon will, depends on it)"""
import json
import sys

import gtfs_guru

result = gtfs_guru.validate(sys.argv[1], date=sys.argv[2] if len(sys.argv) > 2 else None)
groups = {"errors": {}, "warnings": {}, "infos": {}}
for notice in result.notices:
    severity = str(getattr(notice, "severity", "")).lower()
    key = "errors" if "error" in severity else "warnings" if "warn" in severity else "infos"
    entry = groups[key].setdefault(notice.code, {"code": notice.code, "count": 0, "message": notice.message})
    entry["count"] += 1
print(json.dumps({key: sorted(value.values(), key=lambda e: e["code"]) for key, value in groups.items()}, ensure_ascii=False))
