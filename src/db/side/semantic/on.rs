//! The CORE paper's semantic channel as a side index (feature `semantic`; the channel itself is
//! `crate::semantic`). What it adds to the engine:
//!
//! | step | what |
//! |---|---|
//! | create | the model loaded (its identity), the [`SemanticSpec`] staged into `meta` |
//! | open (writer) | the `semantic` and `semantic_queue` column families created when the spec is there |
//! | open | the spec read, the model loaded and checked against it, the vectors into memory |
//! | after open | the background [`Indexer`] started (a writer, `SemanticOptions::indexer`) |
//! | prepare | the text to embed taken from the document, cut in place ([`embed_text_owned`]) and encoded as the queue value ([`sem::queue::encode`], LZ4), on the ingest workers |
//! | write | each new document's text queued (`semantic_queue`), in the batch's `WriteBatch`; a deleted or replaced document's vector and queued text deleted there |
//! | publish | a deleted document's vector leaves memory |
//! | after commit | the indexer woken |
//! | query | the text embedded, cos ≥ β over the vectors (exact scan, or the sign-code index), unioned with the text hits: `channels`, `cosine`, `semantic_pending` |
//! | check | vectors against the records, the cursor, the floor, the set-aside entries and memory |
//! | stats | `semantic_pending`, `semantic_vectors`, `semantic_set_aside`, `semantic_indexer` |
//!
//! The indexer's commits ([`DbCorpus::commit`]) take the writer lock: a document deleted while its
//! text was being embedded loses its queued text in its own batch, and the indexer's batch, which
//! checks the queue under the lock, leaves its vector out. So at every instant the durable state
//! holds: every live document at or above the floor and below the cursor has exactly one vector
//! or a set-aside entry (nothing to embed, or the model failed on it), none at or above the cursor
//! has a vector, and every live document at or above it (below `next_doc`) with a text has it
//! queued. In a `--groups union` database the links of a batch are found before the writer lock
//! (an exact scan over every vector per new vector), and found again under it only when vectors
//! were published in between (a backfill from texts): the lock covers the commits alone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use rocksdb::{WriteBatch, WriteOptions};

use crate::error::{Error, Result};
use crate::fingerprint::biblio::MatchKind;
use crate::fingerprint::similarity::hamming;
use crate::intmap::IntMap;
use crate::semantic::{
    self as sem, embed_text, embed_text_owned, Aside, BackfillReport, Corpus, Embedder, EmbedderOptions, Groups, Indexer, IndexerOptions,
    Scan, SemanticChannel, SemanticError, SemanticOptions, SemanticSpec, SemanticStatus, StoredVector, CF_SEMANTIC, CF_SEMANTIC_QUEUE,
};
use crate::store::doc_record::DocRecord;
use crate::store::keys::CF_META;

use super::super::{BatchPart, Creating, Opening, Query, QuerySide, Registering, Settings, SideIndex};
use super::active::Active;
use crate::db::background::{Background, View};
use crate::db::base::Base;
use crate::db::cfs::meta_cf;
use crate::db::handle::{Db, Inner};
use crate::db::pending::Pending;
use crate::db::state::{State, Writer};
use crate::db::types::{Channel, CheckReport, Fault, Hit, NewDoc, QueryAnswer, Stats};

/// The reason recorded for a document whose text (or field) is empty.
const NOTHING_TO_EMBED: &str = "nothing to embed: the text (or the spec's field) is empty";

/// The side index: always registered (with the feature); active when the database's spec has it.
pub(crate) struct Semantic {
    /// The database was created with the channel, or it was added (its `meta` has the spec).
    on: bool,
    opts: SemanticOptions,
    read_only: bool,
    active: OnceLock<Active>,
}

