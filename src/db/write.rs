//! The writer's decisions: inserts and deletes, duplicate verification against the committed
//! documents and the batch so far (completing the workers' prechecks), group merges and splits.
//! Every mutation runs inside [`Db::mutation`](super::handle::Db) and ends in [`Db::commit`](super::handle::Db).

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fingerprint::biblio::Biblio;
use crate::fingerprint::similarity::{MethodScore, Rule};
use crate::fingerprint::{Fingerprint, Fingerprinter};

use super::candidates::tables_in_batch;
use super::groups::{components, merge_groups};
use super::handle::Db;
use super::options::{validate_key, Dedup, QueryOptions};
use super::pending::{Pending, PendingDoc};
use super::side::{Additions, Asked, Deciding, Parts};
use super::snapshot::{jaccard_hit, size_compatible, size_filter, verified_hit, Snapshot};
use super::state::{State, Writer};
use super::types::sort_hits;
use super::types::{GroupInfo, Hit, InsertOutcome, NewDoc, Precheck, PreparedDoc};

/// Most documents [`Db::precheck_many`] searches against one snapshot: their probe lists (~5 KB per
/// document at k = 12, m = 5) are held until the part is done.
const PRECHECK_PART: usize = 8192;

/// One batch as the writer decides it: its changes and the side indexes' parts.
struct Batch<'a> {
    pend: Pending,
    parts: Parts<'a>,
}

/// One document's duplicate search: its fingerprint, the rule (k), t, and the document it
/// replaces (`exclude`: never its own duplicate).
#[derive(Clone, Copy)]
struct Search<'a> {
    fp: &'a Fingerprint,
    k: Rule,
    t: f64,
    exclude: Option<u64>,
}

impl Db {
    /// Fingerprints and validates a document (no database access; call from any thread).
    pub fn prepare(&self, fpr: &mut Fingerprinter, mut doc: NewDoc) -> Result<PreparedDoc> {
        validate_key(&doc.key)?;
        let fp = fpr.fingerprint(&doc.text);
        if fp.shingles.is_empty() {
            return Err(Error::input(
                Some(doc.key.as_bytes()),
                "the text has no words (empty, whitespace or punctuation only); nothing to fingerprint",
            ));
        }
        // What the side indexes keep of the text (stored text, the semantic channel's text to embed).
        let kept = self
            .inner
            .sides
            .iter()
            .filter_map(|s| Some((s.name(), s.keep_text(&mut doc)?)))
            .collect();
        // The bibliographic values are validated here, so the writer only indexes well-formed ones.
        let mut prepared = PreparedDoc::new(doc.key, fp, doc.meta)?.with_biblio(doc.biblio)?;
        prepared.text = super::types::KeptTexts(kept);
        Ok(prepared)
    }

    /// Inserts (or replaces) one document durably, linking it to its verified near-duplicates.
    pub fn insert(&self, key: &str, text: &str) -> Result<InsertOutcome> {
        self.insert_with(key, text, Dedup::Link)
    }

    /// [`Db::insert`] with a dedup mode.
    pub fn insert_with(&self, key: &str, text: &str, dedup: Dedup) -> Result<InsertOutcome> {
        let doc = self.prepare(
            &mut self.fingerprinter(),
            NewDoc {
                key: key.to_string(),
                text: text.to_string(),
                meta: None,
                biblio: Biblio::default(),
            },
        )?;
        self.commit_batch(vec![Ok(doc)], dedup)?
            .pop()
            .unwrap_or_else(|| Err(Error::input(Some(key.as_bytes()), "document was not processed")))
    }

    /// Deletes the document with this key; returns whether it existed.
    pub fn delete(&self, key: &str) -> Result<bool> {
        let mut w = self.lock_writer()?;
        let Some(id) = self.committed_id(key)? else { return Ok(false) };
        Self::mutation(&mut w, "delete", |w| {
            let mut pend = Pending::default();
            {
                let st = self.inner.state.read();
                self.remove_doc(&st, w, &mut pend, id)?;
            }
            pend.deleted_keys.push(key.to_string());
            self.commit(w, pend, Parts::begin(&self.inner.sides), Vec::new())
        })?;
        Ok(true)
    }

