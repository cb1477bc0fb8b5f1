"""The semantic channel (docs/semantic.md) from Python: a database created with it finds a
reworded paragraph the text channel misses, `semantic_pending` falls to 0 after a wait or a
backfill, a database of the CLI answers the same from Python, and the channel's errors surface as
their own exception classes with their evidence.

The tests that embed need the real model, all-MiniLM-L6-v2 (`bash scripts/fetch-model.sh` puts it
in data/models/): without it they are skipped, except under CI=true (CI fetches it first), where
its absence fails them. A handful of short documents keeps them fast (~6 embeddings/s per core).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

import fpdb
from conftest import REPO, run_cli

MODEL = REPO / "data" / "models" / "all-MiniLM-L6-v2"
BETA = 0.81  # the model's calibrated min_cosine (CALIBRATIONS in src/semantic/calibration.rs)

ORIGINAL = (
    "We present a method for detecting near-duplicate documents in large web collections. "
    "Each document is reduced to a compact fingerprint, and fingerprints within a small Hamming distance "
    "are found quickly with permuted tables. Experiments on billions of pages show high precision."
)
REWORDED = (
    "This paper introduces a technique to find almost identical documents in huge collections of "
    "web pages. Every page is summarised by a short fingerprint; fingerprints that differ in few bits are "
    "located fast using permuted tables. Tests on billions of web pages show that it is very precise."
)
SAME_TOPIC = (
    "We study how search engines rank web pages by their links, modelling the web as a graph "
    "and computing a stationary distribution of a random surfer over billions of pages."
)
STEW = (
    "Slow-cooked beans with smoked paprika, garlic and tomatoes make a warming winter stew; "
    "serve it with crusty bread and a glass of red wine."
)
DOCS = [("orig", ORIGINAL), ("topic", SAME_TOPIC), ("stew", STEW)]


@pytest.fixture(scope="module")
def model() -> Path:
    if not (MODEL / "model.safetensors").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the model is missing at {MODEL}: CI must run scripts/fetch-model.sh first")
        pytest.skip(f"no sentence-transformer model at {MODEL}: run `bash scripts/fetch-model.sh` to test the semantic channel")
    return MODEL


def hit(hits, key):
    return next((h for h in hits if h.key == key), None)


def test_the_exception_classes():
    for name in ["ModelMissingError", "ModelInvalidError", "SemanticSpecMismatchError", "SemanticTimeoutError"]:
        cls = getattr(fpdb, name)
        assert issubclass(cls, fpdb.SemanticError) and cls.__module__ == "fpdb" and cls.__doc__
    assert issubclass(fpdb.SemanticError, fpdb.FpdbError)
    assert issubclass(fpdb.ModelMissingError, FileNotFoundError)
    assert issubclass(fpdb.ModelInvalidError, ValueError)
    assert issubclass(fpdb.SemanticSpecMismatchError, fpdb.SpecMismatchError)
    assert issubclass(fpdb.SemanticTimeoutError, TimeoutError)


def test_without_the_channel(tmp_path):
    """A database created without `semantic`: no spec, zero counters, text hits without a cosine;
    the channel's options need the model directory; backfill has nothing to run."""
    with fpdb.Db.create(tmp_path / "db") as db:
        assert db.semantic_spec is None
        db.insert("orig", ORIGINAL)
        s = db.stats()
        assert (s.semantic_pending, s.semantic_vectors) == (0, 0)
        assert s.to_dict()["semantic_pending"] == 0
        [h] = db.query(ORIGINAL, wait_semantic=True, min_cosine=0.5)
        assert (h.channels, h.cosine, h.match) == (["text"], None, "text")
        a = db.query_answer(ORIGINAL)
        assert a.semantic_pending == 0 and len(a) == 1 and a.hits == [h]
        assert a.to_dict() == {"hits": [h.to_dict()], "truncated": False, "candidates": 1, "semantic_pending": 0}
        # The text channel alone misses the rewording.
        assert db.query(REWORDED) == [] and db.query(REWORDED, min_jaccard=0.0) == []
        with pytest.raises(fpdb.InvalidOptionError) as e:
            db.semantic_backfill()
        assert e.value.option == "semantic"
        with pytest.raises(fpdb.InvalidOptionError) as e:
            db.query(ORIGINAL, wait_semantic=-1)
        assert e.value.option == "wait_semantic"
    for kw in [{"min_cosine": 0.5}, {"semantic_field": "abstract"}, {"semantic_max_tokens": 64}, {"groups": "union"}]:
        with pytest.raises(fpdb.InvalidOptionError) as e:
            fpdb.Db.create(tmp_path / ("x" + next(iter(kw))), **kw)
        assert e.value.option == next(iter(kw)) and "semantic" in e.value.message