impl Semantic {
    pub(crate) fn new(r: &Registering<'_>) -> Result<Option<Semantic>> {
        let on = match r.from {
            Settings::New(create) => create.semantic.is_some(),
            Settings::Stored(rocks) => sem::read_spec(rocks, meta_cf(rocks, r.rocks_path)?)?.is_some(),
        };
        Ok(Some(Semantic {
            on,
            opts: r.opts.semantic.clone(),
            read_only: r.opts.read_only,
            active: OnceLock::new(),
        }))
    }

    /// The model directory of this handle: its own, else the one recorded at creation.
    fn model_dir(&self, spec: &SemanticSpec) -> Result<PathBuf> {
        let dir = self.opts.model_dir.clone().or_else(|| spec.model_dir.clone());
        dir.ok_or_else(|| {
            SemanticError::ModelMissing {
                dir: PathBuf::from(&spec.model.name),
                missing: PathBuf::from("(no model directory recorded: pass one)"),
            }
            .into()
        })
    }

    fn embedder(&self, dir: &Path, max_tokens: usize) -> Result<Embedder> {
        let o = EmbedderOptions {
            max_tokens,
            threads: self.opts.threads,
            nice: self.opts.nice,
            ..EmbedderOptions::default()
        };
        Embedder::load(dir, &o)
    }

    fn active(&self) -> Option<&Active> {
        self.active.get()
    }
}

impl SideIndex for Semantic {
    fn name(&self) -> &'static str {
        "semantic channel"
    }

    fn column_families(&self) -> Vec<String> {
        match self.on {
            true => sem::COLUMN_FAMILIES.iter().map(|s| s.to_string()).collect(),
            false => Vec::new(),
        }
    }

    /// The model is loaded once to record its identity; its spec goes into `meta`.
    fn create(&self, c: &Creating<'_>, b: &mut WriteBatch) -> Result<()> {
        let Some(cfg) = &c.create.semantic else { return Ok(()) };
        cfg.validate()?;
        let embedder = self.embedder(&cfg.model_dir, cfg.max_tokens)?;
        let mut spec = SemanticSpec::from_config(embedder.info().clone(), cfg);
        // absolute, so that a handle opened from another directory finds the model
        spec.model_dir = cfg.model_dir.canonicalize().ok().or(spec.model_dir);
        sem::stage_spec(b, c.meta, &spec)?;
        sem::stage_floor(b, c.meta, 0);
        Ok(())
    }

    /// The spec, the model (checked against it), the vectors.
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        let Some(spec) = sem::read_spec(o.rocks, o.meta)? else {
            return Ok(());
        };
        let dir = self.model_dir(&spec)?;
        let embedder = self.embedder(&dir, spec.max_tokens)?;
        let Some((channel, cursor)) = SemanticChannel::load(o.rocks, None)? else {
            return Ok(());
        };
        channel.check_embedder(&embedder)?;
        let aside = sem::read_aside(o.rocks, o.meta)?
            .into_iter()
            .map(|(id, kind, why)| (id, (kind, why)))
            .collect();
        let _ = self.active.set(Active {
            channel: Arc::new(channel),
            embedder: Arc::new(embedder),
            search: self.opts.search,
            cursor_at_open: cursor,
            indexer: OnceLock::new(),
            aside: Mutex::new(aside),
        });
        Ok(())
    }

    /// Takes the document's text, cuts it in place (no copy) and encodes the queue value (LZ4): on
    /// the ingest workers, so that the writer's WAL and memtable get the compressed bytes
    /// (docs/performance.md, "The semantic channel").
    fn keep_text(&self, doc: &mut NewDoc) -> Option<Vec<u8>> {
        let spec = self.active()?.channel.spec();
        let text = std::mem::take(&mut doc.text);
        let t = embed_text_owned(text, doc.meta.as_deref(), spec.field.as_deref(), spec.max_tokens);
        (!t.trim().is_empty()).then(|| sem::queue::encode(&t))
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(SemanticBatch { side: self }))
    }

    /// The background indexer of a writer (its thread holds the handle).
    fn start(&self, db: &Db) -> Result<()> {
        let Some(a) = self.active() else { return Ok(()) };
        if self.read_only || !self.opts.indexer {
            return Ok(());
        }
        let corpus = Arc::new(DbCorpus {
            db: Arc::downgrade(&db.inner),
        });
        let planes = Arc::new(a.channel.planes().clone());
        let opts = IndexerOptions {
            batch: self.opts.batch,
            ..IndexerOptions::default()
        };
        let indexer = Indexer::start(a.embedder.clone(), planes, corpus, a.cursor_at_open, opts)?;
        let _ = a.indexer.set(indexer);
        Ok(())
    }

    fn background(&self) -> Option<&dyn Background> {
        Some(self)
    }

    fn query(&self) -> Option<&dyn QuerySide> {
        Some(self)
    }

    fn check(&self, db: &Base, _st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let Some(a) = self.active() else { return Ok(()) };
        let mut live: Vec<u64> = records.keys().copied().collect();
        live.sort_unstable();
        let r = a.channel.check(&db.rocks, &live)?;
        let path = db.rocks_path.display().to_string();
        let mut fault = |doc: u64, what: String| {
            rep.faults.push(Fault {
                doc: Some(doc),
                key: records.get(&doc).map(|r| r.key.clone()),
                path: path.clone(),
                what,
            })
        };
        for (id, e) in r.damaged {
            fault(id, format!("semantic vector: {e}"));
        }
        for id in r.beyond_cursor {
            fault(id, "a semantic vector at or above the indexer's cursor".into());
        }
        for id in r.orphans {
            fault(id, "a semantic vector of a document that is not live".into());
        }
        for id in r.missing {
            fault(
                id,
                "no semantic vector and no set-aside entry, below the indexer's cursor: the vector was lost; `fpdb semantic backfill DB --input FILE` with its text embeds it again".into(),
            );
        }
        for id in r.stale_aside {
            fault(id, "a set-aside entry of a document that is not live or has a vector".into());
        }
        Ok(())
    }
}

