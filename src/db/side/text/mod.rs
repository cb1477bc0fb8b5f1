//! Stored texts (`fpdb init --store-text`, [`CreateOptions::store_text`](crate::CreateOptions)):
//! every document's text kept, compressed, in the column family `text`, so that a database can
//! show what it grouped ([`StoredTexts::get`]), be fingerprinted again under another spec without the
//! harvest ([`Db::reindex_spec`]), embed its documents for the semantic channel and be exported
//! whole.
//!
//! | step | what |
//! |---|---|
//! | create | the settings ([`TextSpec`]) staged into `meta` |
//! | open (writer) | the `text` column family created when the settings are there |
//! | open | the settings and every dictionary read; without a dictionary yet, the raw bytes stored so far counted |
//! | prepare | the text compressed on the ingest worker (`keep_text`; the text itself is left to the semantic channel) |
//! | decide | a document made from a fingerprint alone (no text) is refused: every stored document has its text |
//! | write | each new document's record put, each deleted or replaced document's deleted, in the batch's `WriteBatch`; once the first documents reach `train_bytes`, the dictionary is trained on them, put into `meta` and their records rewritten with it, in that same batch |
//! | publish | a dictionary trained by the batch becomes the one new texts are compressed with |
//! | check | every live document has one record that decodes (checksum included), no other record exists |
//!
//! The format, byte by byte: `format.rs` and docs/format.md. Why zstd with a trained dictionary
//! (and not RocksDB's blob files): the measurement in docs/format.md ("Stored texts").

mod api;
mod format;
mod respec;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};
use rocksdb::{IteratorMode, WriteBatch, DB};

use crate::error::{Error, Result};
use crate::intmap::IntMap;
use crate::store::doc_record::DocRecord;
use crate::store::keys::{be_u64, doc_key, CF_META};

use super::{Additions, BatchPart, Creating, Deciding, Opening, Registering, Settings, SideIndex};
use crate::db::base::Base;
use crate::db::cfs::meta_cf;
use crate::db::pending::Pending;
use crate::db::state::State;
use crate::db::types::{CheckReport, Fault, NewDoc};

pub use api::{StoredTexts, TextUsage};
pub(crate) use format::{decode, Dict, TextSpec, CF_TEXT};
use format::{decode_dict_key, decode_header, dict_key, encode, META_TEXT_DICT, META_TEXT_SPEC};
pub use respec::RespecReport;

/// The side index: always registered; on when the database was created with it (its `meta` has
/// the settings), active once loaded.
pub(crate) struct StoredText {
    on: bool,
    active: OnceLock<Active>,
}

struct Active {
    spec: TextSpec,
    /// Every dictionary, by id (records name theirs).
    dicts: RwLock<IntMap<u64, Arc<Dict>>>,
    /// The one new texts are compressed with: the last trained (none before the first).
    current: RwLock<Option<Arc<Dict>>>,
    /// The writer's: raw bytes of the texts stored without a dictionary (until one is trained).
    writer: Mutex<Training>,
    /// Records handed over by a re-fingerprinting ([`Db::reindex_spec`]), by key: taken as they
    /// are instead of compressing the text again (their dictionaries were adopted first).
    /// `passing` is set only while one runs, so an ordinary ingest never takes the lock.
    passing: AtomicBool,
    passed: Mutex<HashMap<String, Vec<u8>>>,
}

struct Training {
    raw_bytes: u64,
    /// The raw bytes at which the next training is tried (`train_bytes`, doubled after a failure).
    next_try: u64,
}

impl StoredText {
    pub(crate) fn new(r: &Registering<'_>) -> Result<Option<StoredText>> {
        let on = match r.from {
            Settings::New(create) => create.store_text,
            Settings::Stored(rocks) => read_spec(rocks, r.rocks_path)?.is_some(),
        };
        Ok(Some(StoredText {
            on,
            active: OnceLock::new(),
        }))
    }

    fn active(&self) -> Option<&Active> {
        self.active.get()
    }
}

impl Active {
    /// Adopts `from`'s dictionaries (the same ids; into `meta`, synced, and memory) so that its
    /// records decode here as they are, and starts taking records handed over ([`Active::pass`]).
    /// Only on a database that holds no text yet (a re-fingerprinting's new one).
    fn adopt(&self, db: &Base, from: &Active) -> Result<()> {
        let dicts: Vec<Arc<Dict>> = from.dicts.read().values().cloned().collect();
        let mut b = WriteBatch::default();
        let meta = db.cf(CF_META)?;
        for d in &dicts {
            b.put_cf(meta, dict_key(d.id), d.encode());
        }
        let mut wo = rocksdb::WriteOptions::default();
        wo.set_sync(true);
        db.rocks.write_opt(b, &wo).map_err(db.rocks_err("adopt the text dictionaries"))?;
        let mut mine = self.dicts.write();
        for d in dicts {
            mine.insert(u64::from(d.id), d);
        }
        *self.current.write() = from.current.read().clone();
        self.passing.store(true, Ordering::Release);
        Ok(())
    }

