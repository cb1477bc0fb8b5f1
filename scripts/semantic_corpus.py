#!/usr/bin/env python3
"""Labelled pairs where the text channel should fail and the semantic channel should not.

From real passages (default: the research papers in ../shared/seeds/*.txt; any text files may be
given), writes JSONL pairs {"a", "b", "dup", "kind"}:
  - "rewrite" (dup = true): a passage and a copy with ~25% of its content words replaced by a WordNet
    synonym (Debian's `wordnet` package: /usr/share/wordnet) and its sentences reordered;
  - "same-topic" (dup = false): two different passages of the same source file.
Deterministic for a given --seed. Prints a summary line on stderr.

Usage: scripts/semantic_corpus.py [--out FILE] [--passages N] [--rate 0.25] [--seed 1] [FILES...]
"""
import argparse
import glob
import json
import os
import random
import re
import sys

WN = "/usr/share/wordnet"
STOP = set("""a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves also may might must shall use used
using however thus therefore et al""".split())


def load_wordnet():
    """lemma -> list of synonym lemmas of its first (most frequent) synset, per part of speech."""
    syn = {}
    for pos in ("noun", "verb", "adj", "adv"):
        idx, dat = os.path.join(WN, "index." + pos), os.path.join(WN, "data." + pos)
        if not os.path.exists(idx):
            sys.exit(f"semantic_corpus: {idx} missing: apt-get install -y wordnet")
        with open(dat, "rb") as f:
            data = f.read()
        with open(idx, encoding="latin-1") as f:
            for line in f:
                if line.startswith(" "):
                    continue
                parts = line.split()
                lemma, p_cnt = parts[0], int(parts[3])
                offsets = parts[4 + p_cnt + 2:]
                if "_" in lemma or not offsets or lemma in syn:
                    continue
                off = int(offsets[0])
                end = data.index(b"\n", off)
                fields = data[off:end].decode("latin-1").split()
                w_cnt = int(fields[3], 16)
                words = [re.sub(r"\(.*\)$", "", fields[4 + 2 * k]).lower() for k in range(w_cnt)]
                others = [w for w in words if w != lemma and "_" not in w and w.isalpha()]
                if others:
                    syn[lemma] = others
    return syn


def passages(path, min_words=90, max_words=170):
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"-\n(\w)", r"\1", text)  # de-hyphenate line breaks
    text = re.sub(r"\s+", " ", text)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)]
    # keep prose: mostly letters, a few words at least
    sentences = [s for s in sentences if len(s.split()) >= 6 and sum(c.isalpha() for c in s) > 0.7 * len(s)]
    out, cur = [], []
    for s in sentences:
        cur.append(s)
        if sum(len(x.split()) for x in cur) >= min_words:
            if sum(len(x.split()) for x in cur) <= max_words:
                out.append(cur)
            cur = []
    return out


def rewrite(sentences, syn, rate, rng):
    words_total, replaced = 0, 0
    new = []
    for s in sentences:
        toks = re.findall(r"[A-Za-z]+|[^A-Za-z]+", s)
        content = [i for i, t in enumerate(toks) if t.isalpha() and len(t) >= 3 and t.lower() not in STOP]
        words_total += len(content)
        want = round(rate * len(content))
        rng.shuffle(content)
        for i in content:
            if want == 0:
                break
            w = toks[i].lower()
            cands, suffix = syn.get(w), ""
            if not cands and w.endswith("s") and syn.get(w[:-1]):
                cands, suffix = syn[w[:-1]], "s"
            if not cands:
                continue
            r = rng.choice(cands)
            r = r if r.endswith("s") else r + suffix
            toks[i] = r.capitalize() if toks[i][0].isupper() else r
            replaced += 1
            want -= 1
        new.append("".join(toks))
    order = list(range(len(new)))
    while len(order) > 1 and order == sorted(order):
        rng.shuffle(order)
    return " ".join(new[i] for i in order), replaced, words_total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="data/semantic_pairs.jsonl")
    ap.add_argument("--passages", type=int, default=150, help="rewrite pairs (and as many negatives)")
    ap.add_argument("--rate", type=float, default=0.25)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    files = a.files or sorted(glob.glob(os.path.join(here, "..", "..", "shared", "seeds", "*.txt")))
    if not files:
        sys.exit("semantic_corpus: no input files (pass text files, or keep ../shared/seeds beside the repo)")
    syn = load_wordnet()
    rng = random.Random(a.seed)
    by_file = [p for p in (passages(f) for f in files) if len(p) >= 3]
    pool = [(fi, pi) for fi, ps in enumerate(by_file) for pi in range(len(ps))]
    rng.shuffle(pool)
    pairs, rep, tot = [], 0, 0
    for fi, pi in pool[: a.passages]:
        sents = by_file[fi][pi]
        b, r, t = rewrite(sents, syn, a.rate, rng)
        rep, tot = rep + r, tot + t
        pairs.append({"a": " ".join(sents), "b": b, "dup": True, "kind": "rewrite"})
        others = [j for j in range(len(by_file[fi])) if abs(j - pi) >= 2]
        if others:
            pairs.append({"a": " ".join(sents), "b": " ".join(by_file[fi][rng.choice(others)]), "dup": False, "kind": "same-topic"})
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    pos = sum(p["dup"] for p in pairs)
    print(f"semantic_corpus: {len(pairs)} pairs ({pos} rewrites, {len(pairs) - pos} same-topic negatives) from "
          f"{len(files)} files; {rep}/{tot} = {rep / max(tot, 1):.1%} of content words replaced -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
