#!/usr/bin/env python3
"""ICU's own order (PyICU): reads names, one a line, from stdin; prints them sorted by ICU's collator for the locale
given as the first argument, each as `name<TAB>hex sort key`."""
import sys

import icu

collator = icu.Collator.createInstance(icu.Locale(sys.argv[1]))
names = [line.rstrip("\n") for line in sys.stdin if line.strip()]
for name in sorted(names, key=collator.getSortKey):
    key = collator.getSortKey(name)
    if key.endswith(b"\0"):
        key = key[:-1]
    print(f"{name}\t{key.hex()}")
