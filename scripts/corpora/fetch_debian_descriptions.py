#!/usr/bin/env python3
"""Build the Debian package-description evaluation corpus.

Source: the apt lists of this machine (Debian bookworm, bookworm-updates,
bookworm-security; main). Package descriptions are part of each package's debian/control
and are distributed under the licence of the respective package (DFSG-free).

Reads /var/lib/apt/lists/*Translation-en* (running `apt-get update -o
Acquire::Languages=en` first if there are none) and /var/lib/apt/lists/*Packages*
(package -> `Source:` package; default = the package name). Lists may be plain, .gz,
.xz, .bz2, .lz4 or .zst (.lz4/.zst via apt-helper cat-file or lz4cat/zstdcat).

One JSONL line per (package, Description-md5):
  key   = package name; if the same package has further *different* descriptions
          (e.g. bookworm-security vs bookworm), those get key "package@<md5[:8]>"
  label = source package (binary packages built from one source share a label;
          their descriptions are often near-duplicates)
  text  = short description, then the long description (one leading space removed,
          " ." lines -> blank lines)
Texts with fewer than 10 whitespace-separated words are skipped.

Usage: fetch_debian_descriptions.py OUT.jsonl [--no-update] [--min-words 10]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # keep scripts/corpora free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpuslib import (  # noqa: E402
    JsonlWriter, Timer, apt_update, deb822_stanzas, glob_lists, log,
    open_text_maybe_compressed, word_count,
)


def translation_files() -> list[str]:
    files = [f for f in glob_lists("*Translation-en*") if not f.endswith(".diff")]
    # the glob could match both X and X.gz if apt kept several; keep one per base name
    seen: dict[str, str] = {}
    for f in files:
        base = f.rsplit("Translation-en", 1)[0]
        seen.setdefault(base, f)
    return sorted(seen.values())


def packages_files() -> list[str]:
    files = [f for f in glob_lists("*_Packages*") if not f.endswith(".diff")]
    seen: dict[str, str] = {}
    for f in files:
        seen.setdefault(f.rsplit("_Packages", 1)[0], f)
    return sorted(seen.values())


def source_map() -> dict[str, str]:
    m: dict[str, str] = {}
    for f in packages_files():
        n = 0
        with open_text_maybe_compressed(f) as fh:
            for st in deb822_stanzas(fh):
                pkg = st.get("Package")
                if not pkg:
                    continue
                src = st.get("Source", "").split(" ")[0].strip() or pkg
                m.setdefault(pkg, src)
                n += 1
        log(f"{f}: {n} package stanzas")
    return m


def description_text(raw: str) -> str:
    lines = raw.split("\n")
    out = [lines[0].strip()]
    for line in lines[1:]:
        line = line[1:] if line.startswith(" ") else line.lstrip("\t")
        out.append("" if line.strip() == "." else line.rstrip())
    return "\n".join(out).strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--no-update", action="store_true")
    ap.add_argument("--min-words", type=int, default=10)
    args = ap.parse_args()
    t = Timer()

    if not translation_files() and not args.no_update:
        apt_update(languages="en")
    tfiles = translation_files()
    if not tfiles:
        sys.exit("error: no /var/lib/apt/lists/*Translation-en* files "
                 "(run: apt-get update -o Acquire::Languages=en)")
    srcmap = source_map()

    stats: collections.Counter[str] = collections.Counter()
    seen_md5: set[tuple[str, str]] = set()
    labels: collections.Counter[str] = collections.Counter()
    with JsonlWriter(args.out) as w:
        for f in tfiles:
            n = 0
            with open_text_maybe_compressed(f) as fh:
                for st in deb822_stanzas(fh):
                    pkg = st.get("Package")
                    raw = st.get("Description-en")
                    if not pkg or raw is None:
                        stats["stanzas without Package/Description-en"] += 1
                        continue
                    n += 1
                    md5 = st.get("Description-md5", "")
                    if (pkg, md5) in seen_md5:
                        stats["skipped: same package+md5 already seen"] += 1
                        continue
                    seen_md5.add((pkg, md5))
                    text = description_text(raw)
                    if word_count(text) < args.min_words:
                        stats[f"skipped: < {args.min_words} words"] += 1
                        continue
                    key = pkg if pkg not in w.keys else f"{pkg}@{md5[:8]}"
                    if key != pkg:
                        stats["extra descriptions of an already-seen package (key pkg@md5)"] += 1
                    src = srcmap.get(pkg)
                    if src is None:
                        stats["package not in amd64 Packages lists (label = package name)"] += 1
                        src = pkg
                    w.write({"key": key, "text": text, "label": src})
                    labels[src] += 1
            log(f"{f}: {n} description stanzas")
    for k in sorted(stats):
        print(f"{k}: {stats[k]}")
    multi = collections.Counter(min(v, 10) for v in labels.values())
    print("labels by group size: " + ", ".join(
        f"{'>=' if k == 10 else ''}{k}: {multi[k]}" for k in sorted(multi)))
    print(f"total written: {w.count} descriptions, {len(labels)} distinct source packages "
          f"-> {args.out}  [{t}]")


if __name__ == "__main__":
    main()