/// Semantic matches join the text hits; its counters join `Db::stats`.
impl QuerySide for Semantic {
    fn stats(&self, st: &State, stats: &mut Stats) {
        if let Some(a) = self.active() {
            stats.semantic_vectors = a.channel.len() as u64;
            stats.semantic_pending = st.next_id.saturating_sub(a.cursor());
            stats.semantic_set_aside = a.failures();
            let state = a.state();
            stats.semantic_indexer = Some(state.word().into());
            stats.semantic_indexer_reason = state.reason().map(str::to_owned);
        }
    }

    /// The text hits are answered whatever the channel's state: a stopped indexer ends a wait
    /// early (`semantic_pending` says what is missing), and a query text the model fails on is
    /// answered by the text channel alone.
    fn on_query(&self, db: &Db, q: &Query<'_>, answer: &mut QueryAnswer) -> Result<()> {
        let Some(a) = self.active() else { return Ok(()) };
        let spec = a.channel.spec();
        let beta = q.opts.semantic.min_cosine.unwrap_or(spec.min_cosine);
        sem::check_beta(beta)?;
        if let Some(timeout) = q.opts.semantic.wait {
            match db.semantic().wait(timeout) {
                Err(Error::Semantic(SemanticError::IndexerStopped { .. })) => {}
                r => r?,
            }
        }
        answer.semantic_pending = db.semantic().pending()?;
        let Some(text) = q.text else { return Ok(()) };
        let text = embed_text(text, None, None, spec.max_tokens);
        let v = match a.channel.embed_query(&a.embedder, &text) {
            Ok(v) => v,
            Err(Error::Semantic(SemanticError::Inference { .. })) => return Ok(()),
            Err(e) => return Err(e),
        };
        let found = a.channel.query(&v, Some(beta), a.search, None);
        union_hits(db, &a.channel, &v, q.fp.simhash, found, answer)
    }
}

/// The semantic channel's part of a batch (it keeps nothing between the hooks): the new
/// documents' texts queued, the deleted documents' vectors and queue entries removed.
struct SemanticBatch<'a> {
    side: &'a Semantic,
}

