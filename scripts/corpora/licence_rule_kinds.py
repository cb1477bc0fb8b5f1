#!/usr/bin/env python3
"""The kind of every ScanCode licence rule, for the containment evaluation (docs/containment.md).

Reads the same cached wheel as fetch_licenses.py (PyPI licensedcode-data==32.1.0, CC-BY-4.0,
(c) nexB Inc. and others; run fetch_licenses.py first) and writes one JSONL line per rule:
  {"key": "rules/gpl-2.0_12.RULE", "kind": "notice", "expression": "gpl-2.0"}
kind = the rule's first `is_license_*: yes` flag among notice, reference, text, tag, intro, clue
(else "other"). Keys match fetch_licenses.py's.

Usage: licence_rule_kinds.py OUT.jsonl [--wheel PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpuslib import CACHE_DIR  # noqa: E402

PREFIX = "licensedcode/data/"
KINDS = ["notice", "reference", "text", "tag", "intro", "clue"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--wheel")
    a = ap.parse_args()
    wheel = Path(a.wheel) if a.wheel else next(iter(sorted((CACHE_DIR / "pypi").glob("licensedcode_data-32.1.0*.whl"))), None)
    if wheel is None or not wheel.exists():
        sys.exit("error: no cached licensedcode-data wheel; run scripts/corpora/fetch_licenses.py first")
    counts: dict[str, int] = {}
    with zipfile.ZipFile(wheel) as z, open(a.out, "w") as out:
        for name in sorted(z.namelist()):
            i = name.find(PREFIX)
            if i < 0 or not name.endswith(".RULE") or "/inactive/" in name:
                continue
            rel = name[i + len(PREFIX):]
            if not rel.startswith("rules/"):
                continue
            text = z.read(name).decode("utf-8", "replace")
            front = text.split("---")[1] if text.startswith("---") else ""
            flags = {}
            for line in front.splitlines():
                if ":" in line:
                    k, v = line.split(":", 1)
                    flags[k.strip()] = v.strip()
            expr = flags.get("license_expression")
            if not expr:
                continue  # false positives, as in fetch_licenses.py
            kind = next((k for k in KINDS if flags.get(f"is_license_{k}") == "yes"), "other")
            counts[kind] = counts.get(kind, 0) + 1
            out.write(json.dumps({"key": rel, "kind": kind, "expression": expr}) + "\n")
    print(f"{sum(counts.values())} rules -> {a.out}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