    pub(super) fn writable(&self) -> Result<()> {
        if self.inner.opts.read_only {
            Err(Error::ReadOnly {
                path: self.inner.path.clone(),
            })
        } else {
            Ok(())
        }
    }
    /// Inserts a batch with one group commit (one segment fsync, one WAL sync). Entries that are
    /// already errors (from [`Db::prepare`]) are passed through. Documents see the earlier documents of
    /// the same batch. Returns one result per entry, in order; `Err` for the whole call means the batch
    /// was not committed (and the handle may be poisoned).
    pub fn commit_batch(&self, docs: Vec<Result<PreparedDoc>>, dedup: Dedup) -> Result<Vec<Result<InsertOutcome>>> {
        self.commit_prechecked(docs.into_iter().map(|d| d.map(|d| (d, None))).collect(), dedup)
    }

    /// Verifies the duplicates of `doc` against the documents committed so far, without the writer:
    /// the ingestion workers call this in parallel; [`Db::commit_prechecked`] completes it.
    pub fn precheck(&self, doc: &PreparedDoc) -> Result<Precheck> {
        let rule = self.inner.rule(None, None)?;
        let t = self.inner.config.min_jaccard;
        let (upto, snapshot) = self.with_state(|st| {
            let mut cands = Vec::new();
            self.candidates(st, &doc.fp, rule, |id, d| cands.push((id, d)))?;
            Ok((st.next_id, Snapshot::take(st, cands, size_filter(&doc.fp, t))))
        })?;
        Ok(Precheck {
            upto,
            dups: verified_dups(&doc.fp, t, snapshot)?,
        })
    }

    /// [`Db::precheck`] for many documents at once, against one snapshot per part of at most 8,192
    /// documents (each [`Precheck`] records its own, so the writer completes each exactly; the
    /// part bounds the probe lists' memory): the candidate source searches them together
    /// (`CandidateSource::many`: on the SimHash
    /// tables' mirror each bucket is read once for every document that probes it), then each
    /// document's candidates are verified by exact Jaccard. The same results as calling
    /// [`Db::precheck`] for each; the outer `Err` is for the whole call, an inner one for that
    /// document's verification.
    ///
    /// The state lock is held only for the short steps: the source's snapshot and the candidates'
    /// snapshot (keys shared, not copied). The verification (segment reads and exact Jaccard)
    /// runs with no lock held, so neither the writer's publish nor queries wait on it. That is
    /// exact because ids are never reused: a candidate removed in between is no longer a published
    /// document and is dropped, and everything committed after the snapshot has an id ≥ `upto`,
    /// which the writer checks itself. Without the mirror, one document at a time.
    pub fn precheck_many(&self, docs: &[&PreparedDoc]) -> Result<Vec<Result<Precheck>>> {
        if docs.len() > PRECHECK_PART {
            let mut out = Vec::with_capacity(docs.len());
            for part in docs.chunks(PRECHECK_PART) {
                out.extend(self.precheck_many(part)?);
            }
            return Ok(out);
        }
        let one_by_one = || Ok(docs.iter().map(|d| self.precheck(d)).collect());
        // Without the mirror every search reads RocksDB, one document at a time.
        if docs.len() < 2 || !self.inner.opts.mirror {
            return one_by_one();
        }
        let rule = self.inner.rule(None, None)?;
        let t = self.inner.config.min_jaccard;
        let fps: Vec<&Fingerprint> = docs.iter().map(|d| &d.fp).collect();
        let Some((upto, cands)) = self.source().many(&self.inner, &self.inner.state, &fps, rule)? else {
            return one_by_one();
        };
        // Under the lock only the snapshot of each document's candidates (the published ones
        // among them, with their keys and shingle locations): a candidate removed since the search
        // is dropped here (its id is never reused). The segment reads and exact Jaccard follow
        // with no lock held.
        let snapshots: Vec<Snapshot> = {
            let st = self.inner.state.read();
            docs.iter()
                .zip(cands)
                .map(|(d, c)| Snapshot::take(&st, c, size_filter(&d.fp, t)))
                .collect()
        };
        Ok(docs
            .iter()
            .zip(snapshots)
            .map(|(d, snap)| {
                Ok(Precheck {
                    upto,
                    dups: verified_dups(&d.fp, t, snap)?,
                })
            })
            .collect())
    }

    /// [`Db::commit_batch`] for documents that may carry a [`Precheck`].
    pub fn commit_prechecked(
        &self,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        dedup: Dedup,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        self.commit_asked(docs, Asked { dedup, ..Asked::default() })
    }

    /// Commits a batch with what the caller asked of the side indexes (e.g.
    /// [`ContainmentIndex::commit_prechecked`]'s containment relations).
    pub(super) fn commit_asked(
        &self,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        asked: Asked,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        let mut w = self.lock_writer()?;
        Self::mutation(&mut w, "batch commit", |w| self.decide_and_commit(w, docs, asked))
    }

