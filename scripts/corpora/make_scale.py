#!/usr/bin/env python3
"""Build the large scale corpus (~1 KB passages of the Linux 6.1 source tree) with planted
near-duplicates and their ground truth.

Source: Debian bookworm(-security) package linux-source-6.1 (GPL-2.0 with the kernel's
per-file licences; see usr/share/doc/linux-source-6.1/copyright in the .deb).

 1. Input: by default data/cache/apt/linux-source-6.1_*.deb, fetched with
    `apt-get download linux-source-6.1` when missing (unless --no-download). It is read as
    a stream: .deb (ar) -> data.tar.xz -> usr/src/linux-source-6.1.tar.xz -> files; nothing
    is unpacked to disk. --src PATH instead reads a directory tree (walked in sorted
    order), a .tar/.tar.xz/.tar.gz/.tar.bz2, or another .deb.
 2. Files ending in .c .h .rst .txt (in archive order) are cut at line boundaries into
    passages of 800..1200 bytes (a line is added while the passage stays <= 1200 bytes;
    a passage is closed once it reaches 1000 bytes, or when the next line would overflow
    it and it already has >= 800 bytes; shorter leftovers and lines > 1200 bytes are
    dropped). Passages with < --min-words (30) whitespace-separated words are skipped, and so are
    exact repeats of an earlier passage (unless --keep-exact-dups), so the only *exact*
    duplicates in the output are none; natural near-duplicates (licence headers,
    boilerplate, copy-pasted drivers) remain and are NOT in the truth file.
 3. With --dir-fraction F < 1, only the files of a seeded sample of F of the tree's directories
    are read (whole directories, drawn by a hash of the seed and the directory's path), so a
    small corpus is drawn from the whole tree, not its first files.
    The first N passages are emitted as {"key": "p<i>", "text": ..., "label": "<path>"}
    (label = source file path inside the tree, informational).
 4. D = round(dup_fraction * N) planted near-duplicates: D distinct source indices are
    sampled from 0..N-1; each copy is edited with word-level insert/delete/replace
    operations (op uniform; round(rate * words) >= 1 operations at random positions;
    inserted/replacement words come from a reservoir of words of earlier passages), rate
    uniform in [--min-rate, --max-rate] = [0.01, 0.20] (the construction of Fan & Huang,
    "A fusion of algorithms in near duplicate document detection", section 4). Each copy
    is written right after the passage at a position drawn uniformly from [src, N-1], so
    a streaming ingest always sees the source first. Key "d<j>-of-p<src>" (j = order of
    appearance), label = the source's label. One truth line per planted pair:
    {"a": "p<src>", "b": "d<j>-of-p<src>", "edit_rate": r}.
Everything is deterministic given --seed and the input. If the input has fewer than N
passages, copies of existing passages are flushed at the end and the others are dropped.

Usage: make_scale.py --out OUT.jsonl --truth TRUTH.jsonl --docs N [--dup-fraction 0.02]
                     [--seed 42] [--src PATH ...] [--no-download] [--exts .c,.h,.rst,.txt]
                     [--min-words 30] [--keep-exact-dups] [--min-rate 0.01] [--max-rate 0.2]
                     [--dir-fraction F]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import IO, Iterator

sys.dont_write_bytecode = True  # keep scripts/corpora free of __pycache__
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpuslib import APT_CACHE, Timer, edit_copy, log  # noqa: E402

PKG = "linux-source-6.1"
EXTS = (".c", ".h", ".rst", ".txt")
MIN_BYTES, TARGET_BYTES, MAX_BYTES = 800, 1000, 1200
MIN_WORDS = 30
POOL_SIZE = 50_000
PROGRESS_EVERY = 100_000


# ------------------------------------------------------------------ input streams


class _Bounded(io.RawIOBase):
    """Read at most n bytes from an underlying stream (one ar member)."""

    def __init__(self, f: IO[bytes], n: int) -> None:
        self.f, self.left = f, n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.left <= 0:
            return 0
        data = self.f.read(min(len(b), self.left))
        self.left -= len(data)
        b[: len(data)] = data
        return len(data)


def _deb_data_tar(f: IO[bytes]) -> tarfile.TarFile:
    """Open the data.tar.* member of a .deb (ar archive) as a streaming tarfile."""
    if f.read(8) != b"!<arch>\n":
        raise ValueError("not a .deb (ar) archive")
    while True:
        hdr = f.read(60)
        if len(hdr) < 60:
            raise ValueError("no data.tar.* member in .deb")
        name = hdr[:16].decode().strip().rstrip("/")
        size = int(hdr[48:58].decode().strip())
        if name.startswith("data.tar"):
            mode = {"xz": "r|xz", "gz": "r|gz", "bz2": "r|bz2"}.get(name.rsplit(".", 1)[-1], "r|")
            if name.endswith(".zst"):
                raise ValueError("zstd-compressed .deb: extract it and pass --src")
            return tarfile.open(fileobj=io.BufferedReader(_Bounded(f, size), 1 << 20), mode=mode)
        f.seek(size + (size & 1), os.SEEK_CUR)


def _tar_mode(name: str) -> str:
    for ext, mode in ((".xz", "r|xz"), (".gz", "r|gz"), (".tgz", "r|gz"), (".bz2", "r|bz2")):
        if name.endswith(ext):
            return mode
    return "r|"


def _iter_tar(t: tarfile.TarFile, strip_prefix: bool) -> Iterator[tuple[str, bytes]]:
    for m in t:
        if not m.isfile() or not m.name.endswith(EXTS):
            continue
        name = m.name
        if strip_prefix and "/" in name:  # "linux-source-6.1/kernel/fork.c" -> "kernel/fork.c"
            name = name.split("/", 1)[1]
        yield name, t.extractfile(m).read()


def iter_deb_files(deb: Path) -> Iterator[tuple[str, bytes]]:
    with open(deb, "rb") as f:
        outer = _deb_data_tar(f)
        for m in outer:
            base = m.name.rsplit("/", 1)[-1]
            if m.isfile() and base.startswith("linux-source") and ".tar" in base:
                inner = tarfile.open(fileobj=outer.extractfile(m), mode=_tar_mode(base))
                yield from _iter_tar(inner, strip_prefix=True)
                return
        raise ValueError(f"{deb}: no usr/src/linux-source*.tar* inside")


def iter_dir_files(root: Path) -> Iterator[tuple[str, bytes]]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(EXTS):
                p = Path(dirpath) / fn
                if p.is_file() and not p.is_symlink():
                    yield p.relative_to(root).as_posix(), p.read_bytes()


def iter_source_files(src: Path) -> Iterator[tuple[str, bytes]]:
    if src.is_dir():
        return iter_dir_files(src)
    if src.name.endswith(".deb"):
        return iter_deb_files(src)
    t = tarfile.open(src, mode=_tar_mode(src.name))
    return _iter_tar(t, strip_prefix=True)


def default_deb(no_download: bool) -> Path:
    found = sorted(APT_CACHE.glob(f"{PKG}_*.deb"))
    if found:
        return found[-1]
    if no_download:
        sys.exit(f"error: no {PKG}_*.deb in {APT_CACHE} and --no-download given; run "
                 f"`cd {APT_CACHE} && apt-get download {PKG}` or pass --src PATH")
    APT_CACHE.mkdir(parents=True, exist_ok=True)
    log(f"apt-get download {PKG} -> {APT_CACHE}")
    r = subprocess.run(["apt-get", "download", "-q", PKG], cwd=APT_CACHE,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = sorted(APT_CACHE.glob(f"{PKG}_*.deb"))
    if r.returncode != 0 or not found:
        sys.exit(f"error: `apt-get download {PKG}` failed (exit {r.returncode}): "
                 f"{r.stderr.strip()}\nIf the package is unknown run `apt-get update` first; "
                 f"or place the .deb in {APT_CACHE}, or pass --src PATH (a kernel tree, "
                 f"tarball or .deb).")
    return found[-1]


def in_sample(directory: str, seed: int, fraction: float) -> bool:
    """Whether `directory` is in the seeded sample of `fraction` of all directories."""
    h = hashlib.blake2b(f"{seed}\0{directory}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") < fraction * 2**64


# ------------------------------------------------------------------ passages


def passages(files: Iterator[tuple[str, bytes]], stats: dict) -> Iterator[tuple[str, str]]:
    """Yield (path, passage text) of 800..1200-byte line-aligned chunks with >= MIN_WORDS words."""
    for path, data in files:
        stats["files"] += 1
        if b"\0" in data:
            stats["binary files skipped"] += 1
            continue
        buf: list[bytes] = []
        n = 0
        for line in data.splitlines(keepends=True):
            ln = len(line)
            if n + ln > MAX_BYTES:
                if n >= MIN_BYTES:
                    yield from _emit(path, buf, stats)
                buf, n = [], 0
                if ln > MAX_BYTES:
                    continue
            buf.append(line)
            n += ln
            if n >= TARGET_BYTES:
                yield from _emit(path, buf, stats)
                buf, n = [], 0
        if n >= MIN_BYTES:
            yield from _emit(path, buf, stats)


def _emit(path: str, buf: list[bytes], stats: dict) -> Iterator[tuple[str, str]]:
    text = b"".join(buf).decode("utf-8", errors="replace")
    if len(text.split()) < MIN_WORDS:
        stats["passages < min words skipped"] += 1
        return
    yield path, text


# ------------------------------------------------------------------ edits

# ------------------------------------------------------------------ main


def main() -> None:
    global EXTS, MIN_WORDS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--docs", type=int, required=True, help="number of source passages N")
    ap.add_argument("--dup-fraction", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--min-rate", type=float, default=0.01)
    ap.add_argument("--max-rate", type=float, default=0.20)
    ap.add_argument("--src", type=Path, action="append",
                    help="kernel tree dir, tarball or .deb (default: cached "
                    f"{PKG} .deb under data/cache/apt, downloaded if missing); repeatable, "
                    "sources are read one after the other")
    ap.add_argument("--exts", default=",".join(EXTS),
                    help="comma-separated file name endings to take (default %(default)s)")
    ap.add_argument("--min-words", type=int, default=MIN_WORDS,
                    help="skip passages with fewer words (default %(default)s)")
    ap.add_argument("--no-download", action="store_true",
                    help="fail instead of running apt-get download when the .deb is missing")
    ap.add_argument("--dir-fraction", type=float, default=1.0,
                    help="read only the files of a seeded sample of the tree's directories, this "
                    "fraction of them (whole directories: the near-duplicates within one stay "
                    "together), so corpora of different sizes come from the whole tree rather "
                    "than its first files (default %(default)s: every directory)")
    ap.add_argument("--keep-exact-dups", action="store_true",
                    help="do not drop passages identical to an earlier passage")
    args = ap.parse_args()
    t = Timer()
    N = args.docs
    EXTS = tuple(e.strip() for e in args.exts.split(",") if e.strip())
    MIN_WORDS = args.min_words
    if N <= 0 or not 0 <= args.dup_fraction <= 1:
        sys.exit("error: need --docs > 0 and 0 <= --dup-fraction <= 1")

    srcs = args.src if args.src else [default_deb(args.no_download)]
    for src in srcs:
        if not src.exists():
            sys.exit(f"error: --src {src} does not exist")
    log(f"source: {' + '.join(map(str, srcs))}; exts {','.join(EXTS)}; min words {MIN_WORDS}")

    if not 0 < args.dir_fraction <= 1:
        sys.exit("error: need 0 < --dir-fraction <= 1")

    def all_files() -> Iterator[tuple[str, bytes]]:
        for src in srcs:
            for path, data in iter_source_files(src):
                if args.dir_fraction >= 1 or in_sample(path.rsplit("/", 1)[0] if "/" in path else "", args.seed, args.dir_fraction):
                    yield path, data

    # Plan the planted copies up front (depends only on seed, N, fraction, rates).
    plan_rng = random.Random(args.seed)
    D = round(args.dup_fraction * N)
    by_src: dict[int, tuple[int, float, int]] = {}  # src -> (insert-after position, rate, edit seed)
    for s in sorted(plan_rng.sample(range(N), D)):
        by_src[s] = (plan_rng.randint(s, N - 1), plan_rng.uniform(args.min_rate, args.max_rate),
                     plan_rng.getrandbits(64))
    pending: dict[int, list[tuple[int, str, float, str]]] = {}  # pos -> [(src, text, rate, label)]

    pool_rng = random.Random(args.seed ^ 0x5EED)
    pool: list[str] = []
    seen: set[bytes] = set()
    stats: dict[str, int] = {"files": 0, "binary files skipped": 0,
                             "passages < min words skipped": 0, "exact repeats skipped": 0}

    out_p, truth_p = Path(args.out), Path(args.truth)
    for p in (out_p, truth_p):
        p.parent.mkdir(parents=True, exist_ok=True)
    out_tmp, truth_tmp = out_p.with_name(out_p.name + ".tmp"), truth_p.with_name(truth_p.name + ".tmp")
    n_src = n_dup = 0
    rates: list[float] = []
    with open(out_tmp, "w", encoding="utf-8") as out, open(truth_tmp, "w", encoding="utf-8") as truth:

        def write_dups(pos: int) -> None:
            nonlocal n_dup
            for s, text, rate, label in pending.pop(pos, ()):
                key = f"d{n_dup}-of-p{s}"
                out.write(json.dumps({"key": key, "text": text, "label": label}, ensure_ascii=False) + "\n")
                truth.write(json.dumps({"a": f"p{s}", "b": key, "edit_rate": round(rate, 4)}) + "\n")
                rates.append(rate)
                n_dup += 1

        for path, text in passages(all_files(), stats):
            if not args.keep_exact_dups:
                h = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()
                if h in seen:
                    stats["exact repeats skipped"] += 1
                    continue
                seen.add(h)
            i = n_src
            words = text.split()
            for _ in range(4):  # refresh the reservoir of words used for inserts/replacements
                w = words[pool_rng.randrange(len(words))]
                if len(pool) < POOL_SIZE:
                    pool.append(w)
                else:
                    pool[pool_rng.randrange(POOL_SIZE)] = w
            out.write(json.dumps({"key": f"p{i}", "text": text, "label": path}, ensure_ascii=False) + "\n")
            n_src += 1
            if i in by_src:
                pos, rate, eseed = by_src.pop(i)
                dup = edit_copy(text, rate, random.Random(eseed), pool)
                pending.setdefault(pos, []).append((i, dup, rate, path))
            write_dups(i)
            if n_src % PROGRESS_EVERY == 0:
                log(f"{n_src} passages, {n_dup} planted copies, {stats['files']} files  [{t}]")
            if n_src >= N:
                break
        for pos in sorted(pending):  # input had fewer than N passages
            write_dups(pos)
    os.replace(out_tmp, out_p)
    os.replace(truth_tmp, truth_p)

    for k, v in stats.items():
        print(f"{k}: {v}")
    if n_src < N:
        print(f"WARNING: input has only {n_src} passages (< --docs {N}); "
              f"{len(by_src)} planned copies of missing passages dropped")
    mean = sum(rates) / len(rates) if rates else 0.0
    print(f"written: {n_src} passages + {n_dup} planted near-duplicates = {n_src + n_dup} docs "
          f"-> {out_p}; {n_dup} truth pairs (mean edit_rate {mean:.3f}) -> {truth_p}  [{t}]")


if __name__ == "__main__":
    main()