def test_reworded_paragraph_is_found_after_backfill(model, tmp_path):
    """Documents wait in the queue while no indexer runs (`semantic_pending`); a backfill embeds
    them; then the reworded abstract is a semantic-only hit at cosine >= β, and the original text is
    found by both channels."""
    path = tmp_path / "db"
    with fpdb.Db.create(path, semantic=model, semantic_indexer=False) as db:
        spec = db.semantic_spec
        assert spec["model"]["name"] == "all-MiniLM-L6-v2" and spec["model"]["dim"] == 384
        assert (spec["max_tokens"], spec["field"], spec["groups"]) == (256, None, "text")
        assert abs(spec["min_cosine"] - BETA) < 1e-6
        for k, t in DOCS:
            db.insert(k, t)
        assert db.stats().semantic_pending == len(DOCS) and db.stats().semantic_vectors == 0
        a = db.query_answer(REWORDED)
        assert a.semantic_pending == len(DOCS) and a.hits == []
        # No indexer on this handle: a wait ends at once and the answer says what is missing (the
        # text hits are answered whatever the channel's state); a backfill cannot succeed, and
        # says so.
        a = db.query_answer(REWORDED, wait_semantic=True)
        assert a.semantic_pending == len(DOCS) and a.hits == []
        with pytest.raises(fpdb.SemanticError) as e:
            db.semantic_backfill()
        assert "indexer" in e.value.cause and not isinstance(e.value, fpdb.SemanticTimeoutError)
    with fpdb.Db.open(path, semantic_threads=2) as db:
        report = db.semantic_backfill()
        assert (report.embedded, report.vectors, report.from_texts) == (len(DOCS), len(DOCS), None)
        assert report.to_dict() == {"embedded": len(DOCS), "vectors": len(DOCS)}
        s = db.stats()
        assert (s.semantic_pending, s.semantic_vectors) == (0, len(DOCS))
        a = db.query_answer(REWORDED)
        assert a.semantic_pending == 0
        h = hit(a.hits, "orig")
        assert h is not None and h.channels == ["semantic"] and h.match == "semantic"
        assert h.cosine >= BETA and h.jaccard is None
        assert h.to_dict()["channels"] == ["semantic"] and h.to_dict()["cosine"] == h.cosine
        # The same-topic and unrelated paragraphs stay below β.
        assert [x.key for x in a.hits] == ["orig"]
        # A β above the pair's cosine leaves it out; the original text matches by both channels.
        assert db.query(REWORDED, min_cosine=min(1.0, h.cosine + 0.05)) == []
        [both] = db.query(ORIGINAL)
        assert both.key == "orig" and both.channels == ["text", "semantic"] and both.match == "text"
        assert both.jaccard == 1.0 and both.cosine > 0.99
        assert db.check().ok


def test_wait_semantic_sees_every_acknowledged_document(model, tmp_path):
    """A writer's handle runs the indexer: `wait_semantic` waits for the documents acknowledged
    before the query, so the answer has nothing pending and misses none of them."""
    with fpdb.Db.create(tmp_path / "db", semantic=model, min_cosine=0.7) as db:
        for k, t in DOCS:
            db.insert(k, t)
        a = db.query_answer(REWORDED, wait_semantic=60)
        assert a.semantic_pending == 0
        h = hit(a.hits, "orig")
        assert h is not None and h.channels == ["semantic"] and h.cosine >= 0.7
        assert db.stats().semantic_pending == 0 and db.stats().semantic_vectors == len(DOCS)
        # Deleting the document drops it from the channel too.
        assert db.delete("orig")
        assert hit(db.query(REWORDED, wait_semantic=True), "orig") is None