impl BatchPart for SemanticBatch<'_> {
    /// New documents' texts queued (one with nothing to embed set aside as such); deleted
    /// documents' vectors, queued texts and set-aside entries deleted.
    fn write(&mut self, db: &Base, _st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let side = self.side;
        let Some(a) = side.active() else { return Ok(()) };
        let (cf, queue, meta) = (db.cf(CF_SEMANTIC)?, db.cf(CF_SEMANTIC_QUEUE)?, db.cf(CF_META)?);
        let aside = a.aside.lock();
        for &id in &pend.deleted {
            sem::stage_delete(b, cf, id);
            sem::stage_unqueue(b, queue, id);
            if aside.contains_key(&id) {
                sem::stage_unaside(b, meta, id);
            }
        }
        for p in pend.new_docs.iter().filter(|p| p.alive) {
            match p.text.get(side.name()) {
                Some(t) => sem::stage_queue(b, queue, p.id, t),
                None => sem::stage_aside(b, meta, p.id, Aside::Empty, NOTHING_TO_EMBED),
            }
        }
        Ok(())
    }

    fn publish(self: Box<Self>, _st: &mut State, pend: &Pending) -> Result<()> {
        let side = self.side;
        if let Some(a) = side.active() {
            let mut aside = a.aside.lock();
            for &id in &pend.deleted {
                a.channel.publish_delete(id);
                aside.remove(&id);
            }
            for p in pend.new_docs.iter().filter(|p| p.alive && p.text.get(side.name()).is_none()) {
                aside.insert(p.id, (Aside::Empty, NOTHING_TO_EMBED.into()));
            }
        }
        Ok(())
    }
}

/// The indexer runs on its own thread: a commit wakes it (it embeds from its durable cursor, so a
/// close has nothing to write, and it stops when the handle drops).
impl Background for Semantic {
    fn after_commit(&self, _v: &View<'_>, _w: &mut Writer) -> Result<()> {
        if let Some(i) = self.active().and_then(|a| a.indexer.get()) {
            i.notify();
        }
        Ok(())
    }
}

/// Adds the semantic matches to a text answer: a text hit the channel also found gets the
/// `semantic` channel, every text hit with a vector its cosine, and the others are appended (best
/// cosine first) as `MatchKind::Semantic` hits.
fn union_hits(
    db: &Db,
    ch: &SemanticChannel,
    v: &StoredVector,
    simhash: u64,
    found: Vec<sem::SemanticHit>,
    answer: &mut QueryAnswer,
) -> Result<()> {
    let mut by_id: IntMap<u64, f32> = found.iter().map(|h| (h.id, h.cosine)).collect();
    for h in &mut answer.hits {
        match by_id.remove(&h.id) {
            Some(c) => {
                h.cosine = Some(c);
                h.channels.push(Channel::Semantic);
            }
            None => h.cosine = ch.vector(h.id).map(|d| v.cosine(&d)),
        }
    }
    let mut extra: Vec<(u64, f32)> = by_id.into_iter().collect();
    extra.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let metas = db.with_state(|st| {
        Ok(extra
            .iter()
            .map(|(id, _)| st.docs.get(id).map(|m| (m.key.to_string(), m.simhash)))
            .collect::<Vec<_>>())
    })?;
    for ((id, cosine), meta) in extra.into_iter().zip(metas) {
        let Some((key, fp)) = meta else { continue }; // deleted meanwhile
        let mut hit = Hit::unverified(key, id, hamming(fp, simhash), MatchKind::Semantic, Channel::Semantic);
        hit.cosine = Some(cosine);
        answer.hits.push(hit);
    }
    Ok(())
}

