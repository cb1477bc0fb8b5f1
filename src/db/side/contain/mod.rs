//! The containment index's side: what a database with the index does beyond the
//! near-duplicate path. Sketch: `fingerprint::containment`; search: `index::contain`; verifier:
//! `fingerprint::similarity::containment`; keys: `store::keys::contain_key`.
//!
//! Its files: ARCHITECTURE.md, "`src/db/` — the handle" (the side indexes row).

mod check;
mod delta;
mod mem;
mod pairs;
mod search;
mod stats;
mod tail;

use parking_lot::{Mutex, RwLock};
use rocksdb::WriteBatch;

use crate::error::{Error, Result};
use crate::index::contain::{MemContain, Tail};
use crate::intmap::IntMap;
use crate::store::doc_record::{ContainmentConfig, DbConfig, DocRecord};
use crate::store::keys::{CF_CONTAIN, META_CONTAIN_FLOOR};

use super::{Additions, Asked, Creating, Deciding, Opening, Query, QuerySide, SideIndex};
use crate::db::background::tail::Freezing;
use crate::db::background::Background;
use crate::db::handle::Db;
use crate::db::options::{check_c, Dedup, Options, QueryOptions};
use crate::db::pending::Pending;
use crate::db::state::State;
use crate::db::types::{CheckReport, InsertOutcome, Precheck, PreparedDoc, QueryAnswer};

use delta::TailDelta;
use mem::ContainMem;

/// The containment index: registered in every database, so that a request for it on a database
/// without one gets its usage error ([`Db::contain_cfg`]); `cfg` is `None` there and every hook
/// does nothing.
pub(crate) struct Containment {
    cfg: Option<ContainmentConfig>,
    /// `Options::contain_tail_postings`: the tail's size that starts its background write.
    tail_postings: usize,
    /// The published part (under the state's lock rules, `side`).
    mem: RwLock<ContainMem>,
    /// The writer's: the batch's documents in an in-memory index (filled only when containment
    /// relations are asked for).
    batch: Mutex<MemContain>,
    /// The writer's: what the publish of the batch being committed applies to `mem`.
    staged: Mutex<Option<TailDelta>>,
    /// The writer's: the tail's write running in the background, if any (`tail.rs`).
    job: Mutex<Option<Freezing<tail::ContainFiles>>>,
}

impl Containment {
    pub(super) fn new(config: &DbConfig, opts: &Options) -> Containment {
        Containment {
            cfg: config.containment,
            tail_postings: opts.contain_tail_postings,
            mem: RwLock::new(ContainMem::default()),
            batch: Mutex::new(MemContain::default()),
            staged: Mutex::new(None),
            job: Mutex::new(None),
        }
    }

    /// The published part (read with the state's read lock held).
    pub(crate) fn mem(&self) -> parking_lot::RwLockReadGuard<'_, ContainMem> {
        self.mem.read()
    }
}

