//! The other methods' side index (fingerprint/method.rs, index/method.rs): each document's sketch
//! (CF `sketch`, and in memory) and its bucket entries (CF `mindex`, mirrored in memory unless the
//! handle runs without the mirror), both written in the batch that writes the document; it answers
//! the near-duplicate candidate search in place of the SimHash tables
//! ([`crate::index::method::search`]).
//!
//! * `simhash` and `weighted-simhash` search the permuted SimHash tables as always: this side index
//!   is not registered for them.
//! * The other methods' documents are still in the SimHash tables too (their plain SimHash:
//!   `query --simhash`, export and the table checks keep working).
//! * The stored spec's IDF table (weighted-simhash) is the spec's: `db::stored`.

mod api;

use std::path::Path;

use parking_lot::RwLock;
use rocksdb::{IteratorMode, WriteBatch, DB};

use crate::error::{Error, Result};
use crate::fingerprint::lexicon::LexiconColumns;
use crate::fingerprint::method::Method;
use crate::fingerprint::similarity::{MethodScore, Rule};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprint;
use crate::index::method::{search, MemBuckets, MethodIndex, MethodState, RocksBuckets};
use crate::intmap::IntMap;
use crate::store::doc_record::{DbConfig, DocRecord};
use crate::store::keys::{
    be_u64, decode_mindex_key, decode_sketch, doc_key, encode_sketch, method_cf_names, mindex_key, CF_MINDEX, CF_SKETCH,
};

use super::{BatchPart, Deciding, Opening, SideIndex};
use crate::db::base::{sorted_into, Base};
use crate::db::candidates::CandidateSource;
use crate::db::options::Options;
use crate::db::pending::Pending;
use crate::db::state::State;
use crate::db::types::{CheckReport, Fault};

/// The other methods' side index: their bucket index, the method (its name and sketch length),
/// and the in-memory sketches and bucket mirror.
pub(crate) struct MethodSide {
    index: MethodIndex,
    method: Method,
    /// The bucket mirror is kept (the handle's `Options::mirror`).
    mirror: bool,
    mem: RwLock<MethodState>,
    /// multi-lexicon: a batch's part keeps the sketches of its documents by lexicon column.
    multi_lexicon: bool,
}

impl MethodSide {
    /// The side index of a method other than SimHash (`None` for simhash and weighted-simhash);
    /// a method without an index layout for the table count is corruption.
    pub(super) fn new(spec: &FingerprintSpec, config: &DbConfig, opts: &Options, rocks_path: &Path) -> Result<Option<MethodSide>> {
        let Some(index) = MethodIndex::new(&spec.method, config.tables) else {
            if spec.method.uses_simhash_tables() {
                return Ok(None);
            }
            return Err(Error::corrupt(
                rocks_path,
                None,
                format!("method {} has no index layout for {} tables", spec.method, config.tables),
            ));
        };
        Ok(Some(MethodSide {
            index,
            method: spec.method.clone(),
            mirror: opts.mirror,
            mem: RwLock::new(MethodState::default()),
            multi_lexicon: matches!(spec.method, Method::MultiLexicon(_)),
        }))
    }

    /// A published document's sketch.
    pub(super) fn sketch(&self, _st: &State, id: u64) -> Option<Vec<u64>> {
        self.mem.read().sketches.get(&id).map(|s| s.to_vec())
    }

    /// Puts a new document's sketch into the batch and appends its bucket keys to `mindex_keys`:
    /// [`BatchPart::write`] adds a whole batch's keys sorted (`base::sorted_into`; ~25 random
    /// keys per document for multi-lexicon made the memtable inserts the writer's largest cost).
    fn put(&self, db: &Base, b: &mut WriteBatch, id: u64, sketch: &[u64], mindex_keys: &mut Vec<[u8; 18]>) -> Result<()> {
        b.put_cf(db.cf(CF_SKETCH)?, doc_key(id), encode_sketch(sketch));
        self.index.entries(sketch, &mut |t, v| mindex_keys.push(mindex_key(t, v, id)));
        Ok(())
    }

    /// Deletes a document's keys in the batch (`sketch`: its published sketch; `None` for a
    /// damaged record, whose entries are found by a scan).
    fn delete(&self, db: &Base, b: &mut WriteBatch, id: u64, sketch: Option<&[u64]>) -> Result<()> {
        let (scf, icf) = (db.cf(CF_SKETCH)?, db.cf(CF_MINDEX)?);
        b.delete_cf(scf, doc_key(id));
        match sketch {
            Some(s) => self.index.entries(s, &mut |t, v| b.delete_cf(icf, mindex_key(t, v, id))),
            None => {
                for item in db.rocks.iterator_cf(icf, IteratorMode::Start) {
                    let (k, _) = item.map_err(db.rocks_err("scan mindex"))?;
                    if decode_mindex_key(&k).is_some_and(|(_, _, d)| d == id) {
                        b.delete_cf(icf, k);
                    }
                }
            }
        }
        Ok(())
    }
}

