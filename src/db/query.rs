//! Reads: queries by text, fingerprint or SimHash (probe → Hamming ≤ k → size filter → exact
//! Jaccard), `get`, groups and counters. Every read sees whole batches.

use rocksdb::IteratorMode;

use crate::error::{Error, Result};
use crate::fingerprint::similarity::{MethodScore, Rule};
use crate::fingerprint::Fingerprint;
use crate::store::doc_record::{self, DocRecord};
use crate::store::keys::{be_u64, CF_DOCS};

use super::candidates::{CandidateSource, TABLES};
use super::handle::Db;
use super::options::{check_k, check_t, QueryOptions};
use super::side::Query;
use super::snapshot::{jaccard_hit, size_filter, Nearest, Snapshot};
use super::state::State;
use super::types::{sort_hits, Document, GroupInfo, Hit, QueryAnswer, Stats};

impl Db {
    /// Runs a read of the published state: with the in-memory mirror it needs nothing from RocksDB;
    /// without it the tables are read from RocksDB, kept consistent by [`Db::read_rocks`].
    pub(super) fn with_state<T>(&self, f: impl Fn(&State) -> Result<T>) -> Result<T> {
        if self.inner.opts.mirror {
            let st = self.inner.state.read();
            st.whole()?;
            f(&st)
        } else {
            self.read_rocks(f)
        }
    }

    /// The handle's candidate source: a side index's, or the SimHash tables.
    pub(super) fn source(&self) -> &dyn CandidateSource {
        self.inner.sides.candidate_source().unwrap_or(&TABLES)
    }

    /// Every published document that may satisfy `rule` against `fp`, once: `f(id, score)`
    /// ([`CandidateSource::published`] of the handle's source).
    pub(super) fn candidates(&self, st: &State, fp: &Fingerprint, rule: Rule, mut f: impl FnMut(u64, MethodScore)) -> Result<()> {
        self.source().published(&self.inner, st, fp, rule, &mut f)
    }

    /// The published group `gid`; its canonical member must be a live document (the group id is
    /// its doc id) — a record naming a group without one is reported as corruption, never as an
    /// empty canonical key.
    pub(super) fn group_info(&self, st: &State, gid: u64) -> Result<GroupInfo> {
        let canonical = st.docs.get(&gid).ok_or_else(|| {
            Error::corrupt(
                &self.inner.rocks_path,
                Some(gid),
                format!("group {gid} has no live canonical member (doc {gid}); run `fpdb check`"),
            )
        })?;
        Ok(GroupInfo {
            id: gid,
            canonical: canonical.key.to_string(),
            size: st.members.get(&gid).map_or(1, Vec::len),
        })
    }

    /// Near-duplicates of a document by its text.
    pub fn query(&self, text: &str, opts: &QueryOptions) -> Result<Vec<Hit>> {
        Ok(self.query_answer(text, opts)?.hits)
    }

