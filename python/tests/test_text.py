"""Stored texts: Db.create(store_text=True), text(key) exactly as inserted, backup(dir)."""

from __future__ import annotations

import pytest

import fpdb


def test_stored_text_and_backup(tmp_path):
    db = fpdb.Db.create(tmp_path / "db", store_text=True)
    odd = "  leading spaces, a tab\there, é and 漢字, and a final newline\n"
    db.insert("a", odd)
    db.insert("b", "another document with a few more words in it")
    assert db.text("a") == odd
    assert db.text("absent") is None
    db.delete("a")
    assert db.text("a") is None
    r = db.backup(tmp_path / "copy")
    assert r["segments"] >= 1 and str(r["dir"]).endswith("copy")
    with pytest.raises(fpdb.AlreadyExistsError):
        db.backup(tmp_path / "copy")
    db.close()
    copy = fpdb.Db.open(tmp_path / "copy")
    assert copy.check().ok
    assert copy.text("b") == "another document with a few more words in it"
    assert len(copy) == 1
    plain = fpdb.Db.create(tmp_path / "plain")
    plain.insert("a", "some words here")
    with pytest.raises(fpdb.InvalidOptionError):
        plain.text("a")