impl SideIndex for Containment {
    fn name(&self) -> &'static str {
        "containment index"
    }

    fn column_families(&self) -> Vec<String> {
        self.cfg.map(|_| CF_CONTAIN.to_string()).into_iter().collect()
    }

    /// Every posting starts in the tail: the floor is 0.
    fn create(&self, c: &Creating<'_>, b: &mut WriteBatch) -> Result<()> {
        if self.cfg.is_some() {
            b.put_cf(c.meta, META_CONTAIN_FLOOR, 0u64.to_le_bytes());
        }
        Ok(())
    }

    /// The floor (a writer's clean-up of a stopped tail write), the short-key set and the tail.
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        let Some(cfg) = self.cfg else { return Ok(()) };
        let floor = Self::open_floor(o.rocks, o.meta, o.rocks_path, o.next_id, o.opts.read_only)?;
        let (short, active) = Self::load_contain(o.rocks, o.rocks_path, cfg, floor, o.docs, o.segs)?;
        *self.mem.write() = ContainMem {
            short,
            tail: Tail::new(floor, active),
        };
        Ok(())
    }

    fn begin_batch(&self) {
        *self.batch.lock() = MemContain::default();
        *self.staged.lock() = None;
    }

    /// The containment relations, when asked for.
    fn on_decide(&self, d: &Deciding<'_>, add: &mut Additions) -> Result<()> {
        if let Some(c) = d.asked.min_containment {
            add.containment = d.db.contain_relations(d.st, d.pend, &self.batch.lock(), &d.doc.fp, c, d.old)?;
        }
        Ok(())
    }

    fn on_place(&self, d: &Deciding<'_>, id: u64) -> Result<()> {
        if let (Some(_), Some(cfg)) = (d.asked.min_containment, self.cfg) {
            self.batch.lock().add(id, &d.doc.fp.shingles, cfg.sampling())?;
        }
        Ok(())
    }

    fn write(&self, db: &Db, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let Some(cfg) = self.cfg else { return Ok(()) };
        let d = db.contain_delta(st, &self.mem(), cfg, pend)?;
        *self.staged.lock() = Some(d.write(db, b)?);
        Ok(())
    }

    fn publish(&self, _st: &mut State, _pend: &Pending) -> Result<()> {
        *self.batch.lock() = MemContain::default();
        match self.staged.lock().take() {
            Some(d) => d.publish(&mut self.mem.write()),
            None => Ok(()),
        }
    }

    fn background(&self) -> Option<&dyn Background> {
        Some(self)
    }

    fn query(&self) -> Option<&dyn QuerySide> {
        Some(self)
    }

    fn check(&self, db: &Db, st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        match self.cfg {
            Some(cfg) => db.check_containment(st, &self.mem(), cfg, records, rep),
            None => Ok(()),
        }
    }
}

/// A containment query (`min_containment`) is answered by the index alone.
impl QuerySide for Containment {
    fn answer(&self, db: &Db, q: &Query<'_>) -> Option<Result<QueryAnswer>> {
        q.opts.min_containment.map(|c| db.query_containment(q.fp, c, q.opts))
    }

    /// A SimHash has no shingle set to look up.
    fn refuse_simhash(&self, opts: &QueryOptions) -> Result<()> {
        if opts.min_containment.is_some() {
            return Err(Error::InvalidOption {
                name: "min_containment",
                message: "a SimHash-only query has no shingle set; containment needs a text or a fingerprint".into(),
            });
        }
        Ok(())
    }
}

impl Db {
    /// [`Db::commit_prechecked`] that also reports each document's containment relations with
    /// containment ≥ `containment` in either direction ([`InsertOutcome::containment`]). Refused
    /// (before anything is written) when asked for on a database without the containment index.
    pub fn commit_prechecked_with(
        &self,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        dedup: Dedup,
        containment: Option<f64>,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        if let Some(c) = containment {
            check_c(c)?;
            self.contain_cfg()?;
        }
        let asked = Asked {
            dedup,
            min_containment: containment,
        };
        self.commit_asked(docs, asked)
    }

    /// Whether the tail's active part is empty, and its floor (for the tests of `Db::flush`).
    #[cfg(test)]
    pub(crate) fn contain_tail_of_test(&self) -> (bool, u64) {
        let side = self.inner.sides().get::<Containment>().expect("registered in every database");
        let mem = side.mem();
        (mem.tail.active.is_empty(), mem.tail.floor)
    }

    /// The containment side index (registered in every database).
    fn containment(&self) -> Result<&Containment> {
        self.inner
            .sides()
            .get::<Containment>()
            .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "the containment side index is not registered"))
    }

    /// The index settings, or the usage error of a containment request on a database without one.
    pub(crate) fn contain_cfg(&self) -> Result<ContainmentConfig> {
        self.inner.config.containment.ok_or_else(|| Error::InvalidOption {
            name: "min_containment",
            message: format!(
                "the database {} has no containment index (it was created with containment off, or before the index existed), so it cannot answer containment queries; create a database with containment on (`fpdb init DB --containment on`, or `CreateOptions::with_containment`) and ingest the documents again",
                self.inner.path.display()
            ),
        })
    }
}