    /// Hands over the record of the document with this key (taken by `keep_text`).
    fn pass(&self, key: &str, record: Vec<u8>) {
        self.passed.lock().insert(key.to_string(), record);
    }

    /// Stops taking records handed over; those never taken are dropped.
    fn end_passing(&self) {
        self.passing.store(false, Ordering::Release);
        self.passed.lock().clear();
    }

    fn dict(&self, id: u32) -> Option<Arc<Dict>> {
        self.dicts.read().get(&u64::from(id)).cloned()
    }

    /// The text of record `v`; `Err` names what is wrong.
    fn decode(&self, v: &[u8]) -> std::result::Result<String, String> {
        decode(v, |id| self.dict(id))
    }
}

/// The stored texts' part of a batch: a dictionary the batch trained, installed at its publish.
struct TextBatch<'a> {
    side: &'a StoredText,
    staged: Option<Arc<Dict>>,
}

impl BatchPart for TextBatch<'_> {
    /// A document without a text (made from a fingerprint alone) cannot be stored here.
    fn on_decide(&mut self, d: &Deciding<'_>, _add: &mut Additions) -> Result<()> {
        if self.side.active().is_some() && d.doc.text.get(self.side.name()).is_none() {
            return Err(Error::input(
                Some(d.doc.key.as_bytes()),
                "this database stores texts (created with --store-text); a document made from a fingerprint alone has none: insert its text",
            ));
        }
        Ok(())
    }

    fn write(&mut self, db: &Base, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let side = self.side;
        let Some(a) = side.active() else { return Ok(()) };
        let cf = db.cf(CF_TEXT)?;
        for &id in &pend.deleted {
            b.delete_cf(cf, doc_key(id));
        }
        let mut rewritten: IntMap<u64, Vec<u8>> = IntMap::default();
        let mut w = a.writer.lock();
        if a.current.read().is_none() {
            w.raw_bytes += pend
                .new_docs
                .iter()
                .filter_map(|p| decode_header(p.text.get(side.name())?).ok())
                .map(|h| h.len)
                .sum::<u64>();
            if w.raw_bytes >= w.next_try {
                match side.train(a, db, st, pend)? {
                    Some((dict, records)) => {
                        b.put_cf(db.cf(CF_META)?, dict_key(dict.id), dict.encode());
                        rewritten = records;
                        self.staged = Some(dict);
                    }
                    None => w.next_try = w.raw_bytes.saturating_mul(2),
                }
            }
        }
        for p in &pend.new_docs {
            if let Some(v) = rewritten.remove(&p.id).as_deref().or_else(|| p.text.get(side.name())) {
                b.put_cf(cf, doc_key(p.id), v);
            }
        }
        let mut rest: Vec<(u64, Vec<u8>)> = rewritten.into_iter().collect();
        rest.sort_unstable_by_key(|(id, _)| *id);
        for (id, v) in rest {
            b.put_cf(cf, doc_key(id), v);
        }
        Ok(())
    }

    fn publish(self: Box<Self>, _st: &mut State, _pend: &Pending) -> Result<()> {
        if let (Some(a), Some(d)) = (self.side.active(), self.staged) {
            a.dicts.write().insert(u64::from(d.id), d.clone());
            *a.current.write() = Some(d);
        }
        Ok(())
    }
}

/// The stored settings (`None`: the database keeps no texts).
fn read_spec(rocks: &DB, rocks_path: &Path) -> Result<Option<TextSpec>> {
    let meta = meta_cf(rocks, rocks_path)?;
    let v = rocks
        .get_cf(meta, META_TEXT_SPEC)
        .map_err(|e| Error::rocks("read text_spec", rocks_path, e))?;
    v.map(|v| TextSpec::decode(&v).map_err(|what| Error::corrupt(rocks_path, None, what)))
        .transpose()
}