impl SideIndex for MethodSide {
    fn name(&self) -> &'static str {
        "method index"
    }

    fn column_families(&self) -> Vec<String> {
        method_cf_names(&self.method)
    }

    /// The sketches of the live documents (and the bucket mirror with the mirror).
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        *self.mem.write() = load(
            o.rocks,
            o.rocks_path,
            &self.method,
            &self.index,
            |id| o.docs.contains_key(&id),
            self.mirror,
        )?;
        Ok(())
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(MethodBatch {
            side: self,
            columns: self.multi_lexicon.then(LexiconColumns::default),
        }))
    }

    fn candidate_source(&self) -> Option<&dyn CandidateSource> {
        Some(self)
    }

    /// The sketches and bucket entries: counted with the table entries.
    fn check(&self, db: &Base, _st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let rp = db.rocks_path.display().to_string();
        let mut fault = |doc: Option<u64>, what: String| {
            rep.faults.push(Fault {
                doc,
                key: None,
                path: rp.clone(),
                what,
            })
        };
        let n = self.check_entries(db, records, &mut fault)?;
        rep.table_entries += n;
        Ok(())
    }
}

/// The method's bucket index answers the candidate search in the SimHash tables' place.
impl CandidateSource for MethodSide {
    fn published(&self, db: &Base, _st: &State, fp: &Fingerprint, rule: Rule, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
        if fp.sketch.len() != self.method.sketch_words() {
            return Err(Error::input(
                None,
                format!(
                    "the fingerprint's sketch has {} words; method {} needs {}",
                    fp.sketch.len(),
                    self.method.name(),
                    self.method.sketch_words()
                ),
            ));
        }
        let mem = self.mem.read();
        let sketches = &mem.sketches;
        let live = |id: u64| sketches.get(&id).map(|s| &s[..]);
        let all = sketches.keys().copied();
        let n = sketches.len() as u64;
        match &mem.buckets {
            Some(b) => search(&self.index, b, &fp.sketch, rule, n, live, all, f),
            None => {
                let rb = RocksBuckets {
                    db: &db.rocks,
                    cf: db.cf(CF_MINDEX)?,
                    path: &db.rocks_path,
                };
                search(&self.index, &rb, &fp.sketch, rule, n, live, all, f)
            }
        }
    }

    /// The bucket index answers for every published document at the cost of a few bucket
    /// lookups, whatever the gap's length: those committed since the snapshot are kept.
    fn since(&self, db: &Base, st: &State, fp: &Fingerprint, rule: Rule, upto: u64, f: &mut dyn FnMut(u64, MethodScore)) -> Result<()> {
        self.published(db, st, fp, rule, &mut |id, s| {
            if id >= upto {
                f(id, s)
            }
        })
    }
}

/// The method index's part of a batch: multi-lexicon keeps the batch's sketches by lexicon column.
struct MethodBatch<'a> {
    side: &'a MethodSide,
    columns: Option<LexiconColumns>,
}

impl BatchPart for MethodBatch<'_> {
    fn on_place(&mut self, d: &Deciding<'_>, _id: u64) -> Result<()> {
        if let Some(columns) = &mut self.columns {
            columns.push(&d.doc.fp.sketch);
        }
        Ok(())
    }

    /// The batch's lexicon columns narrow it to the members that can satisfy the rule
    /// (multi-lexicon: one scan a column); those, or else every member, are compared by the method.
    fn in_batch(&self, db: &Base, pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>) -> bool {
        let compare = |i: usize| {
            let p = pend.new_docs.get(i)?;
            Some((i, db.compare_with(fp, p.fp.simhash, &p.fp.sketch)))
        };
        match &self.columns {
            Some(columns) => {
                let mut within = Vec::new();
                columns.near(&fp.sketch, rule.max_distance, &mut within);
                near.extend(within.into_iter().filter_map(compare));
            }
            None => near.extend((0..pend.new_docs.len()).filter_map(compare)),
        }
        true
    }

    fn write(&mut self, db: &Base, _st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let side = self.side;
        let mem = side.mem.read();
        for &id in &pend.deleted {
            side.delete(db, b, id, mem.sketches.get(&id).map(|s| &s[..]))?;
        }
        let mut mindex_keys = Vec::new();
        for p in &pend.new_docs {
            side.put(db, b, p.id, &p.fp.sketch, &mut mindex_keys)?;
        }
        sorted_into(b, db.cf(CF_MINDEX)?, mindex_keys, true);
        Ok(())
    }

    fn publish(self: Box<Self>, _st: &mut State, pend: &Pending) -> Result<()> {
        let mut mem = self.side.mem.write();
        for id in &pend.deleted {
            mem.remove(*id);
        }
        for p in &pend.new_docs {
            mem.insert(p.id, &p.fp.sketch);
        }
        Ok(())
    }
}

