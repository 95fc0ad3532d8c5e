"""Oracle for Kiln's bundle bytes (kiln build's summary and report): where each page of a bundle goes, from
SQLite's dbstat virtual table and PRAGMA table_list, independently of Kiln.

Usage: bundle_bytes.py BUNDLE TABLE... -- VIRTUAL=OWNER...
Prints JSON: {"total": bytes, "other": bytes, "tables": {name: {"data", "index", "search", "spatial"}}}.
A table's own b-tree is data; an index on it (sqlite_schema.tbl_name) is index; the shadow tables SQLite itself
marks as such (table_list type 'shadow') belong to the virtual table whose name prefixes theirs: an fts module is
search, an rtree module spatial; the virtual table's owner is given on the command line (VIRTUAL=OWNER).
"""
import json
import re
import sqlite3
import sys

args = sys.argv[1:]
split = args.index("--") if "--" in args else len(args)
path, tables, owners = args[0], args[1:split], dict(a.split("=", 1) for a in args[split + 1:])
db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
page_size = db.execute("PRAGMA page_size").fetchone()[0]
total = page_size * db.execute("PRAGMA page_count").fetchone()[0]
kinds = {row[1]: row[2] for row in db.execute("PRAGMA table_list") if row[0] == "main"}
table_of = dict(db.execute("SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')"))
modules = {}
for name, sql in db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"):
    modules[name] = re.search(r"USING\s+(\w+)", sql).group(1).lower()
result = {t: {"data": 0, "index": 0, "search": 0, "spatial": 0} for t in tables}
counted = 0
for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
    counted += size
    owner_table = table_of.get(name, name)
    part = None
    if kinds.get(owner_table) == "shadow":
        virtual = max((v for v in modules if owner_table.startswith(v + "_")), key=len)
        owner = owners.get(virtual)
        part = "spatial" if modules[virtual].startswith("rtree") else "search"
    else:
        owner = owner_table
        part = "data" if owner_table == name else "index"
    if owner in result:
        result[owner][part] += size
other = total - sum(sum(v.values()) for v in result.values())
print(json.dumps({"total": total, "other": other, "tables": result}, sort_keys=True))