    /// [`Db::query`] for many texts, on every core (each thread takes an equal share, in order):
    /// one result per text, in the order of `texts`. Used by `fpdb query --jsonl`. A thread that
    /// panics makes each of its texts' results [`Error::Panicked`]; the other threads' stand.
    pub fn query_many(&self, texts: &[&str], opts: &QueryOptions) -> Vec<Result<Vec<Hit>>> {
        let threads = crate::index::threads_or_cores(0).min(texts.len()).max(1);
        let per = texts.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let parts: Vec<_> = texts
                .chunks(per)
                .map(|part| {
                    (
                        part.len(),
                        s.spawn(move || {
                            // one fingerprinter (and its buffers) per thread, not one per text
                            let mut f = self.fingerprinter();
                            part.iter()
                                .map(|t| self.query_with(Some(t), &f.fingerprint(t), opts).map(|a| a.hits))
                                .collect::<Vec<_>>()
                        }),
                    )
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|(n, h)| {
                    h.join()
                        .unwrap_or_else(|p| (0..n).map(|_| Err(Error::panicked("query worker", p.as_ref()))).collect())
                })
                .collect()
        })
    }

    /// Near-duplicates of a fingerprint (SimHash within k, then exact Jaccard ≥ t).
    pub fn query_fingerprint(&self, fp: &Fingerprint, opts: &QueryOptions) -> Result<Vec<Hit>> {
        Ok(self.query_fingerprint_answer(fp, opts)?.hits)
    }

    /// [`Db::query`] with the bounds of `opts` (`max_candidates`, `deadline`) reported: the hits,
    /// how many candidates were verified, and whether some were left unverified.
    pub fn query_answer(&self, text: &str, opts: &QueryOptions) -> Result<QueryAnswer> {
        let fp = self.fingerprinter().fingerprint(text);
        self.query_with(Some(text), &fp, opts)
    }

    /// [`Db::query_fingerprint`] with the bounds of `opts` reported ([`Db::query_answer`]). The
    /// candidates are found under the state's read lock; their verification (segment reads and
    /// exact Jaccard) runs on a snapshot with no lock held (`db::snapshot`).
    pub fn query_fingerprint_answer(&self, fp: &Fingerprint, opts: &QueryOptions) -> Result<QueryAnswer> {
        self.query_with(None, fp, opts)
    }

    /// A query by fingerprint (and its text, when asked by text): answered by the side index it
    /// asks for, if any; else the near-duplicate path, whose hits the side indexes may add to or
    /// annotate before the limit applies.
    fn query_with(&self, text: Option<&str>, fp: &Fingerprint, opts: &QueryOptions) -> Result<QueryAnswer> {
        let q = Query { text, fp, opts };
        if let Some(answer) = self.inner.sides.queries().find_map(|s| s.answer(self, &q)) {
            return answer;
        }
        // k, and s for Broder.
        let rule = self.inner.rule(opts.max_distance, opts.min_shared)?;
        let t = check_t(opts.min_jaccard.unwrap_or(self.inner.config.min_jaccard))?;
        // Under the lock: the candidates the size filter keeps, capped at `max_candidates` (the
        // nearest) while they are gathered, then their keys copied; verified after it.
        let snapshot = self.with_state(|st| {
            let keep = size_filter(fp, t);
            let mut near = Nearest::new(opts.max_candidates);
            self.candidates(st, fp, rule, |id, d| {
                if st.docs.get(&id).is_some_and(|m| keep(m.loc.count)) {
                    near.push(id, d);
                }
            })?;
            let (cands, dropped) = near.finish();
            Ok(Snapshot::take(st, cands, |_| true).with_dropped(dropped))
        })?;
        let mut answer = snapshot.verify(opts, |set, c| jaccard_hit(fp, t, set, c))?;
        sort_hits(&mut answer.hits);
        self.inner.sides.queries().try_for_each(|s| s.on_query(self, &q, &mut answer))?;
        answer.hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(answer)
    }

    /// Documents whose SimHash is within k of `simhash` (no Jaccard: there is no shingle set to compare).
    pub fn query_simhash(&self, simhash: u64, opts: &QueryOptions) -> Result<Vec<Hit>> {
        // A side index asked for may need a shingle set or a text, which a SimHash lacks.
        self.inner.sides.queries().try_for_each(|s| s.refuse_simhash(opts))?;
        let k = check_k(opts.max_distance.unwrap_or(self.inner.config.max_distance))?;
        let mut hits = self.with_state(|st| {
            let mut hits = Vec::new();
            self.inner.probe(st, simhash, k, |id, d| {
                if let Some(meta) = st.docs.get(&id) {
                    hits.push(Hit::unverified(
                        meta.key.to_string(),
                        id,
                        d,
                        crate::fingerprint::biblio::MatchKind::Text,
                        super::types::Channel::Text,
                    ));
                }
            })?;
            Ok(hits)
        })?;
        sort_hits(&mut hits);
        hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(hits)
    }

    /// The stored document with this key.
    pub fn get(&self, key: &str) -> Result<Option<Document>> {
        self.read_rocks(|st| {
            let Some(id) = self.committed_id(key)? else { return Ok(None) };
            let Some(record) = self.read_record(id)? else {
                return Err(Error::corrupt(
                    &self.inner.rocks_path,
                    Some(id),
                    format!("key {key:?} points at doc {id}, which has no record"),
                ));
            };
            let group = self.group_info(st, record.group)?;
            Ok(Some(Document { id, record, group }))
        })
    }

    /// Runs `f` with the published state and RocksDB reads that agree with it: the writer writes
    /// RocksDB *before* it publishes a batch to the in-memory state, so a read in between would see a
    /// document the state does not know yet (or miss one it still shows). `f` runs while RocksDB's
    /// latest sequence number equals the one the state was published at, and is re-run otherwise;
    /// after a few tries it waits for the writer to finish its publish (a poisoned handle, whose
    /// state may stay behind RocksDB, then reads RocksDB as it is).
    pub(super) fn read_rocks<T>(&self, f: impl Fn(&State) -> Result<T>) -> Result<T> {
        for _ in 0..8 {
            let st = self.inner.state.read();
            st.whole()?;
            let seq = self.inner.rocks.latest_sequence_number();
            if seq == st.published_seq {
                let r = f(&st);
                if self.inner.rocks.latest_sequence_number() == seq {
                    return r;
                }
            }
            drop(st);
            std::thread::yield_now();
        }
        let _writer = self.inner.writer.lock();
        let st = self.inner.state.read();
        st.whole()?;
        f(&st)
    }

    /// The shingle set of a stored document.
    pub fn shingles(&self, id: u64) -> Result<Option<Vec<u32>>> {
        let st = self.inner.state.read();
        match st.docs.get(&id) {
            Some(m) => Ok(Some(st.segs.read(m.loc, id)?.into_owned())),
            None => Ok(None),
        }
    }

    /// Keys of the members of a group (sorted by doc id).
    pub fn group_members(&self, gid: u64) -> Vec<(u64, String)> {
        let st = self.inner.state.read();
        let ids = st
            .members
            .get(&gid)
            .cloned()
            .unwrap_or_else(|| if st.docs.contains_key(&gid) { vec![gid] } else { vec![] });
        ids.into_iter()
            .filter_map(|id| st.docs.get(&id).map(|m| (id, m.key.to_string())))
            .collect()
    }

    /// Every live document's `(id, simhash, group)`, sorted by id.
    pub fn fingerprints(&self) -> Vec<(u64, u64, u64)> {
        let st = self.inner.state.read();
        let mut v: Vec<(u64, u64, u64)> = st.docs.iter().map(|(&id, m)| (id, m.simhash, m.group)).collect();
        v.sort_unstable();
        v
    }

    /// Key of a live document.
    pub fn key_of(&self, id: u64) -> Option<String> {
        self.inner.state.read().docs.get(&id).map(|m| m.key.to_string())
    }

    /// Calls `f` for every live document (id order) with its record; stops at the first error.
    pub fn for_each_doc(&self, mut f: impl FnMut(u64, &DocRecord) -> Result<()>) -> Result<()> {
        for item in self.inner.rocks.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
            let id = be_u64(&k).ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "doc key is not 8 bytes"))?;
            f(id, &doc_record::decode_doc(&v, &self.inner.rocks_path, Some(id))?)?;
        }
        Ok(())
    }
    /// Counters.
    pub fn stats(&self) -> Stats {
        let st = self.inner.state.read();
        let mut stats = Stats {
            docs: st.docs.len() as u64,
            groups: st.members.len() as u64,
            grouped_docs: st.members.values().map(|m| m.len() as u64).sum(),
            segments: st.seg_usage.len() as u64,
            segment_bytes: st.seg_usage.values().map(|u| u.0).sum(),
            live_bytes: st.seg_usage.values().map(|u| u.1).sum(),
            tables: self.inner.config.tables,
            best_tables: match self.inner.spec.method {
                crate::fingerprint::method::Method::MultiLexicon(_) => self.inner.config.tables,
                _ => crate::index::layout::best_tables(self.inner.config.max_distance, st.docs.len() as u64),
            },
            max_distance: self.inner.config.max_distance,
            min_jaccard: self.inner.config.min_jaccard,
            spec: self.inner.spec.to_string(),
            semantic_pending: 0,
            semantic_vectors: 0,
            semantic_set_aside: 0,
            semantic_indexer: None,
            semantic_indexer_reason: None,
        };
        self.inner.sides.queries().for_each(|q| q.stats(&st, &mut stats));
        stats
    }
}
