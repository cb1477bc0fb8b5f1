"""The binding functions fpdb.spark runs in its tasks (python/src/scale.rs): they give the engine's
own fingerprints, pairs and Jaccard values, and refuse malformed input with the evidence."""

from __future__ import annotations

import itertools

import pytest

import fpdb
from fpdb import _fpdb as native
from conftest import corpus


def test_fingerprint_batch_is_the_engines_fingerprint():
    texts = [t for _, t in corpus(20)] + [""]
    fps, sets = native.fingerprint_batch(texts)
    for t, f, s in zip(texts, fps, sets):
        want = fpdb.fingerprint(t)
        assert f & (2**64 - 1) == want.simhash
        assert len(s) == 4 * len(want.shingles)
        assert [int.from_bytes(s[i : i + 4], "little") for i in range(0, len(s), 4)] == want.shingles
    assert native.fingerprint_batch(["a b c d"], "char:4")[0][0] & (2**64 - 1) == fpdb.fingerprint("a b c d", "char:4").simhash


def test_bucket_pairs_finds_each_pair_within_k_once_over_all_tables():
    k = 6
    blocks = native.candidate_blocks(k)
    assert len(blocks) == k + 1 and sum(w for _, w in blocks) == 64
    base = 0x0123_4567_89AB_CDEF
    fps = [base ^ (1 << b) ^ (1 << (b * 7 % 64)) for b in range(40)] + [base, base, base ^ 0xFF]
    signed = [f - 2**64 if f >= 2**63 else f for f in fps]
    ids = list(range(100, 100 + len(fps)))
    got = []
    for t, (start, width) in enumerate(blocks):
        buckets: dict[int, list[int]] = {}
        for n, f in enumerate(fps):
            buckets.setdefault((f >> (64 - start - width)) & ((1 << width) - 1), []).append(n)
        for members in buckets.values():
            a, b, d = native.bucket_pairs(t, k, [ids[n] for n in members], [signed[n] for n in members])
            got += list(zip(a, b, d))
    want = [
        (ids[i], ids[j], bin(fps[i] ^ fps[j]).count("1"))
        for i, j in itertools.combinations(range(len(fps)), 2)
        if bin(fps[i] ^ fps[j]).count("1") <= k
    ]
    assert sorted(got) == sorted(want) and len(got) == len(set(got))
    # Two sub-buckets of one bucket: exactly the cross pairs.
    a, b, d = native.bucket_pairs(0, k, ids[:20], signed[:20], ids[20:], signed[20:])
    assert all(x < 100 + 20 <= y or y < 100 + 20 <= x for x, y in zip(a, b))


def test_jaccard_batch_equals_the_engine_and_refuses_bad_sets():
    (_, (x, y)) = native.fingerprint_batch(["one two three four five six", "one two three four five seven"])
    assert native.jaccard_batch([x], [y]) == [pytest.approx(3 / 5)]
    with pytest.raises(fpdb.InvalidInputError, match="row 0: 17 bytes is not a multiple of 4"):
        native.jaccard_batch([x + b"\0"], [y])
    with pytest.raises(fpdb.InvalidInputError, match="not above the one before it"):
        native.jaccard_batch([x[4:8] + x[:4]], [y])
    with pytest.raises(fpdb.InvalidOptionError):
        native.candidate_blocks(32)
