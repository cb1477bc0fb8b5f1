//! The seam of side indexes: everything an index beside the near-duplicate path adds to the
//! engine's life cycle, behind one trait, [`SideIndex`]. The core (open → decide → commit →
//! publish → query → check → close) calls [`Sides`](register::Sides) at each step and names no side index; each
//! side index lives in its own file or folder here and is registered by ONE line in
//! `register.rs`.
//!
//! The side indexes and their files: ARCHITECTURE.md, "`src/db/` — the handle" (the side indexes row).
//!
//! The rules every side index keeps:
//!
//! * its in-memory part changes only in its batch part's [`BatchPart::publish`] and its own background work, both
//!   with the state's write lock held (`publish` gets `&mut State` as the proof), and is read with
//!   the state's read lock held (the hooks get `&State`): so a side index's own lock is never
//!   contended, and readers see it in step with the published documents;
//! * what it keeps during a batch is a value, its [`BatchPart`] (made by [`SideIndex::batch`],
//!   carried by the writer, consumed by the publish): no batch state stays behind in it;
//! * its RocksDB changes go into the batch's ONE `WriteBatch` ([`BatchPart::write`]), deletes and
//!   replacements included (`Pending::deleted`), so a crash leaves all of a batch or none of it;
//! * its background work is a [`Background`] ([`SideIndex::background`]), run with the writer's
//!   own (after each commit; written at `Db::flush` and a clean close; ended at a poisoned or
//!   read-only close); an error there poisons the handle;
//! * at query time it may answer a query it was asked for or add to and annotate the hits
//!   and add counters ([`SideIndex::query`], a [`QuerySide`]).
//!
//! Every hook has a default that does nothing: a side index implements what it needs.

mod contain;
pub(super) mod decisions;
mod metadata;
mod method;
pub(super) mod register;
mod semantic;
mod text;

pub use contain::ContainmentIndex;
pub use metadata::MetadataIndex;
#[cfg(feature = "semantic")]
pub use semantic::SemanticIndex;
pub use text::{RespecReport, StoredTexts, TextUsage};

use std::path::Path;

use rocksdb::{ColumnFamily, WriteBatch, DB};

use crate::error::Result;
use crate::fingerprint::similarity::{MethodScore, Rule};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprint;
use crate::intmap::IntMap;
use crate::store::doc_record::{DbConfig, DocRecord};
use crate::store::segment::SegmentSet;

use super::background::Background;
use super::base::Base;
use super::candidates::CandidateSource;
use super::handle::Db;
use super::options::{CreateOptions, Dedup, Options, QueryOptions};
use super::pending::Pending;
use super::state::{DocMeta, State};
use super::types::{CheckReport, Hit, NewDoc, NotLinked, PreparedDoc, QueryAnswer, Stats};
use register::Sides;

/// What a side index is made from at open (`register.rs`).
pub(crate) struct Registering<'a> {
    pub(crate) spec: &'a FingerprintSpec,
    pub(crate) config: &'a DbConfig,
    pub(crate) opts: &'a Options,
    pub(crate) rocks_path: &'a Path,
    /// Where the settings of the side indexes a database may have or not (stored texts, the
    /// semantic channel) come from.
    pub(crate) from: Settings<'a>,
}

/// [`Registering::from`]: a database being created has its creation's options, an existing one
/// its `meta`.
pub(crate) enum Settings<'a> {
    New(&'a CreateOptions),
    Stored(&'a DB),
}

/// What a side index needs at a database's creation.
#[allow(dead_code)] // `rocks` serves the side indexes that read it
pub(crate) struct Creating<'a> {
    pub(crate) rocks: &'a DB,
    /// The `meta` column family.
    pub(crate) meta: &'a ColumnFamily,
    pub(crate) create: &'a CreateOptions,
}

/// What a side index needs to load its in-memory part at open.
pub(crate) struct Opening<'a> {
    pub(crate) rocks: &'a DB,
    pub(crate) rocks_path: &'a Path,
    /// The `meta` column family.
    pub(crate) meta: &'a ColumnFamily,
    /// The live documents (a damaged record is left out).
    pub(crate) docs: &'a IntMap<u64, DocMeta>,
    pub(crate) segs: &'a SegmentSet,
    /// The next doc id (every committed id is smaller).
    pub(crate) next_id: u64,
    pub(crate) opts: &'a Options,
}

/// What the caller asked of the side indexes for one batch (beyond the dedup mode).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Asked {
    /// The dedup mode of the batch.
    pub(crate) dedup: Dedup,
    /// Containment relations with containment ≥ this, in either direction
    /// ([`InsertOutcome::containment`](crate::InsertOutcome)).
    pub(crate) min_containment: Option<f64>,
}