/// Loads the sketches of the documents in `live` (and the bucket mirror when `mirror`).
fn load(rocks: &DB, path: &Path, method: &Method, mi: &MethodIndex, live: impl Fn(u64) -> bool, mirror: bool) -> Result<MethodState> {
    let cf = rocks.cf_handle(CF_SKETCH).ok_or_else(|| {
        Error::corrupt(
            path,
            None,
            format!("column family {CF_SKETCH} of method {} is missing", method.name()),
        )
    })?;
    if rocks.cf_handle(CF_MINDEX).is_none() {
        return Err(Error::corrupt(
            path,
            None,
            format!("column family {CF_MINDEX} of method {} is missing", method.name()),
        ));
    }
    let words = method.sketch_words();
    let mut st = MethodState {
        sketches: IntMap::default(),
        buckets: mirror.then(|| MemBuckets::new(mi.clone())),
    };
    for item in rocks.iterator_cf(cf, IteratorMode::Start) {
        let (k, v) = item.map_err(|e| Error::rocks("scan sketches", path, e))?;
        let id = be_u64(&k).ok_or_else(|| Error::corrupt(path, None, format!("sketch key {k:?} is not 8 bytes")))?;
        if !live(id) {
            // A damaged doc record (left out at open) or an orphan: `check` reports it.
            continue;
        }
        let s = decode_sketch(&v, words)
            .ok_or_else(|| Error::corrupt(path, Some(id), format!("sketch of {} bytes, expected {}", v.len(), 8 * words)))?;
        st.insert(id, &s);
    }
    Ok(st)
}

impl MethodSide {
    /// `check` of the column families: one sketch per live document, equal to the published one,
    /// and exactly its bucket entries. Calls `fault(doc, what)`; returns the number of entries
    /// verified.
    fn check_entries(&self, db: &Base, records: &IntMap<u64, DocRecord>, fault: &mut impl FnMut(Option<u64>, String)) -> Result<u64> {
        let mi = &self.index;
        let words = self.method.sketch_words();
        let mem = self.mem.read();
        let mut stored: IntMap<u64, Vec<u64>> = IntMap::default();
        let mut n = 0u64;
        for item in db.rocks.iterator_cf(db.cf(CF_SKETCH)?, IteratorMode::Start) {
            let (k, v) = item.map_err(db.rocks_err("scan sketches"))?;
            n += 1;
            let Some(id) = be_u64(&k) else {
                fault(None, format!("sketch key {k:?} is not 8 bytes"));
                continue;
            };
            match decode_sketch(&v, words) {
                Some(s) => {
                    if !records.contains_key(&id) {
                        fault(Some(id), "sketch without a doc record".into());
                    } else if mem.sketches.get(&id).is_none_or(|m| m[..] != s[..]) {
                        fault(Some(id), "in-memory sketch differs from the stored one".into());
                    }
                    stored.insert(id, s);
                }
                None => fault(Some(id), format!("sketch of {} bytes, expected {}", v.len(), 8 * words)),
            }
        }
        for &id in records.keys() {
            if !stored.contains_key(&id) {
                fault(Some(id), "live doc has no sketch".into());
            }
        }
        let mut want: Vec<[u8; 18]> = Vec::new();
        for (&id, s) in &stored {
            mi.entries(s, &mut |t, v| want.push(mindex_key(t, v, id)));
        }
        want.sort_unstable();
        let mut got: Vec<Vec<u8>> = Vec::with_capacity(want.len());
        for item in db.rocks.iterator_cf(db.cf(CF_MINDEX)?, IteratorMode::Start) {
            let (k, _) = item.map_err(db.rocks_err("scan mindex"))?;
            got.push(k.to_vec());
        }
        n += got.len() as u64;
        if got.len() != want.len() || got.iter().zip(&want).any(|(g, w)| g[..] != w[..]) {
            let extra = got.iter().filter(|g| want.binary_search_by(|w| w[..].cmp(&g[..])).is_err()).count();
            let missing = want.iter().filter(|w| got.binary_search_by(|g| g[..].cmp(&w[..])).is_err()).count();
            fault(
                None,
                format!(
                    "mindex holds {} entries, the sketches need {}: {extra} unexpected, {missing} missing",
                    got.len(),
                    want.len()
                ),
            );
        }
        if let Some(b) = &mem.buckets {
            if b.entries() != want.len() {
                fault(
                    None,
                    format!("the bucket mirror holds {} entries, the sketches need {}", b.entries(), want.len()),
                );
            }
        }
        Ok(n)
    }
}