    /// The writer's decide → commit → publish for one batch (inside [`Db::mutation`]).
    fn decide_and_commit(
        &self,
        w: &mut Writer,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        asked: Asked,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        let how = How {
            rule: self.inner.rule(None, None)?,
            t: self.inner.config.min_jaccard,
            asked,
        };
        let mut b = Batch {
            pend: Pending::default(),
            parts: Parts::begin(&self.inner.sides),
        };
        let mut results: Vec<Result<InsertOutcome>> = Vec::with_capacity(docs.len());
        {
            let st = self.inner.state.read();
            for doc in docs {
                results.push(match doc {
                    Ok((doc, pre)) => self.decide(&st, w, &mut b, &how, doc, pre)?,
                    Err(e) => Err(e),
                });
            }
        }
        self.commit(w, b.pend, b.parts, Vec::new())?;
        Ok(results)
    }

    /// The writer's decision for one document: its relations searched, then skipped (a duplicate
    /// under [`Dedup::Skip`]) or placed in the batch (replacing the document of its key, joining
    /// its duplicates' groups). The inner `Err` is this document's, the outer the batch's.
    fn decide(
        &self,
        st: &State,
        w: &mut Writer,
        b: &mut Batch<'_>,
        how: &How,
        doc: PreparedDoc,
        pre: Option<Precheck>,
    ) -> Result<Result<InsertOutcome>> {
        if let Err(e) = self.check_sketch(&doc) {
            return Ok(Err(e));
        }
        let old = self.live_id(&b.pend, &doc.key)?;
        let (dups, add) = match self.relations(st, b, how, &doc, pre, old) {
            Ok(f) => f,
            Err(e) => return Ok(Err(e)),
        };
        if how.asked.dedup == Dedup::Skip && !dups.is_empty() {
            return Ok(Ok(outcome(doc.key, None, None, dups, add, None)));
        }
        let (pend, parts) = (&mut b.pend, &mut b.parts);
        if let Some(old) = old {
            self.remove_doc(st, w, pend, old)?;
        }
        let id = w.next_id;
        w.next_id += 1;
        failpoint!("writer.decide");
        failpoint::panic_point("writer.decide.panic");
        let group = self.join_groups(st, w, pend, id, &doc.key, &linked(&dups, &add))?;
        pend.keys.insert(doc.key.clone(), id);
        let placed = Deciding {
            base: &self.inner,
            st,
            pend,
            asked: &how.asked,
            doc: &doc,
            old,
            dups: &dups,
        };
        parts.each(|p| p.on_place(&placed, id))?;
        let key = push_pending(pend, id, doc, group.id);
        Ok(Ok(outcome(key, Some(id), old, dups, add, Some(group))))
    }

    /// The live document of `key` as the batch sees it: placed earlier in the batch, else
    /// committed and not deleted in the batch.
    fn live_id(&self, pend: &Pending, key: &str) -> Result<Option<u64>> {
        Ok(match pend.keys.get(key) {
            Some(&id) => Some(id),
            None => self.committed_id(key)?.filter(|id| !pend.deleted.contains(id)),
        })
    }

    /// A fingerprint made elsewhere must carry this method's sketch.
    fn check_sketch(&self, doc: &PreparedDoc) -> Result<()> {
        let words = self.inner.spec.method.sketch_words();
        if doc.fp.sketch.len() != words {
            return Err(Error::input(
                Some(doc.key.as_bytes()),
                format!(
                    "the fingerprint's sketch has {} words; method {} needs {words}",
                    doc.fp.sketch.len(),
                    self.inner.spec.method.name()
                ),
            ));
        }
        Ok(())
    }

    /// A document's relations to the committed documents and the batch so far: its verified
    /// duplicates (none with dedup off), then what the side indexes add to its outcome.
    fn relations(
        &self,
        st: &State,
        b: &mut Batch<'_>,
        how: &How,
        doc: &PreparedDoc,
        pre: Option<Precheck>,
        old: Option<u64>,
    ) -> Result<(Vec<Hit>, Additions)> {
        let search = Search {
            fp: &doc.fp,
            k: how.rule,
            t: how.t,
            exclude: old,
        };
        let dups = match (how.asked.dedup, pre) {
            (Dedup::Off, _) => Vec::new(),
            (_, Some(pre)) => self.finish_precheck(st, &b.pend, &b.parts, &search, pre)?,
            (_, None) => self.find_dups(st, &b.pend, &b.parts, &search)?,
        };
        let (pend, parts) = (&b.pend, &mut b.parts);
        let mut add = Additions::default();
        let deciding = Deciding {
            base: &self.inner,
            st,
            pend,
            asked: &how.asked,
            doc,
            old,
            dups: &dups,
        };
        parts.each(|p| p.on_decide(&deciding, &mut add))?;
        Ok((dups, add))
    }

