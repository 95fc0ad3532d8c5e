#!/usr/bin/env python3
"""Oracle for Kiln's `fold` and `nfc` normalizers (TextFolding), from Python's own Unicode database.

Reads a JSON array of strings on stdin; prints a JSON array with, for each, [reference, rule, nfc, known, divergent]:
- reference: the `fold` of scripts/bench-data/e2e/reference.py (NFD of lower(), combining marks dropped, NFC,
  final sigma as sigma, white space collapsed);
- rule: Kiln's documented fold written over Python's database: NFD, the marks (Mn, Me, ZWNJ) after a base
  below U+0510 and the marks below U+0510 after any base dropped (a mark with no base before it is a base), full case folding (casefold), NFC, white space
  collapsed;
- nfc: unicodedata.normalize("NFC");
- known: whether every character is assigned in Python's Unicode version (others may differ from ICU's);
- divergent: whether the text has what the two folds treat differently by design: a character whose case folding
  is not its lower case but for accents and final sigma (ß, ligatures, ϐ…), a mark at or above U+0510 after a base at or above U+0510 (kana voicing
  marks, Hebrew points, Indic nukta, Thai tone marks), a mark with no base before it, or a character that is a
  mark by one definition and not the other (combining class 0 marks such as U+034F and U+20DD; spacing marks with
  a combining class such as U+1D165).
"""
import json
import sys
import unicodedata

ZWNJ = "\u200c"


def reference_fold(text):
    decomposed = unicodedata.normalize("NFD", text.lower())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(unicodedata.normalize("NFC", stripped).replace("ς", "σ").split())


def rule_fold(text):
    kept, has_base, alphabetic = [], False, False
    for c in unicodedata.normalize("NFD", text):
        extends = is_mark(c)
        if extends and has_base:
            if alphabetic or ord(c) < 0x510:
                continue
        else:
            has_base, alphabetic = True, ord(c) < 0x510
        kept.append(c)
    return " ".join(unicodedata.normalize("NFC", "".join(kept).casefold()).split())


def is_mark(c):
    return unicodedata.category(c) in ("Mn", "Me") or c == ZWNJ


def bare(text):
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def divergent(text):
    decomposed = unicodedata.normalize("NFD", text)
    if any(c != "ς" and not is_mark(c) and bare(c.casefold()) != bare(c.lower()) for c in decomposed):
        return True
    base = None
    for c in decomposed:
        if (unicodedata.combining(c) != 0) != is_mark(c):
            return True
        if is_mark(c):
            if base is None or (ord(base) >= 0x510 and ord(c) >= 0x510):
                return True
        else:
            base = c
    return False


def main():
    texts = json.load(sys.stdin)
    json.dump([[reference_fold(t), rule_fold(t), unicodedata.normalize("NFC", t),
                all(unicodedata.category(c) != "Cn" for c in t), divergent(t)] for t in texts], sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
