"""Which service periods (and line-period links) of bundle OLD are gone from bundle NEW, by content: a period is
its (days, from_min, until_min, frequency), whatever its id. Prints {"timetable": n, "line_timetable": m} as JSON."""
import json
import sqlite3
import sys

PERIOD = "t.days, t.from_min, t.until_min, t.frequency"


def periods(path):
    db = sqlite3.connect(path)
    alone = set(db.execute(f"SELECT {PERIOD} FROM timetable AS t"))
    linked = set(db.execute(f"SELECT lt.line_id, {PERIOD} FROM line_timetable AS lt JOIN timetable AS t ON t.id = lt.timetable_id"))
    return alone, linked


old, new = periods(sys.argv[1]), periods(sys.argv[2])
print(json.dumps({"timetable": len(old[0] - new[0]), "line_timetable": len(old[1] - new[1]),
                  "timetable_added": len(new[0] - old[0]), "line_timetable_added": len(new[1] - old[1])}, sort_keys=True))