    /// New document `id` (key `key`) joins the groups of the documents it links to (`linked`: its
    /// duplicates, and a side index's links): the canonical is the earliest member; the edges are
    /// added (once each). Returns its group.
    fn join_groups(&self, st: &State, w: &mut Writer, pend: &mut Pending, id: u64, key: &str, linked: &[u64]) -> Result<GroupInfo> {
        let mut gids: Vec<u64> = linked.iter().map(|&l| pend.group_of(st, l)).collect();
        gids.sort_unstable();
        gids.dedup();
        let (gid, size) = merge_groups(st, w, pend, &gids, Some(id));
        let mut seen = Vec::with_capacity(linked.len());
        for &l in linked {
            if seen.contains(&l) {
                continue;
            }
            seen.push(l);
            w.edges.entry(id).or_default().push(l);
            w.edges.entry(l).or_default().push(id);
            pend.edges_added.push((id, l));
        }
        let canonical = if gid == id {
            key.to_string()
        } else {
            // The group id is the smallest id of a component of live documents.
            pend.key_of(st, gid).ok_or_else(|| {
                Error::corrupt(
                    &self.inner.rocks_path,
                    Some(gid),
                    format!("group {gid} has no live canonical member"),
                )
            })?
        };
        Ok(GroupInfo { id: gid, canonical, size })
    }

    /// Verified duplicates of `fp` among committed docs (minus those deleted in `pend` and `exclude`)
    /// and the live docs of the batch so far.
    fn find_dups(&self, st: &State, pend: &Pending, parts: &Parts<'_>, s: &Search<'_>) -> Result<Vec<Hit>> {
        let Search { fp, k, t, exclude } = *s;
        let mut cands = Vec::new();
        self.candidates(st, fp, k, |id, d| {
            if Some(id) != exclude && !pend.deleted.contains(&id) {
                cands.push((id, d));
            }
        })?;
        let mut hits = Vec::new();
        self.verify(st, fp, t, cands, &mut hits)?;
        self.pending_dups(pend, parts, s, &mut hits);
        sort_hits(&mut hits);
        Ok(hits)
    }

    /// Verifies committed candidates `(id, distance)` by exact Jaccard ≥ t (size filter from the
    /// stored count first, then the segment read) and appends the hits.
    pub(super) fn verify(
        &self,
        st: &State,
        fp: &Fingerprint,
        t: f64,
        cands: impl IntoIterator<Item = (u64, MethodScore)>,
        hits: &mut Vec<Hit>,
    ) -> Result<()> {
        for (id, d) in cands {
            let Some(meta) = st.docs.get(&id) else { continue };
            if !size_compatible(fp.shingles.len(), meta.loc.count, t) {
                continue;
            }
            hits.extend(verified_hit(fp, t, &st.segs.read(meta.loc, id)?, id, &meta.key, meta.loc.count, d));
        }
        Ok(())
    }

    /// Completes a worker's [`Precheck`]: drops hits deleted since (or `exclude`), adds documents
    /// committed after the worker's snapshot and those of this batch. Falls back to a full search when
    /// the snapshot is older than [`State::recent`] reaches.
    fn finish_precheck(&self, st: &State, pend: &Pending, parts: &Parts<'_>, s: &Search<'_>, pre: Precheck) -> Result<Vec<Hit>> {
        if pre.upto < st.recent_floor {
            return self.find_dups(st, pend, parts, s);
        }
        let Search { fp, k, t, exclude } = *s;
        let mut hits: Vec<Hit> = pre
            .dups
            .into_iter()
            .filter(|h| Some(h.id) != exclude && !pend.deleted.contains(&h.id) && st.docs.contains_key(&h.id))
            .collect();
        let keep = |id: u64| Some(id) != exclude && !pend.deleted.contains(&id);
        let mut gap: Vec<(u64, MethodScore)> = Vec::new();
        self.source().since(&self.inner, st, fp, k, pre.upto, &mut |id, s| {
            if keep(id) {
                gap.push((id, s));
            }
        })?;
        self.verify(st, fp, t, gap, &mut hits)?;
        self.pending_dups(pend, parts, s, &mut hits);
        sort_hits(&mut hits);
        Ok(hits)
    }

