"""Shared helpers for the corpus builders in scripts/corpora/ (stdlib only).

Every corpus is JSONL, one object per line: {"key": str, "text": str, "label": str}.
Downloads are cached under <repo>/data/cache/ (git-ignored) and never committed.
"""

from __future__ import annotations

import bz2
import glob
import gzip
import io
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Iterable, Iterator

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / "data" / "cache"
APT_CACHE = CACHE_DIR / "apt"


def log(*args: object) -> None:
    print(*args, file=sys.stderr, flush=True)


class Timer:
    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def __str__(self) -> str:
        return f"{time.monotonic() - self.t0:.1f}s"


class JsonlWriter:
    """Writes JSONL atomically: to OUT.tmp, renamed to OUT on successful close."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.f = open(self.tmp, "w", encoding="utf-8", newline="\n")
        self.count = 0
        self.keys: set[str] = set()

    def write(self, obj: dict, check_key: bool = True) -> None:
        if check_key:
            k = obj["key"]
            if k in self.keys:
                raise ValueError(f"duplicate key {k!r}")
            self.keys.add(k)
        self.f.write(json.dumps(obj, ensure_ascii=False))
        self.f.write("\n")
        self.count += 1

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.f.close()
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def word_count(text: str) -> int:
    return len(text.split())


# ---------------------------------------------------------------- apt / dpkg


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def apt_lists_dir() -> Path:
    return Path("/var/lib/apt/lists")


def apt_update(languages: str | None = None) -> None:
    cmd = ["apt-get", "update", "-qq"]
    if languages:
        cmd += ["-o", f"Acquire::Languages={languages}"]
    log("running:", " ".join(cmd))
    run(cmd)


def apt_candidate(pkg: str) -> str | None:
    """Candidate version of pkg in the current apt lists, or None if unknown."""
    p = subprocess.run(["apt-cache", "policy", pkg], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("Candidate:"):
            v = line.split(":", 1)[1].strip()
            return None if v in ("", "(none)") else v
    return None


def apt_download(pkg: str, dest: Path = APT_CACHE) -> Path:
    """apt-get download PKG into dest (cached: reuses an existing PKG_*.deb)."""
    dest.mkdir(parents=True, exist_ok=True)
    existing = sorted(dest.glob(f"{pkg}_*.deb"))
    if existing:
        return existing[-1]
    # apt's _apt sandbox user cannot write into root-owned dirs; that only gives a warning.
    r = subprocess.run(["apt-get", "download", "-q", pkg], cwd=dest,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    existing = sorted(dest.glob(f"{pkg}_*.deb"))
    if r.returncode != 0 or not existing:
        raise RuntimeError(f"apt-get download {pkg} failed (exit {r.returncode}): {r.stderr.strip()}")
    return existing[-1]


def dpkg_extract(deb: Path, dest: Path) -> Path:
    """dpkg-deb -x DEB DEST (skipped if DEST already holds a finished extraction)."""
    stamp = dest / ".extracted"
    if stamp.exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    run(["dpkg-deb", "-x", str(deb), str(dest)])
    stamp.write_text(deb.name + "\n")
    return dest


# ---------------------------------------------------------------- compressed files


def open_text_maybe_compressed(path: str | os.PathLike) -> IO[str]:
    """Open an apt list file that may be plain, .gz, .xz, .bz2, .lz4 or .zst."""
    path = str(path)
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8", errors="replace")
    if path.endswith(".xz") or path.endswith(".lzma"):
        return io.TextIOWrapper(lzma.open(path), encoding="utf-8", errors="replace")
    if path.endswith(".bz2"):
        return io.TextIOWrapper(bz2.open(path), encoding="utf-8", errors="replace")
    if path.endswith(".lz4") or path.endswith(".zst"):
        # No stdlib decoder: apt's own helper decompresses anything apt can write,
        # falling back to lz4cat / zstdcat.
        candidates = [["/usr/lib/apt/apt-helper", "cat-file", path]]
        candidates.append(["lz4cat", path] if path.endswith(".lz4") else ["zstdcat", path])
        for cmd in candidates:
            if shutil.which(cmd[0]) or os.path.exists(cmd[0]):
                out = subprocess.run(cmd, check=True, capture_output=True).stdout
                return io.StringIO(out.decode("utf-8", errors="replace"))
        raise RuntimeError(f"cannot decompress {path}: need apt-helper, lz4cat or zstdcat")
    return open(path, encoding="utf-8", errors="replace")


def deb822_stanzas(f: Iterable[str]) -> Iterator[dict[str, str]]:
    """Parse Debian control-file stanzas; continuation lines are kept joined with \\n."""
    cur: dict[str, str] = {}
    last: str | None = None
    for raw in f:
        line = raw.rstrip("\n")
        if not line.strip():
            if cur:
                yield cur
            cur, last = {}, None
            continue
        if line[0] in " \t":
            if last is not None:
                cur[last] += "\n" + line
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        last = name.strip()
        cur[last] = value.strip()
    if cur:
        yield cur


def glob_lists(pattern: str) -> list[str]:
    return sorted(glob.glob(str(apt_lists_dir() / pattern)))


# ---------------------------------------------------------------- planted edits


_TOKEN = re.compile(r"(\S+)(\s*)")


def edit_copy(text: str, rate: float, rng: random.Random, pool: list[str]) -> str:
    """Word-level random insert/delete/replace at the given rate (>= 1 operation)."""
    lead = text[: len(text) - len(text.lstrip())]
    items = [[w, s] for w, s in _TOKEN.findall(text[len(lead):])]
    n_ops = max(1, round(rate * len(items)))
    for _ in range(n_ops):
        op = rng.randrange(3)
        if op == 0 or len(items) <= 1:  # insert
            items.insert(rng.randint(0, len(items)), [rng.choice(pool), " "])
        elif op == 1:  # delete
            del items[rng.randrange(len(items))]
        else:  # replace
            items[rng.randrange(len(items))][0] = rng.choice(pool)
    return lead + "".join(w + s for w, s in items)
