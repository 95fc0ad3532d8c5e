"""Independent oracle for `kiln patch` / `kiln apply` (Python's sqlite3, not Kiln's code).

  apply-sql BUNDLE PATCH      runs the SQL patch one line at a time inside one transaction, as an Android app
                              would with execSQL (BEGIN/COMMIT lines skipped: the oracle owns the transaction)
  rows BUNDLE [SKIP...]       JSON of every table's rows, sorted, values typed; FTS5 and R*Tree tables by their
                              columns (no rowid), their shadow tables left out; tables named in SKIP left out
  search BUNDLE SQL...        JSON of each query's rows, sorted
  digest BUNDLE TABLE...      the content digest of docs/guide/updates.md, computed from its definition
"""
import hashlib
import json
import sqlite3
import struct
import sys


def typed(value):
    if value is None:
        return ["null"]
    if isinstance(value, int):
        return ["integer", value]
    if isinstance(value, float):
        return ["real", value.hex()]
    if isinstance(value, bytes):
        return ["blob", value.hex()]
    return ["text", value]


def schema(db):
    entries = db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall()
    virtual = {name for name, sql in entries if sql and sql.upper().startswith("CREATE VIRTUAL TABLE")}
    shadows = {name for name, _ in entries for v in virtual if name.startswith(v + "_") and name != v}
    return [name for name, _ in entries], virtual, shadows


def rows(path, skip):
    db = sqlite3.connect(path)
    names, virtual, shadows = schema(db)
    out = {}
    for name in sorted(names):
        if name in shadows or name in skip:
            continue
        columns = [row[1] for row in db.execute(f'PRAGMA table_info("{name}")')]
        select = ", ".join(f'"{c}"' for c in columns)
        values = [[typed(v) for v in row] for row in db.execute(f'SELECT {select} FROM "{name}"')]
        out[name] = {"columns": columns, "rows": sorted(values, key=json.dumps)}
    version = db.execute("PRAGMA user_version").fetchone()[0]
    return {"tables": out, "user_version": version}


def apply_sql(path, patch):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    try:
        with open(patch, encoding="utf-8") as lines:
            for line in lines:
                statement = line.rstrip("\n")
                if statement in ("BEGIN IMMEDIATE;", "COMMIT;") or not statement:
                    continue
                db.execute(statement)
        db.execute("COMMIT")
    except Exception:
        db.execute("ROLLBACK")
        raise


def digest(path, tables):
    db = sqlite3.connect(path)
    db.text_factory = bytes
    summary = b"kiln-content-1\n"
    for name in sorted(tables):
        info = list(db.execute(f'PRAGMA table_info("{name}")'))
        columns = [row[1].decode() for row in info]
        key = [row[1].decode() for row in sorted((r for r in info if r[5] > 0), key=lambda r: r[5])] or columns
        table = hashlib.sha256()

        def text(value):
            table.update(b"T" + struct.pack(">Q", len(value)) + value)
        text(name.encode())
        for column in columns:
            text(column.encode())
        order = ", ".join(f'"{c}"' for c in key)
        select = ", ".join(f'typeof("{c}"), "{c}"' for c in columns)
        for row in db.execute(f'SELECT {select} FROM "{name}" ORDER BY {order}'):
            for kind, value in zip(row[0::2], row[1::2]):
                if value is None:
                    table.update(b"N")
                elif isinstance(value, int):
                    table.update(b"I" + struct.pack(">q", value))
                elif isinstance(value, float):
                    table.update(b"R" + struct.pack(">d", value))
                else:
                    table.update((b"T" if kind == b"text" else b"B") + struct.pack(">Q", len(value)) + value)
        summary += name.encode() + b"\t" + table.hexdigest().encode() + b"\n"
    return hashlib.sha256(summary).hexdigest()


def main(argv):
    command = argv[1]
    if command == "apply-sql":
        apply_sql(argv[2], argv[3])
    elif command == "rows":
        print(json.dumps(rows(argv[2], set(argv[3:])), ensure_ascii=False, sort_keys=True))
    elif command == "search":
        db = sqlite3.connect(argv[2])
        print(json.dumps([sorted([[typed(v) for v in row] for row in db.execute(q)], key=json.dumps) for q in argv[3:]], ensure_ascii=False))
    elif command == "digest":
        print(digest(argv[2], argv[3:]))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
