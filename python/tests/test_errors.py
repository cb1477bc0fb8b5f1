"""Every kind of library error surfaces as its own exception class, with its evidence."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fpdb


@pytest.fixture
def db(tmp_path):
    with fpdb.Db.create(tmp_path / "db") as d:
        yield d


def test_hierarchy():
    for name in ["IoError", "RocksError", "LockedError", "NotFoundError", "AlreadyExistsError", "SpecMismatchError",
                 "VersionError", "CorruptionError", "InvalidOptionError", "InvalidInputError", "PoisonedError",
                 "ReadOnlyError", "ClosedError"]:
        cls = getattr(fpdb, name)
        assert issubclass(cls, fpdb.FpdbError) and cls.__module__ == "fpdb" and cls.__doc__
    assert issubclass(fpdb.FpdbError, Exception)
    assert issubclass(fpdb.IoError, OSError)
    assert issubclass(fpdb.NotFoundError, FileNotFoundError)
    assert issubclass(fpdb.InvalidInputError, ValueError)


def test_not_found(tmp_path):
    with pytest.raises(fpdb.NotFoundError) as e:
        fpdb.Db.open(tmp_path / "missing")
    assert e.value.path == str(tmp_path / "missing")
    assert "create one first" in str(e.value)


def test_already_exists(db, tmp_path):
    with pytest.raises(fpdb.AlreadyExistsError) as e:
        fpdb.Db.create(tmp_path / "db")
    assert isinstance(e.value, FileExistsError) and "already exists" in str(e.value)


def test_locked_in_process(db, tmp_path):
    with pytest.raises(fpdb.LockedError) as e:
        fpdb.Db.open(tmp_path / "db")
    assert e.value.path == str(tmp_path / "db")
    # A read-only handle takes no lock.
    with fpdb.Db.open(tmp_path / "db", read_only=True) as ro:
        assert len(ro) == 0


def test_locked_by_another_process(tmp_path):
    path = tmp_path / "db"
    fpdb.Db.create(path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fpdb,sys; d=fpdb.Db.open(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
         str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(fpdb.LockedError):
            fpdb.Db.open(path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    fpdb.Db.open(path).close()  # released when the holder exits


def test_spec_mismatch(tmp_path):
    fpdb.Db.create(tmp_path / "db", shingle="word:3").close()
    with pytest.raises(fpdb.SpecMismatchError) as e:
        fpdb.Db.open(tmp_path / "db", spec="char:5")
    assert (e.value.field, e.value.expected, e.value.found) == ("unit", "Char", "Word")
    with pytest.raises(fpdb.SpecMismatchError) as e:
        fpdb.Db.open(tmp_path / "db", spec=fpdb.FingerprintSpec("word:4"))
    assert e.value.field == "n"
    with fpdb.Db.open(tmp_path / "db", spec=fpdb.FingerprintSpec.default()) as d:
        assert d.spec == fpdb.FingerprintSpec("word:3", "binary")


def test_invalid_input(db):
    with pytest.raises(fpdb.InvalidInputError) as e:
        db.insert("", "some text")
    assert "empty" in str(e.value)
    with pytest.raises(fpdb.InvalidInputError) as e:
        db.insert("k", b"caf\xe9 au lait")
    assert "byte offset 3" in str(e.value) and "0xe9" in str(e.value)
    assert e.value.key == "k"
    with pytest.raises(fpdb.InvalidInputError) as e:
        db.query(b"ok \xe2\x82")
    assert "truncated" in str(e.value) and "offset 3" in str(e.value)
    with pytest.raises(fpdb.InvalidInputError):
        db.insert("k", "lone \udc80 surrogate")
    with pytest.raises(TypeError):
        db.insert("k", 42)
    with pytest.raises(fpdb.InvalidInputError):
        db.insert("x" * 70000, "text")


def test_invalid_option(db, tmp_path):
    with pytest.raises(fpdb.InvalidOptionError) as e:
        db.insert("k", "text", dedup="maybe")
    assert e.value.option == "dedup"
    with pytest.raises(fpdb.InvalidOptionError) as e:
        db.query("text", min_jaccard=1.5)
    assert e.value.option == "min_jaccard"
    with pytest.raises(fpdb.InvalidOptionError):
        db.query("text", max_distance=40)
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "t", tables=99)
    assert e.value.option == "tables"
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.Db.create(tmp_path / "s", shingle="sentence:2")
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.Db.create(tmp_path / "w", weights="tfidf")
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.FingerprintSpec("word:40")
    with pytest.raises(fpdb.InvalidOptionError):
        db.ingest([], batch_latency=-1)
    assert isinstance(e.value, ValueError)


def test_read_only(db, tmp_path):
    db.insert("a", "one two three four five")
    db.close()
    with fpdb.Db.open(tmp_path / "db", read_only=True) as ro:
        assert ro.get("a") is not None
        with pytest.raises(fpdb.ReadOnlyError):
            ro.insert("b", "six seven eight nine")
        with pytest.raises(fpdb.ReadOnlyError):
            ro.delete("a")
        with pytest.raises(fpdb.ReadOnlyError):
            ro.ingest([("c", "ten eleven twelve")]).run()
        with pytest.raises(fpdb.ReadOnlyError):
            ro.flush()


def test_closed(tmp_path):
    d = fpdb.Db.create(tmp_path / "db")
    d.close()
    d.close()  # idempotent
    assert d.closed
    with pytest.raises(fpdb.ClosedError):
        d.query("anything")
    with pytest.raises(fpdb.ClosedError):
        d.stats()


def test_corruption(tmp_path):
    path = tmp_path / "db"
    text = " ".join(f"word{i}" for i in range(200))
    with fpdb.Db.create(path) as d:
        d.insert("victim", text)
    [seg] = sorted((path / "segments").glob("*.seg"))
    data = bytearray(seg.read_bytes())
    data[16 + 24 + 100] ^= 0xFF  # inside the first record's shingle payload (docs/format.md)
    seg.write_bytes(bytes(data))
    with fpdb.Db.open(path) as d:
        report = d.check()
        assert not report.ok and report.faults[0].key == "victim"
        with pytest.raises(fpdb.CorruptionError) as e:
            d.query(text)
        assert e.value.doc == 0 and "fpdb check" in str(e.value)
