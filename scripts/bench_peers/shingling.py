"""The one tokenizer/shingler shared by every peer in the comparison.

Rule (the brief's, kept deliberately simple and identical for all peers):
  lower-case the text, tokens = maximal alphanumeric runs (Unicode letters and
  digits, no underscore), shingles = word 3-grams joined by one space.

A document with fewer than 3 tokens yields one shingle made of all its tokens
(nothing if it has no token at all).

fpdb's own normalizer additionally applies NFKC to non-ASCII input and joins
words hyphenated across line breaks; on mostly-ASCII text without such
hyphenation the shingle sets are the same, but the *hashes* (and so the
fingerprints) differ: fpdb uses xxh3, the Python peers use md5.

Standard library only: this module is imported from both benchmark venvs.
"""

import json
import re

_TOKEN = re.compile(r"[^\W_]+")  # \w minus "_" == runs of str.isalnum() chars

N = 3


def tokens(text):
    return _TOKEN.findall(text.lower())


def shingles(text, n=N):
    """Word n-gram shingles in document order (repeats kept: weight = count)."""
    toks = tokens(text)
    if len(toks) < n:
        return [" ".join(toks)] if toks else []
    return [" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1)]


def read_corpus(path, limit=None):
    """[(key, text)] from a JSONL corpus: one {"key", "text", ...} per line."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if limit is not None and len(out) >= limit:
                break
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            out.append((str(rec["key"]), rec["text"]))
    return out