def test_semantic_field_embeds_the_metadata_field(model, tmp_path):
    """`semantic_field="abstract"`: what is embedded is the document's "abstract", not its text."""
    with fpdb.Db.create(tmp_path / "db", semantic=model, semantic_field="abstract", semantic_max_tokens=128) as db:
        assert db.semantic_spec["field"] == "abstract" and db.semantic_spec["max_tokens"] == 128
        rows = [{"key": "paper", "text": STEW, "abstract": ORIGINAL}, {"key": "other", "text": ORIGINAL}]
        assert all(r.ok for r in db.ingest(rows))
        hits = db.query(REWORDED, wait_semantic=True)
        assert hit(hits, "paper") is not None and "semantic" in hit(hits, "paper").channels
        # "other" has no abstract: its text (the original) is embedded.
        assert hit(hits, "other") is not None


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def same_floats(hits: list[dict]) -> list[dict]:
    """Hits with their cosine as the f32 it is: the CLI's --json prints the f32 widened to f64
    (0.8535865545272827), the library's serde (to_dict, HTTP) its shortest decimal (0.85358655)."""
    return [{**h, "cosine": None if h.get("cosine") is None else f32(h["cosine"])} for h in hits]


def cli_query(cli_bin, db: Path, text: str) -> list[dict]:
    return same_floats(run_cli(cli_bin, "query", str(db), "--text", text, "--wait-semantic", ok=(0, 1)))


def test_cli_database_answers_the_same_from_python(model, tmp_path, cli_bin):
    """A database created and filled by the CLI (`fpdb init --semantic`, `fpdb ingest`), opened
    from Python: the same hits as `fpdb --json query --wait-semantic`, key for key; and the other
    way round for a database created from Python."""
    cli_db = tmp_path / "cli.fpdb"
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(json.dumps({"key": k, "text": t}) + "\n" for k, t in DOCS), encoding="utf-8")
    run_cli(cli_bin, "init", str(cli_db), "--semantic", str(model), "--min-cosine", "0.7")
    run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--no-progress")
    queries = [REWORDED, ORIGINAL, SAME_TOPIC]
    with fpdb.Db.open(cli_db) as db:
        assert abs(db.semantic_spec["min_cosine"] - 0.7) < 1e-6
        got = [same_floats([h.to_dict() for h in db.query(q, wait_semantic=True)]) for q in queries]
        stats = db.stats().to_dict()
    assert (stats["semantic_pending"], stats["semantic_vectors"]) == (0, len(DOCS))
    want = [cli_query(cli_bin, cli_db, q) for q in queries]
    assert got == want
    assert any(h["channels"] == ["semantic"] and h["cosine"] >= 0.7 for h in want[0])
    [cli_stats] = run_cli(cli_bin, "stats", str(cli_db))
    assert (cli_stats["semantic_pending"], cli_stats["semantic_vectors"]) == (0, len(DOCS))

    py_db = tmp_path / "py.fpdb"
    with fpdb.Db.create(py_db, semantic=model, min_cosine=0.7, semantic_indexer=False) as db:
        for k, t in DOCS:
            db.insert(k, t)
    want = [cli_query(cli_bin, py_db, q) for q in queries]
    with fpdb.Db.open(py_db, read_only=True) as db:
        assert [same_floats([h.to_dict() for h in db.query(q)]) for q in queries] == want


def test_wrong_model_dir_raises_model_missing_with_the_path(model, tmp_path):
    bad = tmp_path / "no-model"
    with pytest.raises(fpdb.ModelMissingError) as e:
        fpdb.Db.create(tmp_path / "db", semantic=bad)
    assert e.value.path == str(bad) and "fetch-model.sh" in str(e.value)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, fpdb.SemanticError)
    # The failed create left no half-created database behind: the path is free again.
    assert not (tmp_path / "db").exists()
    # A database with the channel opened with a model directory that is not there.
    with fpdb.Db.create(tmp_path / "db", semantic=model):
        pass
    with pytest.raises(fpdb.ModelMissingError) as e:
        fpdb.Db.open(tmp_path / "db", semantic_model=bad)
    assert e.value.path == str(bad) and e.value.missing


