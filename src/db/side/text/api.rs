//! The stored texts' public API: [`StoredTexts::get`], [`StoredTexts::for_each`] (every live document with its
//! text, at one snapshot: what re-fingerprinting, the semantic backfill and the export read) and
//! [`StoredTexts::usage`].

use rocksdb::IteratorMode;

use crate::error::{Error, Result};
use crate::store::doc_record;
use crate::store::keys::{be_u64, doc_key, CF_DOCS};

use super::{decode_header, CF_TEXT};
use crate::db::handle::Db;
use crate::db::types::NewDoc;

/// The live documents with their texts, in id order ([`StoredTexts::iter`]).
pub struct StoredDocs {
    rx: crossbeam_channel::Receiver<Result<NewDoc>>,
    _reader: std::thread::JoinHandle<()>,
}

impl Iterator for StoredDocs {
    type Item = Result<NewDoc>;
    fn next(&mut self) -> Option<Result<NewDoc>> {
        self.rx.recv().ok()
    }
}

/// What the stored texts take ([`StoredTexts::usage`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct TextUsage {
    /// Stored texts.
    pub docs: u64,
    /// Their bytes as given.
    pub raw_bytes: u64,
    /// Their records' bytes (headers included).
    pub stored_bytes: u64,
    /// The dictionaries' bytes.
    pub dict_bytes: u64,
    /// The `text` column family's SST files on disk (after a flush: what the disk holds).
    pub sst_bytes: u64,
}

impl Db {
    pub(super) fn text_side(&self) -> Option<&super::Active> {
        self.inner.sides.text.as_ref().and_then(|s| s.active())
    }

    fn text_side_or_refuse(&self) -> Result<&super::Active> {
        self.text_side().ok_or_else(|| Error::InvalidOption {
            name: "text",
            message: format!(
                "the database {} does not store texts; create it with `fpdb init --store-text` (Db::create with store_text), or export and import it into one",
                self.inner.path.display()
            ),
        })
    }

    /// The text of doc `id` (a live one).
    fn text_at(&self, a: &super::Active, id: u64) -> Result<String> {
        let v = self
            .inner
            .rocks
            .get_cf(self.cf(CF_TEXT)?, doc_key(id))
            .map_err(self.rocks_err("read text"))?
            .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "its stored text is missing"))?;
        a.decode(&v).map_err(|what| Error::corrupt(&self.inner.rocks_path, Some(id), what))
    }

    /// [`StoredTexts::for_each`] with each document's stored record (its text compressed, as kept).
    pub(super) fn stored_records(&self, mut f: impl FnMut(u64, NewDoc, Vec<u8>) -> Result<()>) -> Result<()> {
        let a = self.text_side_or_refuse()?;
        let snap = self.inner.rocks.snapshot();
        let text_cf = self.cf(CF_TEXT)?;
        for item in snap.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
            let id = be_u64(&k).ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "doc key is not 8 bytes"))?;
            let r = doc_record::decode_doc(&v, &self.inner.rocks_path, Some(id))?;
            let t = snap
                .get_cf(text_cf, doc_key(id))
                .map_err(self.rocks_err("read text"))?
                .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "its stored text is missing"))?;
            let text = a
                .decode(&t)
                .map_err(|what| Error::corrupt(&self.inner.rocks_path, Some(id), what))?;
            f(
                id,
                NewDoc {
                    key: r.key,
                    text,
                    meta: r.meta,
                    biblio: r.biblio,
                },
                t,
            )?;
        }
        Ok(())
    }
}

/// The stored texts of a database ([`Db::texts`], `fpdb init --store-text`): a document's text as
/// given, every stored document with its text, and the bytes they take. On a database that keeps
/// no texts, each refuses with [`Error::InvalidOption`] (`enabled`: `false`).
#[derive(Clone, Copy, Debug)]
pub struct StoredTexts<'a> {
    pub(crate) db: &'a Db,
}

impl Db {
    /// The stored texts' API ([`StoredTexts`]).
    pub fn texts(&self) -> StoredTexts<'_> {
        StoredTexts { db: self }
    }
}

impl StoredTexts<'_> {
    /// Whether this database keeps its documents' texts (created with
    /// [`CreateOptions::store_text`](crate::CreateOptions)).
    pub fn enabled(&self) -> bool {
        self.db.text_side().is_some()
    }

    /// The text of the document with this key, exactly as it was inserted (`None`: no such
    /// document). Refused on a database that does not store texts.
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        let a = self.db.text_side_or_refuse()?;
        self.db.read_rocks(|_| {
            let Some(id) = self.db.committed_id(key)? else { return Ok(None) };
            self.db.text_at(a, id).map(Some)
        })
    }

    /// Every live document with its text, key, metadata and bibliographic values, in id order (the
    /// order they were inserted), as of one RocksDB snapshot (a writer may go on meanwhile):
    /// `f(id, doc)`. Refused on a database that does not store texts.
    pub fn for_each(&self, mut f: impl FnMut(u64, NewDoc) -> Result<()>) -> Result<()> {
        self.db.stored_records(|id, doc, _| f(id, doc))
    }

    /// [`StoredTexts::for_each`] as an iterator (read on a thread of its own, a bounded queue ahead of
    /// the consumer): what the ingest pipeline and the semantic backfill take. Dropping it stops
    /// the reading.
    pub fn iter(&self) -> Result<StoredDocs> {
        self.db.text_side_or_refuse()?;
        let (tx, rx) = crossbeam_channel::bounded(1024);
        let db = self.db.clone();
        let reader = std::thread::Builder::new()
            .name("fpdb-stored-texts".into())
            .spawn(move || {
                let r = db
                    .texts()
                    .for_each(|_, doc| tx.send(Ok(doc)).map_err(|_| Error::input(None, "stopped")));
                if let Err(e) = r {
                    // The consumer is gone when the send fails: nobody to tell.
                    let _ = tx.send(Err(e));
                }
            })
            .map_err(|e| Error::io("start the stored-text reader", &self.db.inner.path, e))?;
        Ok(StoredDocs { rx, _reader: reader })
    }

    /// What the stored texts take: a scan of the records' headers. Refused on a database that
    /// does not store texts.
    pub fn usage(&self) -> Result<TextUsage> {
        let a = self.db.text_side_or_refuse()?;
        let cf = self.db.cf(CF_TEXT)?;
        let mut u = TextUsage {
            dict_bytes: a.dicts.read().values().map(|d| d.bytes.len() as u64).sum(),
            sst_bytes: self
                .db
                .inner
                .rocks
                .property_int_value_cf(cf, "rocksdb.total-sst-files-size")
                .map_err(self.db.rocks_err("read the text column family's size"))?
                .unwrap_or(0),
            ..TextUsage::default()
        };
        for item in self.db.inner.rocks.iterator_cf(cf, IteratorMode::Start) {
            let (_, v) = item.map_err(self.db.rocks_err("scan text"))?;
            u.docs += 1;
            u.stored_bytes += v.len() as u64;
            u.raw_bytes += decode_header(&v).map_or(0, |h| h.len);
        }
        Ok(u)
    }
}
