//! method: the engine's side of the methods other than SimHash (fingerprint/method.rs,
//! index/method.rs). Everything a method adds to a database goes through here, called from small
//! hooks marked `// method:` in open.rs (column families, loading), commit.rs (keys in the same
//! `WriteBatch`, the publish), write.rs / query.rs (the candidate search) and check.rs.
//!
//! * `simhash` and `weighted-simhash` search the permuted SimHash tables as always.
//! * The others keep each document's sketch (CF `sketch`, and in memory) and its bucket entries
//!   (CF `mindex`, mirrored in memory unless the handle runs without the mirror), both written in
//!   the batch that writes the document, and search [`crate::index::method::search`]. Their
//!   documents are still in the SimHash tables too (their plain SimHash: `query --simhash`,
//!   export and the table checks keep working).
//! * A weighted-simhash database stores its IDF table under meta `idf`; open attaches it to the
//!   spec after checking its hash against the spec's `idf_hash`.

use rocksdb::{IteratorMode, WriteBatch, DB};

use crate::error::{Error, Result};
use crate::fingerprint::method::{IdfHandle, Method};
use crate::fingerprint::similarity::{compare, MethodScore, Rule};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::weighted::IdfTable;
use crate::fingerprint::Fingerprint;
use crate::index::method::{search, MemBuckets, MethodIndex, RocksBuckets};
use crate::intmap::IntMap;
use crate::store::doc_record::DocRecord;
use crate::store::keys::{be_u64, decode_mindex_key, decode_sketch, doc_key, encode_sketch, mindex_key, CF_MINDEX, CF_SKETCH, META_IDF};

use super::handle::Db;
use super::options::check_k;
use super::state::State;
use crate::index::method::MethodState;

/// Attaches the stored IDF table to a weighted-simhash spec (checking its hash); other specs pass.
pub(super) fn attach_idf(spec: &mut FingerprintSpec, rocks: &DB, meta: &rocksdb::ColumnFamily, path: &std::path::Path) -> Result<()> {
    let Method::WeightedSimHash(p) = &mut spec.method else {
        return Ok(());
    };
    let bytes = rocks
        .get_cf(meta, META_IDF)
        .map_err(|e| Error::rocks("read IDF table", path, e))?
        .ok_or_else(|| {
            Error::corrupt(
                path,
                None,
                "meta entry \"idf\" is missing (a weighted-simhash database stores its IDF table there)",
            )
        })?;
    let table = IdfTable::decode(&bytes, path)?;
    if table.hash() != p.idf_hash {
        return Err(Error::corrupt(
            path,
            None,
            format!(
                "the stored IDF table hashes to {:#x}, the spec names {:#x}",
                table.hash(),
                p.idf_hash
            ),
        ));
    }
    p.idf = IdfHandle(Some(std::sync::Arc::new(table)));
    Ok(())
}

/// The creation-time meta entries of a method (the IDF table).
pub(super) fn create_meta(spec: &FingerprintSpec, b: &mut WriteBatch, meta: &rocksdb::ColumnFamily) {
    if let Some(t) = spec.method.idf() {
        b.put_cf(meta, META_IDF, t.encode());
    }
}