def test_another_model_raises_spec_mismatch(model, tmp_path):
    """The model's identity is its directory name and weights hash: the same files under another
    name are another model."""
    other = tmp_path / "other-model"
    other.mkdir()
    for f in model.iterdir():
        (other / f.name).symlink_to(f.resolve(), target_is_directory=f.is_dir())
    with fpdb.Db.create(tmp_path / "db", semantic=model):
        pass
    with pytest.raises(fpdb.SemanticSpecMismatchError) as e:
        fpdb.Db.open(tmp_path / "db", semantic_model=other)
    assert isinstance(e.value, fpdb.SpecMismatchError)
    # expected: what was given now; found: what the database holds.
    assert e.value.field.startswith("model."), vars(e.value)
    assert "other-model" in e.value.expected and "all-MiniLM-L6-v2" in e.value.found, vars(e.value)


def test_bad_channel_options(model, tmp_path):
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "a", semantic=model, groups="both")
    assert e.value.option == "groups"
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "b", semantic=model, min_cosine=1.5)
    assert e.value.option == "min_cosine"
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "c", semantic=model, semantic_search="fast")
    assert e.value.option == "semantic_search"


def test_channel_added_to_a_database_made_without_it(model, tmp_path):
    """Db.enable_semantic on a database created without the channel, then semantic_backfill(texts):
    the stored documents are embedded from the texts given again; unknown keys are counted; the
    reworded paragraph is a semantic pair of the original, and in a groups="union" database the
    two share a group in `pairs()` and in the stored groups."""
    path = tmp_path / "db"
    with fpdb.Db.create(path) as db:
        for key, text in DOCS + [("reworded", REWORDED)]:
            db.insert(key, text)
    fpdb.Db.enable_semantic(path, model, groups="union", min_cosine=BETA)
    # read-only before any writer opened it (the channel's column families are made by a writer)
    with fpdb.Db.open(path, read_only=True) as ro:
        assert ro.check().ok
        assert (ro.stats().docs, ro.stats().semantic_vectors) == (len(DOCS) + 1, 0)
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.Db.enable_semantic(path, model)
    with fpdb.Db.open(path, semantic_threads=2) as db:
        assert (db.stats().semantic_vectors, db.stats().semantic_pending) == (0, 0)
        texts = DOCS + [("reworded", REWORDED), ("not-stored", STEW)]
        seen = []

        def streamed():
            """The texts, then unknown keys; records the vectors stored when the last is pulled."""
            yield from texts
            for i in range(60):
                yield (f"unknown-{i}", STEW)
            seen.append(db.stats().semantic_vectors)

        rep = db.semantic_backfill(streamed(), batch=2)
        assert seen == [4], "the iterable is embedded part by part, not collected first"
        assert rep.from_texts is not None
        assert rep.from_texts.to_dict() == {"embedded": 4, "already": 0, "unknown": 61, "empty": 0}
        assert rep.to_dict()["from_texts"] == {"embedded": 4, "already": 0, "unknown": 61, "empty": 0}
        assert db.stats().semantic_vectors == 4
        pairs = {(a, b): c for a, b, c in db.semantic_pairs()}
        assert pairs.get(("orig", "reworded"), 0.0) >= BETA, pairs
        assert all(c >= BETA for c in pairs.values())
        assert ("orig", "stew") not in pairs
        # no text pair at all: the groups come from the semantic pairs (a union database)
        groups = {g.canonical: sorted(g.members) for g in db.pairs().groups}
        assert "reworded" in groups["orig"], groups
        assert "reworded" in db.get("orig").members
        assert db.check().ok
        again = db.semantic_backfill(texts)
        assert again.from_texts is not None
        assert again.from_texts.embedded == 0 and again.from_texts.already == 4