/// One document as the writer decides it, for [`BatchPart::on_decide`] and [`BatchPart::on_place`].
pub(crate) struct Deciding<'a> {
    pub(crate) base: &'a Base,
    pub(crate) st: &'a State,
    pub(crate) pend: &'a Pending,
    pub(crate) asked: &'a Asked,
    pub(crate) doc: &'a PreparedDoc,
    /// The committed (or earlier in the batch) document of its key, which it replaces.
    pub(crate) old: Option<u64>,
    /// Its verified near-duplicates (none with dedup off).
    pub(crate) dups: &'a [Hit],
}

/// What side indexes add to one document's outcome.
#[derive(Default)]
pub(crate) struct Additions {
    /// Hits reported after the verified duplicates and never linked (exact metadata matches).
    pub(crate) reported: Vec<Hit>,
    /// Its containment relations, when asked for ([`InsertOutcome::containment`](crate::InsertOutcome)).
    pub(crate) containment: Vec<Hit>,
    /// Live documents it is linked to beside its verified duplicates (a curator's `same`).
    pub(crate) links: Vec<u64>,
    /// Verified duplicates it is not linked to, and why ([`InsertOutcome::not_linked`](crate::InsertOutcome)).
    pub(crate) not_linked: Vec<NotLinked>,
}

/// One query, for [`QuerySide::answer`] and [`QuerySide::on_query`].
#[allow(dead_code)] // `text` serves the side indexes that embed it (the semantic channel)
pub(crate) struct Query<'a> {
    /// The query's text, when it was asked by text (a side index that embeds it needs it).
    pub(crate) text: Option<&'a str>,
    pub(crate) fp: &'a Fingerprint,
    pub(crate) opts: &'a QueryOptions,
}

/// One side index: the hooks the core calls at each step of its life cycle. Every hook has a
/// default that does nothing. `&State` means the state's read lock is held, `&mut State` its write
/// lock. The hooks get narrow views ([`Base`], `&State`), not the handle, except `start`.
#[allow(unused_variables)]
pub(crate) trait SideIndex: Send + Sync {
    /// Its name (in errors and messages).
    fn name(&self) -> &'static str;

    /// The column families it owns: created with the database (and by a writer's open of a
    /// database made before it), flushed and compacted with the rest.
    fn column_families(&self) -> Vec<String> {
        Vec::new()
    }

    /// Adds its entries to the creation's `meta` batch.
    fn create(&self, c: &Creating<'_>, b: &mut WriteBatch) -> Result<()> {
        Ok(())
    }

    /// The open: loads its in-memory part (and settles what a crash left).
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        Ok(())
    }

    /// The handle is made (the open's last step): work that runs on its own starts (the semantic
    /// indexer, whose thread holds the handle).
    fn start(&self, db: &Db) -> Result<()> {
        Ok(())
    }

    /// What it keeps of a document's text until the document is written (stored text: the
    /// compressed record; the semantic channel: the text to embed, queued in the document's
    /// batch), read back in `write` by its name (`PendingDoc::text.get(self.name())`). Every side
    /// index keeps its own, in registration order; the last may take `doc.text` (the fingerprint
    /// is made; nothing reads the text after). What it returns is in its own encoding, made on
    /// the ingest workers.
    fn keep_text(&self, doc: &mut NewDoc) -> Option<Vec<u8>> {
        None
    }

    /// Its part of a batch the writer starts (`None`: it has nothing to do in batches): the
    /// value that holds what it keeps from the batch's first decision to its publish.
    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        None
    }

    /// Its background work (the containment tail, the semantic indexer), driven with the rest of
    /// the writer's ([`Background`]: after each commit, at a flush or clean close, at an abandoned
    /// close).
    fn background(&self) -> Option<&dyn Background> {
        None
    }

    /// What it adds to queries ([`QuerySide`]).
    fn query(&self) -> Option<&dyn QuerySide> {
        None
    }

    /// The candidate source it provides in the SimHash tables' place (the other methods' bucket
    /// index; at most one side index of a handle does): the writer and the queries then ask it
    /// for candidates ([`CandidateSource`]).
    fn candidate_source(&self) -> Option<&dyn CandidateSource> {
        None
    }

    /// `check`: its entries against the live records (`records`) and its in-memory part; faults
    /// and counts go into `rep`.
    fn check(&self, base: &Base, st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        Ok(())
    }
}

/// What a side index adds to reads: the containment index answers a query that asks for it
/// (and refuses one by SimHash alone), the semantic channel adds its matches to the text hits
/// and its counters to `Db::stats`.
#[allow(unused_variables)]
pub(crate) trait QuerySide {
    /// Answers a query in place of the near-duplicate path, when the query asks for this index
    /// (`None`: not asked).
    fn answer(&self, db: &Db, q: &Query<'_>) -> Option<Result<QueryAnswer>> {
        None
    }

