#!/usr/bin/env python3
"""Checks that pointers to a doc's section name a heading that exists there.

A pointer is a doc path followed by a quoted section name or an anchor:
`docs/performance.md, "Methods"`, `docs/format.md ("Stored texts")`, `docs/serve.md#health`.
A quoted name matches a heading equal to it or starting with it (then a non-word character:
"Backups" matches "Backups (`fpdb backup DB DIR`, ...)"); an anchor matches a heading's GitHub
slug. Pointers split over two lines (comment wrapping) are found too.

Usage: python3 scripts/check_doc_refs.py   (from anywhere; exit 1 listing the broken ones)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCAN = ["src", "cli", "serve", "python/src", "python/fpdb", "python/tests", "tests", "scripts", "docs",
        "benches", "examples", "fuzz/fuzz_targets", "README.md", "ARCHITECTURE.md"]
EXTS = {".rs", ".py", ".pyi", ".md", ".sh", ".toml"}
# Not a path that is itself quoted (a file name in code: `open("docs/x.md")`).
REF = re.compile(r'(?<!["\w/])((?:docs/[\w./-]+|ARCHITECTURE|README)\.md)(?:(?:,\s*|\s+)\(?"([^"]+)"|#([\w-]+))')
CONT = re.compile(r'^\s*(?://[/!]?|#|\*)?\s*')  # a continued line, less its comment marker


def headings(doc):
    out, fenced = [], False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.*?)\s*$", line)):
            out.append(m.group(1))
    return out


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def matches(name, heads):
    return any(h == name or (h.startswith(name) and not h[len(name)].isalnum()) for h in heads)


def files():
    for entry in SCAN:
        p = ROOT / entry
        for f in [p] if p.is_file() else sorted(p.rglob("*")):
            if f.is_file() and f.suffix in EXTS and "/img/" not in str(f):
                yield f


def main():
    cache, broken, seen = {}, [], 0
    for f in files():
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            nxt = CONT.sub("", lines[i + 1]) if i + 1 < len(lines) else ""
            for m in REF.finditer(line + " " + nxt):
                if m.start() >= len(line):
                    continue  # starts on the next line: found there
                doc, name, anchor = m.group(1), m.group(2), m.group(3)
                target = ROOT / doc
                seen += 1
                if not target.is_file():
                    broken.append(f"{f.relative_to(ROOT)}:{i + 1}: {doc}: no such file")
                    continue
                heads = cache.setdefault(doc, headings(target))
                ok = matches(name, heads) if name else anchor in map(slug, heads)
                if not ok:
                    what = f'"{name}"' if name else f"#{anchor}"
                    broken.append(f"{f.relative_to(ROOT)}:{i + 1}: {doc} {what}: no such heading")
    for b in broken:
        print(b)
    print(f"{seen} doc references, {len(broken)} broken", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
