"""Shared helpers: a deterministic corpus with near-duplicates, and the `fpdb` CLI to compare with."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]


def fpdb_bin() -> Path:
    """The CLI (the workspace's cli/ package) built by cargo: $FPDB_BIN, else
    $CARGO_TARGET_DIR/debug/fpdb, else target/debug/fpdb (one target directory for the workspace)."""
    if os.environ.get("FPDB_BIN"):
        return Path(os.environ["FPDB_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    return target / "debug" / "fpdb"


@pytest.fixture(scope="session")
def cli_bin() -> Path:
    b = fpdb_bin()
    if not b.exists():
        pytest.fail(f"the fpdb CLI is not built at {b}: run `cargo build --bin fpdb --all-features` at the repository root or set FPDB_BIN")
    return b


def run_cli(bin_: Path, *args: str, ok: tuple[int, ...] = (0,)) -> list[dict]:
    """Runs `fpdb --json ARGS`; returns its stdout JSON lines. Fails on an exit code not in `ok`."""
    p = subprocess.run([str(bin_), "--json", *args], capture_output=True, text=True)
    assert p.returncode in ok, f"fpdb {' '.join(args)} exited {p.returncode}: {p.stderr}"
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


WORDS = [f"w{i:04d}" for i in range(3000)] + ["the", "of", "and", "near", "duplicate", "paper", "library"]


def passage(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def corpus(n: int, seed: int = 7, dup_every: int = 3) -> list[tuple[str, str]]:
    """`n` (key, text) documents; every `dup_every`-th one is a light edit of an earlier one, so the
    corpus has verified near-duplicates, groups and a spread of Jaccard values."""
    rng = random.Random(seed)
    docs: list[tuple[str, str]] = []
    originals: list[list[str]] = []
    for i in range(n):
        if originals and i % dup_every == dup_every - 1:
            words = list(rng.choice(originals))
            for _ in range(rng.randint(0, 4)):
                words[rng.randrange(len(words))] = rng.choice(WORDS)
        else:
            words = passage(rng, rng.randint(60, 160))
            originals.append(words)
        docs.append((f"doc/{i:05d}", " ".join(words)))
    return docs


def lazy_corpus(n: int, seed: int = 11) -> Iterator[tuple[str, str]]:
    """Like `corpus`, generated one document at a time (nothing kept but a few originals)."""
    rng = random.Random(seed)
    recent: list[list[str]] = []
    for i in range(n):
        if recent and i % 4 == 3:
            words = list(rng.choice(recent))
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        else:
            words = passage(rng, rng.randint(30, 60))
            recent.append(words)
            if len(recent) > 32:
                recent.pop(0)
        yield (f"gen/{i:06d}", " ".join(words))


def write_jsonl(path: Path, docs, extra=None) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, (k, t) in enumerate(docs):
            row = {"key": k, "text": t}
            if extra:
                row.update(extra(i))
            f.write(json.dumps(row) + "\n")
    return path
