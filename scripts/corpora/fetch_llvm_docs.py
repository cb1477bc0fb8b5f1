#!/usr/bin/env python3
"""Build the LLVM documentation-revisions evaluation corpus.

Source: Debian bookworm packages llvm-{13,14,15,16,19}-doc (LLVM docs, Apache-2.0 WITH
LLVM-exception; older files also under the legacy UIUC/NCSA licence). Each package is
fetched with `apt-get download`, unpacked with `dpkg-deb -x` under data/cache/, and every
Sphinx source copy under `**/_sources/**` ending in .txt (normally `*.rst.txt`) is emitted:
  key   = "llvm-NN/<path relative to _sources>"
  label = "<path relative to _sources>"   (same document across versions = same label,
                                           i.e. real revisions of one document)
  text  = file content (UTF-8, CRLF -> LF); empty/whitespace-only files are skipped.
Packages missing from the apt lists are skipped with a message.

By default the auto-generated AMDGPU operand snippets (`AMDGPU/gfx*_*.rst.txt`, ~3.8K tiny
template files whose names carry per-version suffixes/hashes, so the same content appears
under different labels across versions) are excluded: they would make up ~75% of the
corpus with unreliable labels. --include-amdgpu-operands keeps them.

Usage: fetch_llvm_docs.py OUT.jsonl [--versions 13 14 15 16 19] [--no-update] [--include-amdgpu-operands]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # keep scripts/corpora free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpuslib import (  # noqa: E402
    APT_CACHE, CACHE_DIR, JsonlWriter, Timer, apt_candidate, apt_download, apt_update,
    dpkg_extract, log,
)

DEFAULT_VERSIONS = ["13", "14", "15", "16", "19"]
AMDGPU_OPERAND = re.compile(r"(^|/)AMDGPU/gfx[0-9a-z]+_[^/]*$")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--versions", nargs="+", default=DEFAULT_VERSIONS)
    ap.add_argument("--no-update", action="store_true",
                    help="never run apt-get update, even if a package is unknown")
    ap.add_argument("--include-amdgpu-operands", action="store_true",
                    help="keep the auto-generated AMDGPU/gfx*_*.rst.txt operand snippets")
    args = ap.parse_args()
    t = Timer()

    pkgs = [f"llvm-{v}-doc" for v in args.versions]
    missing = [p for p in pkgs if apt_candidate(p) is None]
    if missing and not args.no_update:
        log(f"not in apt lists: {' '.join(missing)}; running apt-get update once")
        apt_update()
        missing = [p for p in pkgs if apt_candidate(p) is None]
    for p in missing:
        print(f"UNAVAILABLE: {p} is not in the apt lists, skipped")

    per_version: dict[str, int] = {}
    labels: collections.Counter[str] = collections.Counter()
    skipped_empty = 0
    skipped_amdgpu = 0
    with JsonlWriter(args.out) as w:
        for v, pkg in zip(args.versions, pkgs):
            if pkg in missing:
                continue
            deb = apt_download(pkg, APT_CACHE)
            root = dpkg_extract(deb, CACHE_DIR / "extract" / pkg)
            src_dirs = sorted(d for d in root.rglob("_sources") if d.is_dir())
            if not src_dirs:
                print(f"WARNING: {pkg}: no _sources directory in {deb.name}")
                continue
            n = 0
            for sd in src_dirs:
                for f in sorted(sd.rglob("*.txt")):
                    if not f.is_file():
                        continue
                    rel = f.relative_to(sd).as_posix()
                    if len(src_dirs) > 1:  # keep keys unique if a package ever ships several
                        rel = f"{sd.relative_to(root).parent.as_posix()}/{rel}"
                    if not args.include_amdgpu_operands and AMDGPU_OPERAND.search(rel):
                        skipped_amdgpu += 1
                        continue
                    text = f.read_bytes().decode("utf-8", errors="replace")
                    text = text.replace("\r\n", "\n")
                    if not text.strip():
                        skipped_empty += 1
                        continue
                    w.write({"key": f"llvm-{v}/{rel}", "text": text, "label": rel})
                    labels[rel] += 1
                    n += 1
            per_version[pkg] = n
            print(f"{pkg} ({deb.name}): {n} docs")
    hist = collections.Counter(labels.values())
    print(f"skipped empty: {skipped_empty}; skipped AMDGPU operand snippets: {skipped_amdgpu}")
    print("labels by number of versions: "
          + ", ".join(f"{k} versions: {hist[k]}" for k in sorted(hist)))
    print(f"total written: {w.count} docs, {len(labels)} distinct labels -> {args.out}  [{t}]")


if __name__ == "__main__":
    main()