impl SideIndex for StoredText {
    fn name(&self) -> &'static str {
        "stored text"
    }

    fn column_families(&self) -> Vec<String> {
        match self.on {
            true => vec![CF_TEXT.to_string()],
            false => Vec::new(),
        }
    }

    fn create(&self, c: &Creating<'_>, b: &mut WriteBatch) -> Result<()> {
        if c.create.store_text {
            b.put_cf(c.meta, META_TEXT_SPEC, TextSpec::default().encode());
        }
        Ok(())
    }

    /// The settings, the dictionaries; without one, the raw bytes stored so far.
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        let Some(spec) = read_spec(o.rocks, o.rocks_path)? else {
            return Ok(());
        };
        let mut dicts = IntMap::default();
        let mut current: Option<Arc<Dict>> = None;
        for item in o.rocks.prefix_iterator_cf(o.meta, META_TEXT_DICT) {
            let (k, v) = item.map_err(|e| Error::rocks("read the text dictionaries", o.rocks_path, e))?;
            if !k.starts_with(META_TEXT_DICT) {
                break;
            }
            let id = decode_dict_key(&k).ok_or_else(|| Error::corrupt(o.rocks_path, None, "a text_dict key that is not 13 bytes"))?;
            let d = Arc::new(Dict::decode(id, &v, spec.level).map_err(|what| Error::corrupt(o.rocks_path, None, what))?);
            if current.as_ref().is_none_or(|c| c.id < id) {
                current = Some(d.clone());
            }
            dicts.insert(u64::from(id), d);
        }
        let mut raw_bytes = 0;
        if current.is_none() {
            if let Some(cf) = o.rocks.cf_handle(CF_TEXT) {
                for item in o.rocks.iterator_cf(cf, IteratorMode::Start) {
                    let (_, v) = item.map_err(|e| Error::rocks("read the stored texts", o.rocks_path, e))?;
                    raw_bytes += decode_header(&v).map_or(0, |h| h.len);
                }
            }
        }
        let _ = self.active.set(Active {
            spec,
            dicts: RwLock::new(dicts),
            current: RwLock::new(current),
            writer: Mutex::new(Training {
                raw_bytes,
                next_try: u64::from(spec.train_bytes),
            }),
            passing: AtomicBool::new(false),
            passed: Mutex::new(HashMap::new()),
        });
        Ok(())
    }

    /// The text compressed on the ingest worker (with the current dictionary). A text zstd cannot
    /// compress is kept as given (`encode` falls back to it only when the frame is longer; an error
    /// of zstd's own is kept the same way, and `check` would show nothing wrong with it).
    fn keep_text(&self, doc: &mut NewDoc) -> Option<Vec<u8>> {
        let a = self.active()?;
        if a.passing.load(Ordering::Acquire) {
            if let Some(record) = a.passed.lock().remove(&doc.key) {
                return Some(record);
            }
        }
        let dict = a.current.read().clone();
        Some(match encode(&doc.text, dict.as_deref(), a.spec.level) {
            Ok(v) => v,
            Err(_) => format::encode_plain(&doc.text),
        })
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(TextBatch { side: self, staged: None }))
    }

    /// Every live document has one record that decodes; no record names another id.
    fn check(&self, db: &Base, _st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let Some(a) = self.active() else { return Ok(()) };
        let cf = db.cf(CF_TEXT)?;
        let path = db.rocks_path.display().to_string();
        let mut seen: IntMap<u64, ()> = IntMap::default();
        let mut fault = |doc: Option<u64>, what: String| {
            rep.faults.push(Fault {
                doc,
                key: doc.and_then(|d| records.get(&d)).map(|r| r.key.clone()),
                path: path.clone(),
                what,
            })
        };
        for item in db.rocks.iterator_cf(cf, IteratorMode::Start) {
            let (k, v) = item.map_err(db.rocks_err("scan text"))?;
            let Some(id) = be_u64(&k) else {
                fault(None, format!("a text key of {} bytes (expected 8)", k.len()));
                continue;
            };
            if !records.contains_key(&id) {
                fault(Some(id), "a stored text of a document that does not exist".into());
                continue;
            }
            seen.insert(id, ());
            if let Err(what) = a.decode(&v) {
                fault(Some(id), format!("its stored text does not decode: {what}"));
            }
        }
        let mut missing: Vec<u64> = records.keys().copied().filter(|id| !seen.contains_key(id)).collect();
        missing.sort_unstable();
        for id in missing {
            fault(Some(id), "its stored text is missing".into());
        }
        Ok(())
    }
}

impl StoredText {
    /// Trains the first dictionary on every text stored so far (the live ones) and the batch's,
    /// and re-encodes them all with it. `None` when zstd cannot train one on them (the texts then
    /// stay as they are, and the next batch tries again).
    #[allow(clippy::type_complexity)]
    fn train(&self, a: &Active, db: &Base, st: &State, pend: &Pending) -> Result<Option<(Arc<Dict>, IntMap<u64, Vec<u8>>)>> {
        let cf = db.cf(CF_TEXT)?;
        let corrupt = |id: u64, what: String| Error::corrupt(&db.rocks_path, Some(id), what);
        let mut texts: Vec<(u64, String)> = Vec::new();
        for item in db.rocks.iterator_cf(cf, IteratorMode::Start) {
            let (k, v) = item.map_err(db.rocks_err("read the stored texts"))?;
            let Some(id) = be_u64(&k) else { continue };
            if st.docs.contains_key(&id) && !pend.deleted.contains(&id) {
                texts.push((id, a.decode(&v).map_err(|w| corrupt(id, w))?));
            }
        }
        for p in &pend.new_docs {
            if let Some(v) = p.text.get(self.name()) {
                texts.push((p.id, a.decode(v).map_err(|w| corrupt(p.id, w))?));
            }
        }
        let samples: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
        let id = a.dicts.read().keys().map(|&k| k as u32).max().unwrap_or(0) + 1;
        let Ok(dict) = Dict::train(id, &samples, a.spec.dict_bytes, a.spec.level) else {
            return Ok(None);
        };
        let mut out = IntMap::default();
        for (doc, t) in &texts {
            let v = encode(t, Some(&dict), a.spec.level).map_err(|w| corrupt(*doc, w))?;
            out.insert(*doc, v);
        }
        Ok(Some((Arc::new(dict), out)))
    }
}