    fn pending_dups(&self, pend: &Pending, parts: &Parts<'_>, s: &Search<'_>, hits: &mut Vec<Hit>) {
        let Search { fp, k, t, exclude } = *s;
        let mut near: Vec<(usize, MethodScore)> = Vec::new();
        if !parts.in_batch(&self.inner, pend, fp, k, &mut near) {
            tables_in_batch(pend, fp, k, &mut near);
        }
        for (i, d) in near {
            let Some(p) = pend.new_docs.get(i) else { continue };
            if !p.alive || Some(p.id) == exclude {
                continue;
            }
            if d.satisfies(k) {
                hits.extend(verified_hit(fp, t, &p.fp.shingles, p.id, &p.key, p.fp.shingles.len() as u32, d));
            }
        }
    }

    /// Removes doc `id` (committed or earlier in this batch): its edges, and splits its group.
    fn remove_doc(&self, st: &State, w: &mut Writer, pend: &mut Pending, id: u64) -> Result<()> {
        let gid = pend.group_of(st, id);
        if let Some(p) = pend.new_docs.iter_mut().find(|p| p.id == id && p.alive) {
            p.alive = false;
            pend.keys.remove(&p.key);
        } else {
            pend.deleted.insert(id);
            if let Some(m) = st.docs.get(&id) {
                pend.deleted_keys.push(m.key.to_string());
            }
        }
        for y in w.edges.remove(&id).into_iter().flatten() {
            if let Some(v) = w.edges.get_mut(&y) {
                v.retain(|&x| x != id);
                if v.is_empty() {
                    w.edges.remove(&y);
                }
            }
            pend.edges_removed.push((id, y));
        }
        pend.touched_groups.insert(gid);
        if let Some(mut members) = w.members.remove(&gid) {
            members.retain(|&x| x != id);
            for comp in components(&members, &w.edges) {
                let new_gid = comp[0];
                for &m in &comp {
                    if pend.group_of(st, m) != new_gid {
                        pend.set_group(m, new_gid);
                    }
                }
                pend.touched_groups.insert(new_gid);
                if comp.len() > 1 {
                    w.members.insert(new_gid, comp);
                }
            }
        }
        Ok(())
    }
}

/// How a batch is decided: the method's rule (k, and s for Broder), the Jaccard threshold, and
/// what the caller asked (the dedup mode, what it asks of the side indexes).
struct How {
    rule: Rule,
    t: f64,
    asked: Asked,
}

/// The documents a placed document links to: its verified duplicates but those a side index keeps
/// it from (a curator's `distinct`), and the documents a side index links it to (a curator's
/// `same`).
fn linked(dups: &[Hit], add: &Additions) -> Vec<u64> {
    add.links
        .iter()
        .copied()
        .chain(dups.iter().map(|h| h.id))
        .filter(|&l| !add.not_linked.iter().any(|n| n.id == l))
        .collect()
}

/// Adds a placed document to the batch's new documents (and its simhash) as `id` in `group`;
/// gives back its key.
fn push_pending(pend: &mut Pending, id: u64, doc: PreparedDoc, group: u64) -> String {
    pend.simhashes.push(doc.fp.simhash);
    debug_assert!(
        pend.new_docs.last().is_none_or(|p| p.id < id),
        "new_docs in id order (Pending::new_doc)"
    );
    pend.new_docs.push(PendingDoc {
        id,
        key: doc.key.clone(),
        fp: doc.fp,
        meta: doc.meta,
        biblio: doc.biblio,
        text: doc.text,
        group,
        alive: true,
    });
    doc.key
}

/// One document's outcome: stored as `id` (with the document it replaced and its group) or
/// skipped (all `None`). What side indexes report (exact metadata matches) goes beside the text
/// matches, never linked.
fn outcome(key: String, id: Option<u64>, replaced: Option<u64>, dups: Vec<Hit>, add: Additions, group: Option<GroupInfo>) -> InsertOutcome {
    InsertOutcome {
        key,
        id,
        replaced,
        duplicates: dups.into_iter().chain(add.reported).collect(),
        group,
        containment: add.containment,
        not_linked: add.not_linked,
    }
}

/// The writer's duplicate test (exact Jaccard ≥ `t`) on a snapshot's candidates, run with no lock
/// held; sorted as the writer sorts them.
fn verified_dups(fp: &Fingerprint, t: f64, snapshot: Snapshot) -> Result<Vec<Hit>> {
    let mut dups = snapshot.verify(&QueryOptions::default(), |set, c| jaccard_hit(fp, t, set, c))?.hits;
    sort_hits(&mut dups);
    Ok(dups)
}
