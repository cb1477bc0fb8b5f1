#!/usr/bin/env python3
"""Build a small JSONL test corpus from text already on a Debian machine.

Sources: /usr/share/common-licenses/* and /usr/share/doc/*/copyright. Each
file is cut into ~1 KB passages at whitespace. Those files repeat a lot of
licence text, so the passages already hold real exact and near duplicates;
on top of that a fraction of passages gets an edited copy (random word
insert/delete/replace at ~5% of the words) as planted near-duplicates.

Each line: {"key", "text", "source", "edit_of", "edit_rate"}; edit_of is the
key of the original passage for planted copies, else null. Order is shuffled
with a fixed seed so originals and copies are interleaved as in a crawl.

  python3 scripts/bench_peers/sample_corpus.py --out data/peers-sample.jsonl --docs 20000
"""

import argparse
import glob
import json
import os
import random


def passages(text, size):
    words = text.split()
    cur, n = [], 0
    for w in words:
        cur.append(w)
        n += len(w) + 1
        if n >= size:
            yield " ".join(cur)
            cur, n = [], 0
    if cur and n >= size // 4:
        yield " ".join(cur)


def edit(text, rate, rng, vocab):
    words = text.split()
    out = []
    for w in words:
        r = rng.random()
        if r < rate / 3:  # delete
            continue
        if r < 2 * rate / 3:  # replace
            out.append(rng.choice(vocab))
            continue
        out.append(w)
        if r < rate:  # insert after
            out.append(rng.choice(vocab))
    return " ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="data/peers-sample.jsonl")
    ap.add_argument("--docs", type=int, default=20000, help="number of documents to write")
    ap.add_argument("--passage-bytes", type=int, default=1000)
    ap.add_argument("--edit-share", type=float, default=0.25,
                    help="share of the output made of edited copies (default 0.25)")
    ap.add_argument("--edit-rate", type=float, default=0.05, help="word edit rate of a copy")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    files = sorted(glob.glob("/usr/share/common-licenses/*")) + sorted(glob.glob("/usr/share/doc/*/copyright"))
    base = []
    for path in files:
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for i, p in enumerate(passages(text, args.passage_bytes)):
            base.append({"key": f"{path}#{i}", "text": p, "source": path, "edit_of": None, "edit_rate": 0.0})
    if not base:
        raise SystemExit("no source text found")

    vocab = sorted({w for d in base[:2000] for w in d["text"].split()})
    n_orig = min(len(base), max(1, round(args.docs * (1 - args.edit_share))))
    rng.shuffle(base)
    docs = base[:n_orig]
    copies = []
    j = 0
    while len(docs) + len(copies) < args.docs:
        src = docs[rng.randrange(len(docs))]
        j += 1
        copies.append({"key": f"{src['key']}~e{j}", "text": edit(src["text"], args.edit_rate, rng, vocab),
                       "source": src["source"], "edit_of": src["key"], "edit_rate": args.edit_rate})
    docs += copies
    rng.shuffle(docs)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    print(f"wrote {len(docs)} docs ({n_orig} passages from {len(files)} files, {len(copies)} edited copies) to {args.out}")


if __name__ == "__main__":
    main()