/// Loads the sketches of the documents in `live` (and the bucket mirror when `mirror`).
pub(super) fn load(
    rocks: &DB,
    path: &std::path::Path,
    spec: &FingerprintSpec,
    mindex: Option<&MethodIndex>,
    live: impl Fn(u64) -> bool,
    mirror: bool,
) -> Result<MethodState> {
    let Some(mi) = mindex else { return Ok(MethodState::default()) };
    let cf = rocks.cf_handle(CF_SKETCH).ok_or_else(|| {
        Error::corrupt(
            path,
            None,
            format!("column family {CF_SKETCH} of method {} is missing", spec.method.name()),
        )
    })?;
    if rocks.cf_handle(CF_MINDEX).is_none() {
        return Err(Error::corrupt(
            path,
            None,
            format!("column family {CF_MINDEX} of method {} is missing", spec.method.name()),
        ));
    }
    let words = spec.method.sketch_words();
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

impl Db {
    /// The method index, for the methods that have one.
    pub(super) fn mindex(&self) -> Option<&MethodIndex> {
        self.inner.mindex.as_ref()
    }

    /// The rule of a query: `k` (default: the database's) and `s` (default: the spec's).
    pub(super) fn rule(&self, k: Option<u32>, min_shared: Option<u32>) -> Result<Rule> {
        let max_distance = check_k(k.unwrap_or(self.inner.config.max_distance))?;
        let default_s = match &self.inner.spec.method {
            Method::Broder(b) | Method::BroderCharikar(b, _) => b.min_shared,
            _ => 1,
        };
        let min_shared = min_shared.unwrap_or(default_s);
        if let Method::Broder(b) | Method::BroderCharikar(b, _) = &self.inner.spec.method {
            if !(1..=b.supershingles).contains(&min_shared) {
                return Err(Error::InvalidOption {
                    name: "min_shared",
                    message: format!("must be within 1..={} (the supershingles), got {min_shared}", b.supershingles),
                });
            }
        }
        Ok(Rule { max_distance, min_shared })
    }

    /// The method's comparison of a fingerprint with a stored (or pending) document.
    pub(super) fn compare_with(&self, fp: &Fingerprint, simhash: u64, sketch: &[u64]) -> MethodScore {
        compare(&self.inner.spec.method, fp.simhash, &fp.sketch, simhash, sketch)
    }

    /// Every published document satisfying `rule` against `fp`, once: `f(id, score)`. The SimHash
    /// tables for simhash and weighted-simhash, the method index otherwise; the mirror, or RocksDB
    /// without it (filtered to the published documents).
    pub(super) fn candidates(&self, st: &State, fp: &Fingerprint, rule: Rule, mut f: impl FnMut(u64, MethodScore)) -> Result<()> {
        let Some(mi) = self.mindex() else {
            return self.probe(st, fp.simhash, rule.max_distance, |id, d| f(id, MethodScore::Hamming(d)));
        };
        if fp.sketch.len() != self.inner.spec.method.sketch_words() {
            return Err(Error::input(
                None,
                format!(
                    "the fingerprint's sketch has {} words; method {} needs {}",
                    fp.sketch.len(),
                    self.inner.spec.method.name(),
                    self.inner.spec.method.sketch_words()
                ),
            ));
        }
        let sketches = &st.method.sketches;
        let live = |id: u64| sketches.get(&id).map(|s| &s[..]);
        let all = sketches.keys().copied();
        let n = sketches.len() as u64;
        match &st.method.buckets {
            Some(b) => search(mi, b, &fp.sketch, rule, n, live, all, &mut f),
            None => {
                let rb = RocksBuckets {
                    db: &self.inner.rocks,
                    cf: self.cf(CF_MINDEX)?,
                    path: &self.inner.rocks_path,
                };
                search(mi, &rb, &fp.sketch, rule, n, live, all, &mut f)
            }
        }
    }

    /// Puts a new document's sketch into the batch and appends its bucket keys to `mindex_keys`:
    /// the caller adds a whole batch's keys to the column family sorted (`commit::sorted_into`;
    /// ~25 random keys per document for multi-lexicon made the memtable inserts the writer's
    /// largest cost).
    pub(super) fn method_put(&self, b: &mut WriteBatch, id: u64, sketch: &[u64], mindex_keys: &mut Vec<[u8; 18]>) -> Result<()> {
        let Some(mi) = self.mindex() else { return Ok(()) };
        b.put_cf(self.cf(CF_SKETCH)?, doc_key(id), encode_sketch(sketch));
        mi.entries(sketch, &mut |t, v| mindex_keys.push(mindex_key(t, v, id)));
        Ok(())
    }

    /// Deletes a document's method keys in the batch (`sketch`: its published sketch; `None` for a
    /// damaged record, whose entries are found by a scan).
    pub(super) fn method_delete(&self, b: &mut WriteBatch, id: u64, sketch: Option<&[u64]>) -> Result<()> {
        let Some(mi) = self.mindex() else { return Ok(()) };
        let (scf, icf) = (self.cf(CF_SKETCH)?, self.cf(CF_MINDEX)?);
        b.delete_cf(scf, doc_key(id));
        match sketch {
            Some(s) => mi.entries(s, &mut |t, v| b.delete_cf(icf, mindex_key(t, v, id))),
            None => {
                for item in self.inner.rocks.iterator_cf(icf, IteratorMode::Start) {
                    let (k, _) = item.map_err(self.rocks_err("scan mindex"))?;
                    if decode_mindex_key(&k).is_some_and(|(_, _, d)| d == id) {
                        b.delete_cf(icf, k);
                    }
                }
            }
        }
        Ok(())
    }

    /// `check` of the method's column families: one sketch per live document, equal to the
    /// published one, and exactly its bucket entries. Calls `fault(doc, what)`; returns the number
    /// of entries verified.
    pub(super) fn check_method(
        &self,
        st: &State,
        records: &IntMap<u64, DocRecord>,
        fault: &mut impl FnMut(Option<u64>, String),
    ) -> Result<u64> {
        let Some(mi) = self.mindex() else { return Ok(0) };
        let words = self.inner.spec.method.sketch_words();
        let mut stored: IntMap<u64, Vec<u64>> = IntMap::default();
        let mut n = 0u64;
        for item in self.inner.rocks.iterator_cf(self.cf(CF_SKETCH)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan sketches"))?;
            n += 1;
            let Some(id) = be_u64(&k) else {
                fault(None, format!("sketch key {k:?} is not 8 bytes"));
                continue;
            };
            match decode_sketch(&v, words) {
                Some(s) => {
                    if !records.contains_key(&id) {
                        fault(Some(id), "sketch without a doc record".into());
                    } else if st.method.sketches.get(&id).is_none_or(|m| m[..] != s[..]) {
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
        for item in self.inner.rocks.iterator_cf(self.cf(CF_MINDEX)?, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan mindex"))?;
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
        if let Some(b) = &st.method.buckets {
            if b.entries() != want.len() {
                fault(
                    None,
                    format!("the bucket mirror holds {} entries, the sketches need {}", b.entries(), want.len()),
                );
            }
        }
        Ok(n)
    }

    /// Every pair of published documents `(a < b)` satisfying `rule`, each once, with its score,
    /// sorted (the method side of [`crate::pairs`]).
    pub(crate) fn method_pairs(&self, max_distance: u32, min_shared: Option<u32>) -> Result<Vec<(u64, u64, MethodScore)>> {
        let rule = self.rule(Some(max_distance), min_shared)?;
        self.with_state(|st| {
            let mut ids: Vec<u64> = st.docs.keys().copied().collect();
            ids.sort_unstable();
            let mut out = Vec::new();
            for &a in &ids {
                let Some(meta) = st.docs.get(&a) else { continue };
                let fp = Fingerprint {
                    simhash: meta.simhash,
                    shingles: Vec::new(),
                    sketch: st.method.sketches.get(&a).map(|s| s.to_vec()).unwrap_or_default(),
                };
                let mut row = Vec::new();
                self.candidates(st, &fp, rule, |b, s| {
                    if b > a {
                        row.push((a, b, s));
                    }
                })?;
                row.sort_unstable_by_key(|r| r.1);
                out.extend(row);
            }
            Ok(out)
        })
    }
}
