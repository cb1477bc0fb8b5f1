#!/usr/bin/env python3
"""Long-document corpus: full-length real prose (10-60 KB per document) with planted edited copies.

Sources (Debian bookworm, fetched at run time with `apt-get download` + `dpkg-deb -x` into
data/cache/, never committed):
  * perl-doc: the POD manuals (/usr/share/perl/*/pod/*.pod and the .pod/.pm files of the core
    modules), rendered to plain text with `pod2text` (perl's own renderer, part of `perl`).
    Licence: Perl's (GPL-1+ or Artistic).
  * python3-doc (optional, --python): the reStructuredText sources of the Python manuals
    (/usr/share/doc/python3*/html/_sources/**/*.rst.txt). Licence: PSF-2.0.

Documents: every rendered file of 10-60 KB is one document; a longer file is cut at paragraph
breaks (blank lines) into pieces of 20-60 KB (a remainder under 10 KB joins the last piece);
shorter files are skipped. Keys: `perl/<path>` or `python/<path>`, with `#<piece>` for pieces.
Label: the source file, so the pieces of one manual share it.

Planted pairs: a seeded sample of --dup-fraction of the documents gets one edited copy each,
written right after the source, with word-level insert/delete/replace at --edit-rate (1% by
default: 0.01 x the words, at least one edit; the inserted/replacing words come from the
corpus's own vocabulary). The copy's key is `<source key>~edit`; the truth file holds one line
per pair: {"a": source key, "b": copy key, "edit_rate": r}, the format examples/perf and
examples/peer_gaoya read.

Usage:
  python3 scripts/corpora/make_long.py --out data/long/long.jsonl --truth data/long/long.truth.jsonl \
      [--python] [--dup-fraction 0.25] [--edit-rate 0.01] [--seed 36]

Deterministic for given packages, options and seed. Python 3.11 stdlib + dpkg-deb + pod2text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpuslib as cl  # noqa: E402

MIN_BYTES = 10_000
MAX_BYTES = 60_000
PIECE_BYTES = 24_000  # a long file is cut into pieces of about this size (20-60 KB)

def pieces(text: str) -> list[str]:
    """The 10-60 KB documents of one rendered file (see the module docs)."""
    n = len(text.encode("utf-8"))
    if n < MIN_BYTES:
        return []
    if n <= MAX_BYTES:
        return [text]
    out: list[str] = []
    cur: list[str] = []
    size = 0
    for para in re.split(r"\n\s*\n", text):
        b = len(para.encode("utf-8")) + 2
        if size >= PIECE_BYTES and size + b > MAX_BYTES // 2:
            out.append("\n\n".join(cur))
            cur, size = [], 0
        cur.append(para)
        size += b
    if cur:
        rest = "\n\n".join(cur)
        if out and len(rest.encode("utf-8")) < MIN_BYTES:
            out[-1] = out[-1] + "\n\n" + rest
        else:
            out.append(rest)
    return [p for p in out if MIN_BYTES <= len(p.encode("utf-8")) <= MAX_BYTES]


def perl_docs() -> list[tuple[str, str]]:
    deb = cl.apt_download("perl-doc")
    root = cl.dpkg_extract(deb, cl.CACHE_DIR / "long" / "perl-doc")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".pod", ".pm"))
    cl.log(f"perl-doc: {len(files)} POD/PM files, rendering with pod2text")
    docs = []
    for p in files:
        r = subprocess.run(["pod2text", "--loose", str(p)], capture_output=True)
        text = r.stdout.decode("utf-8", errors="replace").strip()
        if r.returncode == 0 and text:
            docs.append((f"perl/{p.relative_to(root)}", text))
    return docs


def python_docs() -> list[tuple[str, str]]:
    deb = cl.apt_download("python3-doc")
    root = cl.dpkg_extract(deb, cl.CACHE_DIR / "long" / "python3-doc")
    # python3-doc depends on python3.X-doc, which holds the files.
    docs = []
    for pkg_deb in [deb] + [cl.apt_download(d) for d in python_doc_versions(root)]:
        sub = cl.dpkg_extract(pkg_deb, cl.CACHE_DIR / "long" / pkg_deb.stem)
        for p in sorted(sub.rglob("*.rst.txt")):
            text = p.read_text(encoding="utf-8", errors="replace").strip()
            docs.append((f"python/{p.relative_to(sub)}", text))
    return docs


def python_doc_versions(root: Path) -> list[str]:
    r = subprocess.run(["apt-cache", "depends", "python3-doc"], capture_output=True, text=True)
    return sorted({m.group(1) for m in re.finditer(r"Depends: (python3\.\d+-doc)", r.stdout)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--python", action="store_true", help="add python3-doc's manuals")
    ap.add_argument("--dup-fraction", type=float, default=0.25)
    ap.add_argument("--edit-rate", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=36)
    args = ap.parse_args()
    t = cl.Timer()

    sources = perl_docs() + (python_docs() if args.python else [])
    docs: list[tuple[str, str, str]] = []  # key, text, label
    for key, text in sources:
        ps = pieces(text)
        for i, piece in enumerate(ps):
            docs.append((key if len(ps) == 1 else f"{key}#{i}", piece, key))
    pool = sorted({w for _, text, _ in docs for w in text.split() if w.isalpha() and 3 <= len(w) <= 12})
    rng = random.Random(args.seed)
    planted = set(rng.sample(range(len(docs)), round(args.dup_fraction * len(docs))))

    out_p, truth_p = Path(args.out), Path(args.truth)
    truth_p.parent.mkdir(parents=True, exist_ok=True)
    nbytes = pairs = 0
    with cl.JsonlWriter(out_p) as out, open(str(truth_p) + ".tmp", "w", encoding="utf-8") as truth:
        for i, (key, text, label) in enumerate(docs):
            out.write({"key": key, "text": text, "label": label})
            nbytes += len(text.encode("utf-8"))
            if i in planted:
                copy = cl.edit_copy(text, args.edit_rate, random.Random(args.seed * 1_000_003 + i), pool)
                out.write({"key": f"{key}~edit", "text": copy, "label": label})
                nbytes += len(copy.encode("utf-8"))
                truth.write(json.dumps({"a": key, "b": f"{key}~edit", "edit_rate": args.edit_rate}) + "\n")
                pairs += 1
        count = out.count
    os.replace(str(truth_p) + ".tmp", truth_p)
    cl.log(f"{count} docs ({len(docs)} sources + {pairs} edited copies), {nbytes / 1e6:.1f} MB, "
           f"mean {nbytes / max(count, 1):.0f} bytes -> {out_p}; {pairs} truth pairs -> {truth_p}  [{t}]")


if __name__ == "__main__":
    main()
