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
    # Two sub-buckets of one bucket of table 0: exactly the cross pairs within k sharing block 0.
    start, width = blocks[0]
    members = [n for n, f in enumerate(fps) if (f >> (64 - start - width)) & ((1 << width) - 1) == (base >> (64 - start - width)) & ((1 << width) - 1)]
    left, right = [n for n in members if n < 20], [n for n in members if n >= 20]
    a, b, d = native.bucket_pairs(0, k, [ids[n] for n in left], [signed[n] for n in left], [ids[n] for n in right], [signed[n] for n in right])
    cross = sorted(
        (ids[min(i, j)], ids[max(i, j)], bin(fps[i] ^ fps[j]).count("1"))
        for i in left
        for j in right
        if bin(fps[i] ^ fps[j]).count("1") <= k
    )
    assert len(cross) >= 10  # the pairs it names exist
    assert sorted(zip(a, b, d)) == cross


def brute_bucket_pairs(k: int, fps: list[int]) -> list[tuple[int, int, int]]:
    """Every pair over all tables of candidate_blocks(k), through bucket_pairs, as (i, j, d)."""
    signed = [f - 2**64 if f >= 2**63 else f for f in fps]
    got = []
    for t, (start, width) in enumerate(native.candidate_blocks(k)):
        buckets: dict[int, list[int]] = {}
        for n, f in enumerate(fps):
            buckets.setdefault((f >> (64 - start - width)) & ((1 << width) - 1), []).append(n)
        for members in buckets.values():
            a, b, d = native.bucket_pairs(t, k, members, [signed[n] for n in members])
            got += list(zip(a, b, d))
    return sorted(got)


@pytest.mark.parametrize("k", [0, 1, 31, 32])
def test_bucket_pairs_at_the_ends_of_k(k):
    blocks = native.candidate_blocks(k)
    assert len(blocks) == k + 1 and sum(w for _, w in blocks) == 64 and min(w for _, w in blocks) >= 1
    assert blocks[0] == ((0, 64) if k == 0 else blocks[0])
    base = 0xF0F0_1234_5678_9ABC
    # Copies (distance 0), pairs at k and k + 1 bits apart, and random neighbours.
    import random

    rng = random.Random(k)
    fps = [base, base, base ^ ((1 << k) - 1), base ^ ((1 << (k + 1)) - 1) if k < 64 else base]
    fps += [rng.getrandbits(64) for _ in range(40)]
    want = sorted(
        (i, j, bin(fps[i] ^ fps[j]).count("1"))
        for i, j in itertools.combinations(range(len(fps)), 2)
        if bin(fps[i] ^ fps[j]).count("1") <= k
    )
    got = brute_bucket_pairs(k, fps)
    assert got == want and (0, 1, 0) in got and (0, 2, k) in got and (0, 3, k + 1) not in got
    with pytest.raises(fpdb.InvalidOptionError):
        native.candidate_blocks(33)


def arrow_col(values: list) -> tuple:
    """A string column as prepare_batch takes it (what fpdb.spark._buffers makes of an Arrow array)."""
    pa = pytest.importorskip("pyarrow")
    from fpdb.spark import _buffers

    return _buffers(pa.array(values, pa.string()))


def test_prepare_batch_refuses_what_fpdb_ingest_refuses():
    texts = ["one two three four", "", "  \n\t ", "!!! ... ???", "five six seven eight", None, "nine ten eleven", "x y z w"]
    keys = ["a", "b", "c", "d", "", "f", None, "k" * (64 * 1024 + 1)]
    st, fps, offs, data, bk = native.prepare_batch(arrow_col(keys), arrow_col(texts), None, 4, 3, 7)
    assert list(st) == [0, 3, 3, 3, 2, 1, 1, 2]
    want = fpdb.fingerprint(texts[0])
    assert len(fps) == 8 and int.from_bytes(fps, "little", signed=False) == want.simhash
    assert offs == (0).to_bytes(4, "little") + (4 * len(want.shingles)).to_bytes(4, "little")
    assert [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)] == want.shingles
    assert [int.from_bytes(bk[i : i + 8], "little", signed=True) for i in range(0, len(bk), 8)] == native.minhash_keys([data], 4, 3, 7)[0]


def test_minhash_keys_follow_their_definition():
    """The band keys of scale.rs's module doc, computed here from the definition."""
    M = 2**64 - 1

    def mix(z):
        z = (z + 0x9E3779B97F4A7C15) & M
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)

    def keys(shingles, bands, rows, seed):
        s, a, c = seed, [], []
        for _ in range(bands * rows):
            s = mix(s)
            a.append(s | 1)
            s = mix(s)
            c.append(s)
        mins = [min(((a[i] * x + c[i]) & M) >> 32 for x in shingles) for i in range(bands * rows)]
        out = []
        for b in range(bands):
            k = mix(seed ^ ((b * 0x9E3779B97F4A7C15) & M))
            for m in mins[b * rows : (b + 1) * rows]:
                k = mix(k ^ m)
            out.append(k - 2**64 if k >= 2**63 else k)
        return out

    (_, sets) = native.fingerprint_batch(["one two three four five six seven", "one two three four five six eight"])
    shingles = [[int.from_bytes(s[i : i + 4], "little") for i in range(0, len(s), 4)] for s in sets]
    got = native.minhash_keys(sets, 5, 2, 11)
    assert got == [keys(x, 5, 2, 11) for x in shingles]
    assert got[0] != got[1] and native.minhash_keys([sets[0]], 5, 2, 11)[0] == got[0]


def test_jaccard_batch_equals_the_engine_and_refuses_bad_sets():
    (_, (x, y)) = native.fingerprint_batch(["one two three four five six", "one two three four five seven"])
    assert native.jaccard_batch([x], [y]) == [pytest.approx(3 / 5)]
    with pytest.raises(fpdb.InvalidInputError, match="row 0: 17 bytes is not a multiple of 4"):
        native.jaccard_batch([x + b"\0"], [y])
    with pytest.raises(fpdb.InvalidInputError, match="not above the one before it"):
        native.jaccard_batch([x[4:8] + x[:4]], [y])
    with pytest.raises(fpdb.InvalidOptionError):
        native.candidate_blocks(33)