/// The pairs a batch of newly embedded documents adds to the groups of a `--groups union`
/// database: each new vector with every embedded document (the channel's search, exact or
/// indexed as the handle's queries) and with the batch's other vectors at cos ≥ β. Each pair once,
/// the smaller id first.
fn union_links(ch: &SemanticChannel, search: sem::SearchMode, batch: &[(u64, StoredVector, Vec<u8>)]) -> Vec<(u64, u64)> {
    let beta = ch.spec().min_cosine;
    let mut pairs = Vec::new();
    crate::failpoint::pause_point("semantic.links");
    for (i, (id, v, _)) in batch.iter().enumerate() {
        for h in ch.query(v, Some(beta), search, Some(*id)) {
            pairs.push((h.id.min(*id), h.id.max(*id)));
        }
        for (other, w, _) in &batch[..i] {
            if v.cosine(w) >= beta {
                pairs.push(((*other).min(*id), (*other).max(*id)));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The database as the indexer sees it: the queued texts, `next_doc`, and commits under the
/// writer lock. Holds the handle weakly: the indexer never keeps a closed database open.
struct DbCorpus {
    db: Weak<Inner>,
}

impl DbCorpus {
    fn db(&self) -> sem::Result<Db> {
        self.db.upgrade().map(|inner| Db { inner }).ok_or_else(|| {
            SemanticError::IndexerStopped {
                cause: "the database was closed".into(),
            }
            .into()
        })
    }
}

impl Corpus for DbCorpus {
    fn scan(&self, from: u64, max: usize) -> sem::Result<Scan> {
        let db = self.db()?;
        let ack = self.acknowledged();
        let queue = db.cf(CF_SEMANTIC_QUEUE)?;
        let entries = sem::scan_queue(&db.inner.rocks, queue, from, ack, max)?;
        let next = match entries.last() {
            Some(&(id, _)) if entries.len() == max => id + 1,
            _ => ack,
        };
        let (mut docs, mut unreadable) = (Vec::with_capacity(entries.len()), Vec::new());
        for (id, text) in entries {
            match text {
                Ok(t) => docs.push((id, t)),
                Err(e) => unreadable.push((id, e.to_string())),
            }
        }
        Ok(Scan { docs, unreadable, next })
    }

    fn acknowledged(&self) -> u64 {
        self.db.upgrade().map_or(0, |inner| inner.state.read().next_id)
    }

    fn commit(
        &self,
        vectors: Vec<(u64, StoredVector, Vec<u8>)>,
        aside: Vec<(u64, Aside, String)>,
        from: u64,
        cursor: u64,
    ) -> sem::Result<()> {
        let db = self.db()?;
        let Some(a) = db.inner.sides.semantic.as_ref().and_then(|s| s.active()) else {
            return Err(SemanticError::IndexerStopped {
                cause: "the channel is not loaded".into(),
            }
            .into());
        };
        // the scans before the lock (a document deleted meanwhile is skipped by the link)
        let links = Links::find(a, &vectors);
        let mut w = db.lock_writer()?;
        let queue = db.cf(CF_SEMANTIC_QUEUE)?;
        let mut kept = Vec::with_capacity(vectors.len());
        for v in vectors {
            if sem::queued(&db.inner.rocks, queue, v.0)? {
                kept.push(v);
            }
        }
        let mut kept_aside = Vec::with_capacity(aside.len());
        for x in aside {
            if sem::queued(&db.inner.rocks, queue, x.0)? {
                kept_aside.push(x);
            }
        }
        commit_vectors(&db, &mut w, a, kept, links, kept_aside, cursor, |b| {
            sem::stage_dequeue(b, queue, from, cursor)
        })
    }
}

/// The union links of a batch of new vectors, found outside the writer lock, and the channel's
/// generation they were found at.
pub(super) struct Links {
    pairs: Vec<(u64, u64)>,
    generation: u64,
}

impl Links {
    /// The links of `batch` (none outside a `--groups union` database).
    pub(super) fn find(a: &Active, batch: &[(u64, StoredVector, Vec<u8>)]) -> Links {
        let generation = a.channel.generation();
        let pairs = match a.channel.spec().groups {
            Groups::Union => union_links(&a.channel, a.search, batch),
            _ => Vec::new(),
        };
        Links { pairs, generation }
    }
}

/// Commits embedded vectors of live documents under the writer lock (`w`): in a `--groups union`
/// database their links first (`links`, found before the lock; found again here when vectors
/// were published since), then one batch with the vectors, the set-aside entries `aside`, the
/// cursor (`cursor`: moved by the indexer, kept by a backfill from texts) and `extra`; then the
/// vectors published, and the published sequence number moved with them (so that readers of
/// RocksDB, `Db::read_rocks`, never wait for the writer lock because of this write).
#[allow(clippy::too_many_arguments)]
pub(super) fn commit_vectors(
    db: &Db,
    w: &mut Writer,
    a: &Active,
    kept: Vec<(u64, StoredVector, Vec<u8>)>,
    links: Links,
    aside: Vec<(u64, Aside, String)>,
    cursor: u64,
    extra: impl FnOnce(&mut WriteBatch),
) -> Result<()> {
    crate::failpoint!("semantic.commit");
    if a.channel.spec().groups == Groups::Union {
        // The links first: a crash before the vectors' batch re-embeds these documents after
        // recovery and links them again, which changes nothing (`Db::link_committed`).
        let pairs = if links.generation == a.channel.generation() {
            links.pairs
        } else {
            union_links(&a.channel, a.search, &kept)
        };
        db.link_committed(w, &pairs)?;
    }
    let records: Vec<(u64, Vec<u8>)> = kept.iter().map(|(id, _, b)| (*id, b.clone())).collect();
    let mut batch = WriteBatch::default();
    a.channel.write_vectors(&db.inner.rocks, &mut batch, &records, cursor)?;
    let meta = db.cf(CF_META)?;
    for (id, kind, why) in &aside {
        sem::stage_aside(&mut batch, meta, *id, *kind, why);
    }
    extra(&mut batch);
    let mut wo = WriteOptions::default();
    wo.set_sync(db.inner.opts.sync);
    db.inner
        .rocks
        .write_opt(batch, &wo)
        .map_err(|e| Error::rocks("the indexer's commit", &db.inner.rocks_path, e))?;
    let published: Vec<(u64, StoredVector)> = kept.into_iter().map(|(id, v, _)| (id, v)).collect();
    // in step with the published documents: under the state's write lock (the seam's rule)
    let mut st = db.inner.state.write();
    st.published_seq = db.inner.rocks.latest_sequence_number();
    a.channel.publish(&published);
    a.aside.lock().extend(aside.into_iter().map(|(id, kind, why)| (id, (kind, why))));
    Ok(())
}

impl Db {
    pub(super) fn semantic_active(&self) -> Result<&Active> {
        self.inner
            .sides
            .semantic
            .as_ref()
            .and_then(|s| s.active())
            .ok_or_else(|| Error::InvalidOption {
                name: "semantic",
                message: format!(
                    "{} has no semantic channel; create it with `fpdb init --semantic MODEL_DIR`",
                    self.path().display()
                ),
            })
    }

    /// The cosine of two documents' stored vectors (`None` without the channel, or while either
    /// is not embedded yet or was set aside).
    pub(crate) fn semantic_cosine(&self, a: u64, b: u64) -> Option<f32> {
        let ch = &self.semantic_active().ok()?.channel;
        Some(ch.vector(a)?.cosine(&ch.vector(b)?))
    }
}

/// The semantic channel of a database ([`Db::semantic`]): its spec and state, the documents it
/// has not embedded yet, its pairs, and the waits and backfills that embed them. Every method of a
/// database without the channel answers as its documentation says (most refuse with
/// [`Error::InvalidOption`]).
#[derive(Clone, Copy, Debug)]
pub struct SemanticIndex<'a> {
    pub(crate) db: &'a Db,
}

impl Db {
    /// The semantic channel's API ([`SemanticIndex`]).
    pub fn semantic(&self) -> SemanticIndex<'_> {
        SemanticIndex { db: self }
    }
}

impl<'a> SemanticIndex<'a> {
    /// The semantic channel's spec, when the database has the channel.
    pub fn spec(&self) -> Option<&'a SemanticSpec> {
        self.db.semantic_active().ok().map(|a| a.channel.spec())
    }

    /// Acknowledged documents the channel has not embedded yet (0 without the channel); an
    /// indexer that stopped leaves them pending ([`SemanticIndex::status`] says why).
    pub fn pending(&self) -> Result<u64> {
        let Ok(a) = self.db.semantic_active() else { return Ok(0) };
        Ok(self.db.inner.state.read().next_id.saturating_sub(a.cursor()))
    }

    /// The channel's state (`None` without the channel): `running`, `degraded` (its indexer
    /// retrying a failed step, or documents set aside) or `stopped`, with the reason; `off` where
    /// this handle runs no indexer.
    pub fn status(&self) -> Option<SemanticStatus> {
        let a = self.db.semantic_active().ok()?;
        let s = a.state();
        let i = a.indexer.get();
        Some(SemanticStatus {
            state: s.state,
            reason: s.reason,
            set_aside: a.failures(),
            retries: i.map_or(0, Indexer::retries),
            embedded: i.map_or(0, Indexer::embedded),
        })
    }

    /// The live documents the channel set aside as failures: (doc id, key, why), by id.
    pub fn set_aside(&self) -> Result<Vec<(u64, String, String)>> {
        let a = self.db.semantic_active()?;
        let failed: Vec<(u64, String)> = a
            .aside
            .lock()
            .iter()
            .filter(|(_, (k, _))| k.is_failure())
            .map(|(id, (_, why))| (*id, why.clone()))
            .collect();
        let st = self.db.inner.state.read();
        Ok(failed
            .into_iter()
            .filter_map(|(id, why)| st.docs.get(&id).map(|m| (id, m.key.to_string(), why)))
            .collect())
    }

    /// Every pair of embedded documents with cos ≥ β (`beta`, or the database's), each once
    /// (a < b), by the exact scan or the sign-code index (`fpdb pairs --semantic`).
    pub fn pairs(&self, beta: Option<f32>, mode: sem::SearchMode) -> Result<Vec<(u64, u64, f32)>> {
        let a = self.db.semantic_active()?;
        if let Some(b) = beta {
            sem::check_beta(b)?;
        }
        Ok(a.channel.pairs(beta, mode))
    }

    /// Waits until every document acknowledged now is embedded, at most `timeout`.
    pub fn wait(&self, timeout: Duration) -> Result<()> {
        let a = self.db.semantic_active()?;
        let target = self.db.inner.state.read().next_id;
        match a.indexer.get() {
            Some(i) => Ok(i.wait_until(target, timeout)?),
            None if a.cursor_at_open >= target => Ok(()),
            None => Err(SemanticError::IndexerStopped {
                cause: "this handle runs no indexer (read-only, or `SemanticOptions::indexer` off): open the database for writing to embed"
                    .into(),
            }
            .into()),
        }
    }

    /// Runs until every acknowledged document is embedded, calling `progress(pending)` as the
    /// indexer commits (`fpdb semantic backfill`).
    pub fn backfill(&self, mut progress: impl FnMut(u64)) -> Result<BackfillReport> {
        let a = self.db.semantic_active()?;
        let target = self.db.inner.state.read().next_id;
        let Some(i) = a.indexer.get() else {
            return self.wait(Duration::ZERO).map(|()| BackfillReport::default());
        };
        loop {
            progress(target.saturating_sub(i.cursor()));
            match i.wait_until(target, Duration::from_millis(500)) {
                Ok(()) => break,
                Err(Error::Semantic(SemanticError::WaitTimeout { .. })) => continue,
                Err(e) => return Err(e),
            }
        }
        progress(0);
        Ok(BackfillReport {
            embedded: i.embedded(),
            vectors: a.channel.len() as u64,
        })
    }
}
