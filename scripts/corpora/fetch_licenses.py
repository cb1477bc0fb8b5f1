#!/usr/bin/env python3
"""Build the ScanCode licence-text evaluation corpus.

Source: PyPI licensedcode-data==32.1.0 (ScanCode LicenseDB texts, CC-BY-4.0,
(c) nexB Inc. and others). Downloaded with `pip download`, the wheel is read as a zip.

Emits one JSONL line per licensedcode/data/rules/*.RULE and
licensedcode/data/licenses/*.LICENSE file:
  key   = path relative to licensedcode/data/   (e.g. "rules/gpl-2.0_12.RULE")
  label = license_expression (rules) or key (licenses)
  text  = body after the YAML front matter (CRLF -> LF, surrounding whitespace stripped)
Empty bodies are skipped. Rules without a license_expression are the
`is_false_positive: yes` rules (text that looks like, but is not, a licence); they are
skipped unless --include-false-positives is given, then labelled "false-positive".

Usage: fetch_licenses.py OUT.jsonl [--wheel PATH] [--include-false-positives]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import zipfile
from pathlib import Path

sys.dont_write_bytecode = True  # keep scripts/corpora free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpuslib import CACHE_DIR, JsonlWriter, Timer, log  # noqa: E402

PKG = "licensedcode-data"
VERSION = "32.1.0"
PREFIX = "licensedcode/data/"


def fetch_dist() -> Path:
    dest = CACHE_DIR / "pypi"
    dest.mkdir(parents=True, exist_ok=True)
    pat = f"licensedcode_data-{VERSION}*"
    found = sorted(dest.glob(pat + ".whl")) or sorted(dest.glob(pat + ".tar.gz"))
    if not found:
        log(f"pip download {PKG}=={VERSION} -> {dest}")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
             f"{PKG}=={VERSION}", "-d", str(dest)],
            check=True,
        )
        found = sorted(dest.glob(pat + ".whl")) or sorted(dest.glob(pat + ".tar.gz"))
    if not found:
        sys.exit(f"error: pip download produced no {pat} in {dest}")
    return found[0]


def iter_members(dist: Path):
    """Yield (path relative to licensedcode/data/, bytes) for rules and licenses."""
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as z:
            for name in sorted(z.namelist()):
                i = name.find(PREFIX)
                if i < 0:
                    continue
                rel = name[i + len(PREFIX):]
                if _wanted(rel):
                    yield rel, z.read(name)
    else:  # sdist fallback
        import tarfile

        with tarfile.open(dist) as t:
            members = sorted((m for m in t.getmembers() if m.isfile()), key=lambda m: m.name)
            for m in members:
                i = m.name.find(PREFIX)
                if i < 0:
                    continue
                rel = m.name[i + len(PREFIX):]
                if _wanted(rel):
                    yield rel, t.extractfile(m).read()


def _wanted(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 2 and (
        (parts[0] == "rules" and parts[1].endswith(".RULE"))
        or (parts[0] == "licenses" and parts[1].endswith(".LICENSE"))
    )


def parse(raw: bytes) -> tuple[dict[str, str], str]:
    """Split '---\\n<front matter>\\n---\\n<body>' into (top-level scalar fields, body)."""
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    end = None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            end = i
            break
    if end is None:
        return {}, text.strip()
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        if not line or line[0] in " \t-#":
            continue
        k, sep, v = line.partition(":")
        if sep:
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            fields[k.strip()] = v
    return fields, "\n".join(lines[end + 1:]).strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--wheel", help="use this already-downloaded wheel/sdist instead of pip download")
    ap.add_argument("--include-false-positives", action="store_true")
    args = ap.parse_args()

    t = Timer()
    dist = Path(args.wheel) if args.wheel else fetch_dist()
    log(f"reading {dist}")
    stats: collections.Counter[str] = collections.Counter()
    labels: collections.Counter[str] = collections.Counter()
    with JsonlWriter(args.out) as w:
        for rel, raw in iter_members(dist):
            kind = rel.split("/")[0]
            fields, body = parse(raw)
            field = "license_expression" if kind == "rules" else "key"
            label = fields.get(field, "")
            if not body:
                stats[f"{kind}: skipped, empty body"] += 1
                continue
            if not label:
                if kind == "rules" and fields.get("is_false_positive") == "yes":
                    if not args.include_false_positives:
                        stats["rules: skipped, is_false_positive (no expression)"] += 1
                        continue
                    label = "false-positive"
                else:
                    stats[f"{kind}: skipped, no {field}"] += 1
                    continue
            w.write({"key": rel, "text": body, "label": label})
            stats[f"{kind}: written"] += 1
            labels[label] += 1
    for k in sorted(stats):
        print(f"{k}: {stats[k]}")
    multi = sum(1 for v in labels.values() if v > 1)
    print(f"total written: {w.count} texts, {len(labels)} distinct labels "
          f"({multi} labels with >1 text) -> {args.out}  [{t}]")


if __name__ == "__main__":
    main()