    /// Adds or annotates hits of a near-duplicate query's answer.
    fn on_query(&self, db: &Db, q: &Query<'_>, answer: &mut QueryAnswer) -> Result<()> {
        Ok(())
    }

    /// Refuses a SimHash-only query that asks for this index (it has no text or shingle set).
    fn refuse_simhash(&self, opts: &QueryOptions) -> Result<()> {
        Ok(())
    }

    /// Its counters in `Db::stats` (the state's read lock held).
    fn stats(&self, st: &State, stats: &mut Stats) {}
}

/// A side index's part of one batch: the hooks the writer calls for it while the batch is decided,
/// written and published, and what it keeps between them (the batch's postings, a curator's plan
/// and changes, the batch's sketches by lexicon column, a dictionary the batch trained). A value:
/// made when the batch starts ([`SideIndex::batch`]), carried by the writer beside the batch's
/// [`Pending`] ([`Parts`]) and consumed by its publish, so a batch that stops leaves nothing
/// behind. `&State` means the state's read lock is held, `&mut State` its write lock; all run
/// under the writer lock.
#[allow(unused_variables)]
pub(crate) trait BatchPart {
    /// The writer's decision for one document: what it adds to the document's outcome. An error
    /// is the document's, not the batch's.
    fn on_decide(&mut self, d: &Deciding<'_>, add: &mut Additions) -> Result<()> {
        Ok(())
    }

    /// The document was placed in the batch as doc `id` (later documents of the batch see it).
    fn on_place(&mut self, d: &Deciding<'_>, id: u64) -> Result<()> {
        Ok(())
    }

    /// A link between two committed documents found after their insert (`db::link`): `true`
    /// holds it back (a curator's `distinct` decision outranks it; the decisions index).
    fn holds_link(&mut self, st: &State, pend: &Pending, a: u64, b: u64) -> bool {
        false
    }

    /// The members of the batch so far that may satisfy `rule` against `fp`, when this side
    /// index is the handle's candidate source ([`SideIndex::candidate_source`]; `false`: it is
    /// not, the SimHash tables' batch scan answers).
    fn in_batch(&self, base: &Base, pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>) -> bool {
        false
    }

    /// The batch's puts and deletes into its one `WriteBatch`: the new documents
    /// (`pend.new_docs`, all alive) and the deleted or replaced ones (`pend.deleted`; a document
    /// missing from `st.docs` there has a damaged record).
    fn write(&mut self, base: &Base, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        Ok(())
    }

    /// The committed batch enters the side index's in-memory part (the state's write lock held).
    fn publish(self: Box<Self>, st: &mut State, pend: &Pending) -> Result<()> {
        Ok(())
    }
}

/// The side indexes' parts of one batch, in registration order.
pub(crate) struct Parts<'a> {
    all: Vec<(&'static str, Box<dyn BatchPart + 'a>)>,
}

impl<'a> Parts<'a> {
    /// Every side index's part of a new batch.
    pub(crate) fn begin(sides: &'a Sides) -> Parts<'a> {
        Parts {
            all: sides.iter().filter_map(|s| Some((s.name(), s.batch()?))).collect(),
        }
    }

    /// Puts `part` in place of side index `name`'s (a side index's own mutation that starts
    /// with changes of its own: a curator's decision).
    pub(crate) fn put(&mut self, name: &'static str, part: Box<dyn BatchPart + 'a>) {
        match self.all.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = part,
            None => self.all.push((name, part)),
        }
    }

    /// Runs `f` on every part, stopping at the first error.
    pub(crate) fn each(&mut self, mut f: impl FnMut(&mut dyn BatchPart) -> Result<()>) -> Result<()> {
        self.all.iter_mut().try_for_each(|(_, p)| f(p.as_mut()))
    }

    /// Whether a part holds back the later link a–b ([`BatchPart::holds_link`]).
    pub(crate) fn holds_link(&mut self, st: &State, pend: &Pending, a: u64, b: u64) -> bool {
        self.all.iter_mut().any(|(_, p)| p.holds_link(st, pend, a, b))
    }

    /// The batch's candidates from the part of the side index that is the candidate source
    /// (`false`: none is).
    pub(crate) fn in_batch(&self, base: &Base, pend: &Pending, fp: &Fingerprint, rule: Rule, near: &mut Vec<(usize, MethodScore)>) -> bool {
        self.all.iter().any(|(_, p)| p.in_batch(base, pend, fp, rule, near))
    }

    /// Every part's publish, in registration order (the state's write lock held).
    pub(crate) fn publish(self, st: &mut State, pend: &Pending) -> Result<()> {
        self.all.into_iter().try_for_each(|(_, p)| p.publish(st, pend))
    }
}
